//! A teardown of a path that is no live worktree: finish a removal that stopped midway, prune a
//! registration whose directory is gone (as `git worktree prune` would), or say that the worktree
//! was torn down already.
//!
//! A removal that stopped midway is found from the worktree path alone: its aside directory is a
//! sibling (`.<name>.closegate-removing-<token>`) whose `.git` file (or, at the very end,
//! `<aside>.git`) names the repository, whatever the current directory. It is finished only when
//! that repository's record names exactly that aside for exactly this worktree; a sibling no
//! record names is never touched.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use git2::Oid;

use super::execute::{aside_info, probe_aside};
use super::handles::{Left, Removal, Seen};
use super::{Done, Request, Verb, finish_left, remove, safety};
use crate::finding::{Gate, Verdict};
use crate::ledger::{self, Record, Steps};
use crate::record;
use crate::repo::{Repo, WorktreeInfo};
use crate::report::Report;

/// The path is no live worktree: finish a removal that stopped midway, prune a registration whose
/// directory is gone, or say that it was torn down already.
pub fn leftover(req: &Request, target: &Path) -> Result<Done> {
    let mut done = Done {
        dry_run: req.dry_run,
        ..Done::default()
    };
    let mut resumed = false;
    for aside in asides(target) {
        match recorded(target, &aside)? {
            Some((repo, prior)) => {
                done = resume(req, &repo, &prior, target, &aside, done)?;
                resumed = true;
            }
            None => done.step(
                Verb::Kept,
                format!("{} (no teardown record names it)", aside.display()),
            ),
        }
    }
    if resumed {
        return Ok(done);
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let repo = Repo::discover(&cwd).with_context(|| {
        format!(
            "{} is no worktree, and no teardown of it is left to finish",
            target.display()
        )
    })?;
    let common = repo.common_dir();
    let prior = ledger::last_removal(&common, &target.display().to_string())?;
    if let Some(info) = repo.worktree_at(target) {
        return prune(req, &repo, &info, prior);
    }
    if target.is_dir()
        && let Some(root) = Repo::discover(target).ok().and_then(|r| r.workdir())
    {
        bail!(
            "{} is inside the worktree {}; pass the worktree's root",
            target.display(),
            root.display()
        );
    }
    let Some(prior) = prior else {
        bail!("{} is not a worktree of this repository", target.display());
    };
    let at = &prior.ts;
    done.step(
        Verb::Nothing,
        format!("{} was torn down at {at}", target.display()),
    );
    Ok(done)
}

/// The aside directories of `target` (from either their own name or their `<aside>.git` file).
fn asides(target: &Path) -> Vec<PathBuf> {
    let (Some(parent), prefix) = (target.parent(), remove::aside_prefix(target)) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let token = name.strip_prefix(&prefix)?;
            let token = token.strip_suffix(".git").unwrap_or(token);
            let hex = token.len() == 16 && token.bytes().all(|b| b.is_ascii_hexdigit());
            hex.then(|| remove::aside_path(target, token))
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The administrative directory the aside's `.git` file (or `<aside>.git`) names.
fn admin_of(aside: &Path) -> Option<PathBuf> {
    [aside.join(".git"), remove::breadcrumb(aside)]
        .into_iter()
        .find_map(|link| crate::repo::safety::gitdir_line(&link))
        .map(|dir| aside.join(dir))
}

/// Whether the administrative directory `admin` belongs to the worktree being torn down (SPEC §7
/// step 2): its `gitdir` names the recorded aside or the worktree itself, and no live worktree
/// uses it. An aside's `.git` file is the agent's to write: it may name another worktree's
/// administrative directory, which must never be removed.
fn admin_is_ours(repo: &Repo, admin: &Path, target: &Path, aside: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(admin.join("gitdir")) else {
        return false;
    };
    let named = Path::new(text.trim_end_matches(['\n', '\r']));
    let names = |dir: &Path| same_path(named, &dir.join(".git"));
    if !(names(target) || names(aside)) {
        return false;
    }
    let admin_c = crate::repo::canonical(admin);
    !repo.worktrees().iter().any(|w| {
        w.exists
            && !w.main
            && crate::repo::canonical(&w.admin_dir) == admin_c
            && !same_path(&w.path, target)
            && !same_path(&w.path, aside)
    })
}

/// Two paths naming one place: compared with their deepest existing ancestor resolved (the
/// worktree itself, and so its `.git`, may be gone).
fn same_path(a: &Path, b: &Path) -> bool {
    fn resolve(p: &Path) -> PathBuf {
        let mut tail = Vec::new();
        let mut here = p;
        loop {
            if let Ok(real) = std::fs::canonicalize(here) {
                return tail.iter().rev().fold(real, |acc, n| acc.join(n));
            }
            match (here.parent(), here.file_name()) {
                (Some(parent), Some(name)) => {
                    tail.push(name.to_os_string());
                    here = parent;
                }
                _ => return p.to_path_buf(),
            }
        }
    }
    a == b || resolve(a) == resolve(b)
}

/// The common directory of an administrative directory `<common>/worktrees/<name>`, gone or not.
fn common_of(admin: &Path) -> Option<PathBuf> {
    if let Ok(rel) = std::fs::read_to_string(admin.join("commondir")) {
        return Some(admin.join(rel.trim_end()));
    }
    let worktrees = admin.parent()?;
    (worktrees.file_name()? == "worktrees").then(|| worktrees.parent().map(Path::to_path_buf))?
}

/// The repository and the teardown record that named `aside` for `target`, if any.
fn recorded(target: &Path, aside: &Path) -> Result<Option<(Repo, Record)>> {
    let Some(common) = admin_of(aside).as_deref().and_then(common_of) else {
        return Ok(None);
    };
    let Ok(repo) = Repo::discover(&common) else {
        return Ok(None);
    };
    let (want_aside, want_wt) = (aside.display().to_string(), target.display().to_string());
    // Only records a deciding reader may use: authenticated where a record key exists (SPEC §7
    // step 2), so an unsigned line cannot send a resume at a planted aside.
    let records = record::read_authentic(&repo.common_dir())?;
    let prior = records.iter().rev().filter_map(Record::read).find(|r| {
        r.removal()
            .is_some_and(|t| t.steps.aside.as_deref() == Some(want_aside.as_str()))
            && r.worktree.as_deref() == Some(want_wt.as_str())
    });
    Ok(prior.map(|p| (repo, p)))
}

/// Finish the teardown that moved `target` to `aside`: probe again, remove what the probe saw,
/// then the administrative data and the last files.
fn resume(
    req: &Request,
    repo: &Repo,
    prior: &Record,
    target: &Path,
    aside: &Path,
    mut done: Done,
) -> Result<Done> {
    let common = repo.common_dir();
    let what = format!("{} (left by the teardown at {})", aside.display(), prior.ts);
    let report = report_from(prior, target);
    let admin = admin_of(aside).filter(|a| a.is_dir() && admin_is_ours(repo, a, target, aside));
    let gitlink = aside.join(".git").symlink_metadata().is_ok();
    let only = match (&admin, gitlink) {
        (Some(_), true) => only_gitlink(aside)?,
        _ => None,
    };
    if req.dry_run {
        let probe_at = admin.as_deref().filter(|_| gitlink && only.is_none());
        let probe = dry_probe(repo, prior, target, aside, probe_at, &report)?;
        if probe.is_empty() {
            done.step(Verb::WouldRemove, what);
            return Ok(done);
        }
        return refused(req, &common, prior, report, probe, aside, done);
    }
    let left = match (&admin, gitlink, only) {
        (Some(admin), true, Some(seen)) => {
            // Only the `.git` file is left: the administrative data goes next. A kill while it
            // was being removed may have left it half gone, so nothing is probed through it.
            // The walk that found only `.git` is what the removal goes by.
            finish_gitlink(aside, Some(admin), &seen)
        }
        (Some(admin), true, None) => {
            match probe_again(repo, prior, target, aside, admin, &report, &mut done)? {
                Ok(left) => left,
                Err(findings) => {
                    return refused(req, &common, prior, report, findings, aside, done);
                }
            }
        }
        _ if aside.is_dir() => {
            // The administrative data is gone: only the `.git` file may still be removed.
            let seen = Seen::root_only(aside)
                .with_context(|| format!("cannot read the directory {}", aside.display()))?;
            finish_gitlink(aside, None, &seen)
        }
        _ => {
            let mut left = Left::new();
            remove::finalize(aside, &mut left);
            left
        }
    };
    if left.is_empty() {
        let steps = Steps::resumed(aside.display().to_string());
        ledger::record_teardown(&common, &report, prior.claimed.as_deref(), true, steps)?;
        done.step(Verb::Removed, what);
    }
    finish_left(&common, &report, left, target, done)
}

/// The probes a resumed run would make on the aside (when it probes: `admin` given), without
/// archiving or removing anything.
fn dry_probe(
    repo: &Repo,
    prior: &Record,
    target: &Path,
    aside: &Path,
    admin: Option<&Path>,
    report: &Report,
) -> Result<Vec<crate::finding::Finding>> {
    let Some(admin) = admin else {
        return Ok(Vec::new());
    };
    let ctx = probe_ctx(repo, prior, target, aside, admin, report);
    let seen = Seen::walk(aside)
        .with_context(|| format!("cannot read the directory {}", aside.display()))?;
    let findings = safety::run_seen(&ctx.ctx(), Some(&seen))?;
    forced_findings(&ctx.ctx(), prior, findings)
}

/// A teardown made under `--force` is resumed under it too, for what its escrow holds (SPEC §24):
/// an untracked file the escrow holds byte for byte, or orphan commits it reaches, no longer
/// refuse; only refusals are kept (an exempt process is reported by the first run).
fn forced_findings(
    ctx: &safety::Ctx,
    prior: &Record,
    findings: Vec<crate::finding::Finding>,
) -> Result<Vec<crate::finding::Finding>> {
    let steps = prior.removal().map(|t| &*t.steps);
    let forced = steps.is_some_and(Steps::was_forced);
    let escrow = steps
        .and_then(|s| s.escrow_commit.as_deref())
        .and_then(|c| Oid::from_str(c).ok());
    let mut findings = match escrow.filter(|_| forced) {
        Some(escrow) => super::escrow::uncovered(ctx, escrow, None, findings)?,
        None => findings,
    };
    findings.retain(|f| f.severity == crate::catalog::Severity::Refusal);
    Ok(findings)
}

/// Remove what `seen` found of the aside, holding its `.git` file for last, then `admin`.
fn finish_gitlink(aside: &Path, admin: Option<&Path>, seen: &Seen) -> Left {
    let removal = Removal {
        seen,
        keep: Default::default(),
        hold: [(b".git".to_vec(), ())].into(),
    };
    remove::finish(aside, admin, &removal)
}

/// What probing an aside needs, owned (the context borrows it).
struct ProbeCtx<'a> {
    repo: &'a Repo,
    info: WorktreeInfo,
    aside: &'a Path,
    status_file: String,
    verified: Option<Oid>,
}

impl ProbeCtx<'_> {
    fn ctx(&self) -> safety::Ctx<'_> {
        safety::Ctx {
            repo: self.repo,
            info: &self.info,
            dir: self.aside,
            aside: true,
            status_file: &self.status_file,
            verified: self.verified,
            branch: None,
            base: None,
            delete_branch: false,
            starters: super::busy::Starters::Exempt,
        }
    }
}

