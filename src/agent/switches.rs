//! The switches that keep a client from running closegate's stop hook for a worktree (SPEC
//! §27.3), as `agent doctor` and the stop hook both see them: Claude Code's `disableAllHooks` in
//! any settings file it reads and `allowManagedHooksOnly` (or `strictPluginOnlyCustomization`) in
//! its managed settings; Codex's `[features] hooks = false` in the user's or the project's
//! `config.toml`, a worktree without its `.codex/` folder, and trust (the project's and each
//! hook's). The client's row (`clients`) says which switches it has; each one found is an
//! `agent-hook-inactive` finding naming the switch, its file and the fix.
//!
//! An agent can write every one of these files (its worktree's, the user's, the main
//! checkout's): the stop hook blocks while one is set, in the session that still runs it.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::clients::{Enabled, Home, Off, Trust};
use super::install::{self, Scope};
use super::{Target, codex, codex_plugin, settings};
use crate::catalog::Code;
use crate::finding::Finding;
use crate::repo::Repo;

/// A debug build reads Claude Code's managed settings from this file instead (the tests cannot
/// write `/etc`).
const MANAGED_SWITCH: &str = "CLOSEGATE_TEST_CLAUDE_MANAGED_SETTINGS";

fn inactive(msg: String) -> Finding {
    Finding::new(Code::AgentHookInactive, msg)
}

/// Every switch that keeps `target` from running closegate's hook for the worktree around `cwd`;
/// Codex's hook trust is judged by closegate's computed hash only when `computed_trust` (doctor
/// asks Codex itself when it can: `codex_app`).
pub fn off(target: Target, cwd: &Path, computed_trust: bool) -> Vec<Finding> {
    off_in(
        target,
        cwd,
        Repo::discover(cwd).ok().as_ref(),
        computed_trust,
    )
}

/// [`off`] with the repository around `cwd` already opened (the stop hook's, opened once).
pub fn off_in(
    target: Target,
    cwd: &Path,
    repo: Option<&Repo>,
    computed_trust: bool,
) -> Vec<Finding> {
    let root = repo.and_then(Repo::workdir);
    let root = root.as_deref().unwrap_or(cwd);
    let files = Files::default();
    let mut found = match &target.row().off {
        Off::SettingsKeys {
            managed,
            every_file,
            managed_only,
        } => settings_keys(
            target,
            root,
            repo,
            &files,
            (managed, every_file, managed_only),
        ),
        Off::ConfigFalse {
            table,
            key,
            user,
            project,
        } => config_false(target, root, (table, key), user, project),
        Off::GeminiSettings => super::gemini_switches::off(root),
        Off::None => Vec::new(),
    };
    if target.row().trust == Trust::Codex {
        found.extend(codex_trust(cwd, repo, computed_trust));
    }
    found.extend(plugin_problems(target, root, repo, &files, computed_trust));
    found
}

/// For a hook installed as the client's plugin alone (whether it is disabled matters only then):
/// the plugin disabled; for Codex, judged by closegate's computed hash when `computed_trust`,
/// its hooks untrusted (`codex_plugin`).
fn plugin_problems(
    target: Target,
    root: &Path,
    repo: Option<&Repo>,
    files: &Files,
    computed_trust: bool,
) -> Vec<Finding> {
    let Some(row) = target.row().plugin.as_ref() else {
        return Vec::new();
    };
    if in_settings(target, root, repo, files) {
        return Vec::new();
    }
    match plugin_in(target, root, repo, files) {
        Some(Plugin::Disabled(file)) => vec![inactive(format!(
            "{} disables the plugin {}, and closegate's hook is installed only as that plugin: \
             enable it again (or run `closegate agent install --target {}`)",
            file.display(),
            row.id,
            target.as_str()
        ))],
        Some(Plugin::Enabled(_)) if target.row().trust == Trust::Codex && computed_trust => {
            codex_plugin_trust()
        }
        _ => Vec::new(),
    }
}

