//! The destructive half of a teardown whose probes all passed (SPEC §7 steps 2–3): archive,
//! record (naming the aside directory), rename aside, probe again there, remove exactly what that
//! last probe saw, then delete the branch. Each step only after the one before.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use git2::Oid;

use super::handles::{Removal, Seen};
use super::{
    Admission, Branch, Done, Overrides, Plan, Request, Verb, background, claimed, escrow,
    failpoint, finish_left, handles, keep_branch_step, remove, safety,
};
use crate::catalog::Severity;
use crate::finding::{Finding, Gate};
use crate::gates::Session;
use crate::ledger::{self, Steps};
use crate::repo::{Repo, WorktreeInfo, safety::BranchDeletion};
use crate::report::Report;

/// Archive, record, move aside, probe, remove, delete the branch.
pub(super) fn run(
    req: &Request,
    session: &Session,
    plan: &Plan,
    admission: Admission,
    overrides: &Overrides,
    mut done: Done,
) -> Result<Done> {
    let common = session.repo().common_dir();
    let report = done.report.clone().unwrap_or_default();
    let status_file = &session.config().status_file;
    let branch = plan.branch.deleting();
    let ts = crate::record::now_rfc3339();
    let written = write_escrow(session, plan, branch.as_deref(), &ts, &mut done)?;
    archive(session, plan, &mut done)?;
    let aside = remove::aside_path(&plan.worktree, &handles::token());
    let mut steps = removal_steps(req, plan, admission, &report, &aside, status_file);
    escrow_steps(&mut steps, &written, overrides);
    failpoint::step("record");
    ledger::record_teardown_at(&common, &report, claimed(&report), true, steps, ts)?;
    if let Err(err) = remove::move_aside(&plan.worktree, &aside) {
        let steps = Steps::failed(format!("{err:#}"), None);
        ledger::record_teardown(&common, &report, claimed(&report), false, steps)?;
        return Err(err.context("nothing was removed"));
    }
    let info = aside_info(&plan.worktree, &plan.admin);
    let ctx = safety::Ctx {
        repo: session.repo(),
        info: &info,
        dir: &aside,
        aside: true,
        status_file,
        verified: report.commit.as_deref().and_then(|c| Oid::from_str(c).ok()),
        branch: branch.as_deref(),
        base: session.base().map(|(_, id)| *id),
        delete_branch: branch.is_some(),
        starters: req.starters,
    };
    let forced = req.force.then_some(written.commit);
    let probe = probe_forced(&ctx, plan.archive.as_deref(), forced, &mut done);
    let probe = match probe {
        Ok(probe) => probe,
        Err(err) => {
            // Nothing was removed: put the worktree back before reporting the error.
            let back = handles::rename_noreplace(&aside, &plan.worktree);
            let steps = Steps::failed(format!("{err:#}"), Some(back.is_ok()));
            ledger::record_teardown(&common, &report, claimed(&report), false, steps)?;
            return Err(err.context("nothing was removed"));
        }
    };
    if !probe.findings.is_empty() {
        // Nothing is removed: a refused teardown keeps no escrow (SPEC §24).
        let _ = session
            .repo()
            .delete_ref_if_at(&written.refname, written.commit);
        return put_back(&common, report, probe.findings, plan, &aside, done);
    }
    remove_aside(&common, &report, plan, &aside, &probe, done)
}

/// The last probe, on the aside; under `--force` the untracked files and orphan commits the
/// escrow holds no longer refuse. Only refusals are kept: warnings (an exempt process) were
/// reported by the first probe.
fn probe_forced(
    ctx: &safety::Ctx,
    archive: Option<&Path>,
    forced: Option<Oid>,
    done: &mut Done,
) -> Result<Probe> {
    let mut probe = probe_aside(ctx, archive, done)?;
    if let Some(escrow) = forced {
        let findings = std::mem::take(&mut probe.findings);
        probe.findings = escrow::uncovered(ctx, escrow, ctx.branch, findings)?;
    }
    probe.findings.retain(|f| f.severity == Severity::Refusal);
    Ok(probe)
}

