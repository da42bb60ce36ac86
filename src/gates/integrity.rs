//! Test integrity (SPEC §23): the base's own tests on the agent's code, the branch's tests on
//! the base's code, and a failing check on the base's own tree.
//!
//! - The **overlay** is the commit's tree with every changed path of the overlaid surfaces
//!   (`tests`, `[protected.integrity]`, policy `integrity`) as the merge base has it. A check
//!   that passed on the commit and fails there gives `tests-weakened` (review).
//! - The **reverse overlay** is the merge base's tree with the branch's versions of those
//!   paths. When every check that passed on the commit passes there too, `tests-pass-on-base`
//!   (warning): the new tests do not exercise the change.
//! - A check that failed on the commit runs on the merge base's own tree, with the values of
//!   the merge base (`CLOSEGATE_COMMIT` the merge base, `CLOSEGATE_BRANCH` the base branch,
//!   `CLOSEGATE_SLUG` empty), so one run per base commit serves every agent (SPEC §19). So does
//!   every check with a test census (SPEC §26.4): that run is its census's baseline
//!   (`gates/census.rs`).
//!
//! Every run goes through the session's runner (`gates::runner`), the path the commit's own checks
//! take (pristine checkout or warm workspace, sandbox, shield, reuse), keyed on the tree it ran on
//! and the values it stands for. Nothing extra runs when no overlaid path changed and every check
//! passed, but a census's baseline.

mod beside;
mod changed;
mod edits;
mod policy;

pub use self::beside::{Early, commit_and_overlay};

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use git2::Oid;

use self::changed::Changed;
use self::edits::Edits;

use crate::catalog::Code;
use crate::config::{CheckSpec, Config, SandboxMode, SurfacePolicy};
use crate::contract::Contract;
use crate::finding::{Finding, Severity};
use crate::gates::census;
use crate::gates::checks::Checked;
use crate::gates::flaky;
use crate::gates::runner::{Claimed, Prepared, Runner, Target};
use crate::repo::{Change, ChangeKind};
use crate::report::{CheckRun, IntegrityRun, Report};

/// How many output lines of a failing overlay run a `tests-weakened` message quotes.
const QUOTED_LINES: usize = 5;
/// How many changed test paths a message names before "and N more".
const NAMED_PATHS: usize = 10;
/// How many failing base test ids a `tests-weakened` message names, each with its output.
const NAMED_IDS: usize = 10;

/// What the integrity runs need beyond the report of the commit's own checks.
pub struct Ctx<'a> {
    pub repo: &'a crate::repo::Repo,
    pub config: &'a Config,
    /// The session's runner: the overlays run as the commit's own checks do.
    pub runner: Runner<'a>,
    /// The claimed commit and the values its checks were given; an overlay stands for it.
    pub claimed: Claimed<'a>,
    pub merge_base: Oid,
    pub changes: &'a [Change],
    /// The contract that binds this return, if any: its `expect_changed` and `fail_to_pass`.
    pub contract: Option<&'a Contract>,
}

impl Ctx<'_> {
    /// Whether the reverse overlay runs (SPEC §27.1: only when asked).
    fn fail_to_pass(&self) -> bool {
        self.config.fail_to_pass || self.contract.is_some_and(|c| c.fail_to_pass)
    }
}

