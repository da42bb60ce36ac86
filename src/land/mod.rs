//! `closegate land` (SPEC §22): the base only ever moves to a tree that passed the checks.
//!
//! Under a per-base lock (bounded wait, `base`), each round reads the base tip it composes on —
//! the remote's with `--push` — and the configuration, contracts and protected policy committed
//! there (SPEC §26.2), then for each branch: skip it when the base already holds its work, gate it
//! with the one question of `crate::verdict` (`target::gate`), compose it in memory (`compose`),
//! check the composed tree (`verify`), move the base by compare-and-swap (`base`; a race starts
//! a new round, which reads everything again), record, then delete the branch and tear the
//! worktree down with no check run again. Several branches go in batches (`--batch N`): a
//! failing batch is bisected by prefixes in landing order until the breaking branch is named.

pub mod base;
mod cleanup;
pub mod compose;
pub mod push;
pub mod target;
pub mod verify;

use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

use anyhow::{Result, bail};
use git2::Oid;

use crate::catalog::Code;
use crate::finding::{Finding, Verdict};
use crate::gates::Session;
use crate::ledger::{Event, LandFields, Record};
use crate::repo::Repo;
use crate::report::{CheckRun, Report};
use crate::verdict::{Book, Under};
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
    /// `--wait DURATION`: how long to wait for another `land` of the same base.
    pub wait: Duration,
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
    /// What followed the move for a landed branch.
    pub after: After,
}

/// What followed a landed branch's move (SPEC §22): data, worded by `render::land`.
#[derive(Debug, Clone, Default)]
pub struct After {
    /// The move left a worktree that has the base checked out behind: how to bring it along.
    pub base_stuck: Option<String>,
    /// What became of the branch's worktree, or of the branch when it has none; `None` when
    /// nothing was done to them (a dry run, `--push`, `--no-teardown`, or `--keep-branch` and
    /// no worktree).
    pub cleanup: Option<Cleanup>,
}

/// What became of a landed branch's worktree, or of the branch itself when it has none.
#[derive(Debug, Clone)]
pub enum Cleanup {
    /// The worktree's teardown ran: every step, and the codes of its report when it did not
    /// remove the worktree (refused, or stopped midway).
    TornDown {
        steps: Vec<crate::teardown::Step>,
        refused: Vec<Code>,
        /// The processes that kept the worktree (`teardown-busy`), the shell `land` was run
        /// from among them when it stands inside (SPEC §27.4).
        holders: Vec<crate::teardown::busy::Proc>,
        /// The one command that finishes the teardown once they are gone, when they kept it.
        finish: Option<String>,
    },
    /// The teardown could not run: the error, with its causes.
    Failed(String),
    /// No worktree: the branch was deleted at the landed tip (compare-and-delete).
    BranchDeleted,
    /// No worktree: the branch had moved since it was landed (to this commit, or away) and
    /// was kept.
    BranchMoved(Option<Oid>),
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
    repo: &'a Rc<Repo>,
    here: PathBuf,
    req: &'a Request,
    base: String,
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

/// What one round judges under (SPEC §26.2), read after the lock is taken and again whenever the
/// base moved under a round: the base tip it composes on, the configuration, contracts and
/// protected policy committed there (the session, whose shield the checks take), and the
/// decisions of the record.
struct Round {
    onto: Oid,
    session: Session,
    book: Book,
    under: Under,
}

impl Round {
    fn read(ctx: &Ctx, onto: Oid) -> Result<Round> {
        let base_flag = ctx.req.base.as_deref();
        let trusted = crate::inputs::trusted_config_on(ctx.repo, base_flag, &ctx.base, onto)?;
        let under = Under::base(trusted.config_blob.clone(), trusted.tip.clone());
        let session = Session::on_base(Rc::clone(ctx.repo), ctx.here.clone(), trusted)?;
        let book = Book::read(&ctx.repo.common_dir())?;
        Ok(Round {
            onto,
            session,
            book,
            under,
        })
    }

