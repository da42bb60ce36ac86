//! `closegate agent` (SPEC §18): the stop hook on hook input exactly as Claude Code and Codex
//! document it, the loop guard, malformed input, and the settings files.

use std::path::Path;

use serde_json::{Value, json};

use crate::fixture::{Fixture, closegate, closegate_stdin, parts};
use crate::scene::Scene;

pub const PASSING_CONFIG: &str =
    "[[checks]]\nname = \"smoke\"\nrun = \"test -f src/lib.rs\"\ntimeout_s = 60\n";
pub const FALSE_DONE: &str = "VERIFIED: everything is done\n\n@signal done\n";
pub const REAL_DONE: &str = "VERIFIED: x added, closegate check passed\n\n@signal done\n";

/// The stop-hook tests' verb on a scene (`Scene::returned`).
pub trait Finishing {
    fn close(&self);
}

impl Finishing for Scene {
    /// The agent finishes honestly: `closegate close`.
    fn close(&self) {
        let out = closegate(
            &self.wt,
            &[
                "close",
                "--abstract",
                "adds x, proven by the smoke check",
                "--artifact",
                "src/lib.rs",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{:?}", parts(&out));
    }
}

/// Claude Code's Stop input, as its hooks reference documents it.
pub fn claude_stop(cwd: &Path, message: Option<&str>, transcript: &str) -> Value {
    let mut input = json!({
        "session_id": "abc123",
        "transcript_path": transcript,
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": false,
    });
    if let Some(message) = message {
        input["last_assistant_message"] = json!(message);
    }
    input
}

/// Codex's Stop input: every field its schema names, `last_assistant_message` nullable.
pub fn codex_stop(cwd: &Path, message: Option<&str>) -> Value {
    json!({
        "cwd": cwd,
        "hook_event_name": "Stop",
        "last_assistant_message": message,
        "model": "gpt-5-codex",
        "permission_mode": "default",
        "session_id": "019a-session",
        "stop_hook_active": false,
        "transcript_path": null,
        "turn_id": "turn-1",
    })
}

/// A Claude Code transcript: a user line, the assistant's text, a tool use, a tool result.
pub fn transcript(dir: &Path, name: &str, last_text: &str) -> String {
    let lines = [
        json!({"type": "user", "message": {"role": "user", "content": "add x"}, "uuid": "u1"}),
        json!({"type": "assistant", "message": {"role": "assistant", "model": "claude", "content": [
            {"type": "text", "text": last_text}
        ]}, "uuid": "a1"}),
        json!({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
        ]}, "uuid": "a2"}),
        json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "src"}
        ]}, "uuid": "u2"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

pub fn hook(dir: &Path, args: &[&str], input: &[u8]) -> (i32, String, String) {
    let mut all = vec!["agent", "stop-hook"];
    all.extend_from_slice(args);
    parts(&closegate_stdin(dir, &all, Some(input)))
}

pub fn blocked(stdout: &str) -> Value {
    let value: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("not one JSON object: {e}: {stdout}"));
    assert_eq!(value["decision"], "block", "{value}");
    assert_eq!(value.as_object().unwrap().len(), 2, "{value}");
    assert!(value["reason"].as_str().unwrap().chars().count() <= 2000);
    assert_eq!(stdout.trim().lines().count(), 1, "exactly one JSON object");
    value
}

#[test]
fn claude_code_stop_blocks_a_false_done_and_lets_a_real_one_through() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let input = claude_stop(&s.wt, Some(FALSE_DONE), "/nonexistent.jsonl");
    let (code, stdout, stderr) = hook(&s.wt, &[], input.to_string().as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let value = blocked(&stdout);
    let reason = value["reason"].as_str().unwrap();
    assert!(reason.contains("signal-done-contradicted"), "{reason}");
    assert!(reason.contains("closegate close"), "{reason}");

    s.close();
    let input = claude_stop(&s.wt, Some(REAL_DONE), "/nonexistent.jsonl");
    let (code, stdout, stderr) = hook(
        &s.wt,
        &["--target", "claude-code"],
        input.to_string().as_bytes(),
    );
    assert_eq!((code, stdout.as_str()), (0, ""), "{stderr}");
    // signal and guard recorded their decisions.
    let events: Vec<String> = s
        .audit()
        .iter()
        .map(|r| r["event"].as_str().unwrap().to_string())
        .collect();
    assert!(events.contains(&"signal".to_string()), "{events:?}");
    assert!(events.contains(&"guard".to_string()), "{events:?}");
}

