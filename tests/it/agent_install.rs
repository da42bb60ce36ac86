//! "Installed means it runs" (SPEC §26.3): `agent install` writes the hooks file where the
//! harness reads it for a worktree, the trust entry Codex requires for that exact hook, and a
//! harness timeout above the hook's time limit, recomputed on every install; `agent doctor` and
//! `validate` say `agent-hook-inactive` when the hook as installed would not run; the stop hook
//! blocks when the installed hook is not the committed one. The real clients confirm each of
//! these rules in tests/it/agent_codex.rs and tests/it/agent_claude.rs.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::agent::{PASSING_CONFIG, QUESTION, blocked, claude_stop, codex_stop, settings_of};
use crate::fixture::{git, parts};
use crate::scene::Scene;

/// A folder holding `closegate` (the test build), to be the PATH the harness gives hooks.
pub fn bin_dir(s: &Scene) -> PathBuf {
    let dir = s.home.path().join("bin");
    if !dir.join("closegate").exists() {
        std::fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_closegate"), dir.join("closegate")).unwrap();
    }
    dir
}

/// `closegate ARGS` in `cwd` with the scene's home and `closegate` on the PATH.
pub fn run(s: &Scene, cwd: &Path, args: &[&str], stdin: Option<&[u8]>) -> (i32, String, String) {
    let mut cmd = s.bin(cwd, args);
    let path = format!("{}:/usr/bin:/bin", bin_dir(s).display());
    cmd.env("PATH", path);
    let out = match stdin {
        Some(bytes) => crate::fixture::output_with_stdin(cmd, bytes),
        None => cmd.output().unwrap(),
    };
    parts(&out)
}

