//! The record's own rules: lines round-trip, damaged fields read as defaults, which records count.

use super::*;
use crate::report::{Approval, ArtifactStatus, ConfigSource, Provenance};

fn report() -> Report {
    Report {
        slug: Some("t-1".into()),
        commit: Some("c".repeat(40)),
        claimed_commit: Some("cccc".into()),
        branch: Some("agent/t".into()),
        worktree: Some("/w".into()),
        tool: "closegate 0.1.0".into(),
        config: Some("f".repeat(40)),
        provenance: Some(Provenance {
            config_source: ConfigSource::Base,
            base_configured: true,
        }),
        base: Some("main".into()),
        base_commit: Some("b".repeat(40)),
        ..Report::default()
    }
}

fn line(record: &Record) -> String {
    let mut record = record.clone();
    record.ts = "2026-01-01T00:00:00Z".into();
    serde_json::to_string(&record.to_value().unwrap()).unwrap()
}

/// The bytes SPEC §6 fixes: the field names the ad-hoc objects wrote, in the order written
/// (serde_json's sorted map), nulls kept; the mac is computed over exactly this text.
#[test]
fn a_check_line_is_byte_for_byte_the_line_written_before() {
    let fields = CheckFields {
        mergeable: false,
        approval: None,
        checks: vec![],
        findings: vec![],
        protected: vec![],
        no_worktree: false,
    };
    let got = line(&Record::new(
        &report(),
        Some("close-ok"),
        Event::Check(fields),
    ));
    let want = format!(
        "{{\"approval\":null,\"base\":\"main\",\"base_commit\":\"{b}\",\
         \"base_source\":\"configured\",\"branch\":\"agent/t\",\"checks\":[],\
         \"claimed\":\"close-ok\",\"claimed_commit\":\"cccc\",\"codes\":[],\
         \"commit\":\"{c}\",\"config\":\"{f}\",\"config_source\":\"base\",\
         \"contract\":null,\"event\":\"check\",\"mergeable\":false,\"slug\":\"t-1\",\
         \"tool\":\"closegate 0.1.0\",\"ts\":\"2026-01-01T00:00:00Z\",\
         \"verdict\":\"UNVERIFIED\",\"worktree\":\"/w\"}}",
        b = "b".repeat(40),
        c = "c".repeat(40),
        f = "f".repeat(40),
    );
    assert_eq!(got, want);
}

/// The ad-hoc object the writers built before `Record` (the ledger before this type), verbatim.
fn before(event: &str, report: &Report, claimed: Option<&str>) -> Value {
    let provenance = report.provenance;
    serde_json::json!({
        "ts": "2026-01-01T00:00:00Z",
        "event": event,
        "slug": report.slug,
        "commit": report.commit,
        "claimed_commit": report.claimed_commit,
        "branch": report.branch,
        "worktree": report.worktree,
        "verdict": report.verdict,
        "claimed": claimed,
        "codes": report.codes(),
        "tool": report.tool,
        "config": report.config,
        "config_source": provenance.map(|p| p.config_source.as_str()),
        "base": report.base,
        "base_commit": report.base_commit,
        "base_source": provenance.map(|p| if p.base_configured { "configured" } else { "other" }),
        // New since the ad hoc objects (SPEC §26.1): every line names the contract blob of the
        // claim it is about (null for none), not only `check` and `approve` lines.
        "contract": report.contract,
    })
}

fn sample_entry() -> CheckEntry {
    CheckEntry {
        name: "test".into(),
        run: "cargo test".into(),
        timeout_s: 600,
        tree: "t".repeat(40),
        config: None,
        base_commit: Some("b".repeat(40)),
        slug: None,
        branch: None,
        commit: None,
        sandbox: "bwrap".into(),
        exit_code: Some(101),
        timed_out: false,
        duration_ms: 12,
        output: vec!["failed".into()],
        finding: Some("check-failed".into()),
        message: Some("`test` failed".into()),
        reused: None,
        census: None,
    }
}

/// [`sample_entry`] as gates::reuse::entry wrote it with json! before CheckEntry existed.
fn sample_entry_json() -> Value {
    serde_json::json!({
        "name": "test",
        "run": "cargo test",
        "timeout_s": 600,
        "tree": "t".repeat(40),
        "config": null,
        "base_commit": "b".repeat(40),
        "sandbox": "bwrap",
        "exit_code": 101,
        "timed_out": false,
        "duration_ms": 12,
        "output": ["failed"],
        "finding": "check-failed",
        "message": "`test` failed",
        "reused": null,
    })
}

