//! Teardown (SPEC §7): run the gate, check that nothing can be lost, archive the status
//! document, record, then remove the worktree and (on request) its branch.
//!
//! `safety` holds every reason to refuse, `remove` the destructive steps. This module decides
//! and returns what happened as data (`outcome` reads it: how it ended, the refused codes);
//! `cmd::teardown` prints it.

mod background;
pub mod busy;
mod escrow;
mod execute;
mod failpoint;
pub mod handles;
mod outcome;
pub mod remove;
mod resume;
pub mod safety;

pub use outcome::{Ending, work_verdict};

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use git2::Oid;

use crate::catalog::{Code, Severity};
use crate::doc::State;
use crate::finding::{Finding, Gate, Verdict};
use crate::gates::{self, Outcome, Session};
use crate::inputs::{self, GateOptions};
use crate::ledger;
use crate::repo::{self, Repo, WorktreeInfo};
use crate::report::Report;

/// A teardown as asked on the command line.
pub struct Request {
    pub worktree: Option<PathBuf>,
    pub gate: GateOptions,
    pub dry_run: bool,
    pub delete_branch: bool,
    pub allow_unverified: bool,
    /// Write the escrow, then override `teardown-untracked` and `teardown-unreachable-commits`
    /// for what it holds (SPEC §7, §24).
    pub force: bool,
    /// End the processes working inside the worktree (SPEC §24).
    pub reap: bool,
    /// What closegate's ancestors inside the worktree are: exempt (`teardown`, SPEC §24) or
    /// holders (`land`, SPEC §27.4).
    pub starters: busy::Starters,
}

/// Why the gate's verdict lets the teardown proceed (SPEC §7 step 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    Verified,
    /// VERIFIED because an approval for this exact commit downgraded the review findings.
    Approved,
    ClosedWithoutMerge,
    AllowedUnverified,
}

impl Admission {
    pub fn as_str(self) -> &'static str {
        match self {
            Admission::Verified => "verified",
            Admission::Approved => "approved",
            Admission::ClosedWithoutMerge => "closed-without-merge",
            Admission::AllowedUnverified => "allowed-unverified",
        }
    }
}

/// One thing the teardown did, would do, or left in place: `(Verb::Removed, "worktree /x")`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub verb: Verb,
    pub what: String,
}

/// What a teardown step did (or, in a dry run, would do), as the human output words it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Archived,
    Escrowed,
    Ended,
    Removed,
    Removing,
    Deleted,
    Kept,
    Left,
    Nothing,
    WouldArchive,
    WouldEscrow,
    WouldEnd,
    WouldRemove,
    WouldDelete,
    WouldKeep,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Archived => "archived",
            Verb::Escrowed => "escrowed",
            Verb::Ended => "ended",
            Verb::Removed => "removed",
            Verb::Removing => "removing",
            Verb::Deleted => "deleted",
            Verb::Kept => "kept",
            Verb::Left => "left",
            Verb::Nothing => "nothing",
            Verb::WouldArchive => "would archive",
            Verb::WouldEscrow => "would escrow",
            Verb::WouldEnd => "would end",
            Verb::WouldRemove => "would remove",
            Verb::WouldDelete => "would delete",
            Verb::WouldKeep => "would keep",
        }
    }
}

impl std::fmt::Display for Verb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// What a teardown did.
#[derive(Debug, Default)]
pub struct Done {
    /// The gate's report with the teardown's findings (none when no gate could run).
    pub report: Option<Report>,
    /// Why the verdict bars the teardown, when it does.
    pub barred: Option<String>,
    pub steps: Vec<Step>,
    /// Set when the removal stopped midway: what to do about it.
    pub error: Option<String>,
    /// The processes that hold the worktree (each a `teardown-busy` refusal), when it was kept.
    pub holders: Vec<busy::Proc>,
    pub dry_run: bool,
    pub exit: i32,
}

impl Done {
    pub(crate) fn step(&mut self, verb: Verb, what: impl Into<String>) {
        self.steps.push(Step {
            verb,
            what: what.into(),
        });
    }
}

