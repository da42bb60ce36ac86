//! Every switch that keeps a client from running the stop hook (SPEC §27.3), seen by `agent
//! doctor` and by the stop hook, written as real files where each client reads them: Claude
//! Code's `disableAllHooks` in the managed, user, project and local settings and
//! `allowManagedHooksOnly` in the managed ones; Codex's `[features] hooks = false` in the user's
//! and the project's `config.toml`, a worktree without `.codex/`, and trust. The installed entry
//! is compared with the committed one before anything else: an edited `--max-blocks 0` is never
//! obeyed first. The real clients confirm the switches in tests/it/agent_clients.rs.
//!
//! Attacks (the agent can write its worktree, the main checkout and the user's files): each
//! switch written mid-session; `--max-blocks 0` appended to the installed hook; the trust entry
//! dropped; the worktree's `.codex/` removed; a file where `install` makes `.codex/`.

use std::path::{Path, PathBuf};

use crate::agent::{PASSING_CONFIG, QUESTION, blocked, claude_stop, codex_stop};
use crate::agent_install::{bin_dir, commit_on_main};
use crate::fixture::{git, parts};
use crate::scene::Scene;

/// Claude Code's managed settings, for these tests (a debug build reads this file instead of
/// `/etc/claude-code/managed-settings.json`).
fn managed(s: &Scene) -> PathBuf {
    s.home.path().join("managed-settings.json")
}

/// `closegate ARGS` in `cwd`: the scene's home, `closegate` on the PATH, the managed settings of
/// [`managed`].
fn run(s: &Scene, cwd: &Path, args: &[&str], stdin: Option<&[u8]>) -> (i32, String, String) {
    let mut cmd = s.bin(cwd, args);
    cmd.env("PATH", format!("{}:/usr/bin:/bin", bin_dir(s).display()))
        .env("CLOSEGATE_TEST_CLAUDE_MANAGED_SETTINGS", managed(s));
    let out = match stdin {
        Some(bytes) => crate::fixture::output_with_stdin(cmd, bytes),
        None => cmd.output().unwrap(),
    };
    parts(&out)
}

/// `agent doctor --target TARGET`: exit code and the warning lines.
fn doctor(s: &Scene, cwd: &Path, target: &str) -> (i32, Vec<String>) {
    let (code, out, err) = run(s, cwd, &["agent", "doctor", "--target", target], None);
    assert!(code == 0 || code == 1, "{out}{err}");
    let lines = out
        .lines()
        .filter(|l| l.starts_with("warning"))
        .map(str::to_string);
    (code, lines.collect())
}

/// The stop hook on `input`: the block's reason, or `None` when the stop was let through.
fn stop(s: &Scene, args: &[&str], input: &str) -> Option<String> {
    let mut all = vec!["agent", "stop-hook"];
    all.extend_from_slice(args);
    let (code, stdout, err) = run(s, &s.wt, &all, Some(input.as_bytes()));
    assert_eq!(code, 0, "{err}");
    match stdout.trim() {
        "" | "{}" => None,
        _ => Some(blocked(&stdout)["reason"].as_str().unwrap().to_string()),
    }
}

/// A scene with Claude Code's hook installed in the worktree and committed there.
fn claude_scene() -> Scene {
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
    s
}