fn probe_ctx<'a>(
    repo: &'a Repo,
    prior: &Record,
    target: &Path,
    aside: &'a Path,
    admin: &Path,
    report: &Report,
) -> ProbeCtx<'a> {
    let status_file = prior
        .steps()
        .and_then(|s| s.status_file.as_deref())
        .unwrap_or(crate::config::DEFAULT_STATUS_FILE);
    ProbeCtx {
        repo,
        info: aside_info(target, admin),
        aside,
        status_file: status_file.to_string(),
        verified: report.commit.as_deref().and_then(|c| Oid::from_str(c).ok()),
    }
}

/// Probe the aside of an interrupted teardown again and remove it when the probe passes; its
/// findings when it does not (nothing is removed then).
fn probe_again(
    repo: &Repo,
    prior: &Record,
    target: &Path,
    aside: &Path,
    admin: &Path,
    report: &Report,
    done: &mut Done,
) -> Result<Result<Left, Vec<crate::finding::Finding>>> {
    let ctx = probe_ctx(repo, prior, target, aside, admin, report);
    let archive = prior
        .steps()
        .and_then(|s| s.archive.clone().flatten())
        .map(PathBuf::from);
    let mut probe = probe_aside(&ctx.ctx(), archive.as_deref(), done)?;
    probe.findings = forced_findings(&ctx.ctx(), prior, std::mem::take(&mut probe.findings))?;
    if probe.findings.is_empty() {
        Ok(Ok(remove::finish(aside, Some(admin), &probe.removal())))
    } else {
        Ok(Err(probe.findings))
    }
}

