//! The test census of the checks gate (SPEC §26.4): each check's census on the commit against
//! its census on the merge base's own tree, `tests-missing` for a test that passed there and
//! did not pass here, and the report's `census` entry.
//!
//! The base's runs are the ones `gates/integrity.rs` makes on the merge base's own tree (keyed
//! like every run, so one run per base commit and configuration serves every agent, SPEC §19);
//! the censuses themselves are read by `crate::runners::census` from each run's whole output and kept in
//! the record with the result.

use std::collections::BTreeSet;

use git2::Oid;

use crate::catalog::Code;
use crate::config::Config;
use crate::finding::{Finding, Gate};
use crate::report::{Census, CheckRun, Report};
use crate::runners::census::{Compared, Tally};

mod moved;

pub use moved::{Moved, names_at};
use moved::{Ran, moved_and_ran};

/// How many missing ids a `tests-missing` message names before "and N more".
const NAMED_IDS: usize = 20;

/// Whether check `i` of `config` needs its run on the merge base's tree for its census: it has
/// a census and its run on the commit ended (a timed-out run is not run again, as for a red
/// base).
pub fn wanted(config: &Config, report: &Report, i: usize) -> bool {
    let on = config.checks.get(i).is_some_and(|s| s.census.is_on());
    on && report.checks.get(i).is_some_and(|r| !r.timed_out)
}

/// What decides whether a base test missing from the commit's run is gone (SPEC §27.1).
pub struct Evidence<'a> {
    /// The tests the diff shows moved or renamed with their body: a missing id is the same test
    /// when the commit's run passed it under its new name ([`moved_and_ran`]).
    pub moved: Vec<Moved>,
    /// What a second run of the base's own tree says of check `i`'s base ids (asked only when
    /// an id is missing that may be named after a changing value, or a run of the check flaked).
    pub unstable: &'a dyn Fn(usize) -> Again,
    /// Test paths changed and the overlay passed every base test: a test missing from the
    /// commit's own run is a dropped test for the edit rule, not `tests-missing`.
    pub dropped_instead: bool,
}

/// What a second run of the merge base's own tree says of a check's base ids (SPEC §27.1, §27.2).
#[derive(Debug, Clone, Default)]
pub struct Again {
    /// Ids it did not pass again while every run of the base passed: each was named after a
    /// value that changes every run; they name no test that stays.
    pub renamed: BTreeSet<String>,
    /// Ids that passed in one run of the base and not in another while one of those runs
    /// failed: flaky, so no judgement rests on them.
    pub flaked: BTreeSet<String>,
}

/// Compare each check's census with its run on the merge base (`base_runs`: the runs made there,
/// by the check's index), fill the report's `census` entries and add `tests-missing` — or, with
/// [`Evidence::dropped_instead`], return the missing ids as dropped tests. Ids are paired by
/// identity or by a move the diff shows, never by their shape.
pub fn judge(
    config: &Config,
    merge_base: Oid,
    base_runs: &[(usize, CheckRun)],
    evidence: &Evidence<'_>,
    report: &mut Report,
) -> Vec<String> {
    let mut dropped = Vec::new();
    let mut edits = Vec::new();
    let short = &merge_base.to_string()[..12];
    let mut findings = Vec::new();
    for (i, spec) in config.checks.iter().enumerate() {
        let Some(run) = report.checks.get_mut(i) else {
            continue;
        };
        let base = base_runs.iter().find(|(j, _)| *j == i).map(|(_, r)| r);
        let (b, t) = match tallies(spec.census.is_on(), run, base) {
            Ok(tallies) => tallies,
            Err(note) => {
                run.census_note = Some(note);
                continue;
            }
        };
        let Some(mut c) = crate::runners::census::compare(&spec.census, b, t) else {
            run.census_note = Some("the merge base's run shows no test runner closegate reads");
            continue;
        };
        let ran = Ran::of(b, t);
        let flaked = set_aside_moved_and_unstable(&mut c, evidence, &ran, i, (run, base));
        findings.extend(flaky_finding(&spec.name, short, &flaked));
        run.census = Some(entry(&c));
        if c.missing_count == 0 {
            continue;
        }
        let msg = message(&spec.name, short, &c);
        if evidence.dropped_instead && !c.missing.is_empty() {
            // SPEC §27.1: test paths changed and the overlay passed every base test, so these
            // tests were dropped by the edit, not lost by the code: rule (b)'s finding.
            dropped.extend(c.missing.iter().cloned());
            let msg = format!(
                "dropped by the edit (the overlay ran every one of them, the commit's own tests no \
                 longer do): {msg}"
            );
            edits.push(Finding::new(Code::TestsWeakenedEdit, msg));
        } else {
            findings.push(Finding::new(Code::TestsMissing, msg));
        }
    }
    report.add_gate(Gate::Checks, findings);
    report.add_gate(Gate::Protected, edits);
    dropped
}