/// The record's escrow steps: the ref, its commit, what `--force` and `--reap` did.
fn escrow_steps(steps: &mut Steps, written: &escrow::Written, o: &Overrides) {
    steps.escrow = Some(written.refname.clone());
    steps.escrow_commit = Some(written.commit.to_string());
    steps.escrow_ms = Some(written.ms);
    steps.forced = Some(o.forced.iter().map(|c| c.as_str().to_string()).collect());
    steps.reaped = Some(o.reaped.iter().map(super::busy::Reaped::entry).collect());
}

/// The escrow (SPEC §24), written before anything is archived, recorded or moved: a kill before
/// its ref exists leaves no escrow and nothing removed.
fn write_escrow(
    session: &Session,
    plan: &Plan,
    deleting: Option<&str>,
    ts: &str,
    done: &mut Done,
) -> Result<escrow::Written> {
    failpoint::step("escrow");
    let info = session
        .repo()
        .worktree_at(&plan.worktree)
        .unwrap_or_else(|| aside_info(&plan.worktree, &plan.admin));
    let written = escrow::write(&escrow::Source {
        repo: session.repo(),
        info: &info,
        slug: &plan.slug,
        status_file: &session.config().status_file,
        deleting,
        ts,
        scanned: plan.scanned.as_ref(),
    })
    .context("cannot write the escrow; nothing was removed")?;
    done.step(
        Verb::Escrowed,
        format!(
            "worktree {} to {} (commit {})",
            plan.worktree.display(),
            written.refname,
            written.commit
        ),
    );
    Ok(written)
}

/// Delete the branch when asked (compare-and-delete), then remove the probed aside and the
/// administrative data. The branch goes first (SPEC §26.2): every probe has passed, the escrow
/// holds what the removal takes and `--delete-branch` was admitted only for a branch the base
/// holds, so nothing waits on the files and a large worktree is removed in the background.
fn remove_aside(
    common: &Path,
    report: &Report,
    plan: &Plan,
    aside: &Path,
    probe: &Probe,
    mut done: Done,
) -> Result<Done> {
    let removal = probe.removal();
    if matches!(plan.branch, Branch::Delete { .. }) {
        delete_branch(common, &plan.branch, &mut done, report)?;
    }
    if probe.seen.len() >= background::FROM {
        let work = || {
            let left = remove::finish(aside, Some(&plan.admin), &removal);
            // What is left is recorded (`incomplete`), for `closegate teardown` to finish.
            let _ = finish_left(common, report, left, &plan.worktree, Done::default());
        };
        if let Ok(pid) = background::spawn(work) {
            let what = format!(
                "worktree {} (ignored files with it) from {}, then its administrative data {}, \
                 in the background (process {pid}); anything that changes meanwhile is left and \
                 recorded, and `closegate teardown {}` finishes an interrupted removal",
                plan.worktree.display(),
                aside.display(),
                plan.admin.display(),
                plan.worktree.display()
            );
            done.step(Verb::Removing, what);
            if !matches!(plan.branch, Branch::Delete { .. }) {
                keep_branch_step(&mut done, &plan.branch, false);
            }
            return Ok(done);
        }
    }
    let left = remove::finish(aside, Some(&plan.admin), &removal);
    let what = format!(
        "worktree {} (ignored files with it)",
        plan.worktree.display()
    );
    if left.is_empty() {
        done.step(Verb::Removed, what);
        let admin = format!("administrative data {}", plan.admin.display());
        done.step(Verb::Removed, admin);
        if !matches!(plan.branch, Branch::Delete { .. }) {
            keep_branch_step(&mut done, &plan.branch, false);
        }
    } else if !matches!(plan.branch, Branch::Delete { .. }) {
        keep_branch_step(&mut done, &plan.branch, true);
    }
    finish_left(common, report, left, &plan.worktree, done)
}