/// Codex's trust hash of a hook, computed here from its documented rule (independent of the
/// product's code): SHA-256 of the hook's identity as compact JSON with sorted keys.
pub fn codex_hash(event: &str, command: &str, timeout: u64) -> String {
    use sha2::{Digest, Sha256};
    let identity = serde_json::json!({
        "event_name": event,
        "hooks": [{"async": false, "command": command, "timeout": timeout, "type": "command"}],
    });
    let digest = Sha256::digest(serde_json::to_string(&identity).unwrap().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

fn codex_config(s: &Scene) -> toml::Table {
    let text = std::fs::read_to_string(s.home.path().join(".codex/config.toml")).unwrap();
    text.parse().unwrap()
}

fn trusted_hash(config: &toml::Table, key: &str) -> Option<String> {
    config
        .get("hooks")?
        .get("state")?
        .get(key)?
        .get("trusted_hash")?
        .as_str()
        .map(str::to_string)
}

pub fn doctor(s: &Scene, cwd: &Path, target: &str) -> (i32, Vec<String>) {
    let (code, out, err) = run(s, cwd, &["agent", "doctor", "--target", target], None);
    assert!(code == 0 || code == 1, "{out}{err}");
    let lines = out
        .lines()
        .filter(|l| l.starts_with("warning"))
        .map(str::to_string)
        .collect();
    (code, lines)
}

pub fn commit_on_main(s: &Scene, paths: &[&str], msg: &str) {
    let root = s.root();
    let mut add = vec!["add", "-f"];
    add.extend_from_slice(paths);
    git(&root, &add);
    git(&root, &["commit", "-qm", msg]);
}

/// SPEC §26.3 with Codex: installed from inside a worktree, the hook goes to the main checkout's
/// `.codex/hooks.json` (the file Codex reads for every worktree), trusted in Codex's
/// `config.toml` as that exact hook, with the project trusted; reinstalling with a new time limit
/// rewrites the timeout and the trust; uninstalling drops both. `doctor` names each way it would
/// not run: untrusted, stale trust, a worktree without `.codex/`, a timeout below the limit,
/// `closegate` not on the PATH.
#[test]
fn codex_install_from_a_worktree_writes_what_codex_reads_and_trusts_it() {
    let s = Scene::returned(Some(PASSING_CONFIG)).own_home();
    let (code, out, err) = run(&s, &s.wt, &["agent", "install", "--target", "codex"], None);
    assert_eq!(code, 0, "{err}");
    let main = s.root().canonicalize().unwrap();
    let file = main.join(".codex/hooks.json");
    assert!(out.contains(&*file.display().to_string()), "{out}");
    assert!(out.contains("trusted the project"), "{out}");
    assert!(
        !s.wt.join(".codex/hooks.json").exists(),
        "never the worktree's own file"
    );
    let hooks: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let command = "closegate agent stop-hook --target codex --mode claims --time-limit 600";
    let config = codex_config(&s);
    for (event, label) in [("Stop", "stop"), ("SubagentStop", "subagent_stop")] {
        let hook = &hooks["hooks"][event][0]["hooks"][0];
        assert_eq!(
            (hook["command"].as_str(), hook["timeout"].as_u64()),
            (Some(command), Some(630))
        );
        let key = format!("{}:{label}:0:0", file.display());
        assert_eq!(
            trusted_hash(&config, &key),
            Some(codex_hash(label, command, 630)),
            "{key}"
        );
    }
    let project = &config["projects"][&*main.display().to_string()]["trust_level"];
    assert_eq!(project.as_str(), Some("trusted"));

    // This worktree was made before `.codex/` was on the base, and Codex loads no project layer
    // without it: the install made it (SPEC §27.3), so the hook runs here now.
    assert!(out.contains("made "), "{out}");
    assert!(s.wt.join(".codex").is_dir());
    let (code, warnings) = doctor(&s, &s.wt, "codex");
    assert_eq!((code, warnings.len()), (0, 0), "{warnings:?}");
    // Another worktree made before, where nothing was installed, still lacks it.
    git(&s.root(), &["branch", "-f", "agent/before", "main"]);
    let before = s.fx.worktree("before", "agent/before");
    let (code, warnings) = doctor(&s, &before, "codex");
    assert_eq!(code, 1);
    assert!(
        warnings.iter().any(|w| w.contains("has no .codex/ folder")),
        "{warnings:?}"
    );
    commit_on_main(&s, &[".codex/hooks.json"], "codex stop hook");
    git(&s.root(), &["branch", "-f", "agent/z2", "main"]);
    let wt2 = s.fx.worktree("z2", "agent/z2");
    let (code, warnings) = doctor(&s, &wt2, "codex");
    assert_eq!((code, warnings.len()), (0, 0), "{warnings:?}");

    // Reinstall with a new time limit (the working copy's configuration, not yet committed).
    let slow = "[[checks]]\nname = \"smoke\"\nrun = \"true\"\ntimeout_s = 900\n";
    std::fs::write(s.root().join(".closegate.toml"), slow).unwrap();
    let (code, out, err) = run(
        &s,
        &s.root(),
        &["agent", "install", "--target", "codex"],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("installed") && out.contains("time limit 960 s"),
        "{out}"
    );
    let hooks: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let slow_command = "closegate agent stop-hook --target codex --mode claims --time-limit 960";
    let hook = &hooks["hooks"]["Stop"][0]["hooks"][0];
    assert_eq!(
        (hook["command"].as_str(), hook["timeout"].as_u64()),
        (Some(slow_command), Some(990))
    );
    assert_eq!(
        hooks["hooks"]["Stop"].as_array().unwrap().len(),
        1,
        "rewritten, not added"
    );
    let key = format!("{}:stop:0:0", file.display());
    let config = codex_config(&s);
    assert_eq!(
        trusted_hash(&config, &key),
        Some(codex_hash("stop", slow_command, 990))
    );
    // Until the reinstalled hook is committed, it is not the base tip's (SPEC §27.3).
    let (code, warnings) = doctor(&s, &s.root(), "codex");
    assert_eq!(code, 1);
    assert!(
        warnings.len() == 1 && warnings[0].contains("not the committed one"),
        "{warnings:?}"
    );
    commit_on_main(
        &s,
        &[".closegate.toml", ".codex/hooks.json"],
        "slower checks",
    );
    let (code, warnings) = doctor(&s, &s.root(), "codex");
    assert_eq!((code, warnings.len()), (0, 0), "{warnings:?}");

    // A timeout edited by hand: below the limit, and the trust is now for another hook.
    let edited = std::fs::read_to_string(&file)
        .unwrap()
        .replace("990", "100");
    std::fs::write(&file, edited).unwrap();
    let (_, warnings) = doctor(&s, &s.root(), "codex");
    let text = warnings.join("\n");
    assert!(
        text.contains("timeout is 100 s, below its --time-limit 960 s"),
        "{text}"
    );
    assert!(text.contains("trusted only as an older version"), "{text}");
    // No trust at all, and `closegate` not on the PATH.
    std::fs::remove_file(s.home.path().join(".codex/config.toml")).unwrap();
    std::fs::remove_dir_all(bin_dir(&s)).unwrap();
    let (code, out, _) = parts(
        &s.bin(
            &s.root(),
            &["agent", "doctor", "--target", "codex", "--json"],
        )
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap(),
    );
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&out).unwrap();
    let typed: closegate::render::doctor::Doctor = serde_json::from_value(report.clone()).unwrap();
    assert_eq!(
        serde_json::to_value(&typed).unwrap(),
        report,
        "reads back as its type"
    );
    assert!(!typed.ok && typed.schema == 1 && typed.targets == ["codex"]);
    let messages: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            assert_eq!(
                (f["code"].as_str(), f["severity"].as_str()),
                (Some("agent-hook-inactive"), Some("warning"))
            );
            f["message"].as_str().unwrap()
        })
        .collect();
    let all = messages.join("\n");
    for needle in [
        "has no trust entry",
        "is not trusted",
        "not found on the PATH",
    ] {
        assert!(all.contains(needle), "{needle}: {all}");
    }

    // Uninstall takes the hooks out and their trust with them.
    let (code, _, err) = run(
        &s,
        &s.root(),
        &["agent", "install", "--target", "codex"],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(
        &s,
        &s.root(),
        &["agent", "uninstall", "--target", "codex"],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), "{}");
    let config = codex_config(&s);
    assert_eq!(trusted_hash(&config, &key), None);
}

