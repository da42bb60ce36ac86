//! `closegate reject` (SPEC §21): a reviewer's rejection bound to the exact commit gives
//! `review-rejected` (refusal, gate protected) until that commit is approved; the board shows
//! REJECTED, the hook refuses the merge, the stop hook feeds the note back, and a later commit
//! is judged afresh. The newer of an approval and a rejection wins.

use std::path::Path;

use serde_json::Value;

use crate::approve::pending;
use crate::fixture::{closegate, closegate_stdin, git_output, parts, report_codes};
use crate::hook::HookScene;
use crate::teardown::{Scene, audit, write_status};

fn check(wt: &Path) -> (i32, Value) {
    let (code, stdout, stderr) = parts(&closegate(wt, &["check", "--format", "json"]));
    let report = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}"));
    (code, report)
}

fn reject(wt: &Path, extra: &[&str]) -> (i32, String, String) {
    // Off a terminal reject acts only with --yes (SPEC §26.5).
    let mut args = vec!["reject", "--yes", "--by", "Grace"];
    if !extra.contains(&"--note") {
        args.extend(["--note", "the test was weakened"]);
    }
    args.extend_from_slice(extra);
    parts(&closegate(wt, &args))
}

fn finding<'a>(report: &'a Value, code: &str) -> Option<&'a Value> {
    let findings = report["findings"].as_array()?;
    findings.iter().find(|f| f["code"] == code)
}

