//! `closegate close` (SPEC §17): the document it writes passes `check` on honest work, for every
//! state word; it refuses what it must, writes nothing then, and keeps the agent's prose. The
//! inherited status document (SPEC §17) is read as absent by `check`, `board` and `close`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::fixture::{Fixture, closegate, git, parts, report_codes};
use crate::scene::{Scene, StatusDoc};

const PASSING_CONFIG: &str =
    "[[checks]]\nname = \"smoke\"\nrun = \"test -f src/lib.rs\"\ntimeout_s = 60\n";
const ABSTRACT: &str = "adds x, proven by the smoke check";
const DONE: &str = "x exists, proven by the smoke check";

/// The close tests' view of a scene (`Scene::returned`).
trait Closing {
    fn doc(&self) -> Option<String>;
}

impl Closing for Scene {
    /// The status document in the agent's worktree, if any.
    fn doc(&self) -> Option<String> {
        std::fs::read_to_string(self.wt.join("_EXEC_STATUS.md")).ok()
    }
}

fn close(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["close"];
    all.extend_from_slice(args);
    parts(&closegate(dir, &all))
}

fn honest_close(dir: &Path, state: &str, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        "--state",
        state,
        "--abstract",
        ABSTRACT,
        "--done",
        DONE,
        "--artifact",
        "src/lib.rs",
    ];
    args.extend_from_slice(extra);
    close(dir, &args)
}

fn check(dir: &Path) -> (i32, Value) {
    let out = closegate(dir, &["check", "--format", "json"]);
    let (code, stdout, stderr) = parts(&out);
    let report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("no report (exit {code}): {e}\n{stdout}\n{stderr}"));
    (code, report)
}

fn no_doc_or_close_codes(report: &Value) {
    let codes = report_codes(report);
    assert!(
        !codes
            .iter()
            .any(|c| c.starts_with("doc-") || c.starts_with("close-")),
        "{codes:?}"
    );
}

#[test]
fn close_then_check_is_verified_for_every_returned_state() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    for state in ["close-ok", "stop-2-ready", "closed-without-merge"] {
        let s = Scene::returned(Some(PASSING_CONFIG));
        let (code, out, err) = honest_close(&s.wt, state, &[]);
        assert_eq!(code, 0, "{state}: {out}{err}");
        let (code, report) = check(&s.wt);
        no_doc_or_close_codes(&report);
        assert_eq!(report_codes(&report), Vec::<String>::new(), "{state}");
        assert_eq!(report["verdict"], "VERIFIED", "{state}");
        assert_eq!(code, 0);
        assert_eq!(report["state"], state);
        assert_eq!(report["commit"], s.tip.to_string());
        assert_eq!(
            report["slug"], "x",
            "the slug is the branch after its last `/`"
        );
    }
}

#[test]
fn close_then_check_on_unreturned_states_gives_state_not_returned_only() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    for (state, extra) in [
        ("in-progress", vec![]),
        (
            "blocked",
            vec!["--blocked-on", "the owner's review of the API"],
        ),
    ] {
        let s = Scene::returned(Some(PASSING_CONFIG));
        let (code, out, err) = honest_close(&s.wt, state, &extra);
        assert_eq!(code, 0, "{state}: {out}{err}");
        let doc = s.doc().unwrap();
        assert!(!doc.contains("CLOSE-OK"), "{doc}");
        let (code, report) = check(&s.wt);
        assert_eq!(report_codes(&report), vec!["state-not-returned"], "{state}");
        assert_eq!(report["verdict"], "UNVERIFIED");
        assert_eq!(code, 4);
    }
}

#[test]
fn blocked_without_a_blocked_on_is_refused_and_nothing_is_written() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let (code, out, _) = honest_close(&s.wt, "blocked", &[]);
    assert_eq!(code, 1);
    assert!(out.contains("doc-blocked-on-none"), "{out}");
    assert_eq!(s.doc(), None);
}

#[test]
fn protected_edit_gives_pending_review_after_close() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.fx.commit(
        "agent/x",
        &[("tests/smoke.rs", Some("#[test] fn t() {}\n"))],
        "edit the tests",
    );
    s.fx.checkout(&s.wt);
    let (code, out, err) = honest_close(&s.wt, "close-ok", &[]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, report) = check(&s.wt);
    no_doc_or_close_codes(&report);
    assert_eq!(report["verdict"], "PENDING_REVIEW", "{report}");
    assert_eq!(code, 3);
}

