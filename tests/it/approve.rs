//! `closegate approve` (SPEC §8): bound to the exact commit, refused on FAIL, voided by a new
//! commit; a teardown of an approved return proceeds.

use std::process::{Command, Output};

use serde_json::Value;

use crate::fixture::{closegate, parts};
use crate::teardown::{Scene, audit, write_status};

/// A scene whose branch also weakens a test on `main`: PENDING_REVIEW.
pub fn pending() -> Scene {
    let s = Scene::honest_return()
        .on_main_only(&[("tests/smoke.rs", Some("assert!(true);\n"))], "add test")
        .on_agent(&[("tests/smoke.rs", Some("// weakened\n"))], "add x");
    s.fx.checkout(&s.wt);
    write_status(&s.wt, "x", "close-ok", s.tip, "add x");
    s
}

fn check(s: &Scene) -> (i32, Value) {
    let out = closegate(&s.wt, &["check", "--format", "json"]);
    let (code, stdout, stderr) = parts(&out);
    let report = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}"));
    (code, report)
}

fn approve(s: &Scene, extra: &[&str]) -> (i32, String, String) {
    // Off a terminal approve acts only with --yes (SPEC §26.5).
    let mut args = vec![
        "approve",
        "--yes",
        "--by",
        "Ada",
        "--note",
        "reviewed the test change",
    ];
    args.extend_from_slice(extra);
    parts(&closegate(&s.wt, &args))
}

#[test]
fn approval_turns_pending_review_into_verified_for_that_commit_only() {
    let s = pending();
    let (code, report) = check(&s);
    assert_eq!(
        (code, report["verdict"].as_str()),
        (3, Some("PENDING_REVIEW"))
    );
    let (code, out, err) = s.teardown(&[]);
    assert_eq!(
        code, 1,
        "PENDING_REVIEW without approval is refused: {out}{err}"
    );
    assert!(out.contains("closegate approve"), "{out}");

    let (code, out, err) = approve(&s, &["--commit", &s.tip.to_string()[..10]]);
    assert_eq!(code, 0, "{out}{err}");
    // What is reviewed first, then the verdict the next check gives (SPEC §26.5).
    assert!(out.starts_with("PENDING_REVIEW"), "{out}");
    assert!(
        out.contains("the next `closegate check` gives VERIFIED"),
        "{out}"
    );
    let line = audit(&s.fx)
        .into_iter()
        .rfind(|r| r["event"] == "approve")
        .unwrap();
    assert_eq!(line["by"], "Ada");
    assert_eq!(line["note"], "reviewed the test change");
    assert_eq!(line["commit"], s.tip.to_string());
    assert_eq!(line["contract"], Value::Null);
    assert_eq!(line["verdict"], "VERIFIED");

    let (code, report) = check(&s);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["approval"]["by"], "Ada");
    assert_eq!(report["approval"]["commit"], s.tip.to_string());
    let protected = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "protected-surface")
        .unwrap();
    assert_eq!(protected["severity"], "warning");

    // A new commit voids it.
    let next = s.fx.commit(
        "agent/x",
        &[("tests/smoke.rs", Some("// again\n"))],
        "again",
    );
    s.fx.checkout(&s.wt);
    write_status(&s.wt, "x", "close-ok", next, "again");
    let (code, report) = check(&s);
    assert_eq!(code, 3, "{report}");
    assert!(report["approval"].is_null());
}

