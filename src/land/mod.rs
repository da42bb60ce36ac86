//! `closegate land` (SPEC §22): the base only ever moves to a tree that passed the checks.
//!
//! For each branch: gate on its recorded verdict (`target::gate`), compose it onto the current
//! base tip in memory (`compose`), check the composed tree (`verify`), move the base by
//! compare-and-swap under a per-base lock (`base`), record, then tear the worktree down with no
//! check run again. Several branches go in batches (`--batch N`): a failing batch is bisected by
//! prefixes in landing order until the breaking branch is named.

pub mod base;
pub mod compose;
pub mod push;
pub mod target;
pub mod verify;

use anyhow::{Result, bail};
use git2::Oid;

use crate::catalog::Code;
use crate::finding::{Finding, Verdict};
use crate::gates::Session;
use crate::ledger::{Event, LandFields, Record};
use crate::repo::Repo;
use crate::report::{CheckRun, Provenance, Report};
pub use compose::Strategy;
use target::{Admitted, Target};
use verify::Verifier;

/// How many times `land` composes again after the base moved under it before `land-base-busy`.
pub const ATTEMPTS: usize = 5;

/// A `land` as asked on the command line.
#[derive(Debug, Clone)]
pub struct Request {
    pub targets: Vec<String>,
    pub all: bool,
    pub strategy: Strategy,
    pub base: Option<String>,
    pub batch: usize,
    pub no_teardown: bool,
    pub keep_branch: bool,
    pub dry_run: bool,
    /// `--push REMOTE`: land on the remote's base (fetched), pushed with a lease.
    pub push: Option<String>,
}

/// What happened to one branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Landed,
    Refused,
    Skipped,
}

/// One branch's result.
#[derive(Debug, Clone)]
pub struct BranchResult {
    pub branch: String,
    pub slug: String,
    pub tip: Oid,
    pub outcome: Outcome,
    pub findings: Vec<Finding>,
    pub composed: Option<Oid>,
    pub checks: Vec<CheckRun>,
    /// The teardown that followed: its codes when it refused, and what it did.
    pub teardown: Vec<String>,
    pub teardown_codes: Vec<String>,
}

/// What a `land` did.
#[derive(Debug)]
pub struct Landing {
    pub base: String,
    pub before: Option<Oid>,
    pub after: Option<Oid>,
    pub branches: Vec<BranchResult>,
    pub dry_run: bool,
    pub strategy: Strategy,
    /// Check runs that actually ran (not reused).
    pub checks_run: usize,
    /// With `--push`: the notes could not be pushed (the landing stands).
    pub notes_error: Option<String>,
}

impl Landing {
    /// SPEC §1.3: 0 when every branch named landed (or, dry, would; a branch already in the base
    /// is skipped, not refused), 1 when any was refused.
    pub fn exit(&self) -> i32 {
        i32::from(self.branches.iter().any(|b| b.outcome == Outcome::Refused))
    }
}

/// The state one `land` works in.
struct Ctx<'a> {
    repo: &'a Repo,
    req: &'a Request,
    base: String,
    config: crate::config::Config,
    blob: Option<String>,
    provenance: Provenance,
}

impl Ctx<'_> {
    /// The base tip now: the local branch, or with `--push` the remote's (fetched).
    fn base_tip(&self) -> Result<Option<Oid>> {
        match &self.req.push {
            Some(remote) => Ok(Some(push::fetch(self.repo, remote, &self.base)?)),
            None => Ok(self.repo.branch_tip(&self.base)),
        }
    }

    /// Move the base from `old` to `new`: the local ref, or with `--push` the remote's.
    fn move_base(&self, old: Oid, new: Oid, message: &str) -> Result<base::Moved> {
        match &self.req.push {
            Some(remote) => push::push(self.repo, remote, &self.base, old, new),
            None => base::move_base(self.repo, &self.base, old, new, message),
        }
    }
}

