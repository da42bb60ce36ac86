//! The stop hook's edge cases on hand-written hook input (SPEC §26.3), each an attack an agent
//! can mount from its own worktree: a FIFO as its transcript, the block counter replaced, its
//! start folder deleted, a status document that is not a regular file, a verified return
//! followed by a question, background subagents still running, the hook file edited. The real
//! clients run the same hook in tests/it/agent_claude.rs and tests/it/agent_codex.rs.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::agent::{
    FALSE_DONE, Finishing, PASSING_CONFIG, QUESTION, REAL_DONE, blocked, claude_stop, codex_stop,
    hook, transcript_from,
};
use crate::fixture::{closegate, git, hermetic, parts};
use crate::inputs::bounded_cmd;
use crate::scene::Scene;

/// `closegate agent stop-hook ARGS` in `cwd` on `input`, bounded: a hang fails the test.
fn bounded_hook(cwd: &Path, args: &[&str], input: &Value) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
    cmd.args(["agent", "stop-hook"]).args(args).current_dir(cwd);
    hermetic(&mut cmd, cwd);
    parts(&bounded_cmd(cmd, Some(input.to_string().into_bytes())))
}

/// What an attack puts in place of a file.
type Replace = fn(&Path);

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

/// The stop-hook `signal` records that gave up, in log order.
fn gave_up(s: &Scene) -> Vec<Value> {
    s.audit()
        .into_iter()
        .filter(|r| r["event"] == "signal" && r["gave_up"] == true)
        .collect()
}

/// Attack: a FIFO (no writer) as the transcript, the subagent's transcript or both. Opening it
/// for reading would wait for a writer for the harness's whole timeout (last round's regression:
/// the head and the tail of the transcript were opened with a blocking open). The hook answers
/// at once: with the message given, it judges it; without one, it says so and lets the stop
/// through as malformed input.
#[test]
fn a_fifo_transcript_never_wedges_the_hook() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let fifo = s.fx.tmp.path().join("transcript.jsonl");
    mkfifo(&fifo);
    let t = fifo.display().to_string();
    let input = claude_stop(&s.wt, Some(FALSE_DONE), &t);
    let (code, stdout, stderr) = bounded_hook(&s.wt, &[], &input);
    assert_eq!(code, 0, "{stderr}");
    let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("signal-done-contradicted"), "{reason}");
    for event in ["Stop", "SubagentStop"] {
        let mut input = claude_stop(&s.wt, None, &t);
        input["hook_event_name"] = json!(event);
        input["agent_transcript_path"] = json!(t);
        let (code, stdout, stderr) = bounded_hook(&s.wt, &[], &input);
        assert_eq!((code, stdout.as_str()), (0, ""), "{event}: {stderr}");
        assert!(stderr.contains("a FIFO, not a regular file"), "{stderr}");
    }
    // A character device is refused the same way (never read for 16 MiB of zeros).
    let input = claude_stop(&s.wt, None, "/dev/zero");
    let (_, stdout, stderr) = bounded_hook(&s.wt, &["--target", "codex"], &input);
    assert_eq!(stdout.trim(), "{}");
    assert!(stderr.contains("a character device"), "{stderr}");
}

/// The counter of the worktree's consecutive blocks: the one file in `stop-hook/` after a block.
fn counter_path(s: &Scene) -> PathBuf {
    let dir = s.fx.git_dir().join("closegate/stop-hook");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files.remove(0)
}