/// Attack: `disableAllHooks` written in each settings file Claude Code reads (managed, user,
/// project, local). Doctor says inactive, naming the file and the key; the stop hook (this
/// session still runs it) blocks a mere question with the same words; removed, both pass.
#[test]
fn claude_codes_disable_all_hooks_is_seen_in_every_settings_file() {
    let s = claude_scene();
    let question = claude_stop(&s.wt, Some(QUESTION), "/nonexistent.jsonl").to_string();
    assert_eq!(doctor(&s, &s.wt, "claude-code"), (0, Vec::new()));
    assert_eq!(stop(&s, &[], &question), None);
    let files = [
        managed(&s),
        s.home.path().join(".claude/settings.json"),
        s.wt.join(".claude/settings.local.json"),
    ];
    for file in &files {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, "{\"disableAllHooks\": true}\n").unwrap();
        let (code, warnings) = doctor(&s, &s.wt, "claude-code");
        assert_eq!(code, 1, "{}", file.display());
        let named = format!("{} ", file.display());
        assert!(
            warnings
                .iter()
                .any(|w| w.contains(&named) && w.contains("disableAllHooks")),
            "{warnings:?}"
        );
        let reason = stop(&s, &[], &question).expect("blocked");
        assert!(
            reason.contains("agent-hook-inactive") && reason.contains("disableAllHooks"),
            "{reason}"
        );
        assert!(reason.contains(&*file.display().to_string()), "{reason}");
        std::fs::remove_file(file).unwrap();
        assert_eq!(doctor(&s, &s.wt, "claude-code"), (0, Vec::new()));
        // Accepted again (which also starts the loop guard's count again).
        assert_eq!(stop(&s, &[], &question), None);
    }
    // The project's committed settings: the key added beside closegate's own hook.
    let project = s.wt.join(".claude/settings.json");
    let committed = std::fs::read_to_string(&project).unwrap();
    let edited = committed.replacen('{', "{\"disableAllHooks\": true,", 1);
    std::fs::write(&project, edited).unwrap();
    assert_eq!(doctor(&s, &s.wt, "claude-code").0, 1);
    let reason = stop(&s, &[], &question);
    assert!(
        reason
            .as_deref()
            .is_some_and(|r| r.contains("disableAllHooks")),
        "{reason:?}"
    );
    std::fs::write(&project, committed).unwrap();
    assert_eq!(stop(&s, &[], &question), None);
}

/// `allowManagedHooksOnly` and `strictPluginOnlyCustomization` keep the project's hooks from
/// running only in managed settings (Claude Code reads them nowhere else): there, doctor and the
/// hook say so; in the local settings they change nothing, and nothing is said.
#[test]
fn claude_codes_managed_only_switches_count_in_managed_settings_only() {
    let s = claude_scene();
    let question = claude_stop(&s.wt, Some(QUESTION), "/nonexistent.jsonl").to_string();
    for text in [
        "{\"allowManagedHooksOnly\": true}",
        "{\"strictPluginOnlyCustomization\": [\"hooks\"]}",
    ] {
        let key = if text.contains("allow") {
            "allowManagedHooksOnly"
        } else {
            "strictPluginOnlyCustomization"
        };
        let local = s.wt.join(".claude/settings.local.json");
        std::fs::write(&local, text).unwrap();
        assert_eq!(doctor(&s, &s.wt, "claude-code"), (0, Vec::new()), "{text}");
        assert_eq!(stop(&s, &[], &question), None, "{text}");
        std::fs::remove_file(&local).unwrap();
        std::fs::write(managed(&s), text).unwrap();
        let (code, warnings) = doctor(&s, &s.wt, "claude-code");
        assert_eq!(code, 1, "{text}");
        assert!(warnings.iter().any(|w| w.contains(key)), "{warnings:?}");
        let reason = stop(&s, &[], &question).expect("blocked");
        assert!(reason.contains(key), "{reason}");
        std::fs::remove_file(managed(&s)).unwrap();
    }
    // Managed settings that hold closegate's hook themselves let it run under
    // allowManagedHooksOnly.
    let (_, snippet, _) = run(
        &s,
        &s.wt,
        &["agent", "hooks", "--target", "claude-code"],
        None,
    );
    let mut value: serde_json::Value = serde_json::from_str(&snippet).unwrap();
    value["allowManagedHooksOnly"] = serde_json::json!(true);
    std::fs::write(managed(&s), value.to_string()).unwrap();
    assert_eq!(doctor(&s, &s.wt, "claude-code"), (0, Vec::new()));
}