#[test]
fn codex_stop_prints_an_empty_object_on_acceptance() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let input = codex_stop(&s.wt, Some(FALSE_DONE));
    let (code, stdout, _) = hook(&s.wt, &["--target", "codex"], input.to_string().as_bytes());
    assert_eq!(code, 0);
    let value = blocked(&stdout);
    // Only keys Codex accepts.
    for key in value.as_object().unwrap().keys() {
        assert!(
            [
                "continue",
                "decision",
                "reason",
                "stopReason",
                "suppressOutput",
                "systemMessage"
            ]
            .contains(&key.as_str())
        );
    }
    s.close();
    let input = codex_stop(&s.wt, Some(REAL_DONE));
    let (code, stdout, stderr) = hook(&s.wt, &["--target", "codex"], input.to_string().as_bytes());
    assert_eq!((code, stdout.trim()), (0, "{}"), "{stderr}");
}

#[test]
fn the_message_comes_from_the_transcript_when_none_is_sent() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let dir = s.fx.tmp.path();
    let t = transcript(dir, "false.jsonl", FALSE_DONE);
    let input = claude_stop(&s.wt, None, &t);
    let (code, stdout, _) = hook(&s.wt, &[], input.to_string().as_bytes());
    assert_eq!(code, 0);
    blocked(&stdout);

    s.close();
    let t = transcript(dir, "real.jsonl", REAL_DONE);
    let mut input = claude_stop(&s.wt, None, &t);
    input["last_assistant_message"] = Value::Null;
    let (code, stdout, stderr) = hook(&s.wt, &[], input.to_string().as_bytes());
    assert_eq!((code, stdout.as_str()), (0, ""), "{stderr}");
}

#[test]
fn subagent_stop_reads_the_subagents_own_transcript() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.close();
    let dir = s.fx.tmp.path();
    let session = transcript(dir, "session.jsonl", REAL_DONE);
    let own = transcript(dir, "agent.jsonl", "all done, trust me\n");
    let mut input = claude_stop(&s.wt, None, &session);
    input["hook_event_name"] = json!("SubagentStop");
    input["agent_id"] = json!("a-1");
    input["agent_type"] = json!("general-purpose");
    input["agent_transcript_path"] = json!(own);
    let (code, stdout, _) = hook(&s.wt, &[], input.to_string().as_bytes());
    assert_eq!(code, 0);
    let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("signal-missing"), "{reason}");
}

#[test]
fn the_loop_guard_gives_up_after_max_blocks_and_resets_on_acceptance() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let bad = claude_stop(&s.wt, Some(FALSE_DONE), "/x.jsonl").to_string();
    for _ in 0..2 {
        let (_, stdout, _) = hook(&s.wt, &["--max-blocks", "2"], bad.as_bytes());
        blocked(&stdout);
    }
    let (code, stdout, stderr) = hook(&s.wt, &["--max-blocks", "2"], bad.as_bytes());
    assert_eq!((code, stdout.as_str()), (0, ""), "gave up");
    assert!(stderr.contains("let through"), "{stderr}");
    let gave_up: Vec<Value> = s
        .audit()
        .into_iter()
        .filter(|r| r["gave_up"] == true)
        .collect();
    assert_eq!(gave_up.len(), 1);
    assert_eq!(gave_up[0]["event"], "signal");
    assert_eq!(gave_up[0]["accepted"], false);
    // The counter starts again.
    let (_, stdout, _) = hook(&s.wt, &["--max-blocks", "2"], bad.as_bytes());
    blocked(&stdout);
    // Acceptance resets it: one block, then an accepted stop, then two blocks again.
    s.close();
    let good = claude_stop(&s.wt, Some(REAL_DONE), "/x.jsonl").to_string();
    let (_, stdout, _) = hook(&s.wt, &["--max-blocks", "2"], good.as_bytes());
    assert_eq!(stdout, "");
    let overclaim = claude_stop(&s.wt, Some("VERIFIED\n@signal no_op\n"), "/x.jsonl").to_string();
    for _ in 0..2 {
        let (_, stdout, _) = hook(&s.wt, &["--max-blocks", "2"], overclaim.as_bytes());
        blocked(&stdout);
    }
}