#[test]
fn check_and_teardown_write_the_bytes_the_ad_hoc_objects_wrote() {
    use serde_json::json;
    let mut r = report();
    r.add_gate(
        crate::finding::Gate::Checks,
        [crate::finding::Finding::new(
            crate::catalog::Code::ChecksNone,
            "none",
        )],
    );
    r.approval = Some(Approval {
        by: "ann".into(),
        at: "t".into(),
        commit: "c".into(),
    });
    r.contract = Some("d".repeat(40));
    r.check_entries = vec![sample_entry()];
    let mut check = before("check", &r, Some("close-ok"));
    check["mergeable"] = json!(r.mergeable);
    check["approval"] = json!(r.approval);
    check["contract"] = json!(r.contract);
    check["checks"] = json!([sample_entry_json()]);
    let fields = CheckFields {
        mergeable: r.mergeable,
        approval: r.approval.clone(),
        checks: r.check_entries.clone(),
        findings: vec![],
        protected: vec![],
        no_worktree: false,
    };
    assert_eq!(
        line(&Record::new(&r, Some("close-ok"), Event::Check(fields))),
        check.to_string()
    );

    let mut teardown = before("teardown", &r, None);
    teardown["removed"] = json!(true);
    teardown["deleted"] = json!({"admin": "/a"});
    teardown["pruned"] = json!(true);
    // New since the ad hoc objects: the checks the teardown's gate ran, for reuse (SPEC §19).
    teardown["checks"] = json!([sample_entry_json()]);
    let steps = Steps {
        deleted: Some(Some(Deleted {
            admin: "/a".into(),
            ..Deleted::default()
        })),
        pruned: Some(true),
        ..Steps::default()
    };
    let fields = TeardownFields {
        removed: true,
        checks: Vec::new(),
        steps: Box::new(steps),
    };
    assert_eq!(
        line(&Record::new(&r, None, Event::Teardown(fields))),
        teardown.to_string()
    );
}

const ODD: &str = "/w/a \"b\"\n\u{7f}é";

fn reaped_entry() -> ReapedEntry {
    ReapedEntry {
        pid: 42,
        command: ODD.into(),
        signal: "SIGKILL".into(),
        ended: true,
    }
}

fn artifacts() -> Vec<ArtifactStatus> {
    vec![ArtifactStatus {
        path: ODD.into(),
        present: true,
    }]
}

/// The removal's line (execute.rs `removal_fields` + `escrow_fields`), as `json!` wrote it,
/// and as typed steps.
fn removal_case() -> (Value, Steps) {
    let before = serde_json::json!({
        "admission": "verified", "allow_unverified": false, "archive": null,
        "artifacts": artifacts(), "aside": ODD, "status_file": "_EXEC_STATUS.md",
        "deleted": {"worktree": "/w", "admin": "/r/.git/worktrees/w",
                    "branch": "agent/w", "branch_tip": null},
        "escrow": "refs/closegate/escrow/w/1", "escrow_commit": "e".repeat(40),
        "escrow_ms": 17_u64, "forced": ["teardown-untracked"],
        "reaped": [{"pid": 42, "command": ODD, "signal": "SIGKILL", "ended": true}],
    });
    let deleted = Deleted {
        worktree: Some("/w".into()),
        admin: "/r/.git/worktrees/w".into(),
        branch: Some(Some("agent/w".into())),
        branch_tip: Some(None),
    };
    let steps = Steps {
        admission: Some(Some("verified".into())),
        allow_unverified: Some(false),
        archive: Some(None),
        artifacts: Some(artifacts()),
        aside: Some(ODD.into()),
        status_file: Some("_EXEC_STATUS.md".into()),
        deleted: Some(Some(deleted)),
        escrow: Some("refs/closegate/escrow/w/1".into()),
        escrow_commit: Some("e".repeat(40)),
        escrow_ms: Some(17),
        forced: Some(vec!["teardown-untracked".into()]),
        reaped: Some(vec![reaped_entry()]),
        ..Steps::default()
    };
    (before, steps)
}

/// Every other step's line, as its call site (teardown/mod.rs, execute.rs, resume.rs) wrote
/// it with `json!`, and as typed steps.
fn step_cases() -> Vec<(Value, Steps)> {
    use serde_json::json;
    let mut cases = vec![
        removal_case(),
        (
            json!({"incomplete": true, "error": ODD}),
            Steps::failed(ODD.into(), None),
        ),
        (
            json!({"incomplete": true, "moved_back": false, "error": ODD}),
            Steps::failed(ODD.into(), Some(false)),
        ),
        (
            json!({"branch_kept": ODD}),
            Steps {
                branch_kept: Some(ODD.into()),
                ..Steps::default()
            },
        ),
        (
            json!({"deleted": null}),
            Steps {
                deleted: Some(None),
                ..Steps::default()
            },
        ),
        (
            json!({"incomplete": true, "left": [ODD, "/w/b"]}),
            Steps::left(vec![ODD.into(), "/w/b".into()]),
        ),
        (
            json!({"resumed": true, "aside": ODD}),
            Steps::resumed(ODD.into()),
        ),
        (json!({"pruned": false}), Steps::pruned(None)),
        (
            json!({"pruned": true, "deleted": {"admin": ODD}}),
            Steps::pruned(Some(ODD.into())),
        ),
    ];
    cases.extend(refused_cases());
    cases
}