/// Decide whether the verdict admits a teardown.
pub fn admit(report: &Report, allow_unverified: bool) -> Result<Admission, String> {
    let stopped = report.state == Some(State::ClosedWithoutMerge);
    match report.verdict {
        Verdict::Fail => Err("the verdict is FAIL: a refused return is never torn down".into()),
        _ if stopped => Ok(Admission::ClosedWithoutMerge),
        Verdict::Verified if report.approval.is_some() => Ok(Admission::Approved),
        Verdict::Verified => Ok(Admission::Verified),
        Verdict::PendingReview => Err("the verdict is PENDING_REVIEW and no approval exists for \
             this commit: a human runs `closegate approve --by NAME` first"
            .into()),
        Verdict::Unverified if allow_unverified => Ok(Admission::AllowedUnverified),
        Verdict::Unverified => Err(
            "the verdict is UNVERIFIED: pass --allow-unverified to tear \
             down anyway (the record says so)"
                .into(),
        ),
    }
}

/// Run a teardown.
pub fn run(req: &Request) -> Result<Done> {
    let target = match &req.worktree {
        Some(path) => absolute(path)?,
        None => inputs::open(None)?.1,
    };
    if target.join(".git").symlink_metadata().is_err() {
        return resume::leftover(req, &target);
    }
    // One open and one worktree listing serve the main-worktree refusal, the gate and the plan.
    let (repo, root) = inputs::open(Some(&target))?;
    let info = repo.worktree_at(&target);
    if let Some(info) = &info
        && info.main
    {
        return refuse_main(req, &repo, info);
    }
    if req.gate.no_worktree {
        bail!("a teardown needs the worktree itself; --no-worktree does not apply");
    }
    if repo::canonical(&target) != root {
        bail!(
            "{} is inside the worktree {}; pass the worktree's root",
            target.display(),
            root.display()
        );
    }
    let info =
        info.with_context(|| format!("{} is not a registered worktree", target.display()))?;
    let opts = GateOptions {
        admit: Some(info.path.clone()),
        ..req.gate.clone()
    };
    let session = Session::in_repo(repo, root, &opts)?;
    let outcome = gates::evaluate(&session)?;
    if !req.dry_run {
        ledger::record_check(&session.repo().common_dir(), &outcome.report)?;
    }
    decide(req, &session, &outcome, &info)
}

/// The main worktree is never removed: refused before the gate, which could not change that.
fn refuse_main(req: &Request, repo: &Repo, info: &WorktreeInfo) -> Result<Done> {
    let mut report = Report {
        worktree: Some(info.path.display().to_string()),
        ..Report::default()
    };
    let ctx = safety::Ctx {
        repo,
        info,
        dir: &info.path,
        aside: false,
        status_file: crate::config::DEFAULT_STATUS_FILE,
        verified: None,
        branch: None,
        base: None,
        delete_branch: false,
        starters: req.starters,
    };
    report.add_gate(Gate::Teardown, safety::run(&ctx)?);
    report.finish();
    if !req.dry_run {
        let common = repo.common_dir();
        let steps = ledger::Steps {
            deleted: Some(None),
            ..ledger::Steps::default()
        };
        ledger::record_teardown(&common, &report, None, false, steps)?;
    }
    let mut done = Done {
        dry_run: req.dry_run,
        exit: 1,
        ..Done::default()
    };
    done.step(Verb::Kept, format!("worktree {}", info.path.display()));
    done.report = Some(report);
    Ok(done)
}

/// The planned removal.
struct Plan {
    /// The slug the escrow ref is named by: the checked slug, else the worktree's name.
    slug: String,
    worktree: PathBuf,
    admin: PathBuf,
    archive: Option<PathBuf>,
    branch: Branch,
    /// The first probe's scan of the worktree, for the escrow written right after it; `None`:
    /// the escrow reads the worktree itself.
    scanned: Option<crate::repo::WorktreeStatus>,
}

/// What happens to the branch.
enum Branch {
    Delete { name: String, at: Oid },
    Keep { name: Option<String>, why: String },
}

impl Branch {
    /// The branch the teardown deletes, if any.
    fn deleting(&self) -> Option<String> {
        match self {
            Branch::Delete { name, .. } => Some(name.clone()),
            Branch::Keep { .. } => None,
        }
    }
}

