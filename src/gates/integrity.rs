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
//!   `CLOSEGATE_SLUG` empty), so one run per base commit serves every agent (SPEC §19).
//!
//! Every run goes through `checks::run_reusing`, the path the commit's own checks take (pristine
//! checkout or warm workspace, sandbox, reuse), keyed on the tree it ran on. Nothing extra runs
//! when no overlaid path changed and every check passed.

mod changed;
mod policy;

use anyhow::Result;
use git2::Oid;

use self::changed::Changed;
pub use self::policy::only_adds_lines;

use crate::catalog::Code;
use crate::config::{CheckSpec, Config, SandboxMode};
use crate::finding::Finding;
use crate::gates::checks::{self, CheckEnv, Checked, Plan};
use crate::gates::reuse::{Key, Recorded};
use crate::gates::workspace::Slot;
use crate::repo::{Change, ChangeKind, Repo};
use crate::report::{CheckRun, IntegrityRun, Report};

/// How many output lines of a failing overlay run a `tests-weakened` message quotes.
const QUOTED_LINES: usize = 5;
/// How many changed test paths a message names before "and N more".
const NAMED_PATHS: usize = 10;

/// What the integrity runs need beyond the report of the commit's own checks.
pub struct Ctx<'a> {
    pub repo: &'a Repo,
    pub config: &'a Config,
    pub commit: Oid,
    pub merge_base: Oid,
    pub changes: &'a [Change],
    /// The values the commit's checks were given.
    pub env: &'a CheckEnv,
    /// The commit's reuse key; an overlay's differs only in its tree.
    pub key: &'a Key,
    pub rerun: bool,
    /// What the commit's checks hid from the agent's code; the overlays hide the same.
    pub shield: &'a crate::sandbox::Shield,
}

/// Run the overlays and the base's own tree as SPEC §23 says, fill `report.integrity`, mark
/// `red_on_base`, add `tests-weakened` and `tests-pass-on-base`, and apply policy `integrity`.
pub fn run(ctx: &Ctx<'_>, report: &mut Report) -> Result<()> {
    let specs = &ctx.config.checks;
    if report.checks.len() != specs.len() {
        return Ok(());
    }
    let failed: Vec<usize> = (0..specs.len())
        .filter(|&i| failed_on_commit(&report.checks[i]))
        .collect();
    let red = on_base_tree(ctx, &failed, report)?;
    let changed = changed::changed(ctx)?;
    let passed: Vec<usize> = (0..specs.len())
        .filter(|&i| passed(&report.checks[i]))
        .collect();
    if changed.is_empty() || passed.is_empty() {
        return Ok(());
    }
    let over = Tree::new(ctx, ctx.commit, ctx.merge_base, &changed, false)?;
    // With test paths added or modified, the reverse overlay too; when it is the commit's own
    // tree its runs are the commit's.
    let adds = changed.iter().any(|c| c.kind != ChangeKind::Deleted);
    let reverse = if adds {
        Some(Tree::new(ctx, ctx.merge_base, ctx.commit, &changed, true)?)
    } else {
        None
    };
    let commit_tree = ctx.repo.tree_of(ctx.commit);
    let reverse_runs = reverse.as_ref().filter(|t| Some(t.tree) != commit_tree);
    let (over_checked, reverse_checked) = match reverse_runs {
        Some(rev) if side_by_side(ctx, &passed) => both(ctx, &passed, &over, rev)?,
        Some(rev) => (
            run_on(ctx.repo, &ctx.shared(), &passed, &over, ctx.env, Slot::Main)?,
            run_on(ctx.repo, &ctx.shared(), &passed, rev, ctx.env, Slot::Base)?,
        ),
        None => (
            run_on(ctx.repo, &ctx.shared(), &passed, &over, ctx.env, Slot::Main)?,
            None,
        ),
    };
    if let Some(checked) = over_checked {
        let failing = checked.runs.iter().any(|run| !self::passed(run));
        let inconclusive = match failing {
            true => changed::dangling(ctx, &changed, over.checkout)?,
            false => None,
        };
        overlay(ctx, &passed, &changed, &over, checked, inconclusive, report);
    }
    let reverse_runs = match (reverse, reverse_checked) {
        (Some(rev), Some(checked)) => Some(keep(report, "reverse-overlay", rev.tree, checked)),
        (Some(rev), None) if Some(rev.tree) == commit_tree => {
            Some(passed.iter().map(|&i| report.checks[i].clone()).collect())
        }
        _ => None,
    };
    if let Some(runs) = reverse_runs {
        reverse_overlay(ctx, &passed, &runs, red, report);
    }
    policy::apply(ctx, &changed, red, report)
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
}

