//! Reuse of recorded check results (SPEC §19) on real repositories: a check with the same key
//! (tree, name, `run`, `timeout_s`, configuration blob, base commit) does not run again; any part
//! changed, or `--rerun`, runs it; with a record key only authenticated records are reused.
//!
//! Each check appends a line to a file in a `writable` directory, so a test counts its runs.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::fixture::{hermetic, parts};
use crate::teardown::{Scene, audit, write_status};

/// A configuration whose check `count` appends to `<dir>/runs`, then runs `then`.
fn counting(dir: &Path, then: &str) -> String {
    format!(
        "[[checks]]\nname = \"count\"\nrun = \"echo run >> '{}/runs'; {then}\"\n\
         timeout_s = 60\nwritable = ['{}']\n",
        dir.display(),
        dir.display()
    )
}

struct Counted {
    s: Scene,
    dir: tempfile::TempDir,
    key: Option<PathBuf>,
}

impl Counted {
    fn new(then: &str) -> Counted {
        let dir = tempfile::tempdir().unwrap();
        let s = Scene::honest_return_with(Some(&counting(dir.path(), then)));
        Counted { s, dir, key: None }
    }

    fn keyed(then: &str) -> Counted {
        let mut c = Counted::new(then);
        let key = c.dir.path().join("keys/record.key");
        c.key = Some(key);
        let root = c.s.fx.root();
        let (code, out, err) = c.run(&root, &["key", "init"]);
        assert_eq!(code, 0, "{out}{err}");
        c
    }

    fn run(&self, cwd: &Path, args: &[&str]) -> (i32, String, String) {
        self.run_env(cwd, args, &[])
    }

    fn run_env(&self, cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
        cmd.args(args).current_dir(cwd);
        hermetic(&mut cmd, cwd);
        cmd.envs(env.iter().copied());
        if let Some(key) = &self.key {
            cmd.env("CLOSEGATE_RECORD_KEY_FILE", key);
        }
        cmd.stdin(std::process::Stdio::null());
        parts(&cmd.output().unwrap())
    }

    /// `check --format json` in the agent's worktree.
    fn check(&self, extra: &[&str]) -> (i32, Value) {
        self.check_env(extra, &[])
    }

    fn check_env(&self, extra: &[&str], env: &[(&str, &str)]) -> (i32, Value) {
        let mut args = vec!["check", "--format", "json"];
        args.extend_from_slice(extra);
        let (code, out, err) = self.run_env(&self.s.wt, &args, env);
        let report = serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("no JSON report (exit {code}): {e}\n{out}\n{err}"));
        (code, report)
    }

    /// How many times the check ran.
    fn runs(&self) -> usize {
        std::fs::read_to_string(self.dir.path().join("runs"))
            .unwrap_or_default()
            .lines()
            .count()
    }

    fn check_records(&self) -> Vec<Value> {
        audit(&self.s.fx)
            .into_iter()
            .filter(|r| r["event"] == "check")
            .collect()
    }
}

fn codes(report: &Value) -> Vec<String> {
    crate::fixture::report_codes(report)
}

#[test]
fn a_second_check_of_an_unchanged_commit_reuses_the_recorded_result() {
    let c = Counted::new("true");
    let (code, first) = c.check(&[]);
    assert_eq!(code, 0, "{first}");
    assert_eq!(first["verdict"], "VERIFIED");
    assert!(first["checks"][0]["reused"].is_null(), "{first}");
    assert_eq!(c.runs(), 1);
    let recorded = c.check_records();
    let entry = &recorded[0]["checks"][0];
    assert_eq!(entry["name"], "count");
    assert_eq!(entry["timeout_s"], 60);
    assert_eq!(
        entry["tree"],
        c.s.fx
            .repo
            .find_commit(c.s.tip)
            .unwrap()
            .tree_id()
            .to_string()
    );
    assert_eq!(entry["config"], recorded[0]["config"]);
    assert_eq!(entry["base_commit"], recorded[0]["base_commit"]);

    let (code, second) = c.check(&[]);
    assert_eq!(code, 0, "{second}");
    assert_eq!(second["verdict"], "VERIFIED");
    assert_eq!(c.runs(), 1, "the check ran again");
    assert_eq!(second["checks"][0]["reused"], recorded[0]["ts"]);
    assert_eq!(second["checks"][0]["exit_code"], 0);
    // A third run still names the record the result was first obtained in.
    let (_, third) = c.check(&[]);
    assert_eq!(third["checks"][0]["reused"], recorded[0]["ts"]);
    assert_eq!(c.runs(), 1);
}