#[test]
fn malformed_input_never_wedges_the_harness() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let wt = s.wt.display().to_string();
    let inputs: Vec<Vec<u8>> = vec![
        b"not json".to_vec(),
        b"[1, 2]".to_vec(),
        b"{\"cwd\": 5}".to_vec(),
        b"{\"hook_event_name\": \"Stop\"}".to_vec(),
        json!({"cwd": "/nonexistent/dir", "hook_event_name": "Stop"})
            .to_string()
            .into_bytes(),
        json!({"cwd": wt, "hook_event_name": "Stop", "transcript_path": "/nonexistent.jsonl"})
            .to_string()
            .into_bytes(),
        json!({"cwd": wt, "stop_hook_active": "yes"})
            .to_string()
            .into_bytes(),
        vec![0xff, 0xfe, 0x00],
    ];
    for (i, input) in inputs.iter().enumerate() {
        for (target, expected) in [("claude-code", ""), ("codex", "{}")] {
            let (code, stdout, stderr) = hook(&s.wt, &["--target", target], input);
            assert_eq!(code, 0, "{i} {target}: {stderr}");
            assert_eq!(stdout.trim(), expected, "{i} {target}");
            assert_eq!(stderr.trim_end().lines().count(), 1, "{i}: {stderr}");
        }
    }
    let nulls = s
        .audit()
        .into_iter()
        .filter(|r| r["event"] == "signal" && r["accepted"].is_null())
        .count();
    assert_eq!(
        nulls,
        inputs.len() * 2,
        "a signal record with accepted: null for each"
    );
}

pub fn settings_of(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap()
}

#[test]
fn hooks_prints_the_snippet() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    for target in ["claude-code", "codex"] {
        let (code, stdout, _) = parts(&closegate(&s.wt, &["agent", "hooks", "--target", target]));
        assert_eq!(code, 0);
        let value: Value = serde_json::from_str(&stdout).unwrap();
        for event in ["Stop", "SubagentStop"] {
            let hook = &value["hooks"][event][0]["hooks"][0];
            assert_eq!(hook["type"], "command");
            // SPEC §18: the mode and the time bound the harness gives the hook (the checks'
            // longest chain plus 60 s, never below 600 s) are on the command line; §26.3: the
            // harness's timeout is that limit plus 30 s.
            assert_eq!(
                hook["command"],
                format!(
                    "closegate agent stop-hook --target {target} --mode claims --time-limit 600"
                )
            );
            assert_eq!(hook["timeout"], 630);
        }
    }
}

#[test]
fn install_keeps_every_other_byte_and_is_idempotent() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let original = "{\n  \"model\" :\"opus\",   \"permissions\": {\"allow\": [\"Bash(ls:*)\"]},\n\
                    \t\"hooks\": {\n    \"Stop\": [ { \"hooks\": [ {\"type\": \"command\", \"command\": \"notify-send done\"} ] } ],\n\
                    \"PreToolUse\":[{\"matcher\":\"Bash\",\"hooks\":[{\"type\":\"command\",\"command\":\"guard.sh\"}]}]\n  },\n\
                    \"unknownKey\": [1, 2.50, null, \"\\u00e9\"]\n}\n";
    s.fx.write(&s.wt, ".claude/settings.json", original);
    let (code, stdout, stderr) = parts(&closegate(
        &s.wt,
        &["agent", "install", "--target", "claude-code"],
    ));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("installed"), "{stdout}");
    let installed = settings_of(&s.wt, ".claude/settings.json");
    let value: Value = serde_json::from_str(&installed).unwrap();
    assert_eq!(
        value["hooks"]["Stop"][0]["hooks"][0]["command"],
        "notify-send done"
    );
    assert_eq!(
        value["hooks"]["Stop"][1]["hooks"][0]["command"],
        "closegate agent stop-hook --target claude-code --mode claims --time-limit 600"
    );
    assert_eq!(
        value["hooks"]["SubagentStop"][0]["hooks"][0]["command"],
        "closegate agent stop-hook --target claude-code --mode claims --time-limit 600"
    );
    assert_eq!(value["unknownKey"][1], 2.5);
    // Every original byte is still there, in order: the install only inserted text.
    let mut rest = installed.as_str();
    for ch in original.chars() {
        let at = rest.find(ch).expect("original byte kept");
        rest = &rest[at + ch.len_utf8()..];
    }
    // Idempotent.
    let (code, stdout, _) = parts(&closegate(
        &s.wt,
        &["agent", "install", "--target", "claude-code"],
    ));
    assert_eq!(code, 0);
    assert!(stdout.contains("already installed"), "{stdout}");
    assert_eq!(settings_of(&s.wt, ".claude/settings.json"), installed);
    // Uninstall removes only its entries: the original bytes come back.
    let (code, _, stderr) = parts(&closegate(
        &s.wt,
        &["agent", "uninstall", "--target", "claude-code"],
    ));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(settings_of(&s.wt, ".claude/settings.json"), original);
}