/// Run the overlays and the base's own tree as SPEC §23 and §27.1 say, fill `report.integrity`,
/// mark `red_on_base`, add `tests-weakened`, `tests-weakened-edit`, `tests-changed-as-expected`
/// and `tests-pass-on-base`, judge the census, and apply policy `integrity`.
/// `early`: what [`commit_and_overlay`] learned (the changed paths, the overlay's runs made
/// beside the commit's).
pub fn run(ctx: &Ctx<'_>, mut early: Early, report: &mut Report) -> Result<()> {
    let specs = &ctx.config.checks;
    if report.checks.len() != specs.len() {
        return Ok(());
    }
    let failed: Vec<usize> = (0..specs.len())
        .filter(|&i| failed_on_commit(&report.checks[i]))
        .collect();
    let on_base: Vec<usize> = (0..specs.len())
        .filter(|&i| failed.contains(&i) || census::wanted(ctx.config, report, i))
        .collect();
    let (red, base_runs) = on_base_tree(ctx, &on_base, &failed, report)?;
    let unstable = Unstable::new(ctx, &base_runs);
    let changed = std::mem::take(&mut early.changed);
    let mut edits = Edits::read(ctx, &changed)?;
    let passed: Vec<usize> = (0..specs.len())
        .filter(|&i| passed(&report.checks[i]))
        .collect();
    let every_base_test = match changed.is_empty() || passed.is_empty() {
        true => false,
        false => {
            let runs = Runs {
                base: &base_runs,
                unstable: &unstable,
            };
            overlays(ctx, &passed, &changed, &runs, early, red, report)?
        }
    };
    let tests_judged = ctx.config.policy_of("tests") == Some(SurfacePolicy::Integrity);
    let evidence = census::Evidence {
        moved: edits.moved().collect(),
        unstable: &|i| unstable.ids(i),
        dropped_instead: every_base_test && tests_judged,
    };
    for id in census::judge(ctx.config, ctx.merge_base, &base_runs, &evidence, report) {
        edits.drop_census_id(&id);
    }
    if changed.is_empty() {
        return Ok(());
    }
    edits.expected = report.integrity.expect_changed.clone();
    edits.report(report, |path| {
        let surfaces = ctx.config.surfaces_for(path);
        let integrity = Some(SurfacePolicy::Integrity);
        !surfaces.is_empty()
            && surfaces
                .iter()
                .all(|s| ctx.config.policy_of(s) == integrity)
    });
    policy::apply(ctx, &changed, red, &edits, report)
}

/// The overlay and, when asked, the reverse overlay: whether the overlay ran every base test
/// that passed on the base (the census's ids, those the contract expects changed aside).
fn overlays(
    ctx: &Ctx<'_>,
    passed: &[usize],
    changed: &[Changed],
    runs: &Runs<'_, '_, '_>,
    early: Early,
    red: bool,
    report: &mut Report,
) -> Result<bool> {
    let (commit, merge_base) = (ctx.claimed.commit, ctx.merge_base);
    // The overlay that ran beside the commit's checks is that tree, built once.
    let (over, early) = match early.overlay(passed) {
        Some((over, checked)) => (over, checked),
        None => (Tree::new(ctx, commit, merge_base, changed, false)?, None),
    };
    // With test paths added or modified and the reverse overlay asked for, it too; when it is
    // the commit's own tree its runs are the commit's.
    let adds = changed.iter().any(|c| c.kind != ChangeKind::Deleted);
    let reverse = match adds && ctx.fail_to_pass() {
        true => Some(Tree::new(ctx, merge_base, commit, changed, true)?),
        false => None,
    };
    let commit_tree = ctx.repo.tree_of(commit);
    let reverse_runs = reverse.as_ref().filter(|t| Some(t.tree) != commit_tree);
    let (over_checked, reverse_checked) =
        run_overlays(ctx, passed, &over, reverse_runs, runs.base, early)?;
    let mut every_base_test = false;
    if let Some(checked) = over_checked {
        let failing = checked.runs.iter().any(|run| !self::passed(run));
        let inconclusive = match failing {
            true => changed::dangling(ctx, changed, over.checkout)?,
            false => None,
        };
        every_base_test = overlay(
            ctx,
            passed,
            changed,
            &over,
            checked,
            inconclusive,
            runs,
            report,
        );
    }
    let same_as_commit = reverse
        .as_ref()
        .is_some_and(|r| Some(r.tree) == commit_tree);
    let reverse = reverse.map(|r| r.tree).zip(Some(reverse_checked));
    reverse_part(ctx, passed, reverse, same_as_commit, red, report);
    Ok(every_base_test)
}