#[test]
fn rerun_forces_a_fresh_run() {
    let c = Counted::new("true");
    c.check(&[]);
    let (code, report) = c.check(&["--rerun"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(c.runs(), 2);
    assert!(report["checks"][0]["reused"].is_null());
    // The fresh result is recorded and is what the next run reuses.
    let (_, next) = c.check(&[]);
    assert_eq!(c.runs(), 2);
    assert_eq!(next["checks"][0]["reused"], c.check_records()[1]["ts"]);
}

#[test]
fn a_failing_result_is_reused_as_failing() {
    let c = Counted::new("exit 3");
    let (code, first) = c.check(&[]);
    assert_eq!(code, 1, "{first}");
    assert!(
        codes(&first).contains(&"check-failed".to_string()),
        "{first}"
    );
    // SPEC §23: a check failing on the commit also runs on the merge base's own tree; SPEC
    // §27.2: each failing run is run again twice (`flaky_retries` = 2) on its tree.
    assert_eq!(c.runs(), 6);
    let (code, second) = c.check(&[]);
    assert_eq!(code, 1, "{second}");
    assert_eq!(c.runs(), 6);
    assert!(
        codes(&second).contains(&"check-failed".to_string()),
        "{second}"
    );
    assert_eq!(second["verdict"], first["verdict"]);
    assert_eq!(second["checks"][0]["exit_code"], 3);
    assert!(second["checks"][0]["reused"].is_string());
}

#[test]
fn a_new_tree_reruns() {
    let c = Counted::new("true");
    c.check(&[]);
    let tip = c.s.fx.commit(
        "agent/x",
        &[("src/lib.rs", Some("pub fn x() { changed() }\n"))],
        "change x",
    );
    c.s.fx.checkout(&c.s.wt);
    write_status(&c.s.wt, "x", "close-ok", tip, "change x");
    let (_, report) = c.check(&[]);
    assert_eq!(c.runs(), 2, "{report}");
    assert!(report["checks"][0]["reused"].is_null());
}

#[test]
fn a_new_base_commit_reruns() {
    let c = Counted::new("true");
    c.check(&[]);
    c.s.fx
        .commit("main", &[("docs/other.md", Some("other\n"))], "other work");
    let (_, report) = c.check(&[]);
    assert_eq!(c.runs(), 2, "{report}");
    assert!(report["checks"][0]["reused"].is_null());
}

#[test]
fn a_new_configuration_blob_reruns() {
    let c = Counted::new("true");
    c.check(&[]);
    // The same check under a configuration file with other bytes: another blob, same base.
    let file = c.dir.path().join("other.toml");
    let config = format!("# another blob\n{}", counting(c.dir.path(), "true"));
    std::fs::write(&file, config).unwrap();
    let (_, report) = c.check(&["--config", file.to_str().unwrap()]);
    assert_eq!(c.runs(), 2, "{report}");
    assert!(report["checks"][0]["reused"].is_null());
}

#[test]
fn a_changed_run_string_reruns() {
    let c = Counted::new("true");
    c.check(&[]);
    let config = counting(c.dir.path(), "true ");
    c.s.fx
        .commit("main", &[(".closegate.toml", Some(&config))], "reconfigure");
    let (_, report) = c.check(&[]);
    assert_eq!(c.runs(), 2, "{report}");
    assert!(report["checks"][0]["reused"].is_null());
}

#[test]
fn an_untrusted_record_is_not_reused() {
    let c = Counted::new("true");
    // The same bytes under --config FILE: the same blob, but the record is not trusted.
    let file = c.dir.path().join("same.toml");
    std::fs::write(&file, counting(c.dir.path(), "true")).unwrap();
    c.check(&["--config", file.to_str().unwrap()]);
    assert_eq!(c.runs(), 1);
    let (_, report) = c.check(&[]);
    assert_eq!(c.runs(), 2, "{report}");
}

#[test]
fn approve_and_teardown_after_a_check_run_the_check_zero_times() {
    let c = Counted::new("true");
    // A weakened test on the branch: PENDING_REVIEW until approved.
    c.s.fx.commit(
        "main",
        &[("tests/smoke.rs", Some("assert!(true);\n"))],
        "add test",
    );
    let tip = c.s.fx.commit(
        "agent/x",
        &[("tests/smoke.rs", Some("// weakened\n"))],
        "add x",
    );
    c.s.fx.checkout(&c.s.wt);
    write_status(&c.s.wt, "x", "close-ok", tip, "add x");
    let (_, report) = c.check(&[]);
    assert_eq!(report["verdict"], "PENDING_REVIEW", "{report}");
    // SPEC §27.1: a test edit also runs the check on the overlay; the reverse overlay runs only
    // when asked (`fail_to_pass`), so two runs where SPEC §23 made three.
    assert_eq!(c.runs(), 2);
    let (code, out, err) = c.run(
        &c.s.wt,
        &["approve", "--yes", "--by", "Ada", "--note", "fine"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(c.runs(), 2, "approve ran the check");
    let root = c.s.fx.root();
    let (code, out, err) = c.run(&root, &["teardown", c.s.wt.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(c.runs(), 2, "teardown ran the check");
}

#[test]
fn teardown_after_a_verified_check_runs_the_check_zero_times() {
    let c = Counted::new("true");
    let (_, report) = c.check(&[]);
    assert_eq!(report["verdict"], "VERIFIED", "{report}");
    let root = c.s.fx.root();
    let (code, out, err) = c.run(&root, &["teardown", c.s.wt.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(c.runs(), 1, "teardown ran the check");
}

/// SPEC §19 with a record key: an agent that rewrites the log with a forged passing result for
/// its failing check gets the check run again.
#[test]
fn with_a_key_a_forged_result_is_not_reused() {
    let c = Counted::keyed("exit 3");
    let (code, first) = c.check(&[]);
    assert_eq!(code, 1, "{first}");
    // SPEC §23: once on the commit, once on the merge base's own tree; SPEC §27.2: each
    // failing run is run again twice (`flaky_retries` = 2).
    assert_eq!(c.runs(), 6);
    let mut forged = c.check_records().pop().unwrap();
    let entry = &mut forged["checks"][0];
    entry["exit_code"] = 0.into();
    entry["finding"] = Value::Null;
    entry["message"] = Value::Null;
    let log = c.s.fx.git_dir().join("closegate/audit.jsonl");
    std::fs::write(&log, format!("{forged}\n")).unwrap();
    let (code, second) = c.check(&[]);
    assert_eq!(code, 1, "{second}");
    assert_eq!(c.runs(), 12, "the forged result was reused");
    assert!(second["checks"][0]["reused"].is_null());
    assert!(codes(&second).contains(&"check-failed".to_string()));
    // The genuine record just written is reused.
    c.check(&[]);
    assert_eq!(c.runs(), 12);
}

/// The sandbox word is part of the key: a result obtained unconfined (`none`, no sandbox could
/// be set up) does not stand for a sandboxed run; a sandboxed result stands for any run.
#[test]
fn an_unconfined_result_does_not_stand_for_a_sandboxed_run() {
    let no_sandbox = [("CLOSEGATE_TEST_NO_SANDBOX", "1")];
    let c = Counted::new("true");
    let (_, first) = c.check_env(&[], &no_sandbox);
    assert_eq!(first["sandbox"], "none", "{first}");
    let (_, second) = c.check(&[]);
    if second["sandbox"] != "bwrap" {
        return; // no sandbox on this machine: nothing more to tell apart
    }
    assert_eq!(c.runs(), 2, "an unconfined result was reused: {second}");
    let (_, third) = c.check_env(&[], &no_sandbox);
    assert_eq!(c.runs(), 2, "a sandboxed result was not reused: {third}");
    assert_eq!(third["sandbox"], "bwrap");
    assert_eq!(third["checks"][0]["reused"], c.check_records()[1]["ts"]);
}

#[test]
fn the_human_report_says_when_a_result_was_reused() {
    let c = Counted::new("true");
    let (code, out, err) = c.run(&c.s.wt, &["check"]);
    assert_eq!(code, 0, "{out}{err}");
    let line = out.lines().find(|l| l.trim_start().starts_with("count"));
    let line = line.unwrap_or_else(|| panic!("no line for the check: {out}"));
    assert!(!line.contains("reused"), "a fresh run is not reused: {out}");

    let (code, out, err) = c.run(&c.s.wt, &["check"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(c.runs(), 1, "the check ran again");
    let ts = c.check_records()[0]["ts"].as_str().unwrap().to_string();
    let line = out.lines().find(|l| l.trim_start().starts_with("count"));
    let line = line.unwrap_or_else(|| panic!("no line for the check: {out}"));
    assert!(
        line.contains(&format!("reused from {ts}")),
        "the check's line names the record its result came from: {out}"
    );
}

#[test]
fn board_check_reuses_and_board_check_rerun_forces_a_fresh_run() {
    let c = Counted::new("true");
    let (code, _) = c.check(&[]);
    assert_eq!(code, 0);
    assert_eq!(c.runs(), 1);
    let root = c.s.fx.root();
    let (code, out, err) = c.run(&root, &["board", "--check", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(c.runs(), 1, "board --check reuses the recorded result");
    let (code, out, err) = c.run(&root, &["board", "--check", "--rerun", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(c.runs(), 2, "board --check --rerun runs the check again");
    let board: Value = serde_json::from_str(&out).unwrap();
    let rows = board["worktrees"].as_array().unwrap();
    assert!(
        rows.iter()
            .any(|r| r["verdict"] == "VERIFIED" && r["stage"] == "COMPLETED"),
        "{board}"
    );
    // The fresh result is recorded: the next check reuses it. Records: [0] the first check,
    // [1] board --check (reused), [2] board --check --rerun (the fresh run).
    let (_, next) = c.check(&[]);
    assert_eq!(c.runs(), 2);
    let records = c.check_records();
    assert_eq!(
        records[2]["checks"][0]["reused"],
        Value::Null,
        "{records:?}"
    );
    assert_eq!(next["checks"][0]["reused"], records[2]["ts"]);
    // --rerun means nothing without --check.
    let (code, _, err) = c.run(&root, &["board", "--rerun"]);
    assert_eq!(code, 2, "{err}");
}

/// SPEC §19: closegate never runs the same check on the same input twice. `guard`, `signal`,
/// `approve` and `teardown` record the checks they run (in their own records, with the same key)
/// as `check` does (one `Record::new` for all; the teardown line is in ledger's bytes test), so a
/// `guard` after a `signal` (the stop hook runs both), a second `guard`, and a `check` after them
/// all reuse the one run.
#[test]
fn the_checks_signal_and_guard_run_are_reused_by_every_later_command() {
    let c = Counted::new("true");
    let wt = c.s.wt.clone();
    let claim = |command: &str, message: &str| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
        cmd.args([command, "-", "--worktree", ".", "--format", "json"])
            .current_dir(&wt);
        hermetic(&mut cmd, &wt);
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        use std::io::Write as _;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(message.as_bytes())
            .unwrap();
        let (code, out, err) = parts(&child.wait_with_output().unwrap());
        assert_eq!(code, 0, "{command}: {out}{err}");
        serde_json::from_str::<Value>(&out).unwrap()
    };
    let first = claim("signal", "added x\n@signal done\n");
    assert_eq!(c.runs(), 1, "signal ran the check");
    assert_eq!(first["checks"][0]["reused"], Value::Null);
    let signal_ts = c.s.audit().last().unwrap()["ts"].clone();
    let second = claim("guard", "VERIFIED: added x\n");
    assert_eq!(c.runs(), 1, "guard reused what signal recorded");
    assert_eq!(second["checks"][0]["reused"], signal_ts);
    claim("guard", "VERIFIED: added x\n");
    assert_eq!(c.runs(), 1, "a second guard reused it too");
    let (code, report) = c.check(&[]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(c.runs(), 1, "check reused it");
    assert_eq!(report["checks"][0]["reused"], signal_ts);
}

/// SPEC §19: the agent stop hook reuses recorded results, and `--rerun` forces a fresh run there
/// too (it is handed to the `signal` and `guard` runs that judge the final message).
#[test]
fn the_stop_hook_reuses_results_and_rerun_forces_a_fresh_run() {
    let c = Counted::new("true");
    let (code, _) = c.check(&[]);
    assert_eq!(code, 0);
    assert_eq!(c.runs(), 1);
    let input = serde_json::json!({
        "cwd": c.s.wt,
        "stop_hook_active": false,
        "last_assistant_message": "VERIFIED: added x\n@signal done\n",
    })
    .to_string();
    let hook = |extra: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
        cmd.args(["agent", "stop-hook"])
            .args(extra)
            .current_dir(&c.s.wt);
        hermetic(&mut cmd, &c.s.wt);
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input.as_bytes()).unwrap();
        drop(stdin);
        let (code, out, err) = parts(&child.wait_with_output().unwrap());
        assert_eq!((code, out.as_str()), (0, ""), "accepted: {err}");
    };
    hook(&[]);
    assert_eq!(c.runs(), 1, "the stop hook reused the recorded result");
    hook(&["--rerun"]);
    assert!(c.runs() >= 2, "--rerun ran the check afresh");
}