fn decide(
    req: &Request,
    session: &Session,
    outcome: &Outcome,
    info: &WorktreeInfo,
) -> Result<Done> {
    let report = &outcome.report;
    let branch = report.branch.clone().or_else(|| {
        let head = info.head_ref()?;
        head.strip_prefix("refs/heads/").map(str::to_string)
    });
    let ctx = safety::Ctx {
        repo: session.repo(),
        info,
        dir: &info.path,
        aside: false,
        status_file: &session.config().status_file,
        verified: outcome.commit,
        branch: branch.as_deref(),
        base: session.base().map(|(_, id)| *id),
        delete_branch: req.delete_branch,
        starters: req.starters,
    };
    let probed = safety::run_first(&ctx, fresh_scan(session, outcome, info))?;
    let (mut findings, status) = (probed.findings, probed.status);
    // `--force` and `--reap` take their codes out of the refusal; what they stand for happens
    // only once everything else admits the teardown (escrow first, SPEC §24).
    let forced = take(&mut findings, req.force, &escrow::FORCIBLE);
    let reaping = take(&mut findings, req.reap, &[Code::TeardownBusy]);
    let admission = admit(report, req.allow_unverified);
    let refused = admission.is_err() || findings.iter().any(|f| f.severity == Severity::Refusal);
    let mut plan = plan(req, session, outcome, info, branch);
    // A process `--reap` ends may write on its way out: the escrow then reads the worktree again.
    plan.scanned = status.filter(|_| reaping.is_empty());
    if refused {
        // Nothing is overridden on a teardown that refuses anyway: every reason is named.
        findings.extend(forced);
        findings.extend(reaping);
        let full = with_teardown(report, findings);
        let done = Done {
            barred: admission.clone().err(),
            dry_run: req.dry_run,
            holders: probed.holders,
            ..Done::default()
        };
        return refuse(req, session, info, &plan, full, done);
    }
    let full = with_teardown(report, findings);
    let admission = admission.unwrap_or(Admission::Verified);
    let forced = forced.iter().map(|f| f.code).collect();
    proceed(req, session, info, &plan, full, admission, forced, reaping)
}

/// The gate's scan of the worktree, for the teardown's first probe, when it is as fresh as a scan
/// made there: the gate scanned this very directory and no check ran after it (every result was
/// reused, or none is configured), so nothing has run since but the gate's own reading of git.
/// A scan older than a check's run is never taken (the probe reads the directory again).
fn fresh_scan(
    session: &Session,
    outcome: &Outcome,
    info: &WorktreeInfo,
) -> Option<crate::repo::WorktreeStatus> {
    let report = &outcome.report;
    let integrity = report.integrity.checks.iter().map(|c| &c.run);
    let ran = report
        .checks
        .iter()
        .chain(integrity)
        .any(|c| c.reused.is_none());
    let here = session.worktree() == info.path;
    outcome.worktree_status.clone().filter(|_| here && !ran)
}

/// Everything admits the teardown: print the plan (dry run), or reap, then escrow and remove.
#[allow(clippy::too_many_arguments)]
fn proceed(
    req: &Request,
    session: &Session,
    info: &WorktreeInfo,
    plan: &Plan,
    full: Report,
    admission: Admission,
    forced: Vec<Code>,
    reaping: Vec<Finding>,
) -> Result<Done> {
    let mut done = Done {
        dry_run: req.dry_run,
        ..Done::default()
    };
    if let Some(archive) = &plan.archive {
        // A link planted on the archive's way, or a directory at it, is an error before anything
        // (SPEC §16 tier 2), in a dry run too.
        remove::check_archive_target(&session.repo().common_dir(), archive)?;
    }
    let mut overrides = Overrides {
        forced,
        ..Overrides::default()
    };
    if req.dry_run {
        let ends = reaping.iter().map(|f| (Verb::WouldEnd, f.message.clone()));
        done.steps
            .extend(ends.map(|(verb, what)| Step { verb, what }));
        plan_steps(&mut done, plan, session);
        done.report = Some(full);
        return Ok(done);
    }
    if !reaping.is_empty() {
        match reap(req, session, info, plan, full.clone(), &mut done)? {
            Ok(reaped) => overrides.reaped = reaped,
            Err(refused) => return Ok(refused),
        }
    }
    done.report = Some(full);
    execute::run(req, session, plan, admission, &overrides, done)
}

/// What `--force` and `--reap` did, for the record.
#[derive(Debug, Default)]
pub(crate) struct Overrides {
    /// The codes `--force` overrode (the escrow holds what they named).
    pub forced: Vec<Code>,
    /// The processes `--reap` ended.
    pub reaped: Vec<busy::Reaped>,
}

/// The gate's report with the teardown's findings added.
fn with_teardown(report: &Report, findings: Vec<Finding>) -> Report {
    let mut full = report.clone();
    full.add_gate(Gate::Teardown, findings);
    full.finish();
    full
}