/// Following README's quick-start order (`init`, then `agent install`, before anything is
/// committed) writes a timeout above what the configured checks need, never the 600 s default.
#[test]
fn install_before_the_configuration_is_committed_uses_the_configuration_being_installed() {
    let s = Scene::new().own_home();
    let config = "[[checks]]\nname = \"unit\"\nrun = \"true\"\ntimeout_s = 900\n";
    std::fs::write(s.root().join(".closegate.toml"), config).unwrap();
    let (code, out, err) = run(
        &s,
        &s.root(),
        &["agent", "install", "--target", "claude-code"],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("time limit 960 s") && out.contains("harness timeout 990 s"),
        "{out}"
    );
    let hooks: Value =
        serde_json::from_str(&settings_of(&s.root(), ".claude/settings.json")).unwrap();
    let hook = &hooks["hooks"]["Stop"][0]["hooks"][0];
    assert_eq!(hook["timeout"], 990);
    assert!(
        hook["command"]
            .as_str()
            .unwrap()
            .ends_with("--time-limit 960")
    );
    let (code, warnings) = doctor(&s, &s.root(), "claude-code");
    assert_eq!((code, warnings.len()), (0, 0), "{warnings:?}");
}

/// `doctor` for Claude Code: not installed where it reads hooks, a timeout below the limit.
#[test]
fn doctor_names_each_reason_the_hook_would_not_run() {
    let s = Scene::returned(Some(PASSING_CONFIG)).own_home();
    let (code, warnings) = doctor(&s, &s.wt, "claude-code");
    assert_eq!(code, 1);
    assert!(
        warnings[0].contains("no closegate stop hook where Claude Code reads it"),
        "{warnings:?}"
    );
    assert!(
        warnings[0].contains("closegate agent install --target claude-code"),
        "{warnings:?}"
    );
    let low = r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "closegate agent stop-hook --target claude-code --time-limit 900", "timeout": 600}]}]}}"#;
    s.fx.write(&s.wt, ".claude/settings.json", low);
    let (code, warnings) = doctor(&s, &s.wt, "claude-code");
    assert_eq!(code, 1);
    let text = warnings.join("\n");
    assert!(
        text.contains("timeout is 600 s, below its --time-limit 900 s plus 30 s"),
        "{text}"
    );
    assert!(text.contains("not for SubagentStop"), "{text}");
    // A hooks file in the worktree itself is not where Codex reads it.
    s.fx.write(
        &s.wt,
        ".codex/hooks.json",
        &low.replace("claude-code", "codex"),
    );
    let (_, warnings) = doctor(&s, &s.wt, "codex");
    assert!(
        warnings[0].contains("Codex reads a worktree's hooks from the main checkout"),
        "{warnings:?}"
    );
}