/// Archive the status document (and the worktree's own, when another one was judged).
fn archive(session: &Session, plan: &Plan, done: &mut Done) -> Result<()> {
    let status_file = &session.config().status_file;
    if let Some(path) = &plan.archive {
        failpoint::step("archive");
        remove::archive(
            &session.repo().common_dir(),
            path,
            session.status().unwrap_or_default(),
        )?;
        done.step(
            Verb::Archived,
            format!("{status_file} to {}", path.display()),
        );
        // A document given with --status or --rev leaves the worktree's own one to archive too;
        // one that cannot be read now is kept by the probe on the aside.
        if let Ok(Some(to)) = archive_worktree_doc(
            &session.repo().common_dir(),
            &plan.worktree,
            status_file,
            path,
        ) {
            let what = format!("{status_file} of the worktree to {}", to.display());
            done.step(Verb::Archived, what);
        }
    }
    Ok(())
}

/// The steps of the `teardown` record written before anything is moved.
fn removal_steps(
    req: &Request,
    plan: &Plan,
    admission: Admission,
    report: &Report,
    aside: &Path,
    status_file: &str,
) -> Steps {
    let (branch, branch_tip) = match &plan.branch {
        Branch::Delete { name, at } => (Some(name.clone()), Some(at.to_string())),
        Branch::Keep { .. } => (None, None),
    };
    Steps {
        admission: Some(Some(admission.as_str().to_string())),
        allow_unverified: Some(req.allow_unverified),
        archive: Some(plan.archive.as_ref().map(|p| p.display().to_string())),
        artifacts: Some(report.artifacts.clone()),
        aside: Some(aside.display().to_string()),
        status_file: Some(status_file.to_string()),
        deleted: Some(Some(ledger::Deleted {
            worktree: Some(plan.worktree.display().to_string()),
            admin: plan.admin.display().to_string(),
            branch: Some(branch),
            branch_tip: Some(branch_tip),
        })),
        ..Steps::default()
    }
}

/// The worktree as seen through its administrative directory, for the probes on its aside.
pub(super) fn aside_info(worktree: &Path, admin: &Path) -> WorktreeInfo {
    WorktreeInfo {
        path: worktree.to_path_buf(),
        name: admin.file_name().map(|n| n.to_string_lossy().into_owned()),
        main: false,
        exists: false,
        locked: std::fs::read_to_string(admin.join("locked")).ok(),
        admin_dir: admin.to_path_buf(),
    }
}

/// What the last probe saw and judged.
pub(super) struct Probe {
    pub seen: Seen,
    pub findings: Vec<Finding>,
    /// Entries to leave in place, with why.
    pub keep: HashMap<Vec<u8>, String>,
}

impl Probe {
    pub fn removal(&self) -> Removal<'_> {
        Removal {
            seen: &self.seen,
            keep: self.keep.clone(),
            hold: HashMap::from([(b".git".to_vec(), ())]),
        }
    }
}

/// The last probe, on the renamed-aside directory. The walk comes first: an entry that changes
/// after it no longer matches what it recorded and is left; an entry the probes below judge was
/// there when the walk ran, or appeared later and is not in the walk.
pub(super) fn probe_aside(
    ctx: &safety::Ctx,
    archive: Option<&Path>,
    done: &mut Done,
) -> Result<Probe> {
    let seen = Seen::walk(ctx.dir)
        .with_context(|| format!("cannot read the directory {}", ctx.dir.display()))?;
    let findings = safety::run_seen(ctx, Some(&seen))?;
    let mut keep = HashMap::new();
    let doc = ctx.status_file;
    let outcome = match archive {
        Some(archive) => archive_worktree_doc(&ctx.repo.common_dir(), ctx.dir, doc, archive),
        None => match remove::read_doc(ctx.dir, doc) {
            Ok(Some(_)) => Err("no archive to compare it with".to_string()),
            Ok(None) => Ok(None),
            Err(why) => Err(why),
        },
    };
    match outcome {
        Ok(Some(to)) => {
            done.step(
                Verb::Archived,
                format!("{doc} of the worktree to {}", to.display()),
            );
        }
        Ok(None) => {}
        Err(why) => {
            let why = format!("the status document was not archived: {why}");
            keep.insert(doc.as_bytes().to_vec(), why);
        }
    }
    Ok(Probe {
        seen,
        findings,
        keep,
    })
}