/// Move the findings with one of `codes` out of `findings` when `on`.
fn take(findings: &mut Vec<Finding>, on: bool, codes: &[Code]) -> Vec<Finding> {
    if !on {
        return Vec::new();
    }
    let (taken, kept) = std::mem::take(findings)
        .into_iter()
        .partition(|f| codes.contains(&f.code) && f.severity == Severity::Refusal);
    *findings = kept;
    taken
}

/// `--reap`: end the processes inside the worktree, then look again; one still there (or a new
/// one) refuses the teardown.
fn reap(
    req: &Request,
    session: &Session,
    info: &WorktreeInfo,
    plan: &Plan,
    mut full: Report,
    done: &mut Done,
) -> Result<Result<Vec<busy::Reaped>, Done>> {
    // A process may start another on its way out (a shell's next command): up to three rounds.
    let mut reaped = Vec::new();
    for _ in 0..3 {
        let found = busy::scan(&info.path, req.starters);
        if found.busy.is_empty() {
            break;
        }
        reaped.extend(busy::reap(&found.busy, std::time::Duration::from_secs(5)));
    }
    for r in &reaped {
        let how = if r.ended { "" } else { ", still running" };
        let what = format!("process {} (`{}`) with {}{how}", r.pid, r.command, r.signal);
        done.step(Verb::Ended, what);
    }
    let again = busy::scan(&info.path, req.starters);
    if again.busy.is_empty() {
        return Ok(Ok(reaped));
    }
    let mut findings = busy::findings(&again);
    findings.retain(|f| f.code == Code::TeardownBusy && f.severity == Severity::Refusal);
    full.add_gate(Gate::Teardown, findings);
    full.finish();
    let mut refused = Done {
        dry_run: req.dry_run,
        steps: std::mem::take(&mut done.steps),
        holders: again.busy,
        ..Done::default()
    };
    if !req.dry_run {
        let steps = ledger::Steps {
            admission: Some(None),
            reaped: Some(reaped.iter().map(busy::Reaped::entry).collect()),
            deleted: Some(None),
            ..ledger::Steps::default()
        };
        ledger::record_teardown(
            &session.repo().common_dir(),
            &full,
            claimed(&full),
            false,
            steps,
        )?;
    }
    refused.step(
        Verb::Kept,
        format!("worktree {} (nothing was removed)", info.path.display()),
    );
    keep_branch_step(&mut refused, &plan.branch, true);
    refused.report = Some(full);
    refused.exit = 1;
    Ok(Err(refused))
}

/// A probe or the verdict refused: record it (unless a dry run) and keep everything.
fn refuse(
    req: &Request,
    session: &Session,
    info: &WorktreeInfo,
    plan: &Plan,
    full: Report,
    mut done: Done,
) -> Result<Done> {
    if !req.dry_run {
        let steps = ledger::Steps {
            admission: Some(None),
            allow_unverified: Some(req.allow_unverified),
            artifacts: Some(full.artifacts.clone()),
            deleted: Some(None),
            ..ledger::Steps::default()
        };
        let common = session.repo().common_dir();
        ledger::record_teardown(&common, &full, claimed(&full), false, steps)?;
    }
    done.step(
        Verb::Kept,
        format!("worktree {} (nothing was removed)", info.path.display()),
    );
    keep_branch_step(&mut done, &plan.branch, true);
    done.report = Some(full);
    done.exit = 1;
    Ok(done)
}

fn plan(
    req: &Request,
    session: &Session,
    outcome: &Outcome,
    info: &WorktreeInfo,
    branch: Option<String>,
) -> Plan {
    let repo = session.repo();
    let head = repo.worktree_head(&info.path);
    let archive = outcome.report.slug.as_ref().map(|slug| {
        let commit = outcome
            .commit
            .or(head)
            .map_or("unborn".into(), |c| c.to_string());
        remove::archive_path(&repo.common_dir(), slug, &commit)
    });
    let base_name = session.base().map(|(name, _)| name.as_str());
    let slug = outcome
        .report
        .slug
        .clone()
        .unwrap_or_else(|| info.name.clone().unwrap_or_else(|| "worktree".into()));
    Plan {
        slug,
        worktree: info.path.clone(),
        admin: info.admin_dir.clone(),
        archive,
        branch: branch_plan(req, repo, info, branch, head, base_name),
        scanned: None,
    }
}