#[test]
fn install_scopes_and_targets_write_the_documented_files() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let cases = [
        (
            vec!["--target", "claude-code", "--scope", "local"],
            s.wt.join(".claude/settings.local.json"),
        ),
        (
            vec!["--target", "claude-code", "--scope", "user"],
            s.wt.join(".claude/settings.json"),
        ),
        // SPEC §26.3: Codex reads a worktree's hooks from the main checkout.
        (
            vec!["--target", "codex"],
            s.root().join(".codex/hooks.json"),
        ),
    ];
    for (args, path) in cases {
        let mut all = vec!["agent", "install"];
        all.extend_from_slice(&args);
        let (code, _, stderr) = parts(&closegate(&s.wt, &all));
        assert_eq!(code, 0, "{args:?}: {stderr}");
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(
            value["hooks"]["Stop"][0]["hooks"][0]["command"]
                .as_str()
                .unwrap()
                .starts_with("closegate agent stop-hook")
        );
        all[1] = "uninstall";
        let (code, _, _) = parts(&closegate(&s.wt, &all));
        assert_eq!(code, 0);
        assert_eq!(std::fs::read_to_string(&path).unwrap().trim(), "{}");
    }
    let (code, _, stderr) = parts(&closegate(
        &s.wt,
        &["agent", "install", "--target", "codex", "--scope", "local"],
    ));
    assert_eq!(code, 2);
    assert!(stderr.contains("local"), "{stderr}");
}

#[test]
fn install_refuses_a_settings_file_that_is_not_a_json_object() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    for bad in ["{\"hooks\": [", "[]", "{\"hooks\": {\"Stop\": {}}}"] {
        s.fx.write(&s.wt, ".claude/settings.json", bad);
        let (code, _, stderr) = parts(&closegate(
            &s.wt,
            &["agent", "install", "--target", "claude-code"],
        ));
        assert_eq!(code, 2, "{bad}");
        assert!(stderr.contains("settings.json"), "{stderr}");
        assert_eq!(
            settings_of(&s.wt, ".claude/settings.json"),
            bad,
            "nothing written"
        );
    }
}

#[test]
fn uninstall_without_target_removes_from_both_harnesses_and_follows_symlinks() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let real = s.fx.tmp.path().join("dotfiles-settings.json");
    std::fs::write(&real, "{\"model\": \"opus\"}\n").unwrap();
    std::fs::create_dir_all(s.wt.join(".claude")).unwrap();
    std::os::unix::fs::symlink(&real, s.wt.join(".claude/settings.json")).unwrap();
    for target in ["claude-code", "codex"] {
        let (code, _, err) = parts(&closegate(&s.wt, &["agent", "install", "--target", target]));
        assert_eq!(code, 0, "{err}");
    }
    let link = std::fs::symlink_metadata(s.wt.join(".claude/settings.json")).unwrap();
    assert!(link.file_type().is_symlink(), "the symlink is kept");
    assert!(
        std::fs::read_to_string(&real)
            .unwrap()
            .contains("agent stop-hook")
    );
    let (code, _, err) = parts(&closegate(&s.wt, &["agent", "uninstall"]));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(&real).unwrap(),
        "{\"model\": \"opus\"}\n"
    );
    assert_eq!(settings_of(&s.root(), ".codex/hooks.json").trim(), "{}");
}