/// The reverse overlay's runs kept and judged (its own, or the commit's when it is the commit's
/// own tree).
fn reverse_part(
    ctx: &Ctx<'_>,
    passed: &[usize],
    reverse: Option<(Oid, Option<Checked>)>,
    same_as_commit: bool,
    red: bool,
    report: &mut Report,
) {
    let runs = match reverse {
        Some((tree, Some(checked))) => keep(report, "reverse-overlay", tree, checked),
        Some((_, None)) if same_as_commit => {
            passed.iter().map(|&i| report.checks[i].clone()).collect()
        }
        _ => return,
    };
    reverse_overlay(ctx, passed, &runs, red, report);
}

/// What a second run of the merge base's own tree says of each check's base ids (SPEC §27.1,
/// §27.2): the ids it does not pass again — a test named after a random value or the time has
/// another id each run ([`census::Again::renamed`]), or a test that passed in one run of the base
/// and failed in another ([`census::Again::flaked`]). Taken only when asked, once per check.
pub struct Unstable<'c, 'r> {
    ctx: &'c Ctx<'c>,
    base_runs: &'r [(usize, CheckRun)],
    found: RefCell<BTreeMap<usize, census::Again>>,
}

impl<'c, 'r> Unstable<'c, 'r> {
    fn new(ctx: &'c Ctx<'c>, base_runs: &'r [(usize, CheckRun)]) -> Self {
        Unstable {
            ctx,
            base_runs,
            found: RefCell::new(BTreeMap::new()),
        }
    }

    /// What a fresh run of the merge base says of check `i`'s base ids.
    fn ids(&self, i: usize) -> census::Again {
        if let Some(again) = self.found.borrow().get(&i) {
            return again.clone();
        }
        let again = self.rerun(i).unwrap_or_default();
        self.found.borrow_mut().insert(i, again.clone());
        again
    }

    fn rerun(&self, i: usize) -> Option<census::Again> {
        let (_, first) = self.base_runs.iter().find(|(j, _)| *j == i)?;
        let target = Target::MergeBase(self.ctx.merge_base);
        let prepared = prepare_fresh(self.ctx, &[i], &target, true).ok()?;
        let checked = prepared.run(self.ctx.repo).ok()?;
        let second = checked.runs.first()?;
        let ids = flaky::passing_ids(first)?;
        let now = flaky::passing_ids(second).unwrap_or_default();
        let gone = ids.into_iter().filter(|id| !now.contains(id)).cloned();
        let mut again = census::Again::default();
        // Only where every run of the base passed is an id that did not pass again renamed.
        if passed(first) && passed(second) {
            again.renamed.extend(gone);
        } else {
            again.flaked.extend(gone);
        }
        again
            .flaked
            .extend(first.flaky.iter().chain(&second.flaky).cloned());
        Some(again)
    }
}

/// The base's runs and the unstable ids, for the overlay's census.
struct Runs<'a, 'c, 'r> {
    base: &'a [(usize, CheckRun)],
    unstable: &'a Unstable<'c, 'r>,
}

/// A tree to run the checks on and the commit that stands in for it in a checkout.
struct Tree {
    tree: Oid,
    checkout: Oid,
}

impl Tree {
    /// `onto` with the `changed` paths put back as `from` has them (the reverse overlay's
    /// splices when `reverse`); its stand-in commit's parent is `onto`.
    fn new(
        ctx: &Ctx<'_>,
        onto: Oid,
        from: Oid,
        changed: &[Changed],
        reverse: bool,
    ) -> Result<Tree> {
        let (paths, rewrites) = changed::put_back(changed, reverse);
        let tree = ctx.repo.overlay_tree(onto, from, &paths, &rewrites)?;
        let what = if reverse {
            "reverse overlay"
        } else {
            "overlay"
        };
        let checkout = ctx.repo.stand_in_commit(tree, onto, what)?;
        Ok(Tree { tree, checkout })
    }

    /// The runner's target: this tree, standing for the claimed commit.
    fn target<'a>(&self, ctx: &Ctx<'a>, reverse: bool) -> Target<'a> {
        Target::Overlay {
            of: ctx.claimed,
            tree: self.tree,
            checkout: self.checkout,
            reverse,
        }
    }
}

