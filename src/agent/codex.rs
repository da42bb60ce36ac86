//! What Codex needs before it runs a hook (SPEC §26.3), as Codex 0.169 and 0.171 do it (measured
//! with the real clients in tests/it/agent_codex.rs):
//!
//! - For a linked worktree Codex reads the hooks file of the repository's **main checkout**
//!   (`<main>/.codex/hooks.json`), and only when the worktree has a `.codex/` folder of its own
//!   (its project layer); the worktree's own `hooks.json` is never read.
//! - It loads project hooks only from a trusted project (`[projects."<main>"] trust_level =
//!   "trusted"` in `$CODEX_HOME/config.toml`), and runs a hook only when that exact hook is
//!   trusted: `[hooks.state."<hooks.json path>:<event>:<group>:<handler>"] trusted_hash =
//!   "sha256:…"`, where the hash is SHA-256 of the hook's normalized identity as compact JSON with
//!   sorted keys. An untrusted or changed hook is skipped without a word, and `codex exec` exits 0.
//!
//! This module computes those keys and hashes and edits `config.toml` (with toml_edit, so every
//! other byte of the user's file stays as it was).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::settings;

/// Codex's timeout for a hook that names none (seconds).
pub const DEFAULT_TIMEOUT: u64 = super::clients::codex::ROW.default_timeout;

/// The label Codex writes for an event in trust keys and hashes.
fn label(event: &str) -> &'static str {
    match event {
        "Stop" => "stop",
        _ => "subagent_stop",
    }
}

/// Codex's trust hash of a command hook without matcher, `async` or status message, as
/// closegate writes its own: `sha256:` and the hex digest of
/// `{"event_name":…,"hooks":[{"async":false,"command":…,"timeout":…,"type":"command"}]}`.
pub fn hook_hash(event: &str, command: &str, timeout: u64) -> String {
    use sha2::{Digest, Sha256};
    let identity = format!(
        r#"{{"event_name":{},"hooks":[{{"async":false,"command":{},"timeout":{},"type":"command"}}]}}"#,
        Value::from(label(event)),
        Value::from(command),
        timeout.max(1)
    );
    let digest = Sha256::digest(identity.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// One of closegate's hooks in a Codex hooks file, with the trust Codex wants for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub event: &'static str,
    pub command: String,
    /// The timeout Codex uses (the file's, else 600).
    pub timeout: u64,
    /// `<file>:<event>:<group>:<handler>`.
    pub key: String,
    pub hash: String,
}

/// closegate's hooks in the Codex hooks file at `file` whose text is `text` (unreadable JSON: none).
pub fn entries(file: &Path, text: &str) -> Vec<Entry> {
    settings::ours(text, &super::Target::Codex.row().shape)
        .into_iter()
        .map(|o| {
            let timeout = o.timeout.unwrap_or(DEFAULT_TIMEOUT).max(1);
            Entry {
                event: o.event,
                key: format!(
                    "{}:{}:{}:{}",
                    file.display(),
                    label(o.event),
                    o.group,
                    o.handler
                ),
                hash: hook_hash(o.event, &o.command, timeout),
                command: o.command,
                timeout,
            }
        })
        .collect()
}

/// Codex's user configuration: `$CODEX_HOME/config.toml`, else `~/.codex/config.toml`.
pub fn home() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("CODEX_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .context("HOME is not set: cannot find Codex's configuration (~/.codex)")?;
    Ok(PathBuf::from(home).join(".codex"))
}

/// Where a hook stands with Codex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    Trusted,
    /// No entry for its key.
    Untrusted,
    /// An entry for an older version of the hook (another command or timeout).
    Stale,
}

/// The trust `config` (the text of Codex's `config.toml`) gives `entry`.
pub fn trust_of(config: &toml::Table, entry: &Entry) -> Trust {
    let state = config
        .get("hooks")
        .and_then(|h| h.get("state"))
        .and_then(|s| s.get(&entry.key));
    match state
        .and_then(|s| s.get("trusted_hash"))
        .and_then(|h| h.as_str())
    {
        Some(hash) if hash == entry.hash => Trust::Trusted,
        Some(_) => Trust::Stale,
        None => Trust::Untrusted,
    }
}