/// Set aside the missing ids of check `i` that name a test the diff shows moved and that ran
/// where it went, that a second run of the base does not pass again, or that flaked (SPEC
/// §27.2: passed and failed across runs of one tree, the commit's `run` or the base's); the
/// flaked ones not already named by the commit's own `check-flaky` are returned.
fn set_aside_moved_and_unstable(
    c: &mut Compared,
    evidence: &Evidence<'_>,
    ran: &Ran<'_>,
    i: usize,
    (run, base): (&CheckRun, Option<&CheckRun>),
) -> Vec<String> {
    set_aside(c, |id| {
        evidence.moved.iter().any(|m| moved_and_ran(m, id, ran))
    });
    let runs = std::iter::once(run).chain(base);
    let mut flaky: BTreeSet<String> = runs.clone().flat_map(|r| r.flaky.clone()).collect();
    let flaked_run = runs.clone().any(|r| r.rerun_passed || !r.flaky.is_empty());
    let volatile = c.missing.iter().any(|id| may_be_unstable(id));
    if volatile || (flaked_run && !c.missing.is_empty()) {
        let again = (evidence.unstable)(i);
        set_aside(c, |id| again.renamed.contains(id));
        flaky.extend(again.flaked);
    }
    let flaked: Vec<String> = c
        .missing
        .iter()
        .filter(|id| flaky.contains(*id))
        .filter(|id| !(run.rerun_passed && run.flaky.contains(*id)))
        .cloned()
        .collect();
    set_aside(c, |id| flaky.contains(id));
    if c.missing.is_empty() && runs.clone().any(|r| r.rerun_passed) {
        // Counts alone: a shortfall of a run that flaked rests on the flaky run.
        c.missing_count = 0;
    }
    flaked
}

/// The report's `census` entry of a comparison.
fn entry(c: &Compared) -> Census {
    Census {
        runner: c.runner(),
        base: c.base,
        commit: c.commit,
        missing: c
            .missing
            .iter()
            .take(Census::MISSING_MAX)
            .cloned()
            .collect(),
    }
}

/// `check-flaky` for base tests missing on the commit that flaked (none when `flaked` is
/// empty): `tests-missing` cannot rest on them (SPEC §27.2).
fn flaky_finding(name: &str, short: &str, flaked: &[String]) -> Option<Finding> {
    if flaked.is_empty() {
        return None;
    }
    let msg = format!(
        "check `{name}`: tests that passed on the merge base ({short}) did not pass on the \
         commit, but each of them both passed and failed across runs of one tree, so \
         `tests-missing` cannot rest on them; flaky tests: {}",
        crate::gates::flaky::named(flaked)
    );
    Some(Finding::new(Code::CheckFlaky, msg))
}

/// Take the missing ids `keep_out` holds out of the comparison.
fn set_aside(c: &mut Compared, keep_out: impl Fn(&str) -> bool) {
    let before = c.missing.len();
    c.missing.retain(|id| !keep_out(id));
    let gone = u64::try_from(before - c.missing.len()).unwrap_or(u64::MAX);
    c.missing_count = c.missing_count.saturating_sub(gone);
}