/// The probe of a resumed teardown's aside refused it: a refusal like any teardown's (SPEC §7.2:
/// exit 1, the codes named), recorded unless a dry run; the aside is kept for a later run.
fn refused(
    req: &Request,
    common: &Path,
    prior: &Record,
    mut report: Report,
    findings: Vec<crate::finding::Finding>,
    aside: &Path,
    mut done: Done,
) -> Result<Done> {
    report.add_gate(Gate::Teardown, findings);
    report.finish();
    if !req.dry_run {
        let steps = Steps::resumed(aside.display().to_string());
        ledger::record_teardown(common, &report, prior.claimed.as_deref(), false, steps)?;
    }
    done.step(
        Verb::Kept,
        format!(
            "{} (the probe refused it; nothing was removed)",
            aside.display()
        ),
    );
    done.report = Some(report);
    done.exit = 1;
    Ok(done)
}

/// A registered worktree whose directory is gone: remove its administrative data, as prune would.
fn prune(req: &Request, repo: &Repo, info: &WorktreeInfo, prior: Option<Record>) -> Result<Done> {
    let common = repo.common_dir();
    let path = &info.path;
    let mut report = prior
        .as_ref()
        .map_or_else(|| registered_report(repo, info), |p| report_from(p, path));
    let mut done = Done {
        dry_run: req.dry_run,
        ..Done::default()
    };
    if path.exists() && std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_some()) {
        bail!(
            "{} is registered as a worktree but holds files and no .git; closegate cannot judge \
             them: inspect it and remove it by hand, then run the teardown again",
            path.display()
        );
    }
    let findings = safety::registration(repo, info)?;
    if !findings.is_empty() {
        report.add_gate(Gate::Teardown, findings);
        report.finish();
        if !req.dry_run {
            ledger::record_teardown(&common, &report, None, false, Steps::pruned(None))?;
        }
        done.step(
            Verb::Kept,
            format!("the registration of {}", path.display()),
        );
        done.report = Some(report);
        done.exit = 1;
        return Ok(done);
    }
    let what = format!(
        "administrative data {} (its directory is gone)",
        info.admin_dir.display()
    );
    if req.delete_branch {
        done.step(
            Verb::Kept,
            "the branch: closegate deletes a branch only in the teardown that verified it",
        );
    }
    if req.dry_run {
        done.step(Verb::WouldRemove, what);
        return Ok(done);
    }
    let steps = Steps::pruned(Some(info.admin_dir.display().to_string()));
    let claimed = prior.as_ref().and_then(|p| p.claimed.as_deref());
    ledger::record_teardown(&common, &report, claimed, true, steps)?;
    let left = remove_registration(info);
    if left.is_empty() {
        done.step(Verb::Removed, what);
    }
    finish_left(&common, &report, left, path, done)
}