/// closegate's Codex plugin, enabled, as Codex keeps it: a copy of it, and each of its hooks
/// trusted by the hash closegate computes (the content part of Codex's trust only Codex checks).
fn codex_plugin_trust() -> Vec<Finding> {
    let Ok(home) = codex::home() else {
        return Vec::new();
    };
    let config_path = home.join("config.toml");
    let config = codex::load_config(&config_path).unwrap_or_default();
    let cached = codex_plugin::cached(&home);
    if cached.is_empty() {
        return vec![inactive(format!(
            "Codex has the plugin {} enabled but keeps no copy of it under {}: run `codex plugin \
             add {}`",
            codex_plugin::ID,
            home.join("plugins/cache").display(),
            codex_plugin::ID
        ))];
    }
    let mut found = Vec::new();
    for file in cached {
        let text = crate::input_file::read(&file).map(|b| String::from_utf8_lossy(&b).into_owned());
        for entry in codex_plugin::entries(&text.unwrap_or_default()) {
            let why = match codex::trust_of(&config, &entry) {
                codex::Trust::Trusted => continue,
                codex::Trust::Untrusted => "has no trust entry",
                codex::Trust::Stale => "is trusted only as another version of itself",
            };
            found.push(inactive(format!(
                "Codex skips the plugin's {} hook ({}) without a word: it {why} in {} \
                 (`[hooks.state.\"{}\"]`); {}",
                entry.event,
                file.display(),
                config_path.display(),
                entry.key,
                codex_plugin::TRUST_FIX
            )));
        }
    }
    found
}

/// closegate's plugin as the client sees it: enabled or disabled, by the file that decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plugin {
    Enabled(PathBuf),
    Disabled(PathBuf),
}

/// Whether closegate's plugin is enabled for the worktree `root`, and by which file (`None`: no
/// file names it).
pub fn plugin(target: Target, root: &Path) -> Option<Plugin> {
    let files = Files::default();
    plugin_in(target, root, Repo::discover(root).ok().as_ref(), &files)
}

/// [`plugin`] with the repository around `root` already opened (the stop hook's, opened once).
pub fn plugin_in_repo(target: Target, root: &Path, repo: Option<&Repo>) -> Option<Plugin> {
    plugin_in(target, root, repo, &Files::default())
}

fn plugin_in(target: Target, root: &Path, repo: Option<&Repo>, files: &Files) -> Option<Plugin> {
    let plugin = target.row().plugin.as_ref()?;
    let mut decided = None;
    match plugin.enabled {
        Enabled::SettingsKey(key) => {
            let mut paths: Vec<PathBuf> = [Scope::User, Scope::Project, Scope::Local]
                .into_iter()
                .filter_map(|s| install::settings_path_in(target, s, root, repo).ok())
                .collect();
            if let Off::SettingsKeys { managed, .. } = &target.row().off {
                paths.push(managed_file(managed));
            }
            for file in paths {
                let Some((_, value)) = files.json(&file) else {
                    continue;
                };
                match value[key][plugin.id].as_bool() {
                    Some(true) => decided = Some(Plugin::Enabled(file)),
                    Some(false) => decided = Some(Plugin::Disabled(file)),
                    None => {}
                }
            }
        }
        Enabled::ConfigTable(table) => {
            let file = codex::home().ok()?.join("config.toml");
            let config = codex::load_config(&file).ok()?;
            let entry = config.get(table)?.get(plugin.id)?;
            decided = match entry.get("enabled").and_then(toml::Value::as_bool) {
                Some(false) => Some(Plugin::Disabled(file)),
                _ => Some(Plugin::Enabled(file)),
            };
        }
    }
    decided
}

/// Whether closegate's hook is in a settings file the client reads for `root` (not as a plugin).
fn in_settings(target: Target, root: &Path, repo: Option<&Repo>, files: &Files) -> bool {
    [Scope::Project, Scope::Local, Scope::User]
        .into_iter()
        .filter_map(|s| install::settings_path_in(target, s, root, repo).ok())
        .filter_map(|f| files.json(&f))
        .any(|(text, _)| !settings::ours(&text, &target.row().shape).is_empty())
}

