//! `closegate log` (SPEC §6): the listing, its filters, the statistics with the false-green rate,
//! torn lines, and many concurrent gates writing whole lines.

use std::io::Write;

use serde_json::Value;

use crate::fixture::{Fixture, closegate, parts};
use crate::teardown::{PASSING_CONFIG, agent, audit};

fn log(fx: &Fixture, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["log"];
    all.extend_from_slice(args);
    parts(&closegate(&fx.root(), &all))
}

/// Four returns claiming close-ok: three honest (`alpha-1`, `alpha-2`, `beta-1`) and one whose
/// worktree is dirty (`beta-2`: FAIL). Every return is checked; `alpha-1` twice and `beta-2`
/// once more after it was fixed, which must not change the count of returns.
fn mixed() -> Fixture {
    let fx = Fixture::new();
    fx.commit(
        "main",
        &[(".closegate.toml", Some(PASSING_CONFIG))],
        "configure",
    );
    let mut worktrees = Vec::new();
    for slug in ["alpha-1", "alpha-2", "beta-1", "beta-2"] {
        worktrees.push(agent(&fx, slug, "close-ok").0);
    }
    fx.write(&worktrees[3], "src/lib.rs", "uncommitted\n");
    for wt in &worktrees {
        closegate(wt, &["check"]);
    }
    closegate(&worktrees[0], &["check"]);
    std::fs::write(worktrees[3].join("src/lib.rs"), "pub fn beta_2() {}\n").unwrap();
    let (code, out, _) = parts(&closegate(&worktrees[3], &["check"]));
    assert_eq!(code, 0, "{out}");
    fx
}

#[test]
fn stats_give_the_false_green_rate_overall_and_per_slug_prefix() {
    let fx = mixed();
    let (code, out, err) = log(&fx, &["--stats", "--json"]);
    assert_eq!(code, 0, "{err}");
    let stats: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(stats["records"], 6);
    assert_eq!(stats["verdicts"]["VERIFIED"], 5);
    assert_eq!(stats["verdicts"]["FAIL"], 1);
    assert_eq!(stats["events"]["check"], 6);
    let overall = &stats["false_green"];
    assert_eq!(
        (overall["returns"].as_u64(), overall["false_green"].as_u64()),
        (Some(4), Some(1))
    );
    assert_eq!(overall["rate"], 0.25);
    assert_eq!(stats["false_green_by_prefix"]["alpha"]["rate"], 0.0);
    assert_eq!(stats["false_green_by_prefix"]["beta"]["rate"], 0.5);

    let (code, out, _) = log(&fx, &["--stats"]);
    assert_eq!(code, 0);
    assert!(out.contains("false-green rate: 25.0% (1 of 4"), "{out}");
    assert!(out.contains("beta") && out.contains("50.0%"), "{out}");
}

#[test]
fn guard_records_claiming_verified_count_as_returns() {
    let fx = Fixture::new();
    let common = fx.git_dir();
    for (verdict, claimed) in [
        ("VERIFIED", "VERIFIED"),
        ("FAIL", "VERIFIED: all green"),
        ("FAIL", "UNVERIFIED: no tests"),
    ] {
        let line = serde_json::json!({"ts": "2026-11-29T00:00:00Z", "event": "guard", "slug": "g",
            "commit": verdict, "verdict": verdict, "claimed": claimed, "codes": [],
            "config_source": "base", "base_source": "configured"});
        closegate::record::append(&common, &line).unwrap();
    }
    // A guard run without --worktree judged only the token (verdict null): not a return.
    let unjudged = serde_json::json!({"ts": "2026-11-29T00:00:00Z", "event": "guard", "slug": "g",
        "commit": null, "verdict": null, "claimed": "VERIFIED", "codes": []});
    closegate::record::append(&common, &unjudged).unwrap();
    let (_, out, _) = log(&fx, &["--stats", "--json"]);
    let stats: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(stats["false_green"]["returns"], 2, "{stats}");
    assert_eq!(stats["false_green"]["rate"], 0.5);
}