type Pair = (Option<Checked>, Option<Checked>);

/// Run the overlay and the reverse overlay (when it is not the commit's own tree), side by side
/// when they may be. An overlay whose tree is the merge base's own is not run again: its runs
/// are the base's (SPEC §27.2: two runs of one tree are never reported as different trees);
/// nor is one that ran beside the commit's checks (`early`).
fn run_overlays(
    ctx: &Ctx<'_>,
    passed: &[usize],
    over: &Tree,
    reverse: Option<&Tree>,
    base_runs: &[(usize, CheckRun)],
    early: Option<Checked>,
) -> Result<Pair> {
    let same_as_base = ctx.repo.tree_of(ctx.merge_base) == Some(over.tree);
    let from_base = match same_as_base {
        true => base_checked(passed, base_runs),
        false => early,
    };
    Ok(match (from_base, reverse) {
        (Some(over), Some(rev)) => (Some(over), run_on(ctx, passed, &rev.target(ctx, true))?),
        (Some(over), None) => (Some(over), None),
        (None, Some(rev)) if side_by_side(ctx, passed) => both(ctx, passed, over, rev)?,
        (None, Some(rev)) => (
            run_on(ctx, passed, &over.target(ctx, false))?,
            run_on(ctx, passed, &rev.target(ctx, true))?,
        ),
        (None, None) => (run_on(ctx, passed, &over.target(ctx, false))?, None),
    })
}

/// The base's runs of every check at `passed`, as one run of those checks; `None` when one of
/// them did not run on the base.
fn base_checked(passed: &[usize], base_runs: &[(usize, CheckRun)]) -> Option<Checked> {
    let runs: Option<Vec<CheckRun>> = passed
        .iter()
        .map(|i| {
            base_runs
                .iter()
                .find(|(j, _)| j == i)
                .map(|(_, r)| r.clone())
        })
        .collect();
    Some(Checked {
        runs: runs?,
        ..Checked::default()
    })
}

/// The overlay and the reverse overlay at once ([`side_by_side`]): both planned here, the
/// reverse overlay run in a thread with a repository handle of its own.
fn both(ctx: &Ctx<'_>, passed: &[usize], over: &Tree, rev: &Tree) -> Result<Pair> {
    let over = prepare(ctx, passed, &over.target(ctx, false))?;
    let rev = prepare(ctx, passed, &rev.target(ctx, true))?;
    // The thread's own handle reads this run's quarantine, where the stand-in commits are.
    let shared_repo = ctx.repo.share();
    // One guard around both threads' own, so the handlers in place before come back whichever
    // thread ends first.
    let _signals = crate::sys::interrupt::Guard::install();
    std::thread::scope(|scope| {
        let handle = scope.spawn(|| -> Result<Option<Checked>> {
            let repo = shared_repo.open()?;
            complete(&rev, rev.run(&repo)?)
        });
        let over = over
            .run(ctx.repo)
            .and_then(|checked| complete(&over, checked));
        let rev = handle
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the reverse overlay's thread panicked")));
        Ok((side_by_side_runs(over?), side_by_side_runs(rev?)))
    })
}

/// The runs of `checked`, marked as run side by side (the report's `parallel`, SPEC §27.2).
fn side_by_side_runs(checked: Option<Checked>) -> Option<Checked> {
    checked.map(|mut checked| {
        for run in &mut checked.runs {
            run.parallel = true;
        }
        checked
    })
}

/// Whether the overlay and the reverse overlay run at once: only when the two runs cannot reach
/// each other, so running them side by side cannot change what either finds — every check they
/// run is [`isolated`], the checks run in the sandbox (each run then has its own checkout, or its
/// own layer over the base snapshot (SPEC §27.2), `TMPDIR`,
/// `/tmp`, network, PID and IPC namespaces) — and there is room: `jobs` above 1, or two cores.
/// `jobs` alone is not enough (SPEC §19 runs *independent* runs in parallel): the reverse
/// overlay runs the agent's tests, the overlay the agent's code under the base's tests, and two
/// runs that share the network, a writable path or a service could let the agent's tests serve
/// the answers its code needs to pass the base's tests — what the overlay is there to rule out.
fn side_by_side(ctx: &Ctx<'_>, passed: &[usize]) -> bool {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let specs = &ctx.config.checks;
    (ctx.config.jobs > 1 || cores > 1)
        && passed.iter().all(|&i| specs.get(i).is_some_and(isolated))
        && ctx.config.sandbox != SandboxMode::Off
        && crate::sandbox::probe(true).is_ok()
}