/// Attack on the time bound: the configuration grows after the hook was installed (a check of
/// 900 s committed on the base), so the installed `--time-limit 600` and its harness timeout are
/// below what the checks need. `doctor` names it and the fix; reinstalling (in the worktree,
/// where Claude Code reads it) writes 960 s and 990 s and `doctor` is clean again. Control: right
/// after the first install, no warning.
#[test]
fn doctor_warns_when_the_configuration_outgrew_the_installed_time_limit() {
    let s = Scene::returned(Some(PASSING_CONFIG)).own_home();
    let install = ["agent", "install", "--target", "claude-code"];
    let (code, _, err) = run(&s, &s.wt, &install, None);
    assert_eq!(code, 0, "{err}");
    assert_eq!(doctor(&s, &s.wt, "claude-code"), (0, Vec::new()));
    let slow = "[[checks]]\nname = \"slow\"\nrun = \"true\"\ntimeout_s = 900\n";
    s.fx.commit("main", &[(".closegate.toml", Some(slow))], "a slow check");
    let (code, warnings) = doctor(&s, &s.wt, "claude-code");
    assert_eq!(code, 1, "{warnings:?}");
    let text = warnings.join("\n");
    assert!(
        text.contains("--time-limit is 600 s, below the 960 s the configured checks need")
            && text.contains("closegate agent install --target claude-code"),
        "{text}"
    );
    let (code, _, err) = run(&s, &s.wt, &install, None);
    assert_eq!(code, 0, "{err}");
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(s.wt.join(".claude/settings.json")).unwrap())
            .unwrap();
    let hook = &settings["hooks"]["Stop"][0]["hooks"][0];
    assert!(
        hook["command"]
            .as_str()
            .unwrap()
            .ends_with("--time-limit 960"),
        "{hook}"
    );
    assert_eq!(hook["timeout"], 990, "{hook}");
    assert_eq!(doctor(&s, &s.wt, "claude-code"), (0, Vec::new()));
}

/// `validate` reports the same: a Codex hook installed in the main checkout but not trusted.
#[test]
fn validate_warns_when_the_installed_hook_would_not_run() {
    let s = Scene::returned(Some(PASSING_CONFIG)).own_home();
    let (code, _, err) = run(
        &s,
        &s.root(),
        &["agent", "install", "--target", "codex"],
        None,
    );
    assert_eq!(code, 0, "{err}");
    commit_on_main(&s, &[".codex/hooks.json"], "codex stop hook");
    std::fs::remove_file(s.home.path().join(".codex/config.toml")).unwrap();
    let (code, out, err) = run(&s, &s.root(), &["validate"], None);
    assert_eq!(code, 0, "warnings never change the exit code: {out}{err}");
    assert!(out.contains("warning agent-hook-inactive"), "{out}");
    assert!(out.contains("has no trust entry"), "{out}");
    let (_, out, _) = run(&s, &s.root(), &["validate", "--json"], None);
    let value: Value = serde_json::from_str(&out).unwrap();
    let warnings = value["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("agent-hook-inactive")),
        "{value}"
    );
}