/// The report of a registered worktree no teardown record names: its branch and that tip.
fn registered_report(repo: &Repo, info: &WorktreeInfo) -> Report {
    let branch = info
        .head_ref()
        .and_then(|r| r.strip_prefix("refs/heads/").map(str::to_string));
    let commit = branch
        .as_ref()
        .and_then(|b| repo.branch_tip(b))
        .map(|c| c.to_string());
    Report {
        worktree: Some(info.path.display().to_string()),
        branch,
        commit,
        ..Report::default()
    }
}

/// Remove the (empty) directory of a pruned worktree and its administrative data.
fn remove_registration(info: &WorktreeInfo) -> Left {
    let path = &info.path;
    let mut left = Left::new();
    if path.symlink_metadata().is_ok() {
        // Checked empty before: removing it loses nothing (and never follows a link).
        if let Err(e) = std::fs::remove_dir(path) {
            left.push((path.clone(), e.to_string()));
        }
    }
    remove::remove_admin(&info.admin_dir, &mut left);
    left
}

/// The walk of the aside when it holds nothing but its `.git` file.
fn only_gitlink(aside: &Path) -> Result<Option<Seen>> {
    let seen = Seen::walk(aside)
        .with_context(|| format!("cannot read the directory {}", aside.display()))?;
    Ok(seen.holds_only(b".git").then_some(seen))
}

/// The report fields of an earlier teardown record, for the lines that finish its work.
fn report_from(prior: &Record, worktree: &Path) -> Report {
    Report {
        slug: prior.slug.clone(),
        commit: prior.commit.clone(),
        branch: prior.branch.clone(),
        worktree: Some(worktree.display().to_string()),
        verdict: prior.verdict.unwrap_or(Verdict::Unverified),
        ..Report::default()
    }
}
