//! The reviewer's side (SPEC §21): `approve` asks on a terminal (`--yes`, `--dry-run`), a
//! refused teardown is headed REFUSED, `--json` on teardown/approve/close/validate, the board's
//! reason column, and `check --fail-fast`.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::approve::pending;
use crate::fixture::{closegate, hermetic, parts};
use crate::teardown::{Scene, audit};

fn approvals(s: &Scene) -> Vec<Value> {
    audit(&s.fx)
        .into_iter()
        .filter(|r| r["event"] == "approve" && !r["by"].is_null())
        .collect()
}

/// `closegate ARGS` on a real pseudo-terminal (util-linux `script`), `answer` typed on it;
/// stderr (the checks' progress lines) is left out.
pub fn on_pty(cwd: &Path, args: &[&str], answer: &str) -> Output {
    pty(cwd, args, answer, false)
}

/// [`on_pty`], with stderr on the terminal too when `stderr` is true.
fn pty(cwd: &Path, args: &[&str], answer: &str, stderr: bool) -> Output {
    let bin = env!("CARGO_BIN_EXE_closegate");
    let line: Vec<String> = std::iter::once(bin)
        .chain(args.iter().copied())
        .map(|w| format!("'{}'", w.replace('\'', "'\\''")))
        .collect();
    // stderr (the checks' progress lines) is left out: stdin and stdout are the terminal.
    let redirect = if stderr { "" } else { " 2>/dev/null" };
    let line = format!("{}{redirect}", line.join(" "));
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &line, "/dev/null"]).current_dir(cwd);
    hermetic(&mut cmd, cwd);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("util-linux script");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(answer.as_bytes()).unwrap();
    }
    child.wait_with_output().unwrap()
}

fn pty_text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n")
}

#[test]
fn approve_on_a_terminal_asks_and_records_only_on_yes() {
    let s = pending();
    let out = on_pty(&s.wt, &["approve", "--by", "Ada"], "n\n");
    let text = pty_text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("approve? [y/N]"), "{text}");
    assert!(
        text.contains("git diff "),
        "the exact diff command is shown: {text}"
    );
    assert!(text.contains("not approved"), "{text}");
    assert!(approvals(&s).is_empty(), "declined: nothing recorded");

    let out = on_pty(&s.wt, &["approve", "--by", "Ada"], "y\n");
    let text = pty_text(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_eq!(approvals(&s).len(), 1);
}

#[test]
fn approve_yes_skips_the_question_and_dry_run_only_shows() {
    let s = pending();
    let out = on_pty(&s.wt, &["approve", "--by", "Ada", "--dry-run"], "y\n");
    let text = pty_text(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(!text.contains("approve? [y/N]"), "{text}");
    assert!(text.contains("dry run"), "{text}");
    assert!(approvals(&s).is_empty(), "--dry-run records nothing");
    assert!(audit(&s.fx).iter().all(|r| r["event"] != "approve"));

    let out = on_pty(&s.wt, &["approve", "--by", "Ada", "--yes"], "");
    let text = pty_text(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(!text.contains("approve? [y/N]"), "{text}");
    assert_eq!(approvals(&s).len(), 1);
}

/// Attack (SPEC §26.5): the agent runs the approve command a hint showed it, from its tool call
/// (no terminal): refused, exit 1, nothing recorded, and the message names the next step (a human
/// runs it on a terminal, or passes --yes); the verdict stays PENDING_REVIEW. Control: with
/// --yes off a terminal it records without asking and still prints what it approved.
#[test]
fn approve_off_a_terminal_acts_only_with_yes() {
    let s = pending();
    let (code, out, err) = parts(&closegate(&s.wt, &["approve", "--by", "Ada"]));
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("approval refused"), "{out}");
    assert!(
        out.contains("on a terminal") && out.contains("--yes"),
        "{out}"
    );
    assert!(approvals(&s).is_empty());
    assert!(audit(&s.fx).iter().all(|r| r["event"] != "approve"));
    let (code, out, _) = parts(&closegate(&s.wt, &["approve", "--by", "Ada", "--json"]));
    assert_eq!(code, 1, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["approved"], false);
    assert!(v["refused"].as_str().unwrap().contains("--yes"), "{v}");
    assert!(approvals(&s).is_empty());
    let (code, out, _) = parts(&closegate(&s.wt, &["check"]));
    assert_eq!(code, 3, "still PENDING_REVIEW: {out}");

    let (code, out, err) = parts(&closegate(&s.wt, &["approve", "--by", "Ada", "--yes"]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("approve?"), "{out}");
    assert!(out.contains("protected changes approved:"), "{out}");
    assert!(out.contains("see them in full: git diff "), "{out}");
    assert_eq!(approvals(&s).len(), 1);
}

/// SPEC §26.5: `agent instructions` tells the agent never to run approve or reject (for every
/// target), and what to do on PENDING_REVIEW instead; the control, the reviewer's own help,
/// says approve is what a human runs.
#[test]
fn agent_instructions_tell_the_agent_never_to_approve_or_reject() {
    let s = pending();
    for target in ["claude-code", "codex"] {
        let args = ["agent", "instructions", "--target", target];
        let (code, out, err) = parts(&closegate(&s.wt, &args));
        assert_eq!(code, 0, "{out}{err}");
        let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains(
                "Never run `closegate approve` or `closegate reject`, not even with `--yes`"
            ),
            "{target}: {out}"
        );
        assert!(flat.contains("On PENDING_REVIEW, stop"), "{target}: {out}");
    }
    let (code, out, _) = parts(&closegate(&s.wt, &["approve", "--help"]));
    assert_eq!(code, 0);
    assert!(out.contains("human"), "{out}");
}

#[test]
fn approve_json_prints_one_object() {
    let s = pending();
    let (code, out, err) = parts(&closegate(
        &s.wt,
        &["approve", "--by", "Ada", "--json", "--dry-run"],
    ));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["approved"], false);
    assert_eq!(v["dry_run"], true);
    assert!(approvals(&s).is_empty());
    // Off a terminal, only with --yes (SPEC §26.5).
    let args = ["approve", "--by", "Ada", "--json", "--yes"];
    let (code, out, err) = parts(&closegate(&s.wt, &args));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["approved"], true);
    assert_eq!(v["verdict"], "VERIFIED");
    assert_eq!(v["commit"], s.tip.to_string());
    assert_eq!(v["report"]["verdict"], "VERIFIED");
    assert_eq!(v["report"]["approval"]["by"], "Ada");
    assert_eq!(approvals(&s).len(), 1);
}