/// Run a `land` from the current directory's repository.
pub fn run(req: &Request) -> Result<Landing> {
    let (repo, here) = crate::inputs::open(None)?;
    let trusted = crate::inputs::trusted_config(&repo, req.base.as_deref(), None)?;
    let Some((base, _)) = trusted.base.clone() else {
        bail!("no base branch resolved: pass --base NAME");
    };
    // The checks on composed trees run the agents' code: their shield comes from the session,
    // as every command's does.
    let session = Session::on_base(repo, here.clone(), trusted)?;
    let repo = session.repo();
    if req.push.is_none() && repo.branch_tip(&base).is_none() {
        bail!("the base `{base}` is not a local branch: land moves a local branch");
    }
    let ctx = Ctx {
        repo,
        req,
        base: base.clone(),
        config: session.config().clone(),
        blob: session.config_blob().map(str::to_string),
        provenance: session.provenance(),
    };
    let targets = select(&ctx, &here)?;
    // One land per base at a time: a second one waits here (a dry run moves nothing and waits
    // for nobody).
    let _lock = if req.dry_run {
        None
    } else {
        Some(base::lock(&repo.common_dir(), &base)?)
    };
    let before = ctx.base_tip()?;
    let mut landing = Landing {
        base: base.clone(),
        before,
        after: before,
        branches: Vec::new(),
        dry_run: req.dry_run,
        strategy: req.strategy,
        checks_run: 0,
        notes_error: None,
    };
    let mut verifier = Verifier::new(&session, &base);
    let admitted = admit(&ctx, targets, &mut landing);
    let batch = req.batch.max(1);
    let mut queue = admitted;
    while !queue.is_empty() {
        let take = batch.min(queue.len());
        let group: Vec<(Target, Admitted)> = queue.drain(..take).collect();
        let results = land_batch(&ctx, &mut verifier, group, &mut landing)?;
        landing.branches.extend(results);
    }
    if !req.dry_run {
        landing.after = ctx.base_tip()?;
    }
    landing.checks_run = verifier.ran;
    follow_up(&ctx, &mut landing)?;
    Ok(landing)
}

/// After the moves: tear down (local base) or push the notes (`--push`).
fn follow_up(ctx: &Ctx, landing: &mut Landing) -> Result<()> {
    let landed = landing
        .branches
        .iter()
        .any(|b| b.outcome == Outcome::Landed);
    match &ctx.req.push {
        Some(remote) if landed && !ctx.req.dry_run => {
            landing.notes_error = push::push_notes(ctx.repo, remote);
        }
        // The local base did not move: the worktrees wait for `git pull` and `sweep`.
        Some(_) => {}
        None if !ctx.req.dry_run => teardowns(ctx, landing)?,
        None => {}
    }
    Ok(())
}

/// Step 1 for every target: the admitted ones, in order; the others refused into `landing`.
fn admit(ctx: &Ctx, targets: Vec<Target>, landing: &mut Landing) -> Vec<(Target, Admitted)> {
    let mut admitted = Vec::new();
    for t in targets {
        match target::gate(ctx.repo, &t, ctx.blob.as_deref()) {
            Ok(a) => admitted.push((t, a)),
            Err(finding) => landing.branches.push(refused(&t, vec![finding])),
        }
    }
    admitted
}

/// The branches named, in order; with `--all`, every COMPLETED agent branch first.
/// The branches to land: those named, with `--all` every COMPLETED agent branch too; with
/// neither, the branch of the worktree `here` (the current directory's), as `check` defaults
/// to it — unless that is the base itself.
fn select(ctx: &Ctx, here: &std::path::Path) -> Result<Vec<Target>> {
    let (repo, req) = (ctx.repo, ctx.req);
    let named = target::resolve(repo, &req.targets, &ctx.config.status_file)?;
    if !req.all {
        if named.is_empty() {
            return current(ctx, here);
        }
        return Ok(named);
    }
    let mut all = target::all(repo, &ctx.config, ctx.blob.as_deref(), &ctx.base);
    for t in named {
        if !all.iter().any(|a| a.branch == t.branch) {
            all.push(t);
        }
    }
    Ok(all)
}

/// `land` with no branch named: the current worktree's branch, when it is not the base.
fn current(ctx: &Ctx, here: &std::path::Path) -> Result<Vec<Target>> {
    let word = here.to_string_lossy().into_owned();
    let found = target::resolve(ctx.repo, &[word], &ctx.config.status_file);
    match found {
        Ok(targets) if targets.iter().all(|t| t.branch != ctx.base) => Ok(targets),
        _ => bail!(
            "name a branch or worktree to land, or pass --all (the current directory is not an \
             agent's worktree)"
        ),
    }
}

fn refused(t: &Target, findings: Vec<Finding>) -> BranchResult {
    BranchResult {
        branch: t.branch.clone(),
        slug: t.slug.clone(),
        tip: t.tip,
        outcome: Outcome::Refused,
        findings,
        composed: None,
        checks: Vec::new(),
        teardown: Vec::new(),
        teardown_codes: Vec::new(),
    }
}

