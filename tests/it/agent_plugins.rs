//! closegate as a Claude Code and Codex plugin (SPEC §27.3): this repository is the marketplace
//! (`.claude-plugin/marketplace.json`, `.agents/plugins/marketplace.json`), the plugin
//! `plugins/closegate` runs `closegate agent stop-hook`, versioned with closegate; `agent install
//! --plugin` prints the commands that add it; `agent doctor` recognises a hook installed that way
//! and says when the plugin is disabled, and the stop hook blocks then.
//!
//! Attacks: the plugin disabled in the untracked local settings while the hook runs only as the
//! plugin (named by doctor, blocked by the hook); a plugin version left behind by a release;
//! Codex's copy of the plugin missing, untrusted, or edited to add `--max-blocks 0` with its
//! trust recomputed (the real Codex's scenes are in agent_clients.rs).

use std::path::Path;

use serde_json::Value;

use crate::agent::{PASSING_CONFIG, QUESTION, blocked, claude_stop};
use crate::agent_install::run;
use crate::scene::Scene;

fn repo_json(rel: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Every manifest and marketplace entry carries closegate's own version.
#[test]
fn the_plugins_are_versioned_with_closegate() {
    let version = env!("CARGO_PKG_VERSION");
    for rel in [
        "plugins/closegate/.claude-plugin/plugin.json",
        "plugins/closegate/.codex-plugin/plugin.json",
    ] {
        assert_eq!(repo_json(rel)["version"], version, "{rel}");
        assert_eq!(repo_json(rel)["name"], "closegate", "{rel}");
    }
    let claude = repo_json(".claude-plugin/marketplace.json");
    assert_eq!(claude["metadata"]["version"], version);
    let codex = repo_json(".agents/plugins/marketplace.json");
    for market in [&claude, &codex] {
        assert_eq!(market["name"], "closegate");
        let entry = &market["plugins"][0];
        assert_eq!(
            (&entry["name"], &entry["version"]),
            (&Value::from("closegate"), &Value::from(version))
        );
    }
    assert_eq!(claude["plugins"][0]["source"], "./plugins/closegate");
    assert_eq!(codex["plugins"][0]["source"]["path"], "./plugins/closegate");
    let manifest = repo_json("plugins/closegate/.codex-plugin/plugin.json");
    assert_eq!(manifest["hooks"], "./hooks/codex-hooks.json");
}

/// The plugin's hooks are exactly what `agent hooks` prints for a configuration whose checks
/// need the default time limit (600 s, harness timeout 630 s), each client's own.
#[test]
fn the_plugins_hooks_are_closegates_stop_hook() {
    let s = Scene::returned(Some(PASSING_CONFIG)).own_home();
    for (target, rel) in [
        ("claude-code", "plugins/closegate/hooks/hooks.json"),
        ("codex", "plugins/closegate/hooks/codex-hooks.json"),
    ] {
        let (code, out, err) = run(&s, &s.wt, &["agent", "hooks", "--target", target], None);
        assert_eq!(code, 0, "{err}");
        let printed: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(repo_json(rel), printed, "{rel}");
    }
}

/// `agent install --plugin` prints the commands that add the marketplace and install the
/// plugin (for Codex, and how to trust its hooks), writing nothing; a client without plugins is an exit-2 error naming it.
#[test]
fn install_plugin_prints_the_commands() {
    let s = Scene::returned(Some(PASSING_CONFIG)).own_home();
    for (target, needles) in [
        (
            "claude-code",
            [
                "claude plugin marketplace add SOURCE",
                "claude plugin install closegate@closegate",
            ],
        ),
        (
            "codex",
            [
                "codex plugin marketplace add SOURCE",
                "codex plugin add closegate@closegate",
            ],
        ),
    ] {
        let args = ["agent", "install", "--target", target, "--plugin"];
        let (code, out, err) = run(&s, &s.wt, &args, None);
        assert_eq!(code, 0, "{err}");
        for needle in needles {
            assert!(out.contains(needle), "{out}");
        }
        // Codex leaves a plugin's hooks untrusted (measured): the trust step is named.
        let trust = "# Codex runs the plugin's hooks only once trusted";
        assert_eq!(out.contains(trust), target == "codex", "{out}");
    }
    assert!(!s.wt.join(".claude").exists() && !s.root().join(".codex").exists());
    let args = ["agent", "install", "--target", "gemini", "--plugin"];
    let (code, _, err) = run(&s, &s.wt, &args, None);
    assert_eq!(code, 2);
    assert!(err.contains("Gemini CLI has no plugins"), "{err}");
}

/// Doctor recognises closegate's hook installed as a plugin (enabled in the committed project
/// settings, the team rollout; enabled in Codex's configuration), and names a local settings
/// file that disables it; the stop hook blocks while it is disabled.
#[test]
fn doctor_recognises_a_plugin_installed_hook_and_a_disabled_plugin() {
    let s = Scene::returned(Some(PASSING_CONFIG)).own_home();
    let doctor = |target: &str| run(&s, &s.wt, &["agent", "doctor", "--target", target], None);
    let (code, out, _) = doctor("claude-code");
    assert_eq!(code, 1, "not installed yet: {out}");
    std::fs::create_dir_all(s.wt.join(".claude")).unwrap();
    let enabled = "{\"enabledPlugins\": {\"closegate@closegate\": true}}\n";
    std::fs::write(s.wt.join(".claude/settings.json"), enabled).unwrap();
    let (code, out, _) = doctor("claude-code");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("installed as the plugin closegate@closegate"),
        "{out}"
    );

    let local = s.wt.join(".claude/settings.local.json");
    std::fs::write(
        &local,
        "{\"enabledPlugins\": {\"closegate@closegate\": false}}\n",
    )
    .unwrap();
    let (code, out, _) = doctor("claude-code");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("disables the plugin closegate@closegate")
            && out.contains("settings.local.json"),
        "{out}"
    );
    let input = claude_stop(&s.wt, Some(QUESTION), "/nonexistent.jsonl").to_string();
    let (_, stdout, _) = run(&s, &s.wt, &["agent", "stop-hook"], Some(input.as_bytes()));
    let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("disables the plugin"), "{reason}");
    std::fs::remove_file(&local).unwrap();
    let (_, stdout, _) = run(&s, &s.wt, &["agent", "stop-hook"], Some(input.as_bytes()));
    assert_eq!(stdout, "");

    codex_plugin_enabled_copied_and_trusted(&s, &doctor);
}