/// Whether a missing id is worth a second run of the base to learn whether it stays (SPEC §27.1):
/// it holds a number that may change each run — one with a fraction (`0.5159`, the seconds of
/// `11:47:14.138Z`) or a run of six digits or more (`Date.now()`, a seed). This decides only
/// whether to spend that run; the id is set aside only when the run does not pass it again, so
/// a stable `TestIssue1234567` is never paired away.
pub fn may_be_unstable(id: &str) -> bool {
    let bytes = id.as_bytes();
    let mut run = 0;
    for (i, b) in bytes.iter().enumerate() {
        if b.is_ascii_digit() {
            run += 1;
            if run >= 6 {
                return true;
            }
        } else {
            if *b == b'.' && run > 0 && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
                return true;
            }
            run = 0;
        }
    }
    false
}

/// Whether census id `id` names the test called `test`: it is the id, or ends in it after a
/// separator (`tests/t.py::test_a`, `crate::tests::a`, `suite > adds`).
/// The reader writes a method `Class::method`; unittest's ids write it `module.Class.method`.
pub fn names(id: &str, test: &str) -> bool {
    let ends = |test: &str| {
        !test.is_empty()
            && id.strip_suffix(test).is_some_and(|head| {
                head.is_empty() || head.ends_with([':', '.', '/', ' ', '>', '#'])
            })
    };
    ends(test) || (test.contains("::") && ends(&test.replace("::", ".")))
}

/// The censuses of the base's run and the commit's, or why there is no comparison.
fn tallies<'a>(
    on: bool,
    run: &'a CheckRun,
    base: Option<&'a CheckRun>,
) -> Result<(&'a Tally, &'a Tally), &'static str> {
    if !on {
        return Err("its `run` names no test runner closegate reads; `census = \"…\"` names one");
    }
    if run.timed_out {
        return Err("not taken: the check timed out");
    }
    let Some(base) = base else {
        return Err("not taken: the check did not run on the merge base");
    };
    if base.timed_out {
        return Err("not taken: the check timed out on the merge base");
    }
    match (&base.tally, &run.tally) {
        (Some(b), Some(c)) => Ok((b, c)),
        _ => Err("not taken: a run kept no census"),
    }
}

/// `check `test`: 2 tests that passed on the merge base (…) did not pass on the commit: …`.
fn message(name: &str, short: &str, c: &Compared) -> String {
    let runner = c.runner();
    let n = c.missing_count;
    let tests = if n == 1 { "test" } else { "tests" };
    let head = if c.commit == 0 {
        format!(
            "check `{name}` ran no passing test ({runner}) where its run on the merge base \
             ({short}) passed {}: {n} {tests} missing",
            c.base
        )
    } else {
        format!(
            "check `{name}`: {n} {tests} that passed on the merge base ({short}) did not run or \
             did not pass on the commit ({runner}: {} passed on the base, {} on the commit)",
            c.base, c.commit
        )
    };
    if c.missing.is_empty() {
        return format!(
            "{head}; its output names no test ids, only counts (docs/census.md: the flag that \
             makes {runner} name its tests)"
        );
    }
    let mut named: Vec<&str> = c
        .missing
        .iter()
        .take(NAMED_IDS)
        .map(String::as_str)
        .collect();
    let more = n.saturating_sub(u64::try_from(named.len()).unwrap_or(u64::MAX));
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    named.sort_unstable();
    format!("{head}: {}{more}", named.join(", "))
}

/// A report whose checks ran with no merge base to compare with: each census says so.
pub fn no_base(config: &Config, report: &mut Report) {
    for (spec, run) in config.checks.iter().zip(report.checks.iter_mut()) {
        if spec.census.is_on() {
            run.census_note = Some("not taken: no merge base with the base branch");
        }
    }
}