/// One composed prefix of a batch: the branch and the commit composing it onto the previous.
struct Step {
    index: usize,
    composed: Oid,
}

/// Land one batch: compose every branch in order, check the whole, bisect on failure, move the
/// base by compare-and-swap; compose again when the base moved (bounded).
fn land_batch(
    ctx: &Ctx,
    verifier: &mut Verifier,
    mut group: Vec<(Target, Admitted)>,
    landing: &mut Landing,
) -> Result<Vec<BranchResult>> {
    let mut results: Vec<BranchResult> = Vec::new();
    let mut attempts = 0;
    loop {
        if group.is_empty() {
            return Ok(results);
        }
        let onto = match ctx.req.dry_run {
            true => landing.after,
            false => ctx.base_tip()?,
        }
        .unwrap_or(Oid::zero());
        skip_landed(ctx, &mut group, onto, &mut results);
        if group.is_empty() {
            return Ok(results);
        }
        let (steps, head, dropped) = compose_group(ctx, &group, onto)?;
        if !dropped.is_empty() {
            for (i, f) in dropped.into_iter().rev() {
                let (t, _) = group.remove(i);
                results.push(refused(&t, vec![f]));
            }
            continue;
        }
        let (first_branch, first_slug) = (group[0].0.branch.clone(), group[0].0.slug.clone());
        let whole = verifier.verify(head, onto, &first_branch, &first_slug)?;
        if !whole.passed {
            let first = (first_branch.as_str(), first_slug.as_str());
            results.push(refuse_breaking(verifier, &steps, &mut group, onto, first)?);
            continue;
        }
        if ctx.req.dry_run {
            landing.after = Some(head);
            results.extend(would_land(&steps, &group, &whole));
            return Ok(results);
        }
        before_move();
        let message = format!("closegate land: {}", names(&group));
        let moved = ctx.move_base(onto, head, &message)?;
        if let base::Moved::Raced = moved {
            attempts += 1;
            if attempts < ATTEMPTS {
                continue;
            }
        }
        let outcome = Moved {
            onto,
            head,
            steps: &steps,
            whole: &whole,
        };
        after_move(ctx, moved, &outcome, &mut group, &mut results)?;
        return Ok(results);
    }
}

/// Tests stand in for someone else moving the base between compose and move.
fn before_move() {
    if let Some(command) = crate::sys::test_switch("CLOSEGATE_TEST_LAND_BEFORE_MOVE") {
        let _ = std::process::Command::new("sh")
            .arg("-c")
            .arg(command)
            .status();
    }
}

/// A dry run's landed branches (nothing moved).
fn would_land(
    steps: &[Step],
    group: &[(Target, Admitted)],
    whole: &verify::Verified,
) -> Vec<BranchResult> {
    let zipped = steps.iter().zip(group);
    zipped
        .map(|(step, (t, _))| landed(t, step.composed, &whole.runs))
        .collect()
}

/// A branch whose work is already in the base has nothing to land: skipped, out of `group`.
fn skip_landed(
    ctx: &Ctx,
    group: &mut Vec<(Target, Admitted)>,
    onto: Oid,
    results: &mut Vec<BranchResult>,
) {
    group.retain(|(t, _)| {
        let done = ctx.repo.is_ancestor(t.commit, onto);
        if done {
            let skipped = BranchResult {
                outcome: Outcome::Skipped,
                ..refused(t, Vec::new())
            };
            results.push(skipped);
        }
        !done
    });
}

/// Compose every branch of `group` in landing order onto `onto`; a branch that conflicts (or
/// touches a protected path its verdict did not cover) is returned with its finding, by index.
#[allow(clippy::type_complexity)]
fn compose_group(
    ctx: &Ctx,
    group: &[(Target, Admitted)],
    onto: Oid,
) -> Result<(Vec<Step>, Oid, Vec<(usize, Finding)>)> {
    let mut steps: Vec<Step> = Vec::new();
    let mut head = onto;
    let mut dropped = Vec::new();
    for (i, (t, admitted)) in group.iter().enumerate() {
        if let Some(f) = protected_gate(ctx, t, onto, admitted) {
            dropped.push((i, f));
            continue;
        }
        match compose::compose(ctx.repo, head, t, ctx.req.strategy, &ctx.config.status_file)? {
            Ok(c) => {
                head = c;
                steps.push(Step {
                    index: i,
                    composed: c,
                });
            }
            Err(f) => dropped.push((i, f)),
        }
    }
    Ok((steps, head, dropped))
}