#[test]
fn listing_filters_and_prints_lines_as_stored() {
    let fx = mixed();
    let (code, out, _) = log(&fx, &[]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 6, "{out}");
    let first = out.lines().next().unwrap();
    assert!(
        first.contains("check") && first.contains("VERIFIED") && first.contains("alpha-1"),
        "{first}"
    );
    assert!(first.contains("agent/alpha-1"), "{first}");
    let (_, out, _) = log(&fx, &["--verdict", "FAIL"]);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.contains("beta-2") && out.contains("close-worktree-dirty"),
        "{out}"
    );
    let (_, out, _) = log(&fx, &["--slug", "alpha-1", "--json"]);
    let stored = audit(&fx);
    let want: Vec<String> = stored
        .iter()
        .filter(|r| r["slug"] == "alpha-1")
        .map(|r| r.to_string())
        .collect();
    assert_eq!(out.lines().collect::<Vec<_>>(), want);
    let (_, out, _) = log(&fx, &["--event", "teardown"]);
    assert!(out.is_empty());
    let (code, _, err) = log(&fx, &["--verdict", "GREEN"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn torn_and_foreign_lines_are_reported_and_skipped() {
    let fx = Fixture::new();
    let common = fx.git_dir();
    let ok =
        serde_json::json!({"ts": "2026-11-29T00:00:00Z", "event": "check", "verdict": "VERIFIED"});
    closegate::record::append(&common, &ok).unwrap();
    let path = closegate::record::audit_path(&common);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(b"[1, 2]\n\xff\xfe\n{\"event\": \"che")
        .unwrap();
    let (code, out, err) = log(&fx, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 1);
    for n in [2, 3, 4] {
        assert!(err.contains(&format!("line {n}")), "{err}");
    }
    let (code, _, _) = log(&fx, &["--stats"]);
    assert_eq!(code, 0);
}

#[test]
fn not_a_repository_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, _, err) = parts(&closegate(tmp.path(), &["log"]));
    assert_eq!(code, 2);
    assert!(err.contains("not inside a git repository"), "{err}");
}

#[test]
fn sixteen_concurrent_checks_write_sixteen_whole_lines() {
    let fx = Fixture::new();
    fx.commit(
        "main",
        &[(".closegate.toml", Some(PASSING_CONFIG))],
        "configure",
    );
    let (wt, _) = agent(&fx, "many", "close-ok");
    let children: Vec<_> = (0..16)
        .map(|_| {
            let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_closegate"));
            cmd.args(["check", "--no-checks"]).current_dir(&wt);
            crate::fixture::hermetic(&mut cmd, &wt);
            cmd.stdout(std::process::Stdio::null()).spawn().unwrap()
        })
        .collect();
    for mut child in children {
        child.wait().unwrap();
    }
    let text = std::fs::read_to_string(fx.git_dir().join("closegate/audit.jsonl")).unwrap();
    assert!(text.ends_with('\n'));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 16);
    for line in lines {
        let record: Value = serde_json::from_str(line).unwrap();
        assert_eq!(record["event"], "check");
        assert_eq!(record["slug"], "many");
    }
}

/// A filter's value carrying an ANSI escape is quoted in the error escaped exactly once: never
/// raw (it would drive the terminal), never escaped twice (`\\u{1b}`).
#[test]
fn bad_filter_values_are_escaped_once_on_stderr() {
    let fx = Fixture::new();
    fx.commit("main", &[("a.txt", Some("a\n"))], "base");
    for args in [
        ["--verdict", "\x1b[31mred"],
        ["--since", "\x1b[31mred"],
        ["--event", "\x1b[31mred"],
    ] {
        let (code, _, err) = log(&fx, &args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            !err.contains('\x1b'),
            "{args:?}: raw escape on stderr: {err:?}"
        );
        assert_eq!(err.matches("\\u{1b}[31mred").count(), 1, "{args:?}: {err}");
        assert!(!err.contains("\\\\u{1b}"), "{args:?}: escaped twice: {err}");
    }
}