/// Archive the status document found in `dir` as `<commit>.worktree.md` when it differs from both
/// archived copies. `Ok(Some(path))` when it was archived now, `Ok(None)` when there is nothing
/// to archive, `Err` when it cannot be (it must then be kept).
pub(super) fn archive_worktree_doc(
    common_dir: &Path,
    dir: &Path,
    status_file: &str,
    archive: &Path,
) -> std::result::Result<Option<PathBuf>, String> {
    let Some(bytes) = remove::read_doc(dir, status_file)? else {
        return Ok(None);
    };
    let copy = remove::worktree_archive_path(archive);
    let archived = [archive, copy.as_path()]
        .iter()
        .any(|p| std::fs::read(p).is_ok_and(|b| b == bytes));
    if archived {
        return Ok(None);
    }
    failpoint::step("archive the worktree's document");
    remove::archive(common_dir, &copy, &bytes).map_err(|e| format!("{e:#}"))?;
    Ok(Some(copy))
}

/// The last probe found something: nothing was removed, so the worktree goes back where it was
/// and the teardown is refused (or, if it cannot go back, the aside is reported left).
fn put_back(
    common: &Path,
    report: Report,
    findings: Vec<Finding>,
    plan: &Plan,
    aside: &Path,
    mut done: Done,
) -> Result<Done> {
    let mut full = report;
    full.add_gate(Gate::Teardown, findings);
    full.finish();
    let back = handles::rename_noreplace(aside, &plan.worktree);
    let steps = Steps {
        admission: Some(None),
        aside: Some(aside.display().to_string()),
        moved_back: Some(back.is_ok()),
        deleted: Some(None),
        ..Steps::default()
    };
    ledger::record_teardown(common, &full, claimed(&full), false, steps)?;
    done.report = Some(full);
    done.exit = 1;
    match back {
        Ok(()) => done.step(
            Verb::Kept,
            format!(
                "worktree {} (moved back; nothing was removed)",
                plan.worktree.display()
            ),
        ),
        Err(e) => {
            done.step(Verb::Left, format!("{} ({e})", aside.display()));
            done.error = Some(format!(
                "the worktree could not be moved back from {}: move it back by hand",
                aside.display()
            ));
            done.exit = 2;
        }
    }
    keep_branch_step(&mut done, &plan.branch, true);
    Ok(done)
}

/// Compare-and-delete the branch; a branch that moved is kept and the record says so.
fn delete_branch(common: &Path, branch: &Branch, done: &mut Done, report: &Report) -> Result<()> {
    let Branch::Delete { name, at } = branch else {
        keep_branch_step(done, branch, false);
        return Ok(());
    };
    failpoint::step("delete the branch");
    let repo = Repo::discover(common)?;
    match repo.delete_branch_if_at(name, *at)? {
        BranchDeletion::Deleted => done.step(Verb::Deleted, format!("branch {name} (was {at})")),
        BranchDeletion::Moved(now) => {
            let now = now.map_or("nowhere (deleted)".into(), |id| id.to_string());
            let why = format!("it moved from the verified {at} to {now}, so it was not deleted");
            done.step(Verb::Kept, format!("branch {name}: {why}"));
            let steps = Steps {
                branch_kept: Some(why),
                ..Steps::default()
            };
            ledger::record_teardown(common, report, claimed(report), true, steps)?;
        }
    }
    Ok(())
}
