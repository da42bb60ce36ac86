//! `closegate signal` through the binary (SPEC §10): every `signal-*` code from a scenario.

use std::path::Path;

use serde_json::Value;

use crate::fixture::{closegate_stdin, parts, report_codes};
use crate::hook::{HookScene, PASSING_CONFIG, Scene};
use crate::scene::{StatusDoc, status_doc};

fn signal(dir: &Path, args: &[&str], message: &str) -> (i32, String, String) {
    let mut all = vec!["signal"];
    all.extend_from_slice(args);
    parts(&closegate_stdin(dir, &all, Some(message.as_bytes())))
}

fn codes(stdout: &str) -> Vec<String> {
    let report: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}\n{stdout}"));
    report_codes(&report)
}

/// A linked worktree `wt/n` on `agent/n`, a branch with no commit of its own.
fn untouched_worktree(s: &Scene) -> std::path::PathBuf {
    let main = s.fx.repo.find_commit(s.main_tip()).unwrap();
    s.fx.repo.branch("agent/n", &main, false).unwrap();
    s.fx.worktree("n", "agent/n")
}

#[test]
fn the_signal_line_is_stripped_from_the_message() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, stdout, _) = signal(tmp.path(), &[], "fixed the link\n\n@signal done\n");
    assert_eq!(code, 0, "outside a repository only the shape is checked");
    assert_eq!(stdout, "fixed the link\n\n");
}

#[test]
fn a_missing_or_unknown_signal_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = signal(tmp.path(), &[], "all done\n");
    assert_eq!(code, 1);
    assert_eq!(stdout, "all done\n");
    assert!(stderr.contains("signal-missing"), "{stderr}");
    let (code, stdout, _) = signal(tmp.path(), &["--format", "json"], "x\n@signal finished\n");
    assert_eq!(code, 1);
    assert_eq!(codes(&stdout), ["signal-unknown"]);
}

#[test]
fn no_op_holds_only_when_nothing_changed() {
    let s = Scene::with_agent(None);
    let wt = untouched_worktree(&s);
    let (code, stdout, stderr) = signal(&wt, &[], "nothing to change\n@signal no_op\n");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "nothing to change\n");
    let record = s.records("signal").pop().unwrap();
    assert_eq!(
        (record["claimed"].clone(), record["accepted"].clone()),
        ("no_op".into(), true.into())
    );

    // an untracked file, even a status document, is a change
    StatusDoc::new("n", "in-progress").write(&wt);
    let (code, stdout, _) = signal(&wt, &["--format", "json"], "@signal no_op\n");
    assert_eq!(code, 1);
    assert_eq!(codes(&stdout), ["signal-no-op-contradicted"]);

    // a commit beyond the merge base
    let x = s.honest_worktree();
    let dir = x.to_str().unwrap();
    let (code, _, stderr) = signal(&s.root(), &["--worktree", dir], "@signal no_op\n");
    assert_eq!(code, 1);
    assert!(
        stderr.contains("signal-no-op-contradicted") && stderr.contains("1 commit"),
        "{stderr}"
    );
}

#[test]
fn done_holds_only_for_a_returned_document_the_gate_does_not_refuse() {
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    let wt = s.honest_worktree();
    let (code, _, stderr) = signal(&wt, &[], "added x\n@signal done\n");
    assert_eq!(code, 0, "{stderr}");
    let record = s.records("signal").pop().unwrap();
    assert_eq!(record["verdict"], "VERIFIED");

    StatusDoc::new("x", "in-progress").write(&wt);
    let (code, stdout, _) = signal(&wt, &["--format", "json"], "@signal done\n");
    assert_eq!(code, 1);
    assert!(codes(&stdout).contains(&"signal-done-contradicted".to_string()));

    std::fs::remove_file(wt.join("_EXEC_STATUS.md")).unwrap();
    let (code, _, stderr) = signal(&wt, &[], "@signal done\n");
    assert_eq!(code, 1);
    assert!(stderr.contains("no status document"), "{stderr}");
}

#[test]
fn done_is_refused_when_the_gate_refuses() {
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    let wt = s.honest_worktree();
    // the close line names a commit that does not exist
    let text = status_doc(
        "close-ok",
        "0123456789ab",
        &wt.canonicalize().unwrap().display().to_string(),
    );
    std::fs::write(wt.join("_EXEC_STATUS.md"), text).unwrap();
    let (code, _, stderr) = signal(&wt, &[], "@signal done\n");
    assert_eq!(code, 1);
    assert!(
        stderr.contains("signal-done-contradicted") && stderr.contains("close-commit-unknown"),
        "{stderr}"
    );
}