/// Attack: the block counter (in the common dir, which the agent can write) replaced by a FIFO,
/// by a directory, by a file of anything else, or its folder replaced by a file. A FIFO used to
/// hang the hook; a file used to read as 0 and block forever. Now the hook falls back on the
/// harness's `stop_hook_active`: the first block stands, the stop after it is let through and
/// the give-up is recorded with the reason the counter could not be kept.
#[test]
fn a_block_counter_that_cannot_be_kept_falls_back_on_stop_hook_active() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let mut first = claude_stop(&s.wt, Some(FALSE_DONE), "/nonexistent.jsonl");
    let (_, stdout, _) = bounded_hook(&s.wt, &[], &first);
    blocked(&stdout);
    let counter = counter_path(&s);
    let replacements: [(&str, Replace); 4] = [
        ("a FIFO", |p| mkfifo(p)),
        ("a directory", |p| {
            let _ = std::fs::remove_file(p);
            std::fs::create_dir(p).unwrap();
        }),
        ("does not hold a count", |p| {
            std::fs::write(p, "0; never give up\n").unwrap()
        }),
        ("cannot make", |p| {
            let dir = p.parent().unwrap();
            std::fs::remove_dir_all(dir).unwrap();
            std::fs::write(dir, "a file where the folder was").unwrap();
        }),
    ];
    for (i, (why, replace)) in replacements.iter().enumerate() {
        replace(&counter);
        first["stop_hook_active"] = json!(false);
        let (code, stdout, stderr) = bounded_hook(&s.wt, &[], &first);
        assert_eq!(code, 0, "{why}: {stderr}");
        blocked(&stdout);
        let mut again = first.clone();
        again["stop_hook_active"] = json!(true);
        let (code, stdout, stderr) = bounded_hook(&s.wt, &[], &again);
        assert_eq!((code, stdout.as_str()), (0, ""), "{why}: let through");
        assert!(stderr.contains("counter cannot be kept"), "{why}: {stderr}");
        let records = gave_up(&s);
        assert_eq!(records.len(), i + 1, "{why}: recorded");
        let error = records[i]["error"].as_str().unwrap_or_default();
        assert!(
            error.contains(why) && error.contains("stop_hook_active"),
            "{error}"
        );
        assert_eq!(records[i]["accepted"], false);
        // Put things back for the next replacement.
        let dir = counter.parent().unwrap();
        if dir.is_file() {
            std::fs::remove_file(dir).unwrap();
        }
        let _ = std::fs::remove_dir(&counter);
        let _ = std::fs::remove_file(&counter);
    }
}

/// Attack: the agent deletes the folder its session started in (a scratch folder inside its
/// worktree) and claims done. The hook judges the worktree that held the folder — never
/// "malformed input", which would let the false claim through.
#[test]
fn a_deleted_start_folder_is_judged_in_the_worktree_that_held_it() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let scratch = s.wt.join("scratch/deep");
    std::fs::create_dir_all(&scratch).unwrap();
    let dir = s.fx.tmp.path();
    let t = transcript_from(dir, "t.jsonl", &scratch, "2026-01-01T00:00:00Z", FALSE_DONE);
    std::fs::remove_dir_all(s.wt.join("scratch")).unwrap();
    for target in ["claude-code", "codex"] {
        let input = claude_stop(&s.wt, None, &t);
        let (code, stdout, stderr) = bounded_hook(&s.wt, &["--target", target], &input);
        assert_eq!(code, 0, "{stderr}");
        let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
        assert!(reason.contains("signal-done-contradicted"), "{reason}");
        assert!(!stderr.contains("malformed"), "{stderr}");
    }
    // The whole worktree removed, the agent stopping from the main checkout: no claim made in
    // the removed worktree can hold.
    let wt_y = s.fx.tmp.path().join("wt/y");
    s.fx.commit(
        "agent/y",
        &[("src/lib.rs", Some("pub fn y() {}\n"))],
        "add y",
    );
    let wt_y = {
        let made = s.fx.worktree("y", "agent/y");
        assert_eq!(made, wt_y);
        made
    };
    let t = transcript_from(dir, "y.jsonl", &wt_y, "2026-01-01T00:00:00Z", FALSE_DONE);
    std::fs::remove_dir_all(&wt_y).unwrap();
    let input = claude_stop(&s.root(), None, &t);
    let (code, stdout, stderr) = bounded_hook(&s.root(), &[], &input);
    assert_eq!(code, 0, "{stderr}");
    let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("close-worktree-absent"), "{reason}");
    assert!(reason.contains(&*wt_y.display().to_string()), "{reason}");
    // A question from there claims nothing.
    let t = transcript_from(dir, "q.jsonl", &wt_y, "2026-01-01T00:00:00Z", QUESTION);
    let input = claude_stop(&s.root(), None, &t);
    let (_, stdout, _) = bounded_hook(&s.root(), &[], &input);
    assert_eq!(stdout, "");
}

