//! `closegate guard` through the binary (SPEC §10): every `claim-*` code from a scenario.

use serde_json::Value;

use crate::fixture::{closegate_stdin, parts, report_codes};
use crate::hook::{HookScene, PASSING_CONFIG, Scene};

fn guard(dir: &std::path::Path, args: &[&str], report: &str) -> (i32, String, String) {
    let mut all = vec!["guard"];
    all.extend_from_slice(args);
    parts(&closegate_stdin(dir, &all, Some(report.as_bytes())))
}

fn json(stdout: &str) -> Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("not JSON: {e}\n{stdout}"))
}

fn codes(report: &Value) -> Vec<String> {
    report_codes(report)
}

#[test]
fn a_report_without_a_token_gets_one_line_asking_to_re_emit() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, stdout, _) = guard(
        tmp.path(),
        &[],
        "Done! Refactor applied; tests look good.\n",
    );
    assert_eq!(code, 1);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(stdout.starts_with("re-emit the report"), "{stdout}");
    for token in ["VERIFIED", "UNVERIFIED", "PENDING_REVIEW", "FAIL"] {
        assert!(stdout.contains(token), "{stdout}");
    }
    let (code, stdout, _) = guard(tmp.path(), &["--format", "json"], "**VERIFIED**\n");
    assert_eq!(code, 1);
    assert_eq!(codes(&json(&stdout)), ["claim-token-missing"]);
}

#[test]
fn unverified_must_name_the_gap() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, stdout, _) = guard(tmp.path(), &["--format", "json"], "UNVERIFIED:\n\n");
    assert_eq!(code, 1);
    assert_eq!(codes(&json(&stdout)), ["claim-gap-unnamed"]);
    let (code, stdout, _) = guard(tmp.path(), &[], "UNVERIFIED: no linter is configured\n");
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.starts_with("accepted · claimed UNVERIFIED"),
        "{stdout}"
    );
}

#[test]
fn claiming_verified_when_the_gate_does_not_verify_is_a_recorded_false_green() {
    // no checks configured: the gate can at best say UNVERIFIED
    let s = Scene::with_agent(None);
    let wt = s.honest_worktree();
    let (code, stdout, _) = guard(
        &wt,
        &["--worktree", wt.to_str().unwrap(), "--format", "json"],
        "VERIFIED: all checks pass\n",
    );
    assert_eq!(code, 1);
    let report = json(&stdout);
    let codes = codes(&report);
    assert!(
        codes.contains(&"claim-overclaimed".to_string()),
        "{codes:?}"
    );
    assert!(codes.contains(&"checks-none".to_string()), "{codes:?}");
    let record = s.records("guard").pop().unwrap();
    assert_eq!(record["claimed"], "VERIFIED");
    assert_eq!(record["verdict"], "UNVERIFIED");
    assert_eq!(record["accepted"], false);
    assert_eq!(record["commit"], s.tip.to_string());
}

#[test]
fn claiming_fail_while_the_gate_verifies_is_a_warning() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    let wt = s.honest_worktree();
    let dir = wt.to_str().unwrap();
    let (code, stdout, _) = guard(&wt, &["--worktree", dir], "FAIL: the export test is red\n");
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.starts_with("accepted · claimed FAIL · closegate VERIFIED"),
        "{stdout}"
    );
    assert!(stdout.contains("warning claim-underclaimed"), "{stdout}");

    let (code, stdout, _) = guard(&wt, &["--worktree", dir, "--format", "json"], "VERIFIED\n");
    assert_eq!(code, 0, "{stdout}");
    let report = json(&stdout);
    assert_eq!(report["verdict"], "VERIFIED");
    assert!(codes(&report).is_empty());
    let records = s.records("guard");
    assert_eq!(records.len(), 2);
    assert_eq!(records[1]["claimed"], "VERIFIED");
    assert_eq!(records[1]["verdict"], "VERIFIED");
}

#[test]
fn inside_a_repository_without_a_worktree_the_claim_is_recorded_without_a_verdict() {
    let s = Scene::with_agent(None);
    let (code, _, _) = guard(&s.root(), &[], "PENDING_REVIEW touched tests/\n");
    assert_eq!(code, 0);
    let record = s.records("guard").pop().unwrap();
    assert_eq!(record["claimed"], "PENDING_REVIEW");
    assert_eq!(record["verdict"], Value::Null);
    assert_eq!(record["accepted"], true);
}