/// A batch's composition as it went to the move.
struct Moved<'a> {
    onto: Oid,
    head: Oid,
    steps: &'a [Step],
    whole: &'a verify::Verified,
}

/// Record the landed branches once the base moved, or refuse the batch with the reason it did not.
fn after_move(
    ctx: &Ctx,
    moved: base::Moved,
    m: &Moved,
    group: &mut Vec<(Target, Admitted)>,
    results: &mut Vec<BranchResult>,
) -> Result<()> {
    let finding = |code: Code, msg: String| Finding::new(code, msg);
    let why = match moved {
        base::Moved::Done(stuck) => {
            for (step, (t, a)) in m.steps.iter().zip(group.iter()) {
                record(ctx, t, a, step.composed, m.onto, m.head, m.whole)?;
                let mut r = landed(t, step.composed, &m.whole.runs);
                r.teardown.extend(stuck.clone());
                results.push(r);
            }
            return Ok(());
        }
        base::Moved::Raced => (
            Code::LandBaseBusy,
            format!(
                "the base `{}` moved {ATTEMPTS} times while it was being landed; nothing was \
                 changed: run `closegate land` again",
                ctx.base
            ),
        ),
        base::Moved::Dirty(dir, why) => (
            Code::LandBaseDirty,
            format!(
                "the base `{}` is checked out in {}, which has changes the move would overwrite \
                 ({why}); nothing was moved: commit, stash or discard them",
                ctx.base,
                dir.display()
            ),
        ),
        base::Moved::Refused(why) => (
            Code::LandNotVerified,
            format!("git refused to move the base `{}`: {why}", ctx.base),
        ),
    };
    for (t, _) in group.drain(..) {
        results.push(refused(&t, vec![finding(why.0, why.1.clone())]));
    }
    Ok(())
}

/// Bisect a failing batch and take the breaking branch out of `group`, refused with the output of
/// the first failing prefix.
fn refuse_breaking(
    verifier: &mut Verifier,
    steps: &[Step],
    group: &mut Vec<(Target, Admitted)>,
    onto: Oid,
    (branch, slug): (&str, &str),
) -> Result<BranchResult> {
    let breaking = bisect(verifier, steps, onto, branch, slug)?;
    let (t, _) = group.remove(steps[breaking].index);
    let prefix = verifier.verify(steps[breaking].composed, onto, branch, slug)?;
    let mut r = refused(&t, vec![check_failed(&t, &prefix)]);
    r.checks = prefix.runs.clone();
    r.composed = Some(steps[breaking].composed);
    Ok(r)
}

