//! `jobs = N` (SPEC §19): independent checks run in parallel, each in its own checkout, and the
//! report lists them in the configured order. Overlap is judged from the times the checks write,
//! never from how long the test took.

use std::path::Path;

use serde_json::Value;

use crate::fixture::{closegate, parts};
use crate::teardown::Scene;

/// Two checks that record `start <name> <ns>` and `end <name> <ns>` in `<dir>/times`; `a`
/// sleeps longer, so in parallel it ends last.
fn config(dir: &Path, jobs: Option<u32>) -> String {
    let d = dir.display();
    let check = |name: &str, sleep: &str| {
        format!(
            "[[checks]]\nname = \"{name}\"\nrun = \"echo start {name} $(date +%s%N) >> '{d}/times'; \
             sleep {sleep}; echo end {name} $(date +%s%N) >> '{d}/times'; pwd > '{d}/pwd-{name}'\"\n\
             timeout_s = 60\nwritable = ['{d}']\n"
        )
    };
    let jobs = jobs.map_or(String::new(), |n| format!("jobs = {n}\n"));
    format!("{jobs}{}{}", check("a", "0.6"), check("b", "0.3"))
}

/// (start, end) of each check, in nanoseconds since the epoch.
fn times(dir: &Path) -> [(u128, u128); 2] {
    let text = std::fs::read_to_string(dir.join("times")).unwrap();
    let get = |what: &str, name: &str| -> u128 {
        text.lines()
            .find_map(|l| {
                let mut w = l.split(' ');
                (w.next() == Some(what) && w.next() == Some(name))
                    .then(|| w.next().unwrap().parse().unwrap())
            })
            .unwrap_or_else(|| panic!("no {what} of {name} in {text}"))
    };
    [
        (get("start", "a"), get("end", "a")),
        (get("start", "b"), get("end", "b")),
    ]
}

fn check(s: &Scene) -> Value {
    let out = closegate(&s.wt, &["check", "--format", "json", "--no-record"]);
    let (code, stdout, stderr) = parts(&out);
    assert_eq!(code, 0, "{stdout}{stderr}");
    serde_json::from_str(&stdout).unwrap()
}

#[test]
fn jobs_2_runs_independent_checks_at_once_in_their_own_checkouts() {
    let dir = tempfile::tempdir().unwrap();
    let s = Scene::honest_return_with(Some(&config(dir.path(), Some(2))));
    let report = check(&s);
    let [a, b] = times(dir.path());
    assert!(a.0 < b.1 && b.0 < a.1, "no overlap: a {a:?}, b {b:?}");
    // The report keeps the configured order although `a` ended last.
    let names: Vec<_> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["a", "b"]);
    let pwd = |n: &str| std::fs::read_to_string(dir.path().join(format!("pwd-{n}"))).unwrap();
    assert_ne!(pwd("a"), pwd("b"), "the checks shared a checkout");
}

#[test]
fn jobs_default_1_runs_one_check_at_a_time() {
    for jobs in [None, Some(1)] {
        let dir = tempfile::tempdir().unwrap();
        let s = Scene::honest_return_with(Some(&config(dir.path(), jobs)));
        check(&s);
        let [a, b] = times(dir.path());
        assert!(a.1 <= b.0, "overlap with jobs {jobs:?}: a {a:?}, b {b:?}");
    }
}

#[test]
fn jobs_out_of_range_is_an_error_naming_the_key() {
    for bad in ["0", "-1", "\"2\"", "65"] {
        let s = Scene::honest_return_with(Some(&format!("jobs = {bad}\n")));
        let (code, out, err) = parts(&closegate(&s.wt, &["check"]));
        assert_eq!(code, 2, "jobs = {bad}: {out}{err}");
        assert!(err.contains("jobs"), "{err}");
    }
}

/// SPEC §19: status lines only on a terminal; with stderr a pipe, running checks (one at a time
/// or in parallel) adds nothing to it.
#[test]
fn no_progress_lines_when_stderr_is_not_a_terminal() {
    for jobs in [None, Some(2)] {
        let dir = tempfile::tempdir().unwrap();
        let s = Scene::honest_return_with(Some(&config(dir.path(), jobs)));
        let out = closegate(&s.wt, &["check", "--format", "json", "--no-record"]);
        let (code, stdout, stderr) = parts(&out);
        assert_eq!(code, 0, "{stdout}{stderr}");
        assert_eq!(stderr, "", "jobs {jobs:?}");
        assert!(dir.path().join("times").exists(), "the checks did not run");
    }
}