#[test]
fn a_refused_teardown_of_verified_work_is_headed_refused_not_fail() {
    let s = Scene::honest_return();
    s.fx.write(&s.wt, "notes.txt", "the agent's scratch notes\n");
    let (code, out, err) = s.teardown(&[]);
    assert_eq!(code, 1, "{out}{err}");
    let first = out.lines().next().unwrap();
    assert_eq!(first, "REFUSED  teardown-untracked", "{out}");
    assert!(out.lines().any(|l| l.starts_with("VERIFIED  x")), "{out}");
    assert!(
        !out.lines().any(|l| l.starts_with("FAIL")),
        "the work verified: no FAIL heading\n{out}"
    );
    assert!(s.wt.join("notes.txt").exists());

    // Work that fails is headed REFUSED too, naming the gate's refusal with the teardown's.
    s.fx.write(&s.wt, "src/lib.rs", "pub fn x() { uncommitted() }\n");
    let (code, out, _) = s.teardown(&[]);
    assert_eq!(code, 1);
    let first = out.lines().next().unwrap();
    assert!(first.starts_with("REFUSED  "), "{out}");
    for code in [
        "close-worktree-dirty",
        "teardown-dirty",
        "teardown-untracked",
    ] {
        assert!(first.contains(code), "{code}: {out}");
    }
}