/// A scene with Codex's hook installed from the main checkout, committed on the base, and the
/// worktree's own `.codex/` folder (Codex runs the project's hooks only with it).
fn codex_scene() -> Scene {
    let s = Scene::returned(Some(PASSING_CONFIG)).own_home();
    let (code, _, err) = run(
        &s,
        &s.root(),
        &["agent", "install", "--target", "codex"],
        None,
    );
    assert_eq!(code, 0, "{err}");
    commit_on_main(&s, &[".codex/hooks.json"], "codex stop hook");
    std::fs::create_dir_all(s.wt.join(".codex")).unwrap();
    s
}

/// Attack: `[features] hooks = false` in the user's and in the project's `config.toml`; the
/// worktree's `.codex/` removed; the hook's trust entry dropped from the user's configuration.
/// Each is named by doctor and blocks the stop; undone, both pass.
#[test]
fn codexs_hooks_feature_folder_and_trust_are_seen() {
    let s = codex_scene();
    let question = codex_stop(&s.wt, Some(QUESTION)).to_string();
    let target = ["--target", "codex"];
    assert_eq!(doctor(&s, &s.wt, "codex"), (0, Vec::new()));
    assert_eq!(stop(&s, &target, &question), None);
    let user = s.home.path().join(".codex/config.toml");
    let trusted = std::fs::read_to_string(&user).unwrap();
    let project = s.wt.join(".codex/config.toml");
    for file in [&user, &project] {
        let before = std::fs::read_to_string(file).unwrap_or_default();
        std::fs::write(file, format!("{before}\n[features]\nhooks = false\n")).unwrap();
        let (code, warnings) = doctor(&s, &s.wt, "codex");
        assert_eq!(code, 1, "{}", file.display());
        assert!(
            warnings
                .iter()
                .any(|w| w.contains(&*file.display().to_string())
                    && w.contains("[features] hooks = false")),
            "{warnings:?}"
        );
        let reason = stop(&s, &target, &question).expect("blocked");
        assert!(reason.contains("[features] hooks = false"), "{reason}");
        std::fs::write(file, before).unwrap();
    }
    std::fs::remove_file(&project).unwrap();
    assert_eq!(stop(&s, &target, &question), None);

    std::fs::remove_dir(s.wt.join(".codex")).unwrap();
    let reason = stop(&s, &target, &question).expect("blocked");
    assert!(reason.contains("has no .codex/ folder"), "{reason}");
    assert!(
        doctor(&s, &s.wt, "codex")
            .1
            .iter()
            .any(|w| w.contains("has no .codex/ folder"))
    );
    std::fs::create_dir(s.wt.join(".codex")).unwrap();

    let untrusted: String = trusted
        .lines()
        .filter(|l| !l.starts_with("trusted_hash"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&user, untrusted).unwrap();
    let reason = stop(&s, &target, &question).expect("blocked");
    assert!(reason.contains("has no trust entry"), "{reason}");
    std::fs::write(&user, &trusted).unwrap();
    assert_eq!(stop(&s, &target, &question), None);
}

/// Attack: the agent appends `--max-blocks 0` to the hook in the main checkout's
/// `.codex/hooks.json` (every later session's hook), and Codex starts the hook with it. The hook
/// compares the entry with the base tip's first and blocks under the committed hook's loop guard
/// (3 blocks, then the recorded give-up), never its own; doctor names the difference.
#[test]
fn an_edited_max_blocks_zero_is_never_obeyed_first() {
    let s = codex_scene();
    let file = s.root().join(".codex/hooks.json");
    let committed = std::fs::read_to_string(&file).unwrap();
    let edited = committed.replace("--mode claims", "--mode claims --max-blocks 0");
    assert_ne!(edited, committed);
    std::fs::write(&file, &edited).unwrap();
    let (code, warnings) = doctor(&s, &s.wt, "codex");
    assert_eq!(code, 1);
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("not the committed one") && w.contains("--max-blocks 0")),
        "{warnings:?}"
    );
    let args = ["--target", "codex", "--mode", "claims", "--max-blocks", "0"];
    let question = codex_stop(&s.wt, Some(QUESTION)).to_string();
    for round in 0..3 {
        let reason = stop(&s, &args, &question).unwrap_or_else(|| panic!("round {round}"));
        assert!(
            reason.contains("agent-hook-inactive") && reason.contains("--max-blocks 0"),
            "{reason}"
        );
        assert!(reason.contains("the base tip main holds"), "{reason}");
    }
    let (_, stdout, err) = run(
        &s,
        &s.wt,
        &[
            "agent",
            "stop-hook",
            "--target",
            "codex",
            "--max-blocks",
            "0",
        ],
        Some(question.as_bytes()),
    );
    assert_eq!(stdout.trim(), "{}");
    assert!(err.contains("3 consecutive blocks"), "{err}");
    std::fs::write(&file, &committed).unwrap();
    assert_eq!(stop(&s, &args, &question), None);
}