#[test]
fn approved_return_is_torn_down() {
    let s = pending();
    let (code, out, err) = approve(&s, &[]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = s.teardown(&[]);
    assert_eq!(code, 0, "{out}{err}");
    let last = audit(&s.fx).pop().unwrap();
    assert_eq!(last["admission"], "approved");
}

#[test]
fn approval_of_a_failing_return_is_refused_and_never_counts() {
    let s = pending();
    s.fx.write(&s.wt, "src/lib.rs", "uncommitted\n");
    let (code, out, err) = approve(&s, &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("approval refused") && out.contains("FAIL"),
        "{out}"
    );
    // SPEC §26.5: the refusal names the next step.
    assert!(
        out.contains("once `closegate check` no longer says FAIL, approve again"),
        "{out}"
    );
    let line = audit(&s.fx).pop().unwrap();
    assert_eq!(line["event"], "approve");
    assert_eq!(line["by"], Value::Null);
    assert_eq!(line["requested_by"], "Ada");
    std::fs::write(s.wt.join("src/lib.rs"), "pub fn x() {}\n").unwrap();
    let (code, report) = check(&s);
    assert_eq!(code, 3, "a refused approval never applies: {report}");
}

#[test]
fn approval_for_another_commit_is_refused() {
    let s = pending();
    let main =
        s.fx.repo
            .refname_to_id("refs/heads/main")
            .unwrap()
            .to_string();
    let (code, out, _) = approve(&s, &["--commit", &main]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("bound to the exact commit"), "{out}");
    // The next step: the checked commit, named.
    assert!(
        out.contains(&format!("approve it with `--commit {}`", s.tip)),
        "{out}"
    );
    assert_eq!(check(&s).0, 3);
    let (code, out, _) = approve(&s, &["--commit", "nosuchcommit"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("give the full commit id"), "{out}");
    assert!(out.contains(&s.tip.to_string()), "{out}");
    assert!(
        audit(&s.fx).iter().all(|r| r["by"] != "Ada"),
        "nothing approved"
    );
}

/// The real binary in `cwd`, hermetic but without the git identity variables, then with `set`.
pub fn closegate_named(cwd: &std::path::Path, args: &[&str], set: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
    cmd.args(args).current_dir(cwd);
    crate::fixture::hermetic(&mut cmd, cwd);
    for name in ["GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"] {
        cmd.env_remove(name);
    }
    for (name, value) in set {
        cmd.env(name, value);
    }
    cmd.stdin(std::process::Stdio::null()).output().unwrap()
}

/// SPEC §21: `--by`, else git's `user.name`, else GIT_COMMITTER_NAME / GIT_AUTHOR_NAME; exit 2
/// when none is set (an empty `--by` too).
#[test]
fn approve_needs_a_name() {
    let s = pending();
    let (code, _, err) = parts(&closegate(&s.wt, &["approve", "--by", " "]));
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = parts(&closegate_named(&s.wt, &["approve"], &[]));
    assert_eq!(code, 2, "no name anywhere: {err}");
    assert!(err.contains("GIT_COMMITTER_NAME"), "{err}");
    assert!(audit(&s.fx).iter().all(|r| r["event"] != "approve"));
}

#[test]
fn approve_falls_back_to_the_committer_then_the_author_name() {
    for (var, name) in [
        ("GIT_COMMITTER_NAME", "Committer C"),
        ("GIT_AUTHOR_NAME", "Author A"),
    ] {
        let s = pending();
        let (code, out, err) = parts(&closegate_named(
            &s.wt,
            &["approve", "--yes"],
            &[(var, name)],
        ));
        assert_eq!(code, 0, "{out}{err}");
        let line = audit(&s.fx).into_iter().rfind(|r| r["event"] == "approve");
        assert_eq!(line.unwrap()["by"], name);
    }
    let s = pending();
    let both = [
        ("GIT_COMMITTER_NAME", "Committer C"),
        ("GIT_AUTHOR_NAME", "Author A"),
    ];
    assert_eq!(
        parts(&closegate_named(&s.wt, &["approve", "--yes"], &both)).0,
        0
    );
    let line = audit(&s.fx).into_iter().rfind(|r| r["event"] == "approve");
    assert_eq!(
        line.unwrap()["by"],
        "Committer C",
        "the committer comes first"
    );
}

/// SPEC §26.5: approve prints (and records) the verdict the next `check` gives, by the gate's own
/// rule — the same verdict and the same codes, for a plain approval and for one that overrides a
/// reviewer's rejection; never a verdict of approve's own making.
#[test]
fn approve_prints_the_verdict_the_next_check_gives() {
    for rejected_first in [false, true] {
        let s = pending();
        if rejected_first {
            let args = ["reject", "--yes", "--by", "Grace", "--note", "no"];
            assert_eq!(parts(&closegate(&s.wt, &args)).0, 0);
            assert_eq!(check(&s).1["verdict"], "FAIL");
        }
        let (code, out, err) = approve(&s, &["--json"]);
        assert_eq!(code, 0, "{out}{err}");
        let shown: Value = serde_json::from_str(&out).unwrap();
        let line = audit(&s.fx)
            .into_iter()
            .rfind(|r| r["event"] == "approve")
            .unwrap();
        let (_, next) = check(&s);
        assert_eq!(shown["verdict"], next["verdict"], "{shown:#}\n{next:#}");
        assert_eq!(line["verdict"], next["verdict"], "{line:#}");
        let codes = |r: &Value| crate::fixture::report_codes(r);
        assert_eq!(codes(&shown["report"]), codes(&next), "{rejected_first}");
        assert_eq!(next["verdict"], "VERIFIED");
    }
}
