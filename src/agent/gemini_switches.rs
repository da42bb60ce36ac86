//! Gemini CLI's switches that keep it from running closegate's `AfterAgent` hook (SPEC §27.3),
//! as Gemini CLI 0.61 reads them: its settings are merged from the system defaults, the user's
//! file, the workspace's (only in a trusted folder) and the system file, the last one that sets a
//! key deciding; `hooksConfig.enabled: false` turns every hook off; `hooksConfig.disabled` lists
//! hooks by name (a command hook's `name`, else its command) that do not run; and with folder
//! trust on (the default) a folder no rule of `trustedFolders.json` trusts runs no hook at all,
//! not even the user's. Each is an `agent-hook-inactive` finding naming the file and the fix.
//!
//! The system files' places are Gemini CLI's own: `GEMINI_CLI_SYSTEM_SETTINGS_PATH` (else
//! `/etc/gemini-cli/settings.json`), `GEMINI_CLI_SYSTEM_DEFAULTS_PATH` (else
//! `system-defaults.json` beside it), `GEMINI_CLI_TRUSTED_FOLDERS_PATH` (else
//! `~/.gemini/trustedFolders.json`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Target;
use crate::catalog::Code;
use crate::finding::Finding;

/// Gemini CLI's settings files, lowest precedence first, each with its words.
fn files(root: &Path) -> Vec<(PathBuf, &'static str)> {
    let system = std::env::var_os("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
        .filter(|p| !p.is_empty())
        .map_or_else(
            || PathBuf::from("/etc/gemini-cli/settings.json"),
            PathBuf::from,
        );
    let defaults = std::env::var_os("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
        .filter(|p| !p.is_empty())
        .map_or_else(
            || system.with_file_name("system-defaults.json"),
            PathBuf::from,
        );
    let mut files = vec![(defaults, "system defaults")];
    if let Some(home) = std::env::var_os("HOME") {
        files.push((PathBuf::from(home).join(".gemini/settings.json"), "user"));
    }
    files.push((root.join(".gemini/settings.json"), "workspace"));
    files.push((system, "system"));
    files
}

fn json(path: &Path) -> Option<Value> {
    super::settings::json_of(path).map(|(_, value)| value)
}

/// The file that decides a boolean key (`hooksConfig.enabled`), with its value: the last one
/// setting it, the workspace's counted only in a trusted folder.
fn decided(read: &[(PathBuf, &str, Value)], key: [&str; 2]) -> Option<(PathBuf, bool)> {
    read.iter()
        .rev()
        .find_map(|(path, _, v)| Some((path.clone(), v[key[0]][key[1]].as_bool()?)))
}

/// Every switch that keeps Gemini CLI from running closegate's hook in the worktree `root`.
pub fn off(root: &Path) -> Vec<Finding> {
    let all: Vec<(PathBuf, &str, Value)> = files(root)
        .into_iter()
        .filter_map(|(path, words)| json(&path).map(|v| (path, words, v)))
        .collect();
    let untrusted = untrusted(root, &all);
    let read: Vec<(PathBuf, &str, Value)> = (all.into_iter())
        .filter(|(_, words, _)| *words != "workspace" || untrusted.is_none())
        .collect();
    let mut found: Vec<Finding> = untrusted.into_iter().collect();
    if let Some((path, false)) = decided(&read, ["hooksConfig", "enabled"]) {
        found.push(inactive(format!(
            "{} sets `hooksConfig.enabled: false`, so Gemini CLI runs no hook, closegate's stop \
             hook included: remove the key (or set it to true)",
            path.display()
        )));
    }
    // The hooks' names are worked out only when some file disables hooks by name.
    let listing = |v: &Value| {
        v["hooksConfig"]["disabled"]
            .as_array()
            .is_some_and(|l| !l.is_empty())
    };
    let names = if read.iter().any(|(_, _, v)| listing(v)) {
        our_names(&read)
    } else {
        Vec::new()
    };
    for (path, _, value) in &read {
        let listed = value["hooksConfig"]["disabled"].as_array().into_iter();
        for name in listed.flatten().filter_map(Value::as_str) {
            if names.iter().any(|n| n == name) {
                found.push(inactive(format!(
                    "{} lists closegate's hook `{name}` in `hooksConfig.disabled`, so Gemini \
                     CLI does not run it: remove it from the list",
                    path.display()
                )));
            }
        }
    }
    found
}

fn inactive(msg: String) -> Finding {
    Finding::new(Code::AgentHookInactive, msg)
}

/// The names Gemini CLI gives closegate's hooks in the files it reads: `name`, else the command.
fn our_names(read: &[(PathBuf, &str, Value)]) -> Vec<String> {
    let shape = &Target::Gemini.row().shape;
    let mut names = Vec::new();
    for (_, _, value) in read {
        for ours in super::settings::ours(&value.to_string(), shape) {
            let entry = &value["hooks"][ours.event][ours.group]["hooks"][ours.handler];
            names.push(entry["name"].as_str().unwrap_or(&ours.command).to_string());
        }
    }
    names
}

/// With folder trust on (`security.folderTrust.enabled`, true unless a settings file other than
/// the workspace's says false), the finding for a worktree no trust rule trusts.
fn untrusted(root: &Path, all: &[(PathBuf, &str, Value)]) -> Option<Finding> {
    let outside: Vec<(PathBuf, &str, Value)> = (all.iter())
        .filter(|(_, words, _)| *words != "workspace")
        .cloned()
        .collect();
    let on = (outside.iter().rev())
        .find_map(|(_, _, v)| v["security"]["folderTrust"]["enabled"].as_bool())
        .unwrap_or(true);
    // Gemini CLI's own environment switches come first (the hook runs in the client's
    // environment; doctor in the user's).
    let env = |name| std::env::var(name).ok();
    let workspace = env("GEMINI_CLI_TRUST_WORKSPACE");
    let forced_off = env("GEMINI_RESTRICTED_MODE").as_deref() == Some("true")
        || workspace.as_deref() == Some("false");
    if !forced_off && (!on || workspace.as_deref() == Some("true")) {
        return None;
    }
    let rules = trusted_folders();
    let trusted = !forced_off && json(&rules).is_some_and(|v| trusts(&v, root));
    (!trusted).then(|| {
        inactive(format!(
            "Gemini CLI does not trust {} (no rule of {} trusts it), and runs no hook in a \
             folder it does not trust: trust it (`\"{}\": \"TRUST_FOLDER\"`, or the repository's \
             parent folder with TRUST_PARENT on the repository)",
            root.display(),
            rules.display(),
            root.display()
        ))
    })
}

fn trusted_folders() -> PathBuf {
    if let Some(path) =
        std::env::var_os("GEMINI_CLI_TRUSTED_FOLDERS_PATH").filter(|p| !p.is_empty())
    {
        return PathBuf::from(path);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    home.join(".gemini/trustedFolders.json")
}

/// Gemini CLI's rule: of the rules whose folder (for TRUST_PARENT, the rule path's parent)
/// holds `root`, the longest rule path decides; DO_NOT_TRUST or no rule is untrusted.
fn trusts(rules: &Value, root: &Path) -> bool {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let root = real(root);
    let mut best: Option<(usize, &str)> = None;
    for (rule, level) in rules.as_object().into_iter().flatten() {
        let Some(level) = level.as_str() else {
            continue;
        };
        let path = Path::new(rule);
        let folder = match level {
            "TRUST_PARENT" => path.parent().unwrap_or(path),
            _ => path,
        };
        if root.starts_with(real(folder)) && best.is_none_or(|(len, _)| rule.len() > len) {
            best = Some((rule.len(), level));
        }
    }
    matches!(best, Some((_, "TRUST_FOLDER" | "TRUST_PARENT")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_rule_decides_and_trust_parent_covers_siblings() {
        let rules = serde_json::json!({
            "/r/repo": "TRUST_PARENT",
            "/r/wt/xx": "DO_NOT_TRUST",
            "/s": "TRUST_FOLDER",
        });
        assert!(trusts(&rules, Path::new("/r/wt/y")));
        assert!(trusts(&rules, Path::new("/r/repo")));
        assert!(!trusts(&rules, Path::new("/r/wt/xx/a")));
        assert!(trusts(&rules, Path::new("/s/a/b")));
        assert!(!trusts(&rules, Path::new("/t")));
        assert!(!trusts(&rules, Path::new("/st")));
    }
}