#[test]
fn teardown_json_names_the_outcome_and_codes() {
    let s = Scene::honest_return();
    s.fx.write(&s.wt, "src/lib.rs", "pub fn x() { uncommitted() }\n");
    let (code, out, err) = s.teardown(&["--json"]);
    assert_eq!(code, 1, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v["outcome"], "refused");
    assert_eq!(v["removed"], false);
    assert_eq!(
        v["verdict"], "FAIL",
        "the close gate refuses the dirty worktree too"
    );
    assert_eq!(
        v["refused"],
        serde_json::json!(["close-worktree-dirty", "teardown-dirty"])
    );
    assert!(v["report"]["findings"].is_array());

    crate::fixture::git(&s.wt, &["checkout", "--", "src/lib.rs"]);
    let (code, out, err) = s.teardown(&["--json", "--dry-run"]);
    assert_eq!(code, 0, "{out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["outcome"], "planned");
    assert!(s.wt.exists());
    let (code, out, err) = s.teardown(&["--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["outcome"], "removed");
    assert_eq!(v["removed"], true);
    assert_eq!(v["verdict"], "VERIFIED");
    assert!(!s.wt.exists());
}

#[test]
fn close_json_says_what_was_written_or_why_not() {
    let s = Scene::honest_return();
    std::fs::remove_file(s.wt.join("_EXEC_STATUS.md")).unwrap();
    let args = [
        "close",
        "--abstract",
        "adds x, proven by the smoke check",
        "--artifact",
        "src/lib.rs",
        "--json",
    ];
    let (code, out, err) = parts(&closegate(&s.wt, &args));
    assert_eq!(code, 0, "{out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v["written"], true);
    assert_eq!(v["commit"], s.tip.to_string());
    assert_eq!(v["state"], "close-ok");
    assert_eq!(v["refused"], Value::Null);

    s.fx.write(&s.wt, "src/lib.rs", "pub fn x() { dirty() }\n");
    let before = std::fs::read(s.wt.join("_EXEC_STATUS.md")).unwrap();
    let (code, out, _) = parts(&closegate(&s.wt, &args));
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v["written"], false);
    assert!(
        v["refused"].as_str().unwrap().contains("uncommitted"),
        "{v}"
    );
    assert_eq!(std::fs::read(s.wt.join("_EXEC_STATUS.md")).unwrap(), before);
}

#[test]
fn validate_json_lists_the_problems() {
    let s = Scene::honest_return();
    let (code, out, err) = parts(&closegate(&s.fx.root(), &["validate", "--json"]));
    assert_eq!(code, 0, "{out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["ok"], true);
    assert_eq!(v["checks"], 1);
    let bad = s.fx.root().join("bad.toml");
    std::fs::write(&bad, "[[checks]]\nname = 3\n").unwrap();
    let (code, out, _) = parts(&closegate(
        &s.fx.root(),
        &["validate", "--json", "--config", bad.to_str().unwrap()],
    ));
    assert_eq!(code, 1, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["ok"], false);
    assert!(!v["problems"].as_array().unwrap().is_empty(), "{v}");
}

const THREE_CHECKS: &str = "[[checks]]\nname = \"first\"\nrun = \"true\"\ntimeout_s = 60\n\n\
    [[checks]]\nname = \"breaks\"\nrun = \"exit 3\"\ntimeout_s = 60\n\n\
    [[checks]]\nname = \"after\"\nrun = \"touch \\\"$HOME/ran-after\\\"\"\ntimeout_s = 60\n";

fn check_json(wt: &Path, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["check", "--format", "json", "--no-record", "--rerun"];
    args.extend_from_slice(extra);
    let (code, out, err) = parts(&closegate(wt, &args));
    (
        code,
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}")),
    )
}

#[test]
fn fail_fast_stops_at_the_first_failing_check_and_names_the_rest_as_not_run() {
    let s = Scene::honest_return_with(Some(&format!(
        "sandbox = \"off\"\njobs = 3\n{THREE_CHECKS}"
    )));
    let (code, report) = check_json(&s.wt, &["--fail-fast"]);
    assert_eq!(code, 1, "{report}");
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["first", "breaks"], "{report}");
    let skipped: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "checks-skipped")
        .collect();
    assert_eq!(skipped.len(), 1, "{report}");
    assert_eq!(skipped[0]["severity"], "gap");
    let msg = skipped[0]["message"].as_str().unwrap();
    assert!(msg.contains("`after`") && msg.contains("`breaks`"), "{msg}");

    // Without --fail-fast every check runs.
    let (code, report) = check_json(&s.wt, &[]);
    assert_eq!(code, 1);
    assert_eq!(report["checks"].as_array().unwrap().len(), 3, "{report}");
}

/// Attack: `--fail-fast` is never a way to VERIFIED: a check not run is a gap, and a passing
/// run reports every check.
#[test]
fn fail_fast_on_passing_checks_runs_them_all() {
    let config = "sandbox = \"off\"\n[[checks]]\nname = \"a\"\nrun = \"true\"\ntimeout_s = 60\n\n\
                  [[checks]]\nname = \"b\"\nrun = \"true\"\ntimeout_s = 60\n";
    let s = Scene::honest_return_with(Some(config));
    let (code, report) = check_json(&s.wt, &["--fail-fast"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["checks"].as_array().unwrap().len(), 2);
}

#[test]
fn board_reason_column_names_the_first_deciding_code() {
    let s = pending();
    let (code, _, _) = parts(&closegate(&s.wt, &["check"]));
    assert_eq!(code, 3);
    let (code, out, _) = parts(&closegate(&s.fx.root(), &["board"]));
    assert_eq!(code, 0);
    let header = out.lines().next().unwrap();
    assert!(header.contains("REASON"), "{out}");
    let row = out.lines().find(|l| l.contains("agent/x")).unwrap();
    assert!(row.starts_with("REVIEW"), "{out}");
    assert!(row.contains("protected-surface"), "{out}");
}

/// `board --check` runs two agents' checks at once: on a terminal each progress line names the
/// agent's branch before the check's name.
#[test]
fn board_check_progress_lines_name_the_agent() {
    let config =
        "sandbox = \"off\"\n[[checks]]\nname = \"slow\"\nrun = \"sleep 1\"\ntimeout_s = 60\n";
    let s = Scene::honest_return_with(Some(config));
    let out = pty(&s.fx.root(), &["board", "--check", "--no-record"], "", true);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("agent/x: slow"), "{text}");
}