/// The trust level `config` gives the project at `root` (`trusted`, `untrusted`), if any.
pub fn project_trust(config: &toml::Table, root: &Path) -> Option<String> {
    let projects = config.get("projects")?.as_table()?;
    let key = root.display().to_string();
    let level = projects.get(&key)?.get("trust_level")?.as_str()?;
    Some(level.to_string())
}

/// Read `config.toml` (absent: empty); an error names the file.
pub fn read_config(path: &Path) -> Result<String> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        _ => {
            let bytes = crate::input_file::read(path)?;
            String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("{} is not UTF-8", path.display()))
        }
    }
}

/// Parse `config.toml` text; an error names the file.
pub fn parse_config(text: &str, path: &Path) -> Result<toml::Table> {
    text.parse::<toml::Table>()
        .map_err(|e| anyhow::anyhow!("{} is not valid TOML: {e}", path.display()))
}

/// `config.toml` read and parsed ([`read_config`], [`parse_config`]): absent is empty.
pub fn load_config(path: &Path) -> Result<toml::Table> {
    parse_config(&read_config(path)?, path)
}

/// The edit `install` and `uninstall` make to `config.toml`.
#[derive(Debug, Default)]
pub struct Edit {
    /// Trust these hooks (key, hash).
    pub trust: Vec<(String, String)>,
    /// Drop the trust entries with these keys when they hold these hashes (our old hooks).
    pub untrust: Vec<(String, String)>,
    /// Trust this project, unless the file says anything about it already.
    pub project: Option<PathBuf>,
}

/// What an [`Edit`] did, for the user.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Done {
    pub changed: bool,
    /// The project was trusted by this edit.
    pub trusted_project: bool,
    /// The project is marked `untrusted`: left so, and Codex loads no project hook.
    pub untrusted_project: bool,
    /// Who trusted the hooks: `Some(name)` Codex itself (its app-server, listed again to
    /// verify), `None` closegate's computed hash (no `codex` binary on the PATH).
    pub by_codex: Option<String>,
    /// Codex's hash of a hook differs from closegate's formula (which the stop hook's own trust
    /// check uses): the events concerned.
    pub formula_differs: Vec<&'static str>,
}

/// Apply `edit` to the text of `config.toml` named `name`; every other byte is kept.
pub fn apply(text: &str, name: &Path, edit: &Edit) -> Result<(String, Done)> {
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("{} is not valid TOML", name.display()))?;
    let mut done = Done::default();
    for (key, hash) in &edit.untrust {
        done.changed |= untrust(&mut doc, key, hash);
    }
    for (key, hash) in &edit.trust {
        let path = ["hooks", "state", key.as_str()];
        let entry = table_at(&mut doc, &path, name)?;
        if entry.get("trusted_hash").and_then(|h| h.as_str()) != Some(hash.as_str()) {
            entry["trusted_hash"] = toml_edit::value(hash.as_str());
            done.changed = true;
        }
    }
    if let Some(root) = &edit.project {
        let key = root.display().to_string();
        let project = table_at(&mut doc, &["projects", key.as_str()], name)?;
        match project.get("trust_level").and_then(|l| l.as_str()) {
            None => {
                project["trust_level"] = toml_edit::value("trusted");
                done.changed = true;
                done.trusted_project = true;
            }
            Some("untrusted") => done.untrusted_project = true,
            Some(_) => {}
        }
    }
    Ok((doc.to_string(), done))
}

/// Drop `hooks.state.<key>` when it trusts `hash`; whether it did.
fn untrust(doc: &mut toml_edit::DocumentMut, key: &str, hash: &str) -> bool {
    let Some(state) = doc.get_mut("hooks").and_then(|h| h.get_mut("state")) else {
        return false;
    };
    let held = state
        .get(key)
        .and_then(|s| s.get("trusted_hash"))
        .and_then(|h| h.as_str());
    held == Some(hash)
        && state
            .as_table_like_mut()
            .and_then(|t| t.remove(key))
            .is_some()
}