#[test]
fn a_rejection_refuses_the_commit_naming_who_and_the_note() {
    let s = pending();
    let (code, out, err) = reject(&s.wt, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("REJECTED "), "{out}");
    assert!(out.contains(&s.tip.to_string()), "{out}");
    let line = audit(&s.fx)
        .into_iter()
        .rfind(|r| r["event"] == "reject")
        .expect("a reject record");
    assert_eq!(line["by"], "Grace");
    assert_eq!(line["note"], "the test was weakened");
    assert_eq!(line["commit"], s.tip.to_string());

    let (code, report) = check(&s.wt);
    assert_eq!((code, report["verdict"].as_str()), (1, Some("FAIL")));
    let rejected = finding(&report, "review-rejected").expect("review-rejected");
    assert_eq!(rejected["severity"], "refusal");
    assert_eq!(rejected["gate"], "protected");
    let message = rejected["message"].as_str().unwrap();
    assert!(message.contains("Grace"), "{message}");
    assert!(message.contains("the test was weakened"), "{message}");

    // FAIL never tears down.
    let (code, out, err) = s.teardown(&[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(s.wt.exists());
}

#[test]
fn the_newer_of_approval_and_rejection_wins() {
    let s = pending();
    let approve = |extra: &[&str]| {
        let mut args = vec!["approve", "--by", "Ada", "--yes"];
        args.extend_from_slice(extra);
        parts(&closegate(&s.wt, &args))
    };
    let (code, out, err) = approve(&[]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(check(&s.wt).0, 0, "approved: VERIFIED");

    // A rejection after the approval wins …
    assert_eq!(reject(&s.wt, &[]).0, 0);
    let (code, report) = check(&s.wt);
    assert_eq!(code, 1, "{report}");
    assert!(finding(&report, "review-rejected").is_some());

    // … and an approval after the rejection wins again (approve is not refused by it).
    let (code, out, err) = approve(&[]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, report) = check(&s.wt);
    assert_eq!(code, 0, "{report}");
    assert!(finding(&report, "review-rejected").is_none());
}

#[test]
fn a_later_commit_is_judged_afresh() {
    let s = Scene::honest_return();
    assert_eq!(reject(&s.wt, &[]).0, 0);
    assert_eq!(check(&s.wt).0, 1);
    let tip = s.fx.commit(
        "agent/x",
        &[("src/lib.rs", Some("pub fn x() { fixed() }\n"))],
        "fix x",
    );
    s.fx.checkout(&s.wt);
    write_status(&s.wt, "x", "close-ok", tip, "fix x");
    let (code, report) = check(&s.wt);
    assert_eq!(code, 0, "the new commit is not rejected: {report}");
}

/// Attack: the agent's commit was VERIFIED (a passing record exists) before the reviewer
/// rejected it; the agent merges anyway. The passing record no longer counts.
#[test]
fn the_hook_refuses_to_merge_a_rejected_commit_that_had_passed() {
    let s = crate::hook::Scene::with_agent(Some(crate::hook::PASSING_CONFIG));
    let wt = s.honest_worktree();
    s.pass_check(&wt);
    s.install();
    assert_eq!(reject(&wt, &[]).0, 0);
    let out = git_output(&s.root(), &["merge", "--ff-only", "agent/x"]);
    let (code, _, stderr) = parts(&out);
    assert_ne!(code, 0, "the hook let a rejected commit merge: {stderr}");
    assert_ne!(s.main_tip(), s.tip);
    let out = git_output(&s.root(), &["branch", "-D", "agent/x"]);
    assert_ne!(out.status.code(), Some(0), "nor can the branch be deleted");
}

/// Attack: a rejection is not undone by the agent re-running `check` (or `board --check`):
/// only an approval of the commit, or a new commit, moves it on.
#[test]
fn checking_again_does_not_clear_a_rejection() {
    let s = Scene::honest_return();
    assert_eq!(reject(&s.wt, &[]).0, 0);
    for _ in 0..2 {
        let (code, report) = check(&s.wt);
        assert_eq!(code, 1, "{report}");
        let codes = report_codes(&report);
        assert_eq!(
            codes.iter().filter(|c| *c == "review-rejected").count(),
            1,
            "{codes:?}"
        );
    }
}

#[test]
fn the_board_shows_rejected_with_its_reason() {
    let s = Scene::honest_return();
    assert_eq!(check(&s.wt).0, 0);
    assert_eq!(reject(&s.wt, &[]).0, 0);
    let (code, stdout, _) = parts(&closegate(&s.fx.root(), &["board"]));
    assert_eq!(code, 0);
    let row = stdout.lines().find(|l| l.contains("agent/x")).unwrap();
    assert!(row.starts_with("REJECTED"), "{stdout}");
    assert!(
        row.contains(" FAIL "),
        "the reject record's verdict: {stdout}"
    );
    assert!(row.contains("review-rejected"), "{stdout}");
    let (_, json, _) = parts(&closegate(&s.fx.root(), &["board", "--json"]));
    let json: Value = serde_json::from_str(&json).unwrap();
    let rows = json["worktrees"].as_array().unwrap();
    let row = rows.iter().find(|r| r["branch"] == "agent/x").unwrap();
    assert_eq!(row["stage"], "REJECTED");
}

#[test]
fn the_stop_hook_feeds_the_note_back_to_the_agent() {
    let s = Scene::honest_return();
    assert_eq!(
        reject(&s.wt, &["--note", "use the parser, not a regex"]).0,
        0
    );
    let input = serde_json::json!({
        "cwd": s.wt.display().to_string(),
        "stop_hook_active": false,
        "hook_event_name": "Stop",
        "last_assistant_message": "VERIFIED: x added, closegate check passed\n\n@signal done\n",
    });
    let input = serde_json::to_vec(&input).unwrap();
    let out = closegate_stdin(
        &s.wt,
        &["agent", "stop-hook", "--target", "claude-code"],
        Some(&input),
    );
    let (code, stdout, stderr) = parts(&out);
    assert_eq!(code, 0, "{stderr}");
    let block: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(block["decision"], "block");
    let reason = block["reason"].as_str().unwrap();
    assert!(reason.contains("review-rejected"), "{reason}");
    assert!(reason.contains("use the parser, not a regex"), "{reason}");
}

#[test]
fn json_names_the_rejection() {
    let s = Scene::honest_return();
    let (code, stdout, err) = reject(&s.wt, &["--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["rejected"], true);
    assert_eq!(v["commit"], s.tip.to_string());
    assert_eq!(v["by"], "Grace");
    assert_eq!(v["note"], "the test was weakened");
    assert_eq!(v["refused"], Value::Null);
}

/// Attack (SPEC §26.5): the agent rejects (or a script on its behalf) from a tool call, off a
/// terminal: refused, exit 1, nothing recorded, the next step named (a human runs it on a
/// terminal, or passes --yes); the return is not REJECTED. Controls: --yes off a terminal, and a
/// human on a terminal, record the rejection.
#[test]
fn reject_off_a_terminal_acts_only_with_yes() {
    let s = Scene::honest_return();
    let args = ["reject", "--by", "Grace", "--note", "no"];
    let (code, out, err) = parts(&closegate(&s.wt, &args));
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("on a terminal") && out.contains("--yes"),
        "{out}"
    );
    let (code, out, _) = parts(&closegate(
        &s.wt,
        &["reject", "--by", "G", "--note", "n", "--json"],
    ));
    assert_eq!(code, 1, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["rejected"], false);
    assert!(v["refused"].as_str().unwrap().contains("--yes"), "{v}");
    assert!(audit(&s.fx).iter().all(|r| r["event"] != "reject"));
    assert_eq!(check(&s.wt).1["verdict"], "VERIFIED");

    let out = crate::review::on_pty(&s.wt, &args, "");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(check(&s.wt).1["verdict"], "FAIL");
    let (code, _, err) = reject(&s.wt, &[]);
    assert_eq!(code, 0, "{err}");
    let rejects = audit(&s.fx)
        .iter()
        .filter(|r| r["event"] == "reject")
        .count();
    assert_eq!(rejects, 2);
}

#[test]
fn bad_input_is_an_error_naming_it_and_records_nothing() {
    let s = Scene::honest_return();
    let (code, _, err) = parts(&closegate(&s.wt, &["reject", "--by", "G", "--note", "  "]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--note"), "{err}");
    let (code, _, err) = parts(&closegate(&s.wt, &["reject", "--by", "G"]));
    assert_eq!(code, 2, "{err}");
    assert!(audit(&s.fx).iter().all(|r| r["event"] != "reject"));
}

/// The note is a reviewer's text but reaches terminals: control characters are escaped.
#[test]
fn the_note_is_escaped_on_a_terminal() {
    let s = Scene::honest_return();
    let (code, out, _) = reject(&s.wt, &["--note", "bad\x1b[2Jnote"]);
    assert_eq!(code, 0);
    assert!(!out.contains('\x1b'), "{out:?}");
}

/// `log --event reject` lists the rejection; `log --stats` does not count it as a return.
#[test]
fn log_lists_rejections_and_stats_do_not_count_them_as_returns() {
    let s = Scene::honest_return();
    assert_eq!(reject(&s.wt, &[]).0, 0);
    let (code, out, err) = parts(&closegate(&s.wt, &["log", "--event", "reject", "--json"]));
    assert_eq!(code, 0, "{err}");
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{out}");
    assert_eq!(lines[0]["event"], "reject");
    let (_, out, _) = parts(&closegate(&s.wt, &["log", "--stats", "--json"]));
    let stats: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(stats["events"]["reject"], 1, "{stats}");
    assert_eq!(stats["false_green"]["returns"], 0, "{stats}");
}

/// Attack: the rejected agent rewords its commit (or amends it with no change) so the commit id
/// differs and hopes to be judged afresh. The same tree is the same work: still rejected, and
/// the board still says REJECTED once it is checked.
#[test]
fn a_reworded_commit_with_the_same_tree_is_still_rejected() {
    let s = Scene::honest_return();
    assert_eq!(check(&s.wt).0, 0, "VERIFIED before the rejection");
    assert_eq!(reject(&s.wt, &[]).0, 0);
    crate::fixture::git(
        &s.wt,
        &["commit", "-q", "--amend", "-m", "add x (reworded)"],
    );
    let tip = s.fx.repo.refname_to_id("refs/heads/agent/x").unwrap();
    assert_ne!(tip, s.tip);
    write_status(&s.wt, "x", "close-ok", tip, "add x (reworded)");
    let (code, report) = check(&s.wt);
    assert_eq!(code, 1, "{report}");
    let message = finding(&report, "review-rejected").expect("still rejected")["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.contains("the test was weakened"), "{message}");
    let (_, stdout, _) = parts(&closegate(&s.fx.root(), &["board"]));
    let row = stdout.lines().find(|l| l.contains("agent/x")).unwrap();
    assert!(row.starts_with("REJECTED"), "{stdout}");
}

/// Attack: with a record key in use, the agent (who can write the audit log) appends its own
/// `approve` line after the rejection. It does not authenticate, so it approves nothing and the
/// rejection stands.
#[test]
fn a_forged_approval_line_does_not_clear_a_rejection_under_a_record_key() {
    let s = Scene::honest_return();
    let key = s.fx.tmp.path().join("keys/record.key");
    let run = |cwd: &Path, args: &[&str]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_closegate"));
        cmd.args(args).current_dir(cwd);
        crate::fixture::hermetic(&mut cmd, cwd);
        cmd.env("CLOSEGATE_RECORD_KEY_FILE", &key);
        parts(&cmd.output().unwrap())
    };
    let (code, out, err) = run(&s.fx.root(), &["key", "init"]);
    assert_eq!(code, 0, "{out}{err}");
    let note = [
        "reject",
        "--yes",
        "--by",
        "Grace",
        "--note",
        "the test was weakened",
    ];
    assert_eq!(run(&s.wt, &note).0, 0);
    let log = s.fx.git_dir().join("closegate/audit.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    let mut forged: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    forged["event"] = "approve".into();
    forged["by"] = "agent".into();
    forged["verdict"] = "VERIFIED".into();
    forged["ts"] = "2099-01-01T00:00:00Z".into();
    let mut text = text;
    text.push_str(&format!("{forged}\n"));
    std::fs::write(&log, text).unwrap();
    let (code, out, _) = run(&s.wt, &["check", "--format", "json", "--no-record"]);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(code, 1, "{report}");
    assert!(finding(&report, "review-rejected").is_some(), "{report}");
}