#[test]
fn blocked_holds_only_with_a_named_blocker() {
    let s = Scene::with_agent(None);
    let wt = untouched_worktree(&s);
    StatusDoc::new("n", "blocked")
        .next("the API key from ops")
        .write(&wt);
    let (code, _, stderr) = signal(&wt, &[], "waiting\n@signal blocked\n");
    assert_eq!(code, 0, "{stderr}");

    StatusDoc::new("n", "blocked").next("none").write(&wt);
    let (code, stdout, _) = signal(&wt, &["--format", "json"], "@signal blocked\n");
    assert_eq!(code, 1);
    assert_eq!(codes(&stdout), ["signal-blocked-contradicted"]);

    StatusDoc::new("n", "in-progress").write(&wt);
    let (code, _, stderr) = signal(&wt, &[], "@signal blocked\n");
    assert_eq!(code, 1);
    assert!(stderr.contains("not `blocked`"), "{stderr}");
}

/// Agent text with terminal escapes is carried raw in a finding (JSON holds the real characters)
/// and escaped exactly once where it is printed (SPEC §11): never pre-escaped by the gate.
#[test]
fn agent_text_is_escaped_once_when_printed_and_raw_in_json() {
    let tmp = tempfile::tempdir().unwrap();
    let message = "x\n@signal d\u{1b}[31mone\u{202e}\n";
    let (code, stdout, _) = signal(tmp.path(), &["--format", "json"], message);
    assert_eq!(code, 1);
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let text = report["findings"][0]["message"].as_str().unwrap();
    assert!(text.contains("@signal d\u{1b}[31mone\u{202e}"), "{text:?}");
    assert!(!text.contains("\\u{1b}"), "pre-escaped: {text:?}");

    let (code, _, stderr) = signal(tmp.path(), &[], message);
    assert_eq!(code, 1);
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains('\u{202e}'),
        "{stderr:?}"
    );
    assert_eq!(
        stderr.matches("@signal d\\u{1b}[31mone\\u{202e}").count(),
        1,
        "{stderr:?}"
    );
    assert!(!stderr.contains("\\\\u{1b}"), "escaped twice: {stderr:?}");
}

/// SPEC §11: a status document that is not a regular file (a FIFO, a directory) is an exit-2
/// error naming it, for `done` and `blocked` alike; nothing at that path is "no status document",
/// and no signal record is written for a run that reached no decision.
#[test]
fn a_status_document_that_is_not_a_regular_file_is_an_error_naming_it() {
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    let wt = s.honest_worktree();
    let doc = wt.join("_EXEC_STATUS.md");
    for kind in ["fifo", "directory"] {
        std::fs::remove_file(&doc)
            .or_else(|_| std::fs::remove_dir(&doc))
            .unwrap();
        match kind {
            "fifo" => {
                let made = std::process::Command::new("mkfifo").arg(&doc).status();
                assert!(made.unwrap().success());
            }
            _ => std::fs::create_dir(&doc).unwrap(),
        }
        let before = s.records("signal").len();
        for message in ["@signal done\n", "@signal blocked\n"] {
            let (code, _, stderr) = signal(&wt, &[], message);
            assert_eq!(code, 2, "{kind} {message}: {stderr}");
            assert!(stderr.contains("_EXEC_STATUS.md"), "{kind}: {stderr}");
            assert!(!stderr.contains("no status document"), "{kind}: {stderr}");
        }
        assert_eq!(s.records("signal").len(), before, "{kind}");
    }
}

/// SPEC §11: bytes that are not UTF-8 in the message are relayed escaped (`\xff`), not replaced
/// by U+FFFD, so no byte is lost.
#[test]
fn invalid_bytes_in_the_message_are_relayed_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let out = crate::fixture::closegate_stdin(
        tmp.path(),
        &["signal"],
        Some(b"\xffhello \xfe\n@signal done\n"),
    );
    let (code, stdout, _) = parts(&out);
    assert_eq!(code, 0);
    assert_eq!(stdout, "\\xffhello \\xfe\n");
}
