//! A flaky test is not a verdict (SPEC §27.2): a run that fails is run again on the same tree,
//! from a fresh place, up to the check's `flaky_retries` times; a check that both fails and
//! passes on one tree is flaky (`check-flaky`, naming the test ids that both passed and failed),
//! never `check-failed`. A check that fails every time stays `check-failed`.
//!
//! Only a failure is run again: a non-zero exit or a signal. A timeout is not (a rerun would
//! cost its whole timeout again), nor a pass. The run the report keeps is the first, failing one
//! (its excerpt shows the failure); its `retries` says how many reruns were made, and the ids
//! that flaked ride along for the integrity runs and the census (`gates/integrity.rs`,
//! `gates/census.rs`), whose judgements must not rest on them either.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;

use crate::catalog::Code;
use crate::config::CheckSpec;
use crate::finding::Finding;
use crate::report::CheckRun;

/// One check's run and its finding (`None` when it passed), with the index of its check.
pub type Ran = (usize, (CheckRun, Option<Finding>));

/// How many flaky ids a `check-flaky` message names before "and N more".
const NAMED_IDS: usize = 20;

/// Run again, with `rerun` (which makes a fresh place for each check it is given), every check
/// of `first` that failed, until one of its reruns passes or it has been rerun its
/// `flaky_retries` times; then fold each check's runs into one result. `stop` ends the reruns
/// early (a signal).
pub fn settle(
    first: Vec<Ran>,
    specs: &[CheckSpec],
    mut rerun: impl FnMut(&[usize]) -> Result<Vec<Ran>>,
    stop: impl Fn() -> bool,
) -> Result<Vec<Ran>> {
    let mut again: BTreeMap<usize, Vec<CheckRun>> = BTreeMap::new();
    loop {
        let want: Vec<usize> = first
            .iter()
            .filter(|(i, (_, finding))| wants_rerun(&specs[*i], finding.as_ref(), again.get(i)))
            .map(|(i, _)| *i)
            .collect();
        if want.is_empty() || stop() {
            break;
        }
        let ran = rerun(&want)?;
        if ran.is_empty() {
            break;
        }
        for (i, (run, _)) in ran {
            again.entry(i).or_default().push(run);
        }
    }
    let folded = first.into_iter().map(|(i, ran)| {
        let reruns = again.remove(&i).unwrap_or_default();
        (i, fold(ran, reruns))
    });
    Ok(folded.collect())
}

/// Whether a check whose first run ended with `finding` and whose reruns so far are `reruns` is
/// run again: it failed (not a timeout), no rerun passed yet, and retries are left.
fn wants_rerun(
    spec: &CheckSpec,
    finding: Option<&Finding>,
    reruns: Option<&Vec<CheckRun>>,
) -> bool {
    let failed = finding.is_some_and(|f| f.code == Code::CheckFailed);
    let made = reruns.map_or(0, Vec::len);
    let passed_again = reruns.is_some_and(|r| r.iter().any(passed));
    failed && !passed_again && made < spec.flaky_retries as usize
}

/// Whether a run passed: exit code 0, not timed out.
pub fn passed(run: &CheckRun) -> bool {
    run.exit_code == Some(0) && !run.timed_out
}

/// The first run and its reruns as one result: `check-flaky` when a rerun passed, else the
/// first run's finding (with the reruns said).
fn fold(
    (mut run, finding): (CheckRun, Option<Finding>),
    reruns: Vec<CheckRun>,
) -> (CheckRun, Option<Finding>) {
    if reruns.is_empty() {
        return (run, finding);
    }
    run.retries = u32::try_from(reruns.len()).unwrap_or(u32::MAX);
    let mut all = vec![&run];
    all.extend(reruns.iter());
    run.flaky = differing(&all);
    run.rerun_passed = reruns.iter().any(passed);
    if !run.rerun_passed {
        let finding = finding.map(|mut f| {
            let n = reruns.len();
            let times = if n == 1 { "rerun" } else { "reruns" };
            f.message = format!(
                "{}; it failed again on {n} {times} of the same tree",
                f.message
            );
            f
        });
        return (run, finding);
    }
    let msg = message(&run);
    (run, Some(Finding::new(Code::CheckFlaky, msg)))
}

/// `check `test` failed (exit code 1) and then passed when run again on the same tree …`.
fn message(run: &CheckRun) -> String {
    let ended = match run.exit_code {
        Some(code) => format!("exit code {code}"),
        None => "killed by a signal".to_string(),
    };
    let head = format!(
        "check `{}` failed ({ended}) and then passed when run again on the same tree ({} \
         {}): a flaky result says nothing about the code",
        run.name,
        run.retries,
        if run.retries == 1 { "rerun" } else { "reruns" }
    );
    if run.flaky.is_empty() {
        return format!(
            "{head}; its output names no test that both passed and failed, so the flaky test is \
             the check `{}` itself",
            run.name
        );
    }
    format!("{head}; flaky tests: {}", named(&run.flaky))
}