/// Attack: the status document replaced by a FIFO, a directory or a dangling link. A stop that
/// claims nothing is not waited on (the document is never opened with a blocking open); a claim
/// is refused — `signal` and `guard` reach no decision on such a document, which used to let the
/// claim through as malformed input.
#[test]
fn a_status_document_that_is_not_a_regular_file_never_lets_a_claim_through() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.close();
    let doc = s.wt.join("_EXEC_STATUS.md");
    let replacements: [(&str, Replace); 3] = [
        ("a FIFO", |p| mkfifo(p)),
        ("a directory", |p| {
            std::fs::remove_file(p).unwrap();
            std::fs::create_dir(p).unwrap();
        }),
        ("cannot open", |p| {
            std::fs::remove_file(p).unwrap();
            std::os::unix::fs::symlink("/nonexistent/doc.md", p).unwrap();
        }),
    ];
    for (why, replace) in replacements {
        let _ = std::fs::remove_dir(&doc);
        let _ = std::fs::remove_file(&doc);
        std::fs::write(&doc, "x").unwrap();
        replace(&doc);
        let question = claude_stop(&s.wt, Some(QUESTION), "/nonexistent.jsonl");
        let (code, stdout, stderr) = bounded_hook(&s.wt, &[], &question);
        assert_eq!((code, stdout.as_str()), (0, ""), "{why}: {stderr}");
        let claim = codex_stop(&s.wt, Some(FALSE_DONE));
        let (code, stdout, stderr) = bounded_hook(&s.wt, &["--target", "codex"], &claim);
        assert_eq!(code, 0, "{why}: {stderr}");
        let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
        assert!(
            reason.contains("state-not-returned") && reason.contains(why),
            "{reason}"
        );
    }
}

/// SPEC §26.3: after a verified return, a question or a progress note passes whatever words it
/// holds mid-sentence (the document is the claim the verdict saw); `VERIFIED` at the start of the
/// message or alone on a line is a claim, and is judged.
#[test]
fn a_question_after_a_verified_return_passes_whatever_it_says() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.close();
    let (code, out, _) = parts(&closegate(&s.wt, &["check"]));
    assert_eq!(code, 0, "{out}");
    let notes = [
        "Is the parser VERIFIED enough for you, or should I add fuzzing?",
        "closegate check said VERIFIED earlier; shall I also update the docs?",
        "Progress: the @signal done line will come once you answer.",
    ];
    for note in notes {
        for target in ["claude-code", "codex"] {
            let input = codex_stop(&s.wt, Some(note));
            let (code, stdout, stderr) =
                hook(&s.wt, &["--target", target], input.to_string().as_bytes());
            assert_eq!(code, 0, "{stderr}");
            assert!(
                stdout.trim().is_empty() || stdout.trim() == "{}",
                "{note}: {stdout}"
            );
        }
    }
    // A claim at the start or alone on a line is judged: the same claim after an edit is false.
    std::fs::write(s.wt.join("src/lib.rs"), "pub fn x() { changed }\n").unwrap();
    for claim in [
        "VERIFIED: all good, anything else?",
        "Done, see above.\n\nVERIFIED\n",
    ] {
        let input = codex_stop(&s.wt, Some(claim));
        let (_, stdout, _) = hook(&s.wt, &["--target", "codex"], input.to_string().as_bytes());
        let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
        assert!(
            reason.contains("close-worktree-dirty") || reason.contains("claim-"),
            "{reason}"
        );
    }
}