#[test]
fn uncommitted_tracked_changes_refuse_a_returned_state() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.fx.write(&s.wt, "src/lib.rs", "pub fn x() { /* more */ }\n");
    for state in ["close-ok", "stop-2-ready", "closed-without-merge"] {
        let (code, out, err) = honest_close(&s.wt, state, &[]);
        assert_eq!(code, 1, "{out}{err}");
        assert!(err.contains("commit your work first"), "{err}");
        assert!(err.contains("src/lib.rs"), "{err}");
        assert_eq!(s.doc(), None, "nothing written");
    }
    // Not returned: the document says so, and is written.
    let (code, _, err) = honest_close(&s.wt, "in-progress", &[]);
    assert_eq!(code, 0, "{err}");
    assert!(s.doc().is_some());
}

#[test]
fn commit_flag_makes_one_trailing_status_only_commit() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    for _ in 0..2 {
        let (code, out, err) = honest_close(&s.wt, "close-ok", &["--commit"]);
        assert_eq!(code, 0, "{out}{err}");
        let parent = git(&s.wt, &["rev-parse", "HEAD~1"]);
        assert_eq!(
            parent.trim(),
            s.tip.to_string(),
            "exactly one trailing commit"
        );
        let changed = git(&s.wt, &["diff", "--name-only", "HEAD~1", "HEAD"]);
        assert_eq!(changed.trim(), "_EXEC_STATUS.md");
        assert_eq!(git(&s.wt, &["status", "--porcelain"]), "");
        let (code, report) = check(&s.wt);
        assert_eq!(report["verdict"], "VERIFIED", "{report}");
        assert_eq!(code, 0);
        assert_eq!(report["commit"], s.tip.to_string());
    }
}

#[test]
fn dry_run_writes_nothing_and_prints_the_document() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let (code, out, err) = honest_close(&s.wt, "close-ok", &["--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("# STATUS — x\n"), "{out}");
    assert!(out.contains(&format!("CLOSE-OK · x · commit {}", s.tip)));
    assert_eq!(s.doc(), None);
}

#[test]
fn prose_keys_are_kept_as_written() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let old = "# STATUS — mine\n\n- state: in-progress\n- abstract: adds x, proven by the smoke check\n\
               - done:\n  - x exists, proven by the smoke check\n- next / blocked-on: none — ship it\n\
               - evidence:\n  cargo test: 3 passed\n\n  after a blank line\n- note: kept as written\n  second line\n\
               - return:\n  - `src/lib.rs`\n\nCLOSE-OK · mine · commit 0000000 · branch nope · worktree /nope\n";
    std::fs::write(s.wt.join("_EXEC_STATUS.md"), old).unwrap();
    let (code, out, err) = close(&s.wt, &[]);
    assert_eq!(code, 0, "{out}{err}");
    let doc = s.doc().unwrap();
    for kept in [
        "# STATUS — mine\n",
        "- abstract: adds x, proven by the smoke check\n",
        "- done:\n  - x exists, proven by the smoke check\n",
        "- next / blocked-on: none — ship it\n",
        "- evidence:\n  cargo test: 3 passed\n\n  after a blank line\n",
        "- note: kept as written\n  second line\n",
        "- return:\n  - `src/lib.rs`\n",
        "- state: close-ok\n",
    ] {
        assert!(doc.contains(kept), "{kept:?} not in\n{doc}");
    }
    assert!(!doc.contains("0000000"), "{doc}");
    let (code, report) = check(&s.wt);
    assert_eq!(report["verdict"], "VERIFIED", "{report}");
    assert_eq!(code, 0);
}

#[test]
fn a_document_that_would_not_lint_is_never_written() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let old = "# STATUS — x\n\n- state: in-progress\n- colour: blue\n";
    std::fs::write(s.wt.join("_EXEC_STATUS.md"), old).unwrap();
    let (code, out, _) = honest_close(&s.wt, "close-ok", &[]);
    assert_eq!(code, 1);
    assert!(out.starts_with("FAIL"), "{out}");
    assert!(out.contains("doc-key-unknown"), "{out}");
    assert_eq!(s.doc().unwrap(), old, "the old document is untouched");
    // A returned state with no abstract is refused the same way.
    std::fs::remove_file(s.wt.join("_EXEC_STATUS.md")).unwrap();
    let (code, out, _) = close(&s.wt, &[]);
    assert_eq!(code, 1);
    assert!(out.contains("doc-abstract-missing"), "{out}");
    assert_eq!(s.doc(), None);
}

/// SPEC §17: the result is linted before anything is written and never written with a `doc-*`
/// refusal (exit 1, findings shown). A state word that is not writable is that refusal:
/// `doc-state-legacy` for an older spelling (naming the word to write), `doc-state-unknown` else.
#[test]
fn bad_state_word_is_the_lint_refusal_and_nothing_is_written() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    for (word, code_name) in [
        ("done", "doc-state-legacy"),
        ("finished", "doc-state-unknown"),
    ] {
        let (code, out, err) = close(&s.wt, &["--state", word]);
        assert_eq!(code, 1, "{out}{err}");
        assert!(out.contains(code_name), "{word}: {out}");
        assert!(out.contains(word), "{out}");
        assert!(err.contains("nothing was written"), "{err}");
    }
    let (_, out, _) = close(&s.wt, &["--state", "done"]);
    assert!(out.contains("close-ok"), "{out}");
    assert_eq!(s.doc(), None);
}

