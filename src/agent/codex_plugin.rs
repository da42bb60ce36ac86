//! closegate as a Codex plugin, as Codex keeps it (SPEC §27.3; measured with Codex 0.169.0 and
//! 0.171.0 in tests/it/agent_clients.rs): `codex plugin add closegate@closegate` copies the plugin
//! into `$CODEX_HOME/plugins/cache/closegate/closegate/<version>/`, and Codex runs its hooks only
//! once trusted, like any other: `[hooks.state."closegate@closegate:hooks/codex-hooks.json:<event>:
//! <group>:<handler>"]` with `trusted_hash` (the hook's hash, `codex::hook_hash`) and
//! `trusted_content_hash` (a hash of the plugin's content, which only Codex computes). Until then
//! `codex exec` runs none of them, without a word.
//!
//! The cached hooks file is in Codex's home, which the agent can write, and Codex trusts whatever
//! the agent has it trust: it is compared with the hooks file this closegate ships.

use std::path::{Path, PathBuf};

use super::codex::{self, Entry};

/// The plugin's id as Codex names it (`<plugin>@<marketplace>`).
pub const ID: &str = "closegate@closegate";

/// The plugin's hooks file, relative to the plugin's folder.
pub const HOOKS: &str = "hooks/codex-hooks.json";

/// How a user trusts the plugin's hooks, in Codex itself.
pub const TRUST_FIX: &str = "trust them in Codex: choose \"Trust all and continue\" at the \
     hooks review `codex` shows when it starts (or review them with `/hooks`)";

/// The plugin's hooks file as this closegate ships it (`plugins/closegate/hooks/codex-hooks.json`).
pub const SHIPPED: &str = include_str!("../../plugins/closegate/hooks/codex-hooks.json");

/// The plugin's hooks file in each version of the plugin Codex keeps in `home` (its
/// `CODEX_HOME`), in name order.
pub fn cached(home: &Path) -> Vec<PathBuf> {
    let dir = home.join("plugins/cache/closegate/closegate");
    let Ok(read) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = read
        .filter_map(|e| e.ok())
        .map(|e| e.path().join(HOOKS))
        .filter(|f| f.is_file())
        .collect();
    files.sort();
    files
}

/// closegate's hooks in a plugin hooks file's `text`, keyed as Codex keys a plugin's hooks.
pub fn entries(text: &str) -> Vec<Entry> {
    codex::entries(Path::new(&format!("{ID}:{HOOKS}")), text)
}

/// Whether a trust key is one of the plugin's hooks.
pub fn is_plugin_key(key: &str) -> bool {
    key.starts_with(&format!("{ID}:"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_hooks_are_keyed_as_codex_keys_them() {
        let keys: Vec<String> = entries(SHIPPED).into_iter().map(|e| e.key).collect();
        assert_eq!(
            keys,
            [
                "closegate@closegate:hooks/codex-hooks.json:stop:0:0",
                "closegate@closegate:hooks/codex-hooks.json:subagent_stop:0:0"
            ]
        );
        assert!(keys.iter().all(|k| is_plugin_key(k)));
    }
}