/// SPEC §26.3: in `always` mode a stop without a signal is blocked, and the reason says how to
/// stop honestly without finishing; following it is accepted.
#[test]
fn always_mode_says_how_to_stop_honestly_without_finishing() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let input = claude_stop(&s.wt, Some(QUESTION), "/nonexistent.jsonl");
    let (_, stdout, _) = hook(&s.wt, &["--mode", "always"], input.to_string().as_bytes());
    let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
    for needle in [
        "signal-missing",
        "closegate close --state blocked",
        "@signal blocked",
        "question",
    ] {
        assert!(reason.contains(needle), "{needle}: {reason}");
    }
    let out = closegate(
        &s.wt,
        &[
            "close",
            "--state",
            "blocked",
            "--blocked-on",
            "the user: tabs or spaces?",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{:?}", parts(&out));
    let honest = "UNVERIFIED: waiting for the user. Should the parser also accept tabs?\n\n@signal blocked\n";
    let input = claude_stop(&s.wt, Some(honest), "/nonexistent.jsonl");
    let (code, stdout, stderr) = hook(&s.wt, &["--mode", "always"], input.to_string().as_bytes());
    assert_eq!((code, stdout.as_str()), (0, ""), "{stderr}");
    // In `claims` mode a false claim's reason names the command to run, not the honest stop.
    let input = claude_stop(&s.wt, Some(FALSE_DONE), "/nonexistent.jsonl");
    let (_, stdout, _) = hook(&s.wt, &[], input.to_string().as_bytes());
    let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("closegate check"), "{reason}");
    assert!(!reason.contains("To stop without finishing"), "{reason}");
}

/// SPEC §26.3: a main agent's Stop while its background subagents still run (Claude Code's
/// `background_tasks`) is judged like any other.
#[test]
fn a_stop_with_background_subagents_running_is_judged_like_any_other() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let mut input = claude_stop(&s.wt, Some(FALSE_DONE), "/nonexistent.jsonl");
    input["background_tasks"] = json!([
        {"id": "a1", "type": "agent", "status": "running", "description": "write the docs"}
    ]);
    input["session_crons"] = json!([]);
    let (_, stdout, _) = hook(&s.wt, &[], input.to_string().as_bytes());
    let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("signal-done-contradicted"), "{reason}");
    s.close();
    let (code, _, _) = parts(&closegate(&s.wt, &["check"]));
    assert_eq!(code, 0);
    input["last_assistant_message"] = json!(REAL_DONE);
    let (code, stdout, stderr) = hook(&s.wt, &[], input.to_string().as_bytes());
    assert_eq!((code, stdout.as_str()), (0, ""), "{stderr}");
}

/// An accepted stop whose verdict is already recorded for this branch at this commit is accepted
/// on it and recorded; the same claim after a tracked file changed is judged again (attack: reuse
/// a verdict for work that moved on). An untracked file is only a warning, in the gate as here.
#[test]
fn an_accepted_stop_reuses_the_recorded_verdict_only_while_it_holds() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.close();
    let (code, _, _) = parts(&closegate(&s.wt, &["check"]));
    assert_eq!(code, 0);
    let head = git(&s.wt, &["rev-parse", "HEAD"]).trim().to_string();
    let input = claude_stop(&s.wt, Some(REAL_DONE), "/nonexistent.jsonl");
    let (code, stdout, stderr) = hook(&s.wt, &[], input.to_string().as_bytes());
    assert_eq!((code, stdout.as_str()), (0, ""), "{stderr}");
    let last = s.audit().pop().unwrap();
    assert_eq!(
        (
            &last["event"],
            &last["accepted"],
            &last["commit"],
            &last["branch"]
        ),
        (
            &json!("signal"),
            &json!(true),
            &json!(head),
            &json!("agent/x")
        ),
        "{last}"
    );
    // It names the claim and what it was decided under: the check's (SPEC §26.1).
    let check = s
        .audit()
        .into_iter()
        .rfind(|r| r["event"] == "check")
        .unwrap();
    for field in ["claimed_commit", "config", "base_commit", "contract"] {
        assert_eq!(last[field], check[field], "{field}: {last}");
    }
    assert!(last["config"].is_string(), "{last}");
    std::fs::write(s.wt.join("notes.txt"), "scratch\n").unwrap();
    let (_, stdout, _) = hook(&s.wt, &[], input.to_string().as_bytes());
    assert_eq!(stdout, "", "untracked: accepted");
    std::fs::write(s.wt.join("src/lib.rs"), "pub fn x() { moved on }\n").unwrap();
    let (_, stdout, _) = hook(&s.wt, &[], input.to_string().as_bytes());
    let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("close-worktree-dirty"), "{reason}");
}