/// A check two runs of which share nothing they could both write or reach: no `writable`
/// path, no network (each run has its own loopback), no variable passed in (`env` may name a
/// service both would use). A warm workspace (`keep`) is no bar: each run writes only its own
/// layer over the base snapshot (`crate::gates::workspace`).
fn isolated(spec: &CheckSpec) -> bool {
    !spec.network && spec.writable.is_empty() && spec.env.is_empty()
}

fn passed(run: &CheckRun) -> bool {
    run.exit_code == Some(0) && !run.timed_out
}

/// A check that exited non-zero or was killed; a timed-out one is not run again on the base (it
/// would cost its whole timeout a second time).
fn failed_on_commit(run: &CheckRun) -> bool {
    !run.timed_out && run.exit_code != Some(0)
}

/// Plan `specs[picked]` on `target` with the session's runner, reusing what the record holds for
/// its key (SPEC §19): an overlay stands for the claimed commit, the base's own tree for the merge
/// base with an empty slug, so one run per base commit serves every agent and no run under one
/// slug is reused under another.
fn prepare<'a>(ctx: &Ctx<'a>, picked: &[usize], target: &Target<'_>) -> Result<Prepared<'a>> {
    prepare_fresh(ctx, picked, target, false)
}

/// [`prepare`], run again even when the record holds a result for the key when `fresh`.
fn prepare_fresh<'a>(
    ctx: &Ctx<'a>,
    picked: &[usize],
    target: &Target<'_>,
    fresh: bool,
) -> Result<Prepared<'a>> {
    let specs: Vec<CheckSpec> = picked
        .iter()
        .map(|&i| ctx.config.checks[i].clone())
        .collect();
    ctx.runner.prepare(target, &specs, fresh)
}

/// Run `specs[picked]` on `target`; `None` when the checks could not run (no sandbox under
/// `required`).
fn run_on(ctx: &Ctx<'_>, picked: &[usize], target: &Target<'_>) -> Result<Option<Checked>> {
    let prepared = prepare(ctx, picked, target)?;
    let checked = prepared.run(ctx.repo)?;
    complete(&prepared, checked)
}

/// `checked` when every planned check ran, else `None`.
fn complete(prepared: &Prepared<'_>, checked: Checked) -> Result<Option<Checked>> {
    Ok((checked.runs.len() == prepared.len()).then_some(checked))
}

/// Keep the runs in the report's `integrity.checks` and their entries in the record, so a
/// second `check` reuses them.
fn keep(report: &mut Report, on: &'static str, tree: Oid, checked: Checked) -> Vec<CheckRun> {
    report.check_entries.extend(checked.entries);
    for run in &checked.runs {
        report.integrity.checks.push(IntegrityRun {
            on,
            tree: tree.to_string(),
            run: run.clone(),
        });
    }
    checked.runs
}