/// Attack: the agent edits the main checkout's `.codex/hooks.json` — every later session's hook,
/// outside every gate (the file is not in its worktree). The stop hook compares it with the base
/// tip's and blocks with the difference, whatever the stop says; put back, the stop passes.
#[test]
fn the_stop_hook_blocks_when_the_main_checkouts_hooks_file_was_edited() {
    let s = Scene::returned(Some(PASSING_CONFIG)).own_home();
    let (code, _, err) = run(
        &s,
        &s.root(),
        &["agent", "install", "--target", "codex"],
        None,
    );
    assert_eq!(code, 0, "{err}");
    commit_on_main(&s, &[".codex/hooks.json"], "codex stop hook");
    // The worktree was made before the hook was committed: Codex runs it there only with the
    // worktree's own `.codex/` folder (which `install` run in it makes).
    std::fs::create_dir_all(s.wt.join(".codex")).unwrap();
    let file = s.root().join(".codex/hooks.json");
    let committed = std::fs::read_to_string(&file).unwrap();
    let question = codex_stop(&s.wt, Some(QUESTION)).to_string();
    let stop = |input: &str| {
        run(
            &s,
            &s.wt,
            &["agent", "stop-hook", "--target", "codex"],
            Some(input.as_bytes()),
        )
    };
    let (_, stdout, _) = stop(&question);
    assert_eq!(stdout.trim(), "{}");
    for edited in [
        "{}\n".to_string(),
        committed.replace("--mode claims", "--mode claims --no-checks"),
    ] {
        std::fs::write(&file, &edited).unwrap();
        let (code, stdout, err) = stop(&question);
        assert_eq!(code, 0, "{err}");
        let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
        assert!(reason.contains("agent-hook-inactive"), "{reason}");
        assert!(
            reason.contains("the base tip main holds Stop `closegate agent stop-hook"),
            "{reason}"
        );
        assert!(
            reason.contains("checkout main -- .codex/hooks.json"),
            "{reason}"
        );
    }
    std::fs::write(&file, &committed).unwrap();
    let (_, stdout, _) = stop(&question);
    assert_eq!(stdout.trim(), "{}");
}

/// Attack: the agent empties its worktree's `.claude/settings.json` mid-session (Claude Code
/// keeps the hooks it started with, a new session would have none): blocked with the difference
/// against HEAD's.
#[test]
fn the_stop_hook_blocks_when_the_worktrees_claude_settings_were_emptied() {
    let s = Scene::returned(Some(PASSING_CONFIG)).own_home();
    let (code, _, err) = run(
        &s,
        &s.wt,
        &["agent", "install", "--target", "claude-code"],
        None,
    );
    assert_eq!(code, 0, "{err}");
    git(&s.wt, &["add", ".claude/settings.json"]);
    git(&s.wt, &["commit", "-qm", "the stop hook"]);
    std::fs::write(s.wt.join(".claude/settings.json"), "{}\n").unwrap();
    let input = claude_stop(&s.wt, Some(QUESTION), "/nonexistent.jsonl").to_string();
    let (_, stdout, _) = run(&s, &s.wt, &["agent", "stop-hook"], Some(input.as_bytes()));
    let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains("agent-hook-inactive") && reason.contains("holds no closegate hook"),
        "{reason}"
    );
    assert!(
        reason.contains("checkout HEAD -- .claude/settings.json"),
        "{reason}"
    );
}