/// The lines of refused teardowns: `admission` and `deleted` null.
fn refused_cases() -> Vec<(Value, Steps)> {
    use serde_json::json;
    let refused = |s: Steps| Steps {
        admission: Some(None),
        deleted: Some(None),
        ..s
    };
    vec![
        (
            json!({"admission": null, "aside": ODD, "moved_back": true, "deleted": null}),
            refused(Steps {
                aside: Some(ODD.into()),
                moved_back: Some(true),
                ..Steps::default()
            }),
        ),
        (
            json!({"admission": null, "reaped": [reaped_entry()], "deleted": null}),
            refused(Steps {
                reaped: Some(vec![reaped_entry()]),
                ..Steps::default()
            }),
        ),
        (
            json!({"admission": null, "allow_unverified": true, "artifacts": artifacts(),
                   "deleted": null}),
            refused(Steps {
                allow_unverified: Some(true),
                artifacts: Some(artifacts()),
                ..Steps::default()
            }),
        ),
    ]
}

/// Every teardown step, as its call site wrote it with `json!` before [`Steps`], against the
/// typed steps that replace it: the same bytes, and the line reads back as those steps.
#[test]
fn every_teardown_step_writes_the_bytes_its_json_object_wrote() {
    for (fields, steps) in step_cases() {
        let mut want = before("teardown", &report(), None);
        want["removed"] = serde_json::json!(true);
        for (k, v) in fields.as_object().unwrap() {
            want[k] = v.clone();
        }
        let got = teardown_record(&report(), None, true, steps.clone());
        assert_eq!(line(&got), want.to_string());
        let read = Record::read(&want).unwrap();
        assert_eq!(read.steps(), Some(&steps), "{fields}");
    }
}

#[test]
fn decisions_write_the_bytes_the_ad_hoc_objects_wrote() {
    use serde_json::json;
    let r = report();
    let mut guard = before("guard", &r, Some("VERIFIED"));
    guard["verdict"] = json!(null);
    guard["accepted"] = json!(false);
    let mut got = Record::new(
        &r,
        Some("VERIFIED"),
        Event::Guard(GuardFields {
            accepted: false,
            ..GuardFields::default()
        }),
    );
    got.verdict = None;
    assert_eq!(line(&got), guard.to_string());

    let mut hook = before("hook", &r, None);
    hook["action"] = json!("delete");
    hook["accepted"] = json!(true);
    hook["base"] = json!(r.base);
    let fields = HookFields {
        action: "delete".into(),
        accepted: true,
        reason: None,
    };
    assert_eq!(line(&hook_record(&r, fields)), hook.to_string());

    let mut stop = before("signal", &Report::default(), None);
    stop["verdict"] = json!(null);
    stop["accepted"] = json!(null);
    stop["hook"] = json!("stop");
    stop["error"] = json!("bad json");
    let fields = SignalFields {
        hook: Some("stop".into()),
        error: Some("bad json".into()),
        ..SignalFields::default()
    };
    assert_eq!(
        line(&stop_hook_record(None, vec![], fields)),
        stop.to_string()
    );
}

#[test]
fn an_approval_and_a_refused_one_differ_only_where_spec_says() {
    let approve = |refused: Option<&str>| ApproveFields {
        note: None,
        by: refused.is_none().then(|| "ann".to_string()),
        requested_by: refused.is_some().then(|| "ann".to_string()),
        refused: refused.map(str::to_string),
        checks: Vec::new(),
    };
    let ok = Record::new(&report(), None, Event::Approve(approve(None)))
        .to_value()
        .unwrap();
    assert_eq!(ok["by"], "ann");
    assert!(ok["note"].is_null() && ok.get("note").is_some());
    assert!(ok.get("requested_by").is_none() && ok.get("refused").is_none());
    let no = Record::new(&report(), None, Event::Approve(approve(Some("failing"))));
    let no = no.to_value().unwrap();
    assert!(no["by"].is_null() && no.get("by").is_some());
    assert_eq!(
        (no["requested_by"].as_str(), no["refused"].as_str()),
        (Some("ann"), Some("failing"))
    );
    let read = Record::read(&no).unwrap();
    assert!(
        read.approval().is_none(),
        "a refused approval is never an approval"
    );
}