/// The stop hook's fast accept asks the one verdict query (SPEC §26.1): the newest decision for
/// this branch at this commit under the base tip's configuration and contract. Attacks, each
/// after a VERIFIED `closegate check`: (1) the base's configuration changes (a check the work now
/// fails) — the old verdict is not reused, the gate runs under the new one and blocks; (2) a
/// reviewer rejects the commit — the rejection is the newest decision, the stop is blocked with
/// it. Control: the same stop with neither is accepted on the recorded verdict (the test above).
#[test]
fn an_accepted_stop_never_reuses_a_verdict_the_base_or_a_reviewer_overruled() {
    let input = |s: &Scene| claude_stop(&s.wt, Some(REAL_DONE), "/nonexistent.jsonl").to_string();
    let checked = || {
        let s = Scene::returned(Some(PASSING_CONFIG));
        s.close();
        let (code, _, _) = parts(&closegate(&s.wt, &["check"]));
        assert_eq!(code, 0);
        s
    };

    let s = checked();
    let failing =
        "[[checks]]\nname = \"smoke\"\nrun = \"test -f src/missing.rs\"\ntimeout_s = 60\n";
    s.fx.commit(
        "main",
        &[(".closegate.toml", Some(failing))],
        "require missing.rs",
    );
    let (code, stdout, stderr) = hook(&s.wt, &[], input(&s).as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
    assert!(
        reason.contains("smoke"),
        "the gate ran under the base's new check: {reason}"
    );
    assert!(
        !s.audit()
            .iter()
            .any(|r| r["event"] == "signal" && r["accepted"] == true)
    );

    let s = checked();
    let (code, out, err) = parts(&closegate(
        &s.wt,
        &[
            "reject",
            "--yes",
            "--by",
            "Grace",
            "--note",
            "wrong approach",
        ],
    ));
    assert_eq!(code, 0, "{out}{err}");
    let (code, stdout, stderr) = hook(&s.wt, &[], input(&s).as_bytes());
    assert_eq!(code, 0, "{stderr}");
    let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("review-rejected"), "{reason}");
    assert!(
        !s.audit()
            .iter()
            .any(|r| r["event"] == "signal" && r["accepted"] == true)
    );
}

/// SPEC §26.3: a return the hook itself verified (its own gate run on the `VERIFIED … @signal
/// done` stop, no `closegate check` before it) is a claim a verdict has seen: the question that
/// follows passes in `claims` mode. Attack: new work committed and closed after it is a new claim,
/// judged (a question then is blocked: it carries no verdict token).
#[test]
fn a_question_after_a_return_the_hook_verified_passes() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.close();
    let stop = |message: &str| {
        let input = claude_stop(&s.wt, Some(message), "/nonexistent.jsonl");
        hook(&s.wt, &[], input.to_string().as_bytes())
    };
    let (code, stdout, stderr) = stop(REAL_DONE);
    assert_eq!((code, stdout.as_str()), (0, ""), "{stderr}");
    let (code, stdout, stderr) = stop(QUESTION);
    assert_eq!((code, stdout.as_str()), (0, ""), "{stderr}");
    std::fs::write(s.wt.join("src/y.rs"), "pub fn y() {}\n").unwrap();
    git(&s.wt, &["add", "src/y.rs"]);
    git(&s.wt, &["commit", "-qm", "add y"]);
    s.close();
    let (_, stdout, _) = stop(QUESTION);
    let reason = blocked(&stdout)["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("claim-token-missing"), "{reason}");
}