/// Up to [`NAMED_IDS`] ids, then "and N more".
pub fn named(ids: &[String]) -> String {
    let mut out: Vec<String> = ids
        .iter()
        .take(NAMED_IDS)
        .map(|id| format!("`{id}`"))
        .collect();
    if ids.len() > NAMED_IDS {
        out.push(format!("and {} more", ids.len() - NAMED_IDS));
    }
    out.join(", ")
}

/// The test ids that passed in some of `runs` (all of one tree) and not in others: the union of
/// their passing ids less the ids every run passed. Empty when a run names no ids.
pub fn differing(runs: &[&CheckRun]) -> Vec<String> {
    let sets: Option<Vec<BTreeSet<&String>>> = runs.iter().map(|r| passing_ids(r)).collect();
    let Some(sets) = sets else {
        return Vec::new();
    };
    let union: BTreeSet<&String> = sets.iter().flatten().copied().collect();
    union
        .into_iter()
        .filter(|id| !sets.iter().all(|s| s.contains(id)))
        .cloned()
        .collect()
}

/// Every test id a run's census names as passed; `None` when it has no census or a runner of it
/// printed only a count.
pub fn passing_ids(run: &CheckRun) -> Option<BTreeSet<&String>> {
    let tally = run.tally.as_ref()?;
    let mut ids = BTreeSet::new();
    for count in &tally.counts {
        ids.extend(count.ids.as_deref()?.iter());
    }
    Some(ids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runners::Runner;
    use crate::runners::census::{Count, Tally};

    fn run(exit: i32, ids: &[&str]) -> CheckRun {
        let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
        CheckRun {
            name: "test".into(),
            command: "cargo test".into(),
            exit_code: Some(exit),
            timed_out: false,
            duration_ms: 1,
            output: Vec::new(),
            reused: None,
            snapshot: None,
            parallel: false,
            retries: 0,
            red_on_base: None,
            census: None,
            tally: Some(Tally {
                counts: vec![Count {
                    runner: Runner::Libtest,
                    passed: ids.len() as u64,
                    ids: Some(ids.into()),
                }],
            }),
            census_note: None,
            flaky: Vec::new(),
            rerun_passed: false,
        }
    }

    fn failed(run: CheckRun) -> (CheckRun, Option<Finding>) {
        (
            run,
            Some(Finding::new(
                Code::CheckFailed,
                "check `test` exited with code 1, expected exit code 0",
            )),
        )
    }

    #[test]
    fn a_check_that_fails_then_passes_is_flaky_naming_the_ids() {
        let (run, finding) = fold(failed(run(1, &["a"])), vec![run(0, &["a", "b"])]);
        assert_eq!(finding.unwrap().code, Code::CheckFlaky);
        assert_eq!(run.flaky, ["b"]);
        assert_eq!(run.retries, 1);
    }

    #[test]
    fn a_check_that_fails_every_time_stays_failed() {
        let (run, finding) = fold(failed(run(1, &["a"])), vec![run(1, &["a"]), run(1, &["a"])]);
        let finding = finding.unwrap();
        assert_eq!(finding.code, Code::CheckFailed);
        assert!(
            finding
                .message
                .ends_with("failed again on 2 reruns of the same tree")
        );
        assert_eq!(run.retries, 2);
        assert!(run.flaky.is_empty());
    }

    #[test]
    fn settle_stops_at_the_first_pass_and_honours_zero() {
        let mut spec = CheckSpec::new("test", "cargo test", 60);
        let mut calls = 0;
        let out = settle(
            vec![(0, failed(run(1, &[])))],
            std::slice::from_ref(&spec),
            |want| {
                calls += 1;
                Ok(want.iter().map(|&i| (i, (run(0, &[]), None))).collect())
            },
            || false,
        )
        .unwrap();
        assert_eq!(calls, 1);
        assert_eq!(out[0].1.0.retries, 1);
        spec.flaky_retries = 0;
        let out = settle(
            vec![(0, failed(run(1, &[])))],
            std::slice::from_ref(&spec),
            |_| panic!("no rerun with flaky_retries = 0"),
            || false,
        )
        .unwrap();
        assert_eq!(out[0].1.1.as_ref().unwrap().code, Code::CheckFailed);
    }
}