/// The checks at `picked` on the merge base's own tree: whether any of those that `failed` on the
/// commit fails there too (a red base), and the runs made there by check index (for the census).
fn on_base_tree(
    ctx: &Ctx<'_>,
    picked: &[usize],
    failed: &[usize],
    report: &mut Report,
) -> Result<(bool, Vec<(usize, CheckRun)>)> {
    let Some(tree) = ctx.repo.tree_of(ctx.merge_base) else {
        return Ok((false, Vec::new()));
    };
    if picked.is_empty() {
        return Ok((false, Vec::new()));
    }
    let target = Target::MergeBase(ctx.merge_base);
    let Some(checked) = run_on(ctx, picked, &target)? else {
        return Ok((false, Vec::new()));
    };
    let runs = keep(report, "base", tree, checked);
    let short = &ctx.merge_base.to_string()[..12];
    let mut red = false;
    for (&i, run) in picked.iter().zip(&runs) {
        if !failed.contains(&i) {
            continue;
        }
        let name = &ctx.config.checks[i].name;
        if run.rerun_passed {
            // SPEC §27.2: whether the base is red would rest on a flaky result.
            report.checks[i].red_on_base = Some(false);
            report.add_gate(crate::finding::Gate::Checks, [base_flaky(name, short, run)]);
            continue;
        }
        let fails = !passed(run);
        red |= fails;
        report.checks[i].red_on_base = Some(fails);
        if !fails {
            continue;
        }
        let prefix = format!("check `{name}` ");
        for finding in &mut report.findings {
            if finding.code == Code::CheckFailed && finding.message.starts_with(&prefix) {
                finding.message = format!("{}; also fails on the base ({short})", finding.message);
            }
        }
    }
    Ok((red, picked.iter().copied().zip(runs).collect()))
}

/// `check-flaky` for a check whose run on the merge base's own tree failed and then passed.
fn base_flaky(name: &str, short: &str, run: &CheckRun) -> Finding {
    let tests = match run.flaky.is_empty() {
        true => format!("the check `{name}` itself"),
        false => flaky::named(&run.flaky),
    };
    let msg = format!(
        "check `{name}` failed on the commit; on the merge base's own tree ({short}) it failed and \
         then passed when run again, so whether the base is red rests on a flaky result; flaky \
         tests: {tests}"
    );
    Finding::new(Code::CheckFlaky, msg)
}

/// The commit's code under the base's own tests (PASS_TO_PASS, SPEC §27.1 (a)): for each check
/// that passed on the commit, the overlay must pass too and, with a census, pass every test id
/// that passed on the base. A base test the contract's `expect_changed` names that fails there
/// while the commit's version passes is `tests-changed-as-expected` (warning); any other is
/// `tests-weakened` (review), naming the failing ids with their own output — unless the overlay
/// is `inconclusive` (it cannot build only because of test paths moved, SPEC §26.4): then
/// `base_tests` is null with the reason, and nothing the overlays would have vouched for goes
/// without a human. Whether the overlay ran every base test.
#[allow(clippy::too_many_arguments)]
fn overlay(
    ctx: &Ctx<'_>,
    passed: &[usize],
    changed: &[Changed],
    over: &Tree,
    checked: Checked,
    inconclusive: Option<String>,
    runs: &Runs<'_, '_, '_>,
    report: &mut Report,
) -> bool {
    let over_runs = keep(report, "overlay", over.tree, checked);
    if let Some(reason) = inconclusive {
        report.integrity.base_tests = None;
        report.integrity.base_tests_inconclusive = Some(reason);
        policy::keep_for_a_human(changed, report);
        return false;
    }
    let (mut weakened, mut flaked) = (false, false);
    for (&i, run) in passed.iter().zip(&over_runs) {
        let judged = judge_overlay(ctx, i, run, &report.checks[i], runs);
        let name = &ctx.config.checks[i].name;
        if !judged.expected.is_empty() {
            let msg = format!(
                "check `{name}`: base tests the contract expects changed fail with the commit's code                  under their base version and pass in the commit's: {}",
                judged.expected.join(", ")
            );
            report.add_gate(
                crate::finding::Gate::Checks,
                [Finding::new(Code::TestsChangedAsExpected, msg)],
            );
            report.integrity.expect_changed.extend(judged.expected);
        }
        if let Some(ids) = judged.flaky {
            flaked = true;
            report.add_gate(crate::finding::Gate::Checks, [overlay_flaky(name, &ids)]);
        }
        if !judged.failing {
            continue;
        }
        weakened = true;
        let msg = weakened_message(&ctx.config.checks[i].name, changed, run, &judged.ids);
        for path in changed {
            let finding = Finding::new(Code::TestsWeakened, msg.clone()).at_path(&path.text);
            report.add_gate(crate::finding::Gate::Checks, [finding]);
        }
    }
    if flaked && !weakened {
        // SPEC §27.2: neither `pass` nor `fail` rests on a flaky result.
        report.integrity.base_tests = None;
        report.integrity.base_tests_inconclusive =
            Some("a base test flaked on the overlay or on the base (check-flaky)".to_string());
        return false;
    }
    report.integrity.base_tests = Some(if weakened { "fail" } else { "pass" });
    !weakened
}