/// The first failing prefix (its index in `steps`), knowing the whole batch fails: a binary
/// search over prefixes in landing order, every result reused by tree.
fn bisect(
    verifier: &mut Verifier,
    steps: &[Step],
    onto: Oid,
    branch: &str,
    slug: &str,
) -> Result<usize> {
    let (mut lo, mut hi) = (0, steps.len() - 1);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if verifier
            .verify(steps[mid].composed, onto, branch, slug)?
            .passed
        {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// SPEC §22 step 3: the protected gate against the current base; a protected path the branch's
/// verdict (or approval) did not cover refuses it.
fn protected_gate(ctx: &Ctx, t: &Target, onto: Oid, admitted: &Admitted) -> Option<Finding> {
    if admitted.approved {
        return None;
    }
    let merge_base = ctx.repo.merge_base(onto, t.commit)?;
    let changes = ctx.repo.changes(Some(merge_base), t.commit).ok()?;
    let (hits, findings) = crate::gates::protected::run(&ctx.config, &changes);
    let review = findings
        .iter()
        .any(|f| f.severity == crate::catalog::Severity::Review);
    if !review {
        return None;
    }
    let paths: Vec<String> = hits.iter().map(|h| h.path.clone()).collect();
    let msg = format!(
        "`{}` changes protected paths against the current base that its verdict did not cover: \
         {}; run `closegate check` and have a human `closegate approve` it",
        t.branch,
        paths.join(", ")
    );
    Some(Finding::new(Code::LandNotVerified, msg))
}

fn check_failed(t: &Target, v: &verify::Verified) -> Finding {
    let mut lines: Vec<String> = Vec::new();
    for f in &v.findings {
        lines.push(f.message.clone());
    }
    for run in v.runs.iter().filter(|r| r.exit_code != Some(0)) {
        lines.extend(run.output.iter().cloned());
    }
    if lines.is_empty() {
        lines.push("no check could run on the composed tree".into());
    }
    let msg = format!(
        "`{}` passes alone but a check fails once composed with the current base: {}",
        t.branch,
        lines.join("\n")
    );
    Finding::new(Code::LandCheckFailed, msg)
}

fn landed(t: &Target, composed: Oid, runs: &[CheckRun]) -> BranchResult {
    BranchResult {
        outcome: Outcome::Landed,
        composed: Some(composed),
        checks: runs.to_vec(),
        ..refused(t, Vec::new())
    }
}

fn names(group: &[(Target, Admitted)]) -> String {
    let names: Vec<&str> = group.iter().map(|(t, _)| t.branch.as_str()).collect();
    names.join(", ")
}

/// SPEC §22 step 5: the `land` record, once the base has moved.
fn record(
    ctx: &Ctx,
    t: &Target,
    a: &Admitted,
    composed: Oid,
    before: Oid,
    after: Oid,
    v: &verify::Verified,
) -> Result<()> {
    let report = Report {
        slug: Some(t.slug.clone()),
        commit: Some(t.tip.to_string()),
        branch: Some(t.branch.clone()),
        worktree: t.worktree.as_ref().map(|p| p.display().to_string()),
        verdict: Verdict::Verified,
        config: ctx.blob.clone(),
        provenance: Some(ctx.provenance),
        base: Some(ctx.base.clone()),
        base_commit: Some(before.to_string()),
        ..Report::default()
    };
    let fields = LandFields {
        tip: t.tip.to_string(),
        composed: composed.to_string(),
        base_before: before.to_string(),
        base_after: after.to_string(),
        strategy: ctx.req.strategy.as_str().to_string(),
        checks: v.entries.clone(),
        admitted_on: Some(a.ts.clone()),
    };
    Record::new(&report, None, Event::Land(fields)).append(&ctx.repo.common_dir())
}

/// Tear down every landed branch's worktree (no check run again: it is admitted on its records)
/// and delete its branch (compare-and-delete), unless `--no-teardown` / `--keep-branch`.
fn teardowns(ctx: &Ctx, landing: &mut Landing) -> Result<()> {
    if ctx.req.no_teardown {
        return Ok(());
    }
    for b in landing.branches.iter_mut() {
        if b.outcome != Outcome::Landed {
            continue;
        }
        let worktree = ctx
            .repo
            .worktrees()
            .into_iter()
            .find(|w| {
                w.exists
                    && !w.main
                    && w.head_ref().as_deref() == Some(&format!("refs/heads/{}", b.branch))
            })
            .map(|w| w.path);
        match worktree {
            Some(dir) => teardown_one(ctx, b, dir)?,
            None if !ctx.req.keep_branch => match ctx.repo.delete_branch_if_at(&b.branch, b.tip)? {
                crate::repo::safety::BranchDeletion::Deleted => {
                    b.teardown
                        .push(format!("deleted branch {} (at {})", b.branch, b.tip));
                }
                crate::repo::safety::BranchDeletion::Moved(now) => {
                    let now = now.map_or("nothing".to_string(), |n| n.to_string());
                    b.teardown.push(format!(
                        "kept branch {}: it moved to {now} after it was landed",
                        b.branch
                    ));
                }
            },
            None => {}
        }
    }
    Ok(())
}

fn teardown_one(ctx: &Ctx, b: &mut BranchResult, dir: std::path::PathBuf) -> Result<()> {
    let request = crate::teardown::Request {
        worktree: Some(dir),
        gate: crate::inputs::GateOptions {
            base: ctx.req.base.clone(),
            ..Default::default()
        },
        dry_run: false,
        delete_branch: !ctx.req.keep_branch,
        allow_unverified: false,
        // Never overrides a refusal: the escrow is written, but what it names stays.
        force: false,
        reap: false,
    };
    match crate::teardown::run(&request) {
        Ok(done) => {
            for step in &done.steps {
                b.teardown.push(format!("{} {}", step.verb, step.what));
            }
            if done.exit != 0
                && let Some(report) = &done.report
            {
                b.teardown_codes = report
                    .codes()
                    .iter()
                    .map(|c| c.as_str().to_string())
                    .collect();
            }
        }
        Err(e) => b.teardown.push(format!("teardown error: {e:#}")),
    }
    Ok(())
}