/// Codex (as 0.169.0 and 0.171.0 keep a plugin, tests/it/agent_clients.rs): the plugin enabled
/// with no copy in Codex's cache, then copied but its hooks untrusted, then trusted (the hook
/// part of Codex's trust, as closegate computes it without a `codex` binary); then the copy
/// edited to add `--max-blocks 0`, trust recomputed for the edit: named as not the one
/// closegate ships.
fn codex_plugin_enabled_copied_and_trusted(
    s: &Scene,
    doctor: &dyn Fn(&str) -> (i32, String, String),
) {
    let home = s.home.path().join(".codex");
    std::fs::create_dir_all(&home).unwrap();
    let mut config = "[plugins.\"closegate@closegate\"]\nenabled = true\n".to_string();
    std::fs::write(home.join("config.toml"), &config).unwrap();
    let (code, out, _) = doctor("codex");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("keeps no copy of it"), "{out}");
    let cached = home.join("plugins/cache/closegate/closegate/0.1.0/hooks/codex-hooks.json");
    std::fs::create_dir_all(cached.parent().unwrap()).unwrap();
    let shipped = repo_json("plugins/closegate/hooks/codex-hooks.json");
    std::fs::write(&cached, shipped.to_string()).unwrap();
    let (code, out, _) = doctor("codex");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("Codex skips the plugin's Stop hook") && out.contains("has no trust entry"),
        "{out}"
    );
    let trust = |config: &mut String, hooks: &Value| {
        for (event, label) in [("Stop", "stop"), ("SubagentStop", "subagent_stop")] {
            let hook = &hooks["hooks"][event][0]["hooks"][0];
            let (command, timeout) = (
                hook["command"].as_str().unwrap(),
                hook["timeout"].as_u64().unwrap(),
            );
            let hash = crate::agent_install::codex_hash(label, command, timeout);
            let key = format!("closegate@closegate:hooks/codex-hooks.json:{label}:0:0");
            config.push_str(&format!(
                "\n[hooks.state.\"{key}\"]\ntrusted_hash = \"{hash}\"\n"
            ));
        }
    };
    trust(&mut config, &shipped);
    std::fs::write(home.join("config.toml"), &config).unwrap();
    let (code, out, _) = doctor("codex");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("installed as the plugin closegate@closegate"),
        "{out}"
    );
    let text = shipped
        .to_string()
        .replace("--time-limit 600\"", "--time-limit 600 --max-blocks 0\"");
    let edited: Value = serde_json::from_str(&text).unwrap();
    std::fs::write(&cached, &text).unwrap();
    let mut config = "[plugins.\"closegate@closegate\"]\nenabled = true\n".to_string();
    trust(&mut config, &edited);
    std::fs::write(home.join("config.toml"), &config).unwrap();
    let (code, out, _) = doctor("codex");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("not the one closegate ships") && out.contains("--max-blocks 0"),
        "{out}"
    );
    assert!(!out.contains("Codex skips"), "the edit is trusted: {out}");
}
