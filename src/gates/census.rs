//! The test census of the checks gate (SPEC §26.4): each check's census on the commit against
//! its census on the merge base's own tree, `tests-missing` for a test that passed there and
//! did not pass here, and the report's `census` entry.
//!
//! The base's runs are the ones `gates/integrity.rs` makes on the merge base's own tree (keyed
//! like every run, so one run per base commit and configuration serves every agent, SPEC §19);
//! the censuses themselves are read by `crate::census` from each run's whole output and kept in
//! the record with the result.

use git2::Oid;

use crate::catalog::Code;
use crate::config::Config;
use crate::finding::{Finding, Gate};
use crate::report::{Census, CheckRun, Report};
use crate::runners::census::{Compared, Tally};

/// How many missing ids a `tests-missing` message names before "and N more".
const NAMED_IDS: usize = 20;

/// Whether check `i` of `config` needs its run on the merge base's tree for its census: it has
/// a census and its run on the commit ended (a timed-out run is not run again, as for a red
/// base).
pub fn wanted(config: &Config, report: &Report, i: usize) -> bool {
    let on = config.checks.get(i).is_some_and(|s| s.census.is_on());
    on && report.checks.get(i).is_some_and(|r| !r.timed_out)
}

/// Compare each check's census with its run on the merge base (`base_runs`: the runs made there,
/// by the check's index), fill the report's `census` entries and add `tests-missing`.
pub fn judge(
    config: &Config,
    merge_base: Oid,
    base_runs: &[(usize, CheckRun)],
    report: &mut Report,
) {
    let short = &merge_base.to_string()[..12];
    let mut findings = Vec::new();
    for (i, spec) in config.checks.iter().enumerate() {
        let Some(run) = report.checks.get_mut(i) else {
            continue;
        };
        let base = base_runs.iter().find(|(j, _)| *j == i).map(|(_, r)| r);
        let (b, c) = match tallies(spec.census.is_on(), run, base) {
            Ok(tallies) => tallies,
            Err(note) => {
                run.census_note = Some(note);
                continue;
            }
        };
        let Some(c) = crate::runners::census::compare(&spec.census, b, c) else {
            run.census_note = Some("the merge base's run shows no test runner closegate reads");
            continue;
        };
        run.census = Some(Census {
            runner: c.runner(),
            base: c.base,
            commit: c.commit,
            missing: c
                .missing
                .iter()
                .take(Census::MISSING_MAX)
                .cloned()
                .collect(),
        });
        if c.missing_count > 0 {
            findings.push(Finding::new(
                Code::TestsMissing,
                message(&spec.name, short, &c),
            ));
        }
    }
    report.add_gate(Gate::Checks, findings);
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