fn branch_plan(
    req: &Request,
    repo: &Repo,
    info: &WorktreeInfo,
    branch: Option<String>,
    head: Option<Oid>,
    base: Option<&str>,
) -> Branch {
    let Some(name) = branch else {
        let why = "HEAD is detached: there is no branch to delete".into();
        return Branch::Keep { name: None, why };
    };
    let keep = |why: String| Branch::Keep {
        name: Some(name.clone()),
        why,
    };
    if !req.delete_branch {
        return keep("pass --delete-branch to delete it".into());
    }
    if Some(name.as_str()) == base {
        return keep("it is the base branch".into());
    }
    let elsewhere = repo.branch_checked_out_elsewhere(&name, &info.path);
    if let Some(other) = elsewhere.first() {
        return keep(format!("it is checked out in {}", other.display()));
    }
    match repo.branch_tip(&name) {
        None => keep("it no longer exists".into()),
        Some(tip) if Some(tip) == head => Branch::Delete { name, at: tip },
        Some(tip) => keep(format!("it points at {tip}, not at the worktree's HEAD")),
    }
}

pub(crate) fn claimed(report: &Report) -> Option<&'static str> {
    report.state.map(|s| s.as_str())
}

fn plan_steps(done: &mut Done, plan: &Plan, session: &Session) {
    let what = format!(
        "worktree {} to {}{}/<n> (its untracked files, changed files and status document, \
         and the commits only its HEAD reflog holds)",
        plan.worktree.display(),
        crate::repo::escrow::PREFIX,
        plan.slug
    );
    done.step(Verb::WouldEscrow, what);
    if let Some(path) = &plan.archive {
        let what = format!("{} to {}", session.config().status_file, path.display());
        done.step(Verb::WouldArchive, what);
        let status_file = &session.config().status_file;
        match remove::read_doc(&plan.worktree, status_file) {
            Ok(Some(bytes)) if Some(bytes.as_slice()) != session.status() => {
                let to = remove::worktree_archive_path(path);
                let what = format!("{status_file} of the worktree to {}", to.display());
                done.step(Verb::WouldArchive, what);
            }
            Ok(_) => {}
            Err(why) => done.step(Verb::WouldKeep, format!("{status_file} ({why})")),
        }
    }
    let what = format!(
        "worktree {} (ignored files with it)",
        plan.worktree.display()
    );
    done.step(Verb::WouldRemove, what);
    done.step(
        Verb::WouldRemove,
        format!("administrative data {}", plan.admin.display()),
    );
    match &plan.branch {
        Branch::Delete { name, at } => {
            done.step(Verb::WouldDelete, format!("branch {name} (at {at})"))
        }
        keep => keep_branch_step(done, keep, false),
    }
}

fn keep_branch_step(done: &mut Done, branch: &Branch, refused: bool) {
    match branch {
        Branch::Keep {
            name: Some(name),
            why,
        } => done.step(Verb::Kept, format!("branch {name}: {why}")),
        Branch::Keep { name: None, why } => done.step(Verb::Kept, why.clone()),
        Branch::Delete { name, .. } if refused => done.step(Verb::Kept, format!("branch {name}")),
        Branch::Delete { .. } => {}
    }
}

/// Report what a removal left behind (exit 2) or nothing (exit 0).
pub(crate) fn finish_left(
    common: &Path,
    report: &Report,
    left: handles::Left,
    worktree: &Path,
    mut done: Done,
) -> Result<Done> {
    if left.is_empty() {
        return Ok(done);
    }
    let paths: Vec<String> = left.iter().map(|(p, _)| p.display().to_string()).collect();
    for (path, why) in &left {
        done.step(Verb::Left, format!("{} ({why})", path.display()));
    }
    let steps = ledger::Steps::left(paths);
    ledger::record_teardown(common, report, claimed(report), false, steps)?;
    done.error = Some(format!(
        "the removal stopped midway: {} path(s) were left in place (listed above): they could not \
         be removed, or they appeared or changed after the last probe and closegate never deletes \
         what it has not seen; move them out or fix that, then run `closegate teardown {}` again \
         to finish",
        left.len(),
        worktree.display()
    ));
    done.exit = 2;
    Ok(done)
}

/// `path` made absolute and canonical; a path that does not exist gets its parent canonicalised.
fn absolute(path: &Path) -> Result<PathBuf> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .context("cannot read the current directory")?
            .join(path)
    };
    if abs.symlink_metadata().is_ok() {
        return Ok(repo::canonical(&abs));
    }
    Ok(match (abs.parent(), abs.file_name()) {
        (Some(parent), Some(name)) => repo::canonical(parent).join(name),
        _ => abs,
    })
}