/// The managed settings file (`managed`, or the test switch's file in a debug build).
fn managed_file(managed: &str) -> PathBuf {
    crate::sys::test_switch(MANAGED_SWITCH).map_or_else(|| PathBuf::from(managed), PathBuf::from)
}

/// The JSON settings files one look at the switches read, each read once (the stop hook asks
/// for some of them three times: for the switches, for its own entry, for the plugin).
#[derive(Default)]
struct Files(std::cell::RefCell<Vec<(PathBuf, Option<Json>)>>);

/// A settings file's text and its JSON value.
type Json = (String, Value);

impl Files {
    fn json(&self, path: &Path) -> Option<Json> {
        if let Some((_, read)) = self.0.borrow().iter().find(|(p, _)| p == path) {
            return read.clone();
        }
        let read = super::settings::json_of(path);
        self.0.borrow_mut().push((path.to_path_buf(), read.clone()));
        read
    }
}

/// Whether a switch's value turns hooks off: `true`, or a list naming `hooks`.
fn set(value: &Value) -> bool {
    match value {
        Value::Bool(b) => *b,
        Value::Array(items) => items.iter().any(|i| i == "hooks"),
        _ => false,
    }
}

/// The JSON settings switches: (managed file, keys in every file, keys in managed settings only).
type Keys<'k> = (&'k str, &'k [&'k str], &'k [&'k str]);

fn settings_keys(
    target: Target,
    root: &Path,
    repo: Option<&Repo>,
    files: &Files,
    (managed, every_file, managed_only): Keys<'_>,
) -> Vec<Finding> {
    let name = target.row().display;
    let mut found = Vec::new();
    let managed = managed_file(managed);
    if let Some((text, value)) = files.json(&managed) {
        let ours = !settings::ours(&text, &target.row().shape).is_empty();
        for key in every_file.iter().chain(managed_only) {
            if !set(&value[key]) || (ours && every_file.iter().all(|k| k != key)) {
                continue;
            }
            found.push(inactive(format!(
                "{} (managed settings) sets `{key}`, so {name} runs no hook of the project's or \
                 the user's settings, closegate's stop hook included: whoever manages that file \
                 must remove the key, or put closegate's hook in its `hooks` (`closegate agent \
                 hooks --target {}` prints it)",
                managed.display(),
                target.as_str()
            )));
        }
    }
    for scope in [Scope::User, Scope::Project, Scope::Local] {
        let Ok(path) = install::settings_path_in(target, scope, root, repo) else {
            continue;
        };
        let Some((_, value)) = files.json(&path) else {
            continue;
        };
        for key in every_file {
            if set(&value[key]) {
                found.push(inactive(format!(
                    "{} sets `{key}: true`, so {name} runs none of the hooks of its settings \
                     files, closegate's stop hook included: remove the key",
                    path.display()
                )));
            }
        }
    }
    found
}

fn config_false(
    target: Target,
    root: &Path,
    (table, key): (&str, &str),
    user: &str,
    project: &str,
) -> Vec<Finding> {
    let user_dir = match target.row().files.user_root {
        Home::CodexHome => codex::home().ok(),
        Home::Home => std::env::var_os("HOME").map(PathBuf::from),
    };
    let files = [user_dir.map(|d| d.join(user)), Some(root.join(project))];
    let mut found = Vec::new();
    for path in files.into_iter().flatten() {
        let Ok(config) = codex::load_config(&path) else {
            continue;
        };
        if config.get(table).and_then(|t| t.get(key)) == Some(&toml::Value::Boolean(false)) {
            found.push(inactive(format!(
                "{} sets `[{table}] {key} = false`, so {} runs no hook, closegate's stop hook \
                 included: remove the key (or set it to true)",
                path.display(),
                target.row().display
            )));
        }
    }
    found
}