/// `check-flaky` for an overlay whose failure rests on a flaky result (SPEC §27.2).
fn overlay_flaky(name: &str, ids: &[String]) -> Finding {
    let head = format!(
        "check `{name}` failed on the overlay (the commit's code with the base's own tests)"
    );
    let msg = match ids.is_empty() {
        true => format!(
            "{head} and then passed when run again on the same tree: `tests-weakened` cannot \
             rest on a flaky result"
        ),
        false => format!(
            "{head}, but each base test it did not pass both passed and failed across runs of \
             one tree, so `tests-weakened` cannot rest on them; flaky tests: {}",
            flaky::named(ids)
        ),
    };
    Finding::new(Code::CheckFlaky, msg)
}

/// One check's overlay run judged against its base run.
struct OverlayJudged {
    /// The overlay fails the base's tests (beyond what the contract expects changed and what
    /// flaked).
    failing: bool,
    /// The base test ids that failed there unexpectedly.
    ids: Vec<String>,
    /// The base test ids that failed there as the contract expects.
    expected: Vec<String>,
    /// The judgement would rest on a flaky result (SPEC §27.2): the base test ids that failed
    /// there but both passed and failed across runs of one tree, or, with none named, the
    /// overlay's own run failed and then passed on a rerun.
    flaky: Option<Vec<String>>,
}

/// Check `i`'s overlay `run` against its run on the base (its census) and the commit's `own`.
fn judge_overlay(
    ctx: &Ctx<'_>,
    i: usize,
    run: &CheckRun,
    own: &CheckRun,
    runs: &Runs<'_, '_, '_>,
) -> OverlayJudged {
    let spec = &ctx.config.checks[i];
    let base = runs.base.iter().find(|(j, _)| *j == i).map(|(_, r)| r);
    let compared = match (base.and_then(|b| b.tally.as_ref()), run.tally.as_ref()) {
        (Some(b), Some(o)) => crate::runners::census::compare(&spec.census, b, o),
        _ => None,
    };
    let mut missing = compared.map(|c| c.missing).unwrap_or_default();
    let flaked = set_aside_flaky(&mut missing, run, base, runs.unstable, i);
    let passes_own = |id: &String| {
        let ids = own
            .tally
            .as_ref()
            .map(|t| t.counts.iter().filter_map(|c| c.ids.as_deref()));
        ids.into_iter().flatten().any(|ids| ids.contains(id))
    };
    let (expected, ids): (Vec<String>, Vec<String>) = missing
        .into_iter()
        .partition(|id| ctx.contract.is_some_and(|c| c.expects_changed(id)) && passes_own(id));
    // A failing exit rests on a flaky result when a rerun passed, or when every base test it
    // did not pass flaked.
    let exit_flaky = run.rerun_passed || !flaked.is_empty();
    let run_failed = !passed(run) && !exit_flaky;
    let failing = !ids.is_empty() || (run_failed && expected.is_empty());
    let flaky = match (failing, flaked.is_empty(), !passed(run) && run.rerun_passed) {
        (false, false, _) => Some(flaked),
        (false, true, true) => Some(Vec::new()),
        _ => None,
    };
    OverlayJudged {
        failing,
        ids,
        expected,
        flaky,
    }
}