/// A transcript whose first line (a user line, as Claude Code writes it) carries `cwd` and a
/// `timestamp`, and whose last assistant text is `last_text`.
pub fn transcript_from(dir: &Path, name: &str, cwd: &Path, at: &str, last_text: &str) -> String {
    let lines = [
        json!({"type": "user", "cwd": cwd, "timestamp": at,
               "message": {"role": "user", "content": "add x"}, "uuid": "u1"}),
        json!({"type": "assistant", "cwd": "/somewhere/else", "timestamp": at,
               "message": {"role": "assistant", "content": [{"type": "text", "text": last_text}]}}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

pub const QUESTION: &str = "Should the parser also accept tabs? I can do either.";

/// SPEC §18 `claims` (the default): a turn that ends with a question or a progress note passes,
/// even with nothing committed; `always` holds every stop to the protocol.
#[test]
fn claims_mode_lets_a_question_through_and_always_mode_blocks_it() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    for target in ["claude-code", "codex"] {
        let input = match target {
            "codex" => codex_stop(&s.wt, Some(QUESTION)),
            _ => claude_stop(&s.wt, Some(QUESTION), "/nonexistent.jsonl"),
        };
        let (code, stdout, stderr) =
            hook(&s.wt, &["--target", target], input.to_string().as_bytes());
        assert_eq!(code, 0, "{stderr}");
        assert!(
            stdout.trim().is_empty() || stdout.trim() == "{}",
            "{target}: {stdout}"
        );
        let args = ["--target", target, "--mode", "always"];
        let (code, stdout, _) = hook(&s.wt, &args, input.to_string().as_bytes());
        assert_eq!(code, 0);
        let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
        assert!(reason.contains("signal-missing"), "{reason}");
    }
    // A progress note with `@signal blocked` claims no completion either.
    let note = "Waiting on the schema from the user.\n\n@signal blocked";
    let input = claude_stop(&s.wt, Some(note), "/nonexistent.jsonl");
    let (_, stdout, _) = hook(&s.wt, &[], input.to_string().as_bytes());
    assert_eq!(stdout.trim(), "", "{stdout}");
}

/// Attack: a claim made only in the status document (the message says nothing) is still judged
/// in `claims` mode while no verdict recorded for the branch has seen it (SPEC §26.3: changed
/// since the last verdict, not since the session began); once `check` judged it, a stop that
/// claims nothing passes, until the document claims something new.
#[test]
fn a_returned_document_no_verdict_has_seen_is_a_claim() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.close();
    std::fs::write(s.wt.join("src/lib.rs"), "pub fn x() { dirty }\n").unwrap();
    // Written "before the session began": that no longer matters.
    let t = transcript_from(&s.wt, "t.jsonl", &s.wt, "2999-01-01T00:00:00Z", "All set.");
    let input = claude_stop(&s.wt, None, &t);
    let (_, stdout, _) = hook(&s.wt, &[], input.to_string().as_bytes());
    let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains("signal-missing"),
        "judged, not let through: {reason}"
    );
    std::fs::write(s.wt.join("src/lib.rs"), "pub fn x() {}\n").unwrap();
    let (code, out, _) = parts(&closegate(&s.wt, &["check"]));
    assert_eq!(code, 0, "{out}");
    let (_, stdout, _) = hook(&s.wt, &[], input.to_string().as_bytes());
    assert_eq!(stdout.trim(), "", "the verdict saw this claim: {stdout}");
    // A new claim (another commit closed) is judged again.
    s.fx.write(&s.wt, "src/y.rs", "pub fn y() {}\n");
    crate::fixture::git(&s.wt, &["add", "src/y.rs"]);
    crate::fixture::git(&s.wt, &["commit", "-qm", "add y"]);
    s.close();
    let (_, stdout, _) = hook(&s.wt, &[], input.to_string().as_bytes());
    blocked(&stdout);
}