/// What a run needs besides the repository: shared by both threads of [`both`].
struct Shared<'a> {
    config: &'a Config,
    key: &'a Key,
    rerun: bool,
    shield: &'a crate::sandbox::Shield,
}

impl Ctx<'_> {
    fn shared(&self) -> Shared<'_> {
        Shared {
            config: self.config,
            key: self.key,
            rerun: self.rerun,
            shield: self.shield,
        }
    }
}

type Pair = (Option<Checked>, Option<Checked>);

/// The overlay and the reverse overlay at once (`jobs` above 1: independent runs run in
/// parallel, SPEC §19): the reverse overlay in a thread with a repository handle of its own.
fn both(ctx: &Ctx<'_>, passed: &[usize], over: &Tree, rev: &Tree) -> Result<Pair> {
    let shared = ctx.shared();
    // The thread's own handle reads this run's quarantine, where the stand-in commits are.
    let shared_repo = ctx.repo.share();
    let env = ctx.env;
    // One guard around both threads' own, so the handlers in place before come back whichever
    // thread ends first.
    let _signals = crate::sys::interrupt::Guard::install();
    std::thread::scope(|scope| {
        let handle = scope.spawn(|| -> Result<Option<Checked>> {
            let repo = shared_repo.open()?;
            run_on(&repo, &shared, passed, rev, env, Slot::Base)
        });
        let over = run_on(ctx.repo, &shared, passed, over, env, Slot::Main);
        let rev = handle
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the reverse overlay's thread panicked")));
        Ok((over?, rev?))
    })
}