/// Take out of `missing` the base test ids of check `i` that a second run of the base does not
/// pass again because they are renamed each run, and those that flaked (in the overlay's runs,
/// the base's, or that second run); the flaked ones are returned. The second run is asked for
/// whenever an id is missing: a base test the overlay fails is rerun on the base before it
/// decides anything (SPEC §27.2).
fn set_aside_flaky(
    missing: &mut Vec<String>,
    run: &CheckRun,
    base: Option<&CheckRun>,
    unstable: &Unstable<'_, '_>,
    i: usize,
) -> Vec<String> {
    if missing.is_empty() {
        return Vec::new();
    }
    let again = unstable.ids(i);
    missing.retain(|id| !again.renamed.contains(id));
    let runs = std::iter::once(run).chain(base);
    let mut flaky: BTreeSet<&String> = runs.flat_map(|r| r.flaky.iter()).collect();
    flaky.extend(again.flaked.iter());
    let (flaked, kept): (Vec<String>, Vec<String>) =
        missing.drain(..).partition(|id| flaky.contains(id));
    *missing = kept;
    flaked
}

fn weakened_message(name: &str, changed: &[Changed], run: &CheckRun, ids: &[String]) -> String {
    let mut named: Vec<String> = changed
        .iter()
        .take(NAMED_PATHS)
        .map(|c| format!("{} ({})", c.text, c.kind.as_str()))
        .collect();
    if changed.len() > NAMED_PATHS {
        named.push(format!("and {} more", changed.len() - NAMED_PATHS));
    }
    let ended = match (run.timed_out, run.exit_code) {
        (true, _) => "timed out".to_string(),
        (false, Some(0)) => "did not pass every base test".to_string(),
        (false, Some(code)) => format!("exited with code {code}"),
        (false, None) => "was killed".to_string(),
    };
    let head = format!(
        "check `{name}` passes on the commit but {ended} on the overlay (the commit's code with \
         the base's own tests): the code passes only its own edited tests, or the behaviour the \
         base's tests check changed; changed test paths: {}",
        named.join(", ")
    );
    if ids.is_empty() {
        let skip = run.output.len().saturating_sub(QUOTED_LINES);
        let tail = run.output[skip..].join(" | ");
        return format!("{head}; overlay output: {tail}");
    }
    let mut failing: Vec<String> = ids
        .iter()
        .take(NAMED_IDS)
        .map(|id| id_output(run, id))
        .collect();
    if ids.len() > NAMED_IDS {
        failing.push(format!("and {} more", ids.len() - NAMED_IDS));
    }
    format!("{head}; base tests failing there: {}", failing.join("; "))
}

/// `id` with the overlay's output lines that name it (its own output, as far as the kept lines
/// hold it).
fn id_output(run: &CheckRun, id: &str) -> String {
    let name = id
        .rsplit([':', '>', '/', '.', ' '])
        .find(|p| !p.is_empty())
        .unwrap_or(id);
    let lines: Vec<&str> = run
        .output
        .iter()
        .filter(|l| l.contains(name))
        .take(3)
        .map(|l| l.trim())
        .collect();
    match lines.is_empty() {
        true => format!("`{id}`"),
        false => format!("`{id}` ({})", lines.join(" | ")),
    }
}

/// The branch's tests on the base's code (FAIL_TO_PASS): `tests-pass-on-base` when every
/// check that passed on the commit passes there too (and the base is not red).
fn reverse_overlay(
    ctx: &Ctx<'_>,
    passed: &[usize],
    runs: &[CheckRun],
    red: bool,
    report: &mut Report,
) {
    let all_pass = runs.iter().all(self::passed);
    report.integrity.new_tests_on_base = Some(if all_pass { "pass" } else { "fail" });
    // SPEC §27.1: asked for, a return with no new test that fails on the base needs a human.
    if all_pass && !red {
        let names: Vec<String> = passed
            .iter()
            .map(|&i| format!("`{}`", ctx.config.checks[i].name))
            .collect();
        let msg = format!(
            "the branch's tests pass on the base's code too (the reverse overlay: the merge base's \
             tree with the branch's test paths): {} passed there, so the new tests do not \
             exercise the change",
            names.join(", ")
        );
        let mut finding = Finding::new(Code::TestsPassOnBase, msg);
        finding.severity = Severity::Review;
        report.add_gate(crate::finding::Gate::Checks, [finding]);
    }
}