/// Codex's own conditions on closegate's hooks where Codex reads them (the main checkout's
/// `.codex/hooks.json`, `$CODEX_HOME/hooks.json`): a worktree without `.codex/` loads no project
/// layer, an untrusted project loads no project hook, an untrusted or changed hook is skipped.
fn codex_trust(cwd: &Path, repo: Option<&Repo>, computed_trust: bool) -> Vec<Finding> {
    let Ok(home) = codex::home() else {
        return Vec::new();
    };
    let config_path = home.join("config.toml");
    let Ok(text) = codex::read_config(&config_path) else {
        return Vec::new();
    };
    let Ok(config) = codex::parse_config(&text, &config_path) else {
        return Vec::new();
    };
    let root = repo.and_then(Repo::workdir);
    let main = repo.and_then(|r| install::main_checkout(r).ok());
    let read = |scope| {
        let file = install::settings_path_in(Target::Codex, scope, cwd, repo).ok()?;
        let text = String::from_utf8(crate::input_file::read_if_present(&file).ok()??).ok()?;
        Some((file, text))
    };
    let shape = &Target::Codex.row().shape;
    let project = read(Scope::Project).filter(|(_, t)| !settings::ours(t, shape).is_empty());
    let user = read(Scope::User).filter(|(_, t)| !settings::ours(t, shape).is_empty());
    let mut found = Vec::new();
    if project.is_some() {
        let needs_folder = user.is_none();
        found.extend(project_problems(
            &config,
            &config_path,
            root.as_deref(),
            main.as_deref(),
            needs_folder,
        ));
    }
    let computed = project.iter().chain(user.iter()).filter(|_| computed_trust);
    for (file, text) in computed {
        for entry in codex::entries(file, text) {
            let why = match codex::trust_of(&config, &entry) {
                codex::Trust::Trusted => continue,
                codex::Trust::Untrusted => "has no trust entry",
                codex::Trust::Stale => "is trusted only as an older version of itself",
            };
            found.push(inactive(format!(
                "Codex skips the {} hook in {} without a word: it {why} in {} (`[hooks.state.\"{}\"]`); \
                 run `closegate agent install --target codex` again",
                entry.event,
                file.display(),
                config_path.display(),
                entry.key
            )));
        }
    }
    found
}

/// For the main checkout's hooks file: the worktree's `.codex/` folder (when no user hook stands
/// in) and the project's trust.
fn project_problems(
    config: &toml::Table,
    config_path: &Path,
    root: Option<&Path>,
    main: Option<&Path>,
    needs_folder: bool,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    if let (Some(root), Some(main)) = (root, main)
        && needs_folder
        && root != main
        && !root.join(".codex").is_dir()
    {
        findings.push(inactive(format!(
            "{} has no .codex/ folder, so Codex loads no project hooks for it: run `closegate \
             agent install --target codex` in it (it makes the folder), or commit \
             .codex/hooks.json to the base branch (worktrees made from it have the folder)",
            root.display()
        )));
    }
    let Some(main) = main else { return findings };
    let levels: Vec<String> = [Some(main), root]
        .into_iter()
        .flatten()
        .filter_map(|p| codex::project_trust(config, p))
        .collect();
    if !levels.iter().any(|l| l == "trusted") {
        let said = if levels.iter().any(|l| l == "untrusted") {
            "is marked untrusted"
        } else {
            "is not trusted"
        };
        findings.push(inactive(format!(
            "the project {} {said} in {}, so Codex loads none of its hooks: set `[projects.\"{}\"] \
             trust_level = \"trusted\"` (or run `closegate agent install --target codex`)",
            main.display(),
            config_path.display(),
            main.display()
        )));
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_switch_is_true_or_a_list_naming_hooks() {
        assert!(set(&Value::Bool(true)));
        assert!(set(&serde_json::json!(["skills", "hooks"])));
        for off in [
            Value::Bool(false),
            Value::Null,
            serde_json::json!("true"),
            serde_json::json!(1),
            serde_json::json!(["skills"]),
        ] {
            assert!(!set(&off), "{off}");
        }
    }
}