/// Whether the overlay and the reverse overlay run at once: with `jobs` above 1 (independent
/// runs run in parallel, SPEC §19), and also with `jobs = 1` when the two runs cannot reach each
/// other, so running them side by side cannot change what either finds: every check they run
/// is [`isolated`], the checks run in the sandbox (each run then has its own checkout or warm
/// workspace — the overlay the check's main one, the reverse overlay its base one — `TMPDIR`,
/// `/tmp`, network, PID and IPC namespaces), and the machine has two cores to give them.
fn side_by_side(ctx: &Ctx<'_>, passed: &[usize]) -> bool {
    if ctx.config.jobs > 1 {
        return true;
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let specs = &ctx.config.checks;
    cores > 1
        && passed.iter().all(|&i| specs.get(i).is_some_and(isolated))
        && ctx.config.sandbox != SandboxMode::Off
        && crate::sandbox::probe(true).is_ok()
}

/// A check two runs of which share nothing they could both write or reach: no `writable`
/// path, no network (each run has its own loopback), no variable passed in (`env` may name a
/// service both would use). A warm workspace (`keep`) is no bar: the overlay and the reverse
/// overlay run in different ones ([`Slot`]), each locked by its run.
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

/// Run `specs[picked]` on `target` with `env`, reusing what the record holds for its tree; a
/// check with `keep` runs in its workspace `slot` (the commit's code or the base's).
/// `None` when the checks could not run (no sandbox under `required`).
fn run_on(
    repo: &Repo,
    shared: &Shared<'_>,
    picked: &[usize],
    target: &Tree,
    env: &CheckEnv,
    slot: Slot,
) -> Result<Option<Checked>> {
    let specs: Vec<CheckSpec> = picked
        .iter()
        .map(|&i| shared.config.checks[i].clone())
        .collect();
    // Keyed on the values this run is given (SPEC §19): an overlay stands for the claimed
    // commit, the base's own tree for the merge base with an empty slug, so one run per base
    // commit serves every agent and no run under one slug is reused under another.
    let (slug, branch) = env.key_values(repo);
    let key = Key {
        tree: target.tree.to_string(),
        slug,
        branch,
        commit: env.commit.clone(),
        ..shared.key.clone()
    };
    let recorded = Recorded::load(&repo.common_dir(), &key, shared.rerun)?;
    let plan = Plan {
        mode: shared.config.sandbox,
        jobs: shared.config.jobs,
        key: &key,
        recorded: &recorded,
        shield: shared.shield,
        fail_fast: false,
        label: None,
        slot,
    };
    let checked = checks::run_reusing(repo, target.checkout, &specs, env, &plan)?;
    if checked.runs.len() != specs.len() {
        return Ok(None);
    }
    Ok(Some(checked))
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

/// The checks that failed on the commit, on the merge base's own tree; whether any of them
/// failed there too (a red base).
fn on_base_tree(ctx: &Ctx<'_>, failed: &[usize], report: &mut Report) -> Result<bool> {
    let Some(tree) = ctx.repo.tree_of(ctx.merge_base) else {
        return Ok(false);
    };
    if failed.is_empty() {
        return Ok(false);
    }
    let env = CheckEnv {
        commit: ctx.merge_base.to_string(),
        branch: report.base.clone().unwrap_or_default(),
        slug: String::new(),
        base: ctx.env.base.clone(),
    };
    let target = Tree {
        tree,
        checkout: ctx.merge_base,
    };
    let Some(checked) = run_on(ctx.repo, &ctx.shared(), failed, &target, &env, Slot::Base)? else {
        return Ok(false);
    };
    let runs = keep(report, "base", tree, checked);
    let short = &ctx.merge_base.to_string()[..12];
    let mut red = false;
    for (&i, run) in failed.iter().zip(&runs) {
        let fails = !passed(run);
        red |= fails;
        report.checks[i].red_on_base = Some(fails);
        if !fails {
            continue;
        }
        let name = &ctx.config.checks[i].name;
        let prefix = format!("check `{name}` ");
        for finding in &mut report.findings {
            if finding.code == Code::CheckFailed && finding.message.starts_with(&prefix) {
                finding.message = format!("{}; also fails on the base ({short})", finding.message);
            }
        }
    }
    Ok(red)
}

/// The commit's code under the base's own tests (PASS_TO_PASS): `tests-weakened` for each check
/// that passed on the commit and fails there — unless the overlay is `inconclusive` (it cannot
/// build only because of test paths moved, SPEC §26.4): then `base_tests` is null with the
/// reason, and nothing the overlays would have vouched for goes without a human.
fn overlay(
    ctx: &Ctx<'_>,
    passed: &[usize],
    changed: &[Changed],
    over: &Tree,
    checked: Checked,
    inconclusive: Option<String>,
    report: &mut Report,
) {
    let runs = keep(report, "overlay", over.tree, checked);
    if let Some(reason) = inconclusive {
        report.integrity.base_tests = None;
        report.integrity.base_tests_inconclusive = Some(reason);
        policy::keep_for_a_human(changed, report);
        return;
    }
    let mut weakened = false;
    for (&i, run) in passed.iter().zip(&runs) {
        if self::passed(run) {
            continue;
        }
        weakened = true;
        let msg = weakened_message(&ctx.config.checks[i].name, changed, run);
        for path in changed {
            let finding = Finding::new(Code::TestsWeakened, msg.clone()).at_path(&path.text);
            report.add_gate(crate::finding::Gate::Checks, [finding]);
        }
    }
    report.integrity.base_tests = Some(if weakened { "fail" } else { "pass" });
}

fn weakened_message(name: &str, changed: &[Changed], run: &CheckRun) -> String {
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
        (false, Some(code)) => format!("exited with code {code}"),
        (false, None) => "was killed".to_string(),
    };
    let skip = run.output.len().saturating_sub(QUOTED_LINES);
    let tail = run.output[skip..].join(" | ");
    format!(
        "check `{name}` passes on the commit but {ended} on the overlay (the commit's code with \
         the base's own tests): the code passes only its own edited tests; changed test paths: \
         {}; overlay output: {tail}",
        named.join(", ")
    )
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
        report.add_gate(
            crate::finding::Gate::Checks,
            [Finding::new(Code::TestsPassOnBase, msg)],
        );
    }
}