/// SPEC §27.3: `install --target codex` inside an existing worktree makes its `.codex/`; a file
/// standing at that name is an exit-2 error naming it, before anything is written.
#[test]
fn install_inside_a_worktree_makes_its_codex_folder_or_names_what_stands_there() {
    let s = Scene::returned(Some(PASSING_CONFIG)).own_home();
    std::fs::write(s.wt.join(".codex"), "not a folder\n").unwrap();
    let (code, out, err) = run(&s, &s.wt, &["agent", "install", "--target", "codex"], None);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains(".codex is not a folder"), "{err}");
    assert!(
        !s.root().join(".codex").exists(),
        "nothing written before the refusal"
    );
    std::fs::remove_file(s.wt.join(".codex")).unwrap();
    let (code, out, err) = run(&s, &s.wt, &["agent", "install", "--target", "codex"], None);
    assert_eq!(code, 0, "{err}");
    assert!(s.wt.join(".codex").is_dir());
    assert!(
        out.contains("made ") && out.contains(".codex so Codex loads"),
        "{out}"
    );
    assert!(
        out.contains("by the hash closegate computes (no `codex` binary on the PATH)"),
        "{out}"
    );
    assert_eq!(doctor(&s, &s.wt, "codex"), (0, Vec::new()));
    let (_, out, _) = run(&s, &s.wt, &["agent", "doctor", "--target", "codex"], None);
    assert!(
        out.contains("note: Codex's trust is judged by the hash closegate computes"),
        "{out}"
    );
}

/// Attack: a `codex` on the PATH that is not Codex's app-server (it answers nothing and ends,
/// often before it is written to: a broken pipe that must not pass for closegate's own stdout
/// closed, a quiet exit 0). `install` is an exit-2 error naming it, never a trust it could not
/// verify; doctor says it cannot ask Codex. Run several times: the race goes both ways.
#[test]
fn a_codex_on_the_path_that_does_not_answer_is_an_error_never_a_guess() {
    let s = Scene::returned(Some(PASSING_CONFIG)).own_home();
    let fake = s.home.path().join("fake-codex");
    std::fs::create_dir_all(&fake).unwrap();
    let script = fake.join("codex");
    std::fs::write(&script, "#!/bin/sh\necho 'not json'\nexit 0\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}:/usr/bin:/bin", fake.display(), bin_dir(&s).display());
    for _ in 0..5 {
        let mut cmd = s.bin(&s.root(), &["agent", "install", "--target", "codex"]);
        let (code, out, err) = parts(&cmd.env("PATH", &path).output().unwrap());
        assert_eq!(code, 2, "{out}{err}");
        assert!(
            err.contains(&format!("{} app-server ended before", script.display())),
            "{err}"
        );
    }
    let mut cmd = s.bin(&s.root(), &["agent", "doctor", "--target", "codex"]);
    let (code, out, _) = parts(&cmd.env("PATH", &path).output().unwrap());
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("cannot ask Codex whether it trusts"), "{out}");
}