/// A line written before the type existed, as stored (with `prev` and `mac`), reads back.
#[test]
fn a_stored_teardown_line_reads_back_with_its_step_fields() {
    let stored = r#"{"aside":"/w.closegate-aside","base":"main","base_commit":null,"base_source":"configured","branch":"agent/t","claimed":"closed-without-merge","claimed_commit":null,"codes":[],"commit":"abc","config":null,"config_source":"base","deleted":null,"event":"teardown","mac":"00","prev":"","removed":true,"slug":"t","tool":"closegate 0.1.0","ts":"2026-01-01T00:00:00Z","verdict":"VERIFIED","worktree":"/w"}"#;
    let r = Record::read(&serde_json::from_str(stored).unwrap()).unwrap();
    assert_eq!(r.event_name(), "teardown");
    assert_eq!(
        r.steps().and_then(|s| s.aside.as_deref()),
        Some("/w.closegate-aside")
    );
    assert!(r.removal().is_some() && r.is_trusted() && r.is_passing());
}

/// Foreign or damaged lines never fail the read and never pass.
#[test]
fn foreign_lines_read_leniently_and_never_pass() {
    let read = |s: &str| Record::read(&serde_json::from_str(s).unwrap());
    assert!(read(r#"[1, 2]"#).is_none());
    assert!(read(r#"{"commit": "abc"}"#).is_none(), "no event");
    let odd = read(r#"{"event":"merge","verdict":"VERIFIED","commit":"abc","config_source":"base","base_source":"configured"}"#).unwrap();
    assert!(matches!(odd.event, Event::Unknown) && !odd.is_passing());
    let bad = read(r#"{"event":"check","verdict":"GREEN","commit":7,"codes":"x","config_source":"base","base_source":"configured"}"#).unwrap();
    assert_eq!(
        (bad.verdict, bad.commit.as_deref(), bad.codes.len()),
        (None, None, 0)
    );
    assert!(!bad.is_passing());
}

/// A damaged check entry is left out; the sound one beside it still reads (and is reused).
#[test]
fn a_damaged_check_entry_does_not_take_its_neighbours_with_it() {
    let good = r#"{"name":"test","run":"true","timeout_s":600,"tree":"t","config":null,"base_commit":null,"sandbox":"bwrap","exit_code":0,"timed_out":false,"duration_ms":3,"output":[],"finding":null,"message":null,"reused":null}"#;
    let damaged = r#"{"name":"lint","run":"true","timeout_s":"600"}"#;
    let line = format!(
        r#"{{"event":"check","verdict":"VERIFIED","commit":"abc","config_source":"base","base_source":"configured","checks":[{damaged},{good},7]}}"#
    );
    let r = Record::read(&serde_json::from_str(&line).unwrap()).unwrap();
    let checks = r.checks().unwrap();
    assert_eq!(checks.len(), 1);
    assert_eq!(
        (checks[0].name.as_str(), checks[0].exit_code),
        ("test", Some(0))
    );
    let not_a_list = line.replace(&format!("[{damaged},{good},7]"), r#""x""#);
    let r = Record::read(&serde_json::from_str(&not_a_list).unwrap()).unwrap();
    assert_eq!(r.checks().map(<[_]>::len), Some(0));
}

#[test]
fn only_trusted_verified_or_removed_stops_pass() {
    let check = |verdict, source: ConfigSource| {
        let mut report = report();
        report.verdict = verdict;
        report.provenance = Some(Provenance {
            config_source: source,
            base_configured: true,
        });
        let fields = CheckFields {
            mergeable: true,
            approval: None,
            checks: vec![],
            findings: vec![],
            protected: vec![],
            no_worktree: false,
        };
        Record::read(
            &Record::new(&report, None, Event::Check(fields))
                .to_value()
                .unwrap(),
        )
        .unwrap()
    };
    assert!(check(Verdict::Verified, ConfigSource::Base).is_passing());
    assert!(!check(Verdict::Verified, ConfigSource::File).is_passing());
    assert!(!check(Verdict::PendingReview, ConfigSource::Base).is_passing());
    let mut verified = report();
    verified.verdict = Verdict::Verified;
    let guard = Record::new(
        &verified,
        None,
        Event::Guard(GuardFields {
            accepted: true,
            ..GuardFields::default()
        }),
    );
    let guard = Record::read(&guard.to_value().unwrap()).unwrap();
    assert!(guard.verdict == Some(Verdict::Verified) && !guard.is_passing());
}