/// A base that carries another agent's committed document: a worktree born from it inherits a
/// CLOSE-OK that is not its own.
fn inherited_scene() -> (Fixture, PathBuf) {
    let (fx, tip) = Fixture::with_agent(Some(PASSING_CONFIG));
    let tip = tip.to_string();
    let old = StatusDoc::new("x", "close-ok")
        .abstract_text(ABSTRACT)
        .last_commit(&tip, "add x")
        .artifacts(&["src/lib.rs"])
        .close(&tip, "agent/x", "/elsewhere/x")
        .render();
    fx.commit(
        "main",
        &[
            ("src/lib.rs", Some("pub fn x() {}\n")),
            ("_EXEC_STATUS.md", Some(&old)),
        ],
        "squash agent/x",
    );
    fx.checkout(&fx.root());
    fx.commit("agent/y", &[("src/y.rs", Some("pub fn y() {}\n"))], "add y");
    let wt = fx.worktree("y", "agent/y");
    (fx, wt)
}

#[test]
fn inherited_document_is_read_as_absent_by_check() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let (_fx, wt) = inherited_scene();
    let (code, report) = check(&wt);
    assert_eq!(
        report_codes(&report),
        vec!["state-not-returned"],
        "{report}"
    );
    assert_eq!(report["state"], "in-progress");
    assert_eq!(report["verdict"], "UNVERIFIED");
    assert_eq!(code, 4);
}

#[test]
fn inherited_document_shows_running_on_the_board() {
    let (fx, _wt) = inherited_scene();
    let out = closegate(&fx.root(), &["board", "--json"]);
    let (code, stdout, err) = parts(&out);
    assert_eq!(code, 0, "{err}");
    let board: Value = serde_json::from_str(&stdout).unwrap();
    for row in board["worktrees"].as_array().unwrap() {
        assert_eq!(row["stage"], "RUNNING", "{row}");
    }
}

#[test]
fn close_overwrites_an_inherited_document() {
    let (_fx, wt) = inherited_scene();
    let (code, out, err) = close(
        &wt,
        &[
            "--abstract",
            "adds y, proven by the smoke check",
            "--artifact",
            "src/y.rs",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let doc = std::fs::read_to_string(wt.join("_EXEC_STATUS.md")).unwrap();
    assert!(doc.starts_with("# STATUS — y\n"), "{doc}");
    assert!(!doc.contains("/elsewhere/x"), "{doc}");
    let (code, report) = check(&wt);
    assert_eq!(report["verdict"], "VERIFIED", "{report}");
    assert_eq!(code, 0);
}

#[test]
fn guard_and_signal_read_an_inherited_document_as_absent() {
    let (_fx, wt) = inherited_scene();
    let message = wt.join("message.txt");
    std::fs::write(&message, "VERIFIED: done\n\n@signal done\n").unwrap();
    let m = message.to_str().unwrap();
    let w = wt.to_str().unwrap();
    let (code, _, err) = parts(&closegate(&wt, &["guard", m, "--worktree", w]));
    assert_eq!(code, 1, "{err}");
    let (code, stdout, _) = parts(&closegate(
        &wt,
        &["guard", m, "--worktree", w, "--format", "json"],
    ));
    assert_eq!(code, 1);
    let codes = report_codes(&serde_json::from_str(&stdout).unwrap());
    assert!(
        codes.contains(&"claim-overclaimed".to_string()),
        "{codes:?}"
    );
    assert!(
        codes.contains(&"state-not-returned".to_string()),
        "{codes:?}"
    );
    let (code, _, err) = parts(&closegate(&wt, &["signal", m, "--worktree", w]));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("signal-done-contradicted"), "{err}");
}

#[test]
fn close_writes_the_configured_status_file() {
    let config = format!("status_file = \"STATUS.md\"\n{PASSING_CONFIG}");
    let (fx, tip) = Fixture::with_agent(Some(&config));
    let wt = fx.worktree("x", "agent/x");
    let (code, out, err) = honest_close(&wt, "close-ok", &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(wt.join("STATUS.md").is_file());
    assert!(!wt.join("_EXEC_STATUS.md").exists());
    let (code, report) = check(&wt);
    assert_eq!(report["verdict"], "VERIFIED", "{report}");
    assert_eq!(report["commit"], tip.to_string());
    assert_eq!(code, 0);
}