    fn status_file(&self) -> &str {
        &self.session.config().status_file
    }
}

/// Run a `land` from the current directory's repository.
pub fn run(req: &Request) -> Result<Landing> {
    let (repo, here) = crate::inputs::open(None)?;
    let repo = Rc::new(repo);
    // Read before the lock only to name the base and the branches; every judgement reads the
    // configuration again from the tip it composes on.
    let named = crate::inputs::trusted_config(&repo, req.base.as_deref(), None)?;
    let Some((base, _)) = named.base.clone() else {
        bail!("no base branch resolved: pass --base NAME");
    };
    if req.push.is_none() && repo.branch_tip(&base).is_none() {
        bail!("the base `{base}` is not a local branch: land moves a local branch");
    }
    let ctx = Ctx {
        repo: &repo,
        here,
        req,
        base: base.clone(),
    };
    let words = select(&ctx, &named.config.status_file)?;
    let mut landing = Landing {
        base: base.clone(),
        before: None,
        after: None,
        branches: Vec::new(),
        dry_run: req.dry_run,
        strategy: req.strategy,
        checks_run: 0,
        notes_error: None,
    };
    // One land per base at a time: a second one waits here, bounded (a dry run moves nothing and
    // waits for nobody).
    let _lock = match req.dry_run {
        true => None,
        false => match base::lock(&repo.common_dir(), &base, req.wait)? {
            Some(lock) => Some(lock),
            None => return Ok(busy(&ctx, &named, words, landing)),
        },
    };
    landing.before = ctx.base_tip()?;
    landing.after = landing.before;
    let mut queue = match req.all {
        true => with_all(&ctx, words, landing.before.unwrap_or(Oid::zero()))?,
        false => words,
    };
    let mut verifier = Verifier::default();
    let batch = req.batch.max(1);
    while !queue.is_empty() {
        let take = batch.min(queue.len());
        let group: Vec<String> = queue.drain(..take).collect();
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

/// `--all`: every COMPLETED (or CONFLICT) agent branch, judged under what the base tip `onto`
/// holds (read after the lock), oldest verdict first; then the branches named that are not among
/// them.
fn with_all(ctx: &Ctx, words: Vec<String>, onto: Oid) -> Result<Vec<String>> {
    let round = Round::read(ctx, onto)?;
    let config = round.session.config();
    let base = (ctx.base.as_str(), Some(onto));
    let found = target::all(ctx.repo, config, &round.book, &round.under, base);
    let mut all: Vec<String> = found.into_iter().map(|t| t.branch).collect();
    for name in words {
        if !all.contains(&name) {
            all.push(name);
        }
    }
    Ok(all)
}

/// The lock was still held after `--wait`: every branch asked is `land-base-busy`, nothing moved.
fn busy(
    ctx: &Ctx,
    named: &crate::inputs::Trusted,
    words: Vec<String>,
    mut landing: Landing,
) -> Landing {
    let status_file = &named.config.status_file;
    let mut names = words;
    if ctx.req.all {
        let book = Book::read(&ctx.repo.common_dir()).unwrap_or_default();
        let under = Under::base(named.config_blob.clone(), named.tip.clone());
        let base = (ctx.base.as_str(), ctx.repo.branch_tip(&ctx.base));
        let found = target::all(ctx.repo, &named.config, &book, &under, base);
        names.extend(found.into_iter().map(|t| t.branch));
    }
    let waited = humantime(ctx.req.wait);
    for name in names {
        let Ok(t) = target::target(ctx.repo, &name, status_file) else {
            continue;
        };
        let msg = format!(
            "another `closegate land` held the base `{}` for {waited}; nothing was changed: run \
             `closegate land` again, or pass a longer --wait",
            ctx.base
        );
        landing
            .branches
            .push(refused(&t, vec![Finding::new(Code::LandBaseBusy, msg)]));
    }
    landing
}

/// A duration as the user would write it (`--wait 10m`).
fn humantime(d: Duration) -> String {
    match d.as_secs() {
        s if s >= 3600 && s % 3600 == 0 => format!("{}h", s / 3600),
        s if s >= 60 && s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
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
        None if !ctx.req.dry_run => cleanup::teardowns(ctx, landing)?,
        None => {}
    }
    Ok(())
}

/// The branches named, in order (each once); with none named and no `--all`, the branch of the
/// worktree the command runs in, as `check` defaults to it — unless that is the base itself.
fn select(ctx: &Ctx, status_file: &str) -> Result<Vec<String>> {
    let (repo, req) = (ctx.repo, ctx.req);
    let named = target::resolve(repo, &req.targets, status_file)?;
    if named.is_empty() && !req.all {
        let word = ctx.here.to_string_lossy().into_owned();
        return match target::resolve(repo, &[word], status_file) {
            Ok(targets) if targets.iter().all(|t| t.branch != ctx.base) => {
                Ok(targets.into_iter().map(|t| t.branch).collect())
            }
            _ => bail!(
                "name a branch or worktree to land, or pass --all (the current directory is not \
                 an agent's worktree)"
            ),
        };
    }
    Ok(named.into_iter().map(|t| t.branch).collect())
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
        after: After::default(),
    }
}

/// One composed prefix of a batch: the branch and the commit composing it onto the previous.
struct Step {
    index: usize,
    composed: Oid,
}

/// Land one batch of branch names. Each round reads the base tip and what it judges under,
/// resolves each branch again (its tip, document, state), skips those the base already holds,
/// gates the rest, composes them in order, checks the whole (bisecting on failure) and moves the
/// base by compare-and-swap; when the base moved meanwhile, a new round reads everything again
/// (bounded, then `land-base-busy`).
fn land_batch(
    ctx: &Ctx,
    verifier: &mut Verifier,
    mut names: Vec<String>,
    landing: &mut Landing,
) -> Result<Vec<BranchResult>> {
    let mut results: Vec<BranchResult> = Vec::new();
    let mut attempts = 0;
    loop {
        if names.is_empty() {
            return Ok(results);
        }
        let onto = match ctx.req.dry_run {
            true => landing.after,
            false => ctx.base_tip()?,
        }
        .unwrap_or(Oid::zero());
        let round = Round::read(ctx, onto)?;
        let mut group = admit(ctx, &round, &mut names, &mut results);
        if group.is_empty() {
            return Ok(results);
        }
        let Some((steps, head, whole)) =
            compose_and_check(ctx, verifier, &round, &mut group, &mut results)?
        else {
            // A branch was taken out of the group: a new round for the others.
            names = group.iter().map(|(t, _)| t.branch.clone()).collect();
            continue;
        };
        if ctx.req.dry_run {
            landing.after = Some(head);
            results.extend(would_land(&steps, &group, &whole));
            return Ok(results);
        }
        before_move();
        let message = format!("closegate land: {}", group_names(&group));
        let moved = ctx.move_base(onto, head, &message)?;
        if let base::Moved::Raced = moved {
            attempts += 1;
            if attempts < ATTEMPTS {
                names = group.iter().map(|(t, _)| t.branch.clone()).collect();
                continue;
            }
        }
        let outcome = Moved {
            head,
            steps: &steps,
            whole: &whole,
        };
        after_move(ctx, &round, moved, &outcome, &mut group, &mut results)?;
        return Ok(results);
    }
}

/// Steps 2 and 3 for a group: compose it in order and check the whole. `None` when a branch was
/// refused and taken out of `group` (a conflict, an uncovered protected path, or the one whose
/// prefix first fails the checks, found by bisection).
fn compose_and_check(
    ctx: &Ctx,
    verifier: &mut Verifier,
    round: &Round,
    group: &mut Vec<(Target, Admitted)>,
    results: &mut Vec<BranchResult>,
) -> Result<Option<(Vec<Step>, Oid, verify::Verified)>> {
    let (steps, head, dropped) = compose_group(ctx, round, group)?;
    if !dropped.is_empty() {
        for (i, f) in dropped.into_iter().rev() {
            let (t, _) = group.remove(i);
            results.push(refused(&t, vec![f]));
        }
        return Ok(None);
    }
    let first = (group[0].0.branch.clone(), group[0].0.slug.clone());
    let first = (first.0.as_str(), first.1.as_str());
    let whole = verifier.verify(&round.session, head, round.onto, first)?;
    if !whole.passed {
        results.push(refuse_breaking(
            verifier,
            (round, &steps[..]),
            group,
            first,
        )?);
        return Ok(None);
    }
    Ok(Some((steps, head, whole)))
}

/// Step 1 for every name of the round, in order: resolved again, skipped when the base already
/// holds its work, gated with the one question; the admitted ones are returned, the others go
/// into `results`. `names` is emptied.
fn admit(
    ctx: &Ctx,
    round: &Round,
    names: &mut Vec<String>,
    results: &mut Vec<BranchResult>,
) -> Vec<(Target, Admitted)> {
    let mut admitted = Vec::new();
    for name in names.drain(..) {
        let t = match target::target(ctx.repo, &name, round.status_file()) {
            Ok(t) => t,
            Err(err) => {
                let msg = format!("`{name}` can no longer be landed: {err:#}");
                let gone = Target {
                    branch: name.clone(),
                    tip: Oid::zero(),
                    commit: Oid::zero(),
                    worktree: None,
                    slug: name.rsplit('/').next().unwrap_or(&name).to_string(),
                    abstract_line: None,
                    state: None,
                };
                results.push(refused(
                    &gone,
                    vec![Finding::new(Code::LandNotVerified, msg)],
                ));
                continue;
            }
        };
        if target::is_merged(ctx.repo, &round.book, &t, round.onto, round.status_file()) {
            results.push(BranchResult {
                outcome: Outcome::Skipped,
                ..refused(&t, Vec::new())
            });
            continue;
        }
        let gate = target::gate(ctx.repo, &round.book, &round.under, &t, round.status_file());
        match gate {
            Ok(a) => admitted.push((t, a)),
            Err(finding) => results.push(refused(&t, vec![finding])),
        }
    }
    admitted
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

/// Compose every branch of `group` in landing order onto the round's base tip; a branch that
/// conflicts (or touches a protected path its verdict did not cover) is returned with its
/// finding, by index.
#[allow(clippy::type_complexity)]
fn compose_group(
    ctx: &Ctx,
    round: &Round,
    group: &[(Target, Admitted)],
) -> Result<(Vec<Step>, Oid, Vec<(usize, Finding)>)> {
    let onto = round.onto;
    let mut steps: Vec<Step> = Vec::new();
    let mut head = onto;
    let mut dropped = Vec::new();
    for (i, (t, admitted)) in group.iter().enumerate() {
        if let Some(f) = protected_gate(ctx, round, t, admitted)? {
            dropped.push((i, f));
            continue;
        }
        let composed = compose::compose(ctx.repo, head, t, ctx.req.strategy, round.status_file())?;
        match composed {
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
    head: Oid,
    steps: &'a [Step],
    whole: &'a verify::Verified,
}

/// Record the landed branches once the base moved, or refuse the batch with the reason it did not.
fn after_move(
    ctx: &Ctx,
    round: &Round,
    moved: base::Moved,
    m: &Moved,
    group: &mut Vec<(Target, Admitted)>,
    results: &mut Vec<BranchResult>,
) -> Result<()> {
    let finding = |code: Code, msg: String| Finding::new(code, msg);
    let why = match moved {
        base::Moved::Done(stuck) => {
            for (step, (t, a)) in m.steps.iter().zip(group.iter()) {
                record(ctx, round, t, a, step.composed, m.head, m.whole)?;
                let mut r = landed(t, step.composed, &m.whole.runs);
                r.after.base_stuck = stuck.clone();
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
    (round, steps): (&Round, &[Step]),
    group: &mut Vec<(Target, Admitted)>,
    first: (&str, &str),
) -> Result<BranchResult> {
    let breaking = bisect(verifier, round, steps, first)?;
    let (t, _) = group.remove(steps[breaking].index);
    let prefix = verifier.verify(&round.session, steps[breaking].composed, round.onto, first)?;
    let mut r = refused(&t, vec![check_failed(&t, &prefix)]);
    r.checks = prefix.runs.clone();
    r.composed = Some(steps[breaking].composed);
    Ok(r)
}

/// The first failing prefix (its index in `steps`), knowing the whole batch fails: a binary
/// search over prefixes in landing order, every result reused by tree.
fn bisect(
    verifier: &mut Verifier,
    round: &Round,
    steps: &[Step],
    first: (&str, &str),
) -> Result<usize> {
    let (mut lo, mut hi) = (0, steps.len() - 1);
    while lo < hi {
        let mid = (lo + hi) / 2;
        let prefix = verifier.verify(&round.session, steps[mid].composed, round.onto, first)?;
        if prefix.passed {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// SPEC §22 step 3, §26.2: the protected gate against the round's base tip, under the
/// configuration read there: the one rule `check` applies (`gates::protected_changes`: runner
/// wiring read from the trees, the runner's own configuration, tests inside source files). A
/// protected path the branch's verdict covered — let through by the policy (`integrity`,
/// `modify`) or by an approval — is admitted as it is; any other refuses it. A change that cannot
/// be read is an error, never an admission.
fn protected_gate(
    ctx: &Ctx,
    round: &Round,
    t: &Target,
    admitted: &Admitted,
) -> Result<Option<Finding>> {
    if admitted.approved {
        return Ok(None);
    }
    let Some(merge_base) = ctx.repo.merge_base(round.onto, t.commit) else {
        return Ok(None);
    };
    let changes = ctx.repo.changes(Some(merge_base), t.commit)?;
    // Every hit needs review under the configuration read now (warnings are not hits).
    let (hits, _) =
        crate::gates::protected_changes(&round.session, &changes, merge_base, t.commit)?;
    let mut uncovered: Vec<String> = Vec::new();
    for path in hits.into_iter().map(|h| h.path) {
        if !admitted.covered.contains(&path) && !uncovered.contains(&path) {
            uncovered.push(path);
        }
    }
    if uncovered.is_empty() {
        return Ok(None);
    }
    let msg = format!(
        "`{}` changes protected paths against the current base that its verdict did not cover: \
         {}; run `closegate check` and have a human `closegate approve` it",
        t.branch,
        uncovered.join(", ")
    );
    Ok(Some(Finding::new(Code::LandNotVerified, msg)))
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
        lines.join(" | ")
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

fn group_names(group: &[(Target, Admitted)]) -> String {
    let names: Vec<&str> = group.iter().map(|(t, _)| t.branch.as_str()).collect();
    names.join(", ")
}

/// SPEC §22 step 5, §26.1: the `land` record, once the base has moved: the claim it decides (this
/// branch at this tip) and what it was judged under (the round's configuration, the verdict's
/// contract, the policy).
fn record(
    ctx: &Ctx,
    round: &Round,
    t: &Target,
    a: &Admitted,
    composed: Oid,
    after: Oid,
    v: &verify::Verified,
) -> Result<()> {
    let session = &round.session;
    let report = Report {
        slug: Some(t.slug.clone()),
        commit: Some(t.tip.to_string()),
        branch: Some(t.branch.clone()),
        worktree: t.worktree.as_ref().map(|p| p.display().to_string()),
        verdict: Verdict::Verified,
        state: t.state,
        config: session.config_blob().map(str::to_string),
        contract: a.contract.clone(),
        policy: Some(session.config().policies()),
        provenance: Some(session.provenance()),
        base: Some(ctx.base.clone()),
        base_commit: Some(round.onto.to_string()),
        ..Report::default()
    };
    let fields = LandFields {
        tip: t.tip.to_string(),
        composed: composed.to_string(),
        base_before: round.onto.to_string(),
        base_after: after.to_string(),
        strategy: ctx.req.strategy.as_str().to_string(),
        checks: v.entries.clone(),
        admitted_on: Some(a.ts.clone()),
    };
    let claimed = t.state.map(|s| s.as_str());
    Record::new(&report, claimed, Event::Land(fields)).append(&ctx.repo.common_dir())
}