/// Attack: the agent `cd`s into a sibling worktree that is VERIFIED before stopping. The hook
/// judges the worktree the session started in (the transcript's first `cwd`).
#[test]
fn the_worktree_judged_is_the_one_the_session_started_in() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.fx.commit(
        "agent/y",
        &[("src/lib.rs", Some("pub fn y() {}\n"))],
        "add y",
    );
    let wt_y = s.fx.worktree("y", "agent/y");
    let out = closegate(&wt_y, &["close", "--abstract", "adds y"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", parts(&out));
    let (code, stdout, _) = parts(&closegate(&wt_y, &["check"]));
    assert_eq!(code, 0, "y is VERIFIED: {stdout}");
    // The session began in x (nothing closed there), and stops from y.
    let t = transcript_from(&s.wt, "t.jsonl", &s.wt, "2000-01-01T00:00:00Z", FALSE_DONE);
    let input = claude_stop(&wt_y, None, &t);
    let (_, stdout, _) = hook(&wt_y, &[], input.to_string().as_bytes());
    let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("signal-done-contradicted"), "{reason}");
}

/// SPEC §18: a block's reason holds the last lines of each failing check's output.
#[test]
fn the_block_reason_shows_the_failing_check_output() {
    let config =
        "[[checks]]\nname = \"unit\"\nrun = \"echo expected 3 got 4 in test_add; exit 1\"\n";
    let (fx, _) = Fixture::with_agent(Some(config));
    let wt = fx.worktree("x", "agent/x");
    let out = closegate(&wt, &["close", "--abstract", "adds x"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", parts(&out));
    let input = claude_stop(&wt, Some(FALSE_DONE), "/nonexistent.jsonl");
    let (_, stdout, _) = hook(&wt, &[], input.to_string().as_bytes());
    let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("check-failed"), "{reason}");
    assert!(reason.contains("last lines of check `unit`"), "{reason}");
    assert!(reason.contains("expected 3 got 4 in test_add"), "{reason}");
    assert_eq!(
        reason.matches("- check-failed:").count(),
        1,
        "each code once: {reason}"
    );
}

/// SPEC §18: the hook bounds its run below `--time-limit`; checks that cannot finish in time
/// block with `checks-running`, never letting the claim through unjudged.
#[test]
fn checks_that_cannot_finish_in_time_block_with_checks_running() {
    let config = "[[checks]]\nname = \"slow\"\nrun = \"sleep 60\"\ntimeout_s = 120\n";
    let (fx, _) = Fixture::with_agent(Some(config));
    let wt = fx.worktree("x", "agent/x");
    let out = closegate(&wt, &["close", "--abstract", "adds x"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", parts(&out));
    let input = claude_stop(&wt, Some(REAL_DONE), "/nonexistent.jsonl");
    let started = std::time::Instant::now();
    let (code, stdout, stderr) = hook(&wt, &["--time-limit", "8"], input.to_string().as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("checks-running"), "{reason}");
    assert!(
        reason.contains("run `closegate check` and stop again"),
        "{reason}"
    );
    assert!(started.elapsed().as_secs() < 8, "answered within the limit");
}

/// SPEC §18: `agent instructions` prints the paragraph for AGENTS.md / CLAUDE.md; `install`
/// says the settings must be committed to the base and writes a timeout covering the checks.
#[test]
fn instructions_and_install_notes() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    for (target, file) in [("claude-code", "CLAUDE.md"), ("codex", "AGENTS.md")] {
        let (code, out, _) = parts(&closegate(
            &s.wt,
            &["agent", "instructions", "--target", target],
        ));
        assert_eq!(code, 0);
        for needle in [
            file,
            "closegate close",
            "closegate check",
            "@signal done",
            "first line",
        ] {
            assert!(out.contains(needle), "{target}: {needle}: {out}");
        }
    }
    let config = "[[checks]]\nname = \"t\"\nrun = \"true\"\ntimeout_s = 900\n";
    let (fx, _) = Fixture::with_agent(Some(config));
    let root = fx.root();
    let (code, out, _) = parts(&closegate(
        &root,
        &["agent", "install", "--target", "codex"],
    ));
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("to the base branch: worktrees made from it get the hook"),
        "{out}"
    );
    assert!(out.contains("agent instructions --target codex"), "{out}");
    let value: Value = serde_json::from_str(&settings_of(&root, ".codex/hooks.json")).unwrap();
    let hook = &value["hooks"]["Stop"][0]["hooks"][0];
    assert_eq!(
        hook["timeout"], 990,
        "the check's 900 s plus 60 s, plus the harness margin of 30 s"
    );
    assert!(
        hook["command"]
            .as_str()
            .unwrap()
            .ends_with("--mode claims --time-limit 960")
    );
}