/// The table at `path` (made where missing: the outer ones implicit, as Codex writes them); an
/// error when something else stands there.
fn table_at<'d>(
    doc: &'d mut toml_edit::DocumentMut,
    path: &[&str],
    name: &Path,
) -> Result<&'d mut toml_edit::Item> {
    let mut item = doc.as_item_mut();
    for (depth, key) in path.iter().enumerate() {
        let last = depth + 1 == path.len();
        let Some(table) = item.as_table_like_mut() else {
            bail!(
                "{}: `{}` is not a table",
                name.display(),
                path[..depth].join(".")
            );
        };
        item = table.entry(key).or_insert(if last {
            toml_edit::Item::Table(toml_edit::Table::new())
        } else {
            implicit()
        });
    }
    if !item.is_table_like() {
        bail!("{}: `{}` is not a table", name.display(), path.join("."));
    }
    Ok(item)
}

fn implicit() -> toml_edit::Item {
    let mut t = toml_edit::Table::new();
    t.set_implicit(true);
    toml_edit::Item::Table(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash Codex 0.169 and 0.171 accepted for this hook (measured: the hook ran).
    #[test]
    fn the_hash_is_codexs() {
        assert_eq!(
            hook_hash("Stop", "/tmp/exp/hook.sh", 30),
            "sha256:3722c668e82ebadeb832cd4a8c60fdcdedb5efc0cb58245334980f31c5bf9bff"
        );
    }

    #[test]
    fn entries_are_keyed_by_position() {
        let text = r#"{"hooks": {"Stop": [
            {"hooks": [{"type": "command", "command": "notify"}]},
            {"hooks": [{"type": "command", "command": "closegate agent stop-hook --target codex", "timeout": 990}]}
        ], "SubagentStop": [{"hooks": [{"type": "command", "command": "closegate agent stop-hook --target codex"}]}]}}"#;
        let found = entries(Path::new("/r/.codex/hooks.json"), text);
        let keys: Vec<(&str, u64)> = found.iter().map(|e| (e.key.as_str(), e.timeout)).collect();
        assert_eq!(
            keys,
            [
                ("/r/.codex/hooks.json:stop:1:0", 990),
                ("/r/.codex/hooks.json:subagent_stop:0:0", 600)
            ]
        );
    }

    #[test]
    fn trust_is_added_kept_and_dropped_without_touching_other_bytes() {
        let original =
            "# mine\nmodel = \"x\"   # keep\n\n[projects.\"/other\"]\ntrust_level = \"trusted\"\n";
        let edit = Edit {
            trust: vec![("/r/.codex/hooks.json:stop:0:0".into(), "sha256:aa".into())],
            untrust: Vec::new(),
            project: Some(PathBuf::from("/r")),
        };
        let (text, done) = apply(original, Path::new("c.toml"), &edit).unwrap();
        assert!(done.changed && done.trusted_project, "{text}");
        assert!(text.starts_with(original), "{text}");
        let table = parse_config(&text, Path::new("c.toml")).unwrap();
        let entry = Entry {
            event: "Stop",
            command: String::new(),
            timeout: 1,
            key: "/r/.codex/hooks.json:stop:0:0".into(),
            hash: "sha256:aa".into(),
        };
        assert_eq!(trust_of(&table, &entry), Trust::Trusted);
        assert_eq!(
            project_trust(&table, Path::new("/r")).as_deref(),
            Some("trusted")
        );
        let (again, done) = apply(&text, Path::new("c.toml"), &edit).unwrap();
        assert_eq!((again.as_str(), done.changed), (text.as_str(), false));
        let stale = Entry {
            hash: "sha256:bb".into(),
            ..entry.clone()
        };
        assert_eq!(trust_of(&table, &stale), Trust::Stale);
        let drop = Edit {
            untrust: vec![(entry.key.clone(), entry.hash.clone())],
            ..Edit::default()
        };
        let (dropped, _) = apply(&text, Path::new("c.toml"), &drop).unwrap();
        let table = parse_config(&dropped, Path::new("c.toml")).unwrap();
        assert_eq!(trust_of(&table, &entry), Trust::Untrusted);
        // An explicitly untrusted project is left so, and said.
        let untrusted = "[projects.\"/r\"]\ntrust_level = \"untrusted\"\n";
        let edit = Edit {
            project: Some(PathBuf::from("/r")),
            ..Edit::default()
        };
        let (text, done) = apply(untrusted, Path::new("c.toml"), &edit).unwrap();
        assert_eq!((text.as_str(), done.untrusted_project), (untrusted, true));
    }
}
