//! "Nothing can be lost" (SPEC §7 step 2): every reason not to remove a worktree, as findings.
//!
//! Everything is checked before anything is removed, and every reason is reported together.

use std::os::unix::ffi::OsStringExt;
use std::path::Path;

use anyhow::Result;
use git2::Oid;

use super::handles::Seen;
use crate::catalog::Code;
use crate::finding::Finding;
use crate::repo::{Repo, WorktreeInfo, WorktreeStatus, merged::Merged, safety};

/// What the checks need to know about the worktree and the verdict.
pub struct Ctx<'a> {
    pub repo: &'a Repo,
    pub info: &'a WorktreeInfo,
    /// The directory probed: the worktree itself, or the directory it was renamed aside to.
    pub dir: &'a Path,
    /// `dir` is the renamed-aside directory: a tracked file gone from it and unchanged in the
    /// index is no change (a removal that stopped midway deleted it).
    pub aside: bool,
    /// The status document (repo-relative): exempt from dirty and untracked.
    pub status_file: &'a str,
    /// The commit the gate verified.
    pub verified: Option<Oid>,
    /// The branch the teardown would delete with `--delete-branch`.
    pub branch: Option<&'a str>,
    /// The resolved base.
    pub base: Option<Oid>,
    pub delete_branch: bool,
    /// What closegate's ancestors inside `dir` are: exempt (`teardown`) or holders (`land`).
    pub starters: super::busy::Starters,
}

/// Run every check; the main worktree is refused with the checks that need no gate.
/// Every probe reads the directory now: nothing is taken from a scan made before the checks ran.
pub fn run(ctx: &Ctx) -> Result<Vec<Finding>> {
    run_seen(ctx, None)
}

/// [`run`], the nested repositories judged from `seen` (the last probe's walk of `ctx.dir`)
/// instead of a second walk of the directory.
pub fn run_seen(ctx: &Ctx, seen: Option<&Seen>) -> Result<Vec<Finding>> {
    Ok(probe(ctx, seen, None)?.findings)
}

/// What a probe found: every finding, the status it judged and the processes that hold the
/// directory (each one a `teardown-busy` refusal among the findings).
pub struct Probed {
    pub findings: Vec<Finding>,
    pub status: Option<WorktreeStatus>,
    pub holders: Vec<super::busy::Proc>,
}

/// [`run`] as a teardown's first probe: the status of `ctx.dir` is `scanned` when given — the
/// gate's scan of this directory, made after the last check that ran (no check ran after it,
/// `teardown::fresh_scan`), so no younger than a scan made here — else read now. The status
/// the probe judged is returned with the findings: the escrow written next holds what it names.
pub fn run_first(ctx: &Ctx, scanned: Option<WorktreeStatus>) -> Result<Probed> {
    probe(ctx, None, scanned)
}

fn probe(ctx: &Ctx, seen: Option<&Seen>, scanned: Option<WorktreeStatus>) -> Result<Probed> {
    let info = ctx.info;
    if info.main {
        let msg = format!(
            "{} is the main worktree of the repository; closegate never removes it",
            info.path.display()
        );
        return Ok(Probed {
            findings: main_worktree(ctx, msg),
            status: None,
            holders: Vec::new(),
        });
    }
    let mut findings: Vec<Finding> = locked(info).into_iter().collect();
    findings.extend(operations(info));
    let status = match scanned {
        Some(status) => status,
        None => read_status(ctx)?,
    };
    findings.extend(status_findings(&status));
    let head = ctx.repo.worktree_head(ctx.dir);
    if let Some(head) = head {
        findings.extend(hidden(ctx, head)?);
    }
    findings.extend(nested(ctx, seen)?);
    findings.extend(moved(ctx, head));
    // `closed-without-merge` is no exemption (SPEC §7.2): an unmerged branch is never deleted.
    let unmerged = if ctx.delete_branch {
        unmerged(ctx)?
    } else {
        None
    };
    // The branch is deleted only when merged; an unmerged one is refused above, and its commits
    // are not counted twice.
    let deleting = match (&unmerged, ctx.delete_branch) {
        (None, true) => ctx.branch,
        _ => None,
    };
    findings.extend(unmerged);
    let integrated = deleting.and_then(|b| ctx.repo.branch_tip(b));
    findings.extend(unreachable(
        ctx.repo,
        &ctx.info.admin_dir,
        deleting,
        integrated,
    )?);
    let busy = super::busy::scan(ctx.dir, ctx.starters);
    findings.extend(super::busy::findings(&busy));
    Ok(Probed {
        findings,
        status: Some(status),
        holders: busy.busy,
    })
}

/// The main worktree is never removed; the probes that need no gate report what else would bar it
/// (SPEC §7.4: every reason together). Ones that cannot run here are left out: the refusal stands.
fn main_worktree(ctx: &Ctx, msg: String) -> Vec<Finding> {
    let mut findings = vec![Finding::new(Code::TeardownMainWorktree, msg)];
    findings.extend(operations(ctx.info));
    let status = read_status(ctx).map(|s| status_findings(&s));
    findings.extend(status.unwrap_or_default());
    if let Some(head) = ctx.repo.worktree_head(ctx.dir) {
        findings.extend(hidden(ctx, head).unwrap_or_default());
    }
    findings
}

/// The reasons to keep the registration of a worktree whose directory is gone: its
/// administrative data still holds a lock, an operation's state, and the worktree's HEAD and HEAD
/// reflog, which pruning removes as a teardown would (SPEC §7 step 2).
pub fn registration(repo: &Repo, info: &WorktreeInfo) -> Result<Vec<Finding>> {
    let mut findings: Vec<Finding> = locked(info).into_iter().collect();
    findings.extend(operations(info));
    findings.extend(staged(repo, info));
    findings.extend(unreachable(repo, &info.admin_dir, None, None)?);
    Ok(findings)
}

/// Changes staged in the index of a worktree whose directory is gone: pruning deletes that index,
/// the only thing naming them. An index that cannot be read may hold some: it is refused too.
fn staged(repo: &Repo, info: &WorktreeInfo) -> Vec<Finding> {
    match repo.staged_in(&info.admin_dir) {
        Ok(paths) => paths
            .into_iter()
            .map(|path| {
                let msg = format!(
                    "`{path}` has changes staged in the index of the worktree, whose directory \
                     is gone; pruning would delete that index"
                );
                Finding::new(Code::TeardownDirty, msg).at_path(path)
            })
            .collect(),
        Err(e) => {
            let msg = format!("{e:#}: it may hold staged changes, so it is kept");
            vec![Finding::new(Code::TeardownDirty, msg)]
        }
    }
}

fn locked(info: &WorktreeInfo) -> Option<Finding> {
    let reason = info.locked.as_ref()?;
    let why = if reason.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", reason.trim())
    };
    let msg = format!("the worktree is locked{why}");
    Some(Finding::new(Code::TeardownLocked, msg))
}

/// Commits only the worktree's HEAD or HEAD reflog keep (SPEC §7 step 2). `integrated`: the tip of
/// a branch being deleted because it is merged into the base (by squash, rebase or `land`); its
/// own commits are integrated, not lost (SPEC §7), so they are not counted.
fn unreachable(
    repo: &Repo,
    admin_dir: &Path,
    deleting: Option<&str>,
    integrated: Option<Oid>,
) -> Result<Option<Finding>> {
    let mut lost = repo.unreachable_commits(admin_dir, deleting)?;
    if let Some(tip) = integrated {
        lost.retain(|id| *id != tip && !repo.is_ancestor(*id, tip));
    }
    if lost.is_empty() {
        return Ok(None);
    }
    let shown: Vec<String> = lost.iter().take(10).map(|id| id.to_string()).collect();
    let more = match lost.len() {
        n if n > 10 => format!(" and {} more", n - 10),
        _ => String::new(),
    };
    let msg = format!(
        "{} commit(s) are reached only from the worktree's HEAD or HEAD reflog, which the \
         teardown removes: {}{more}; keep them with `git branch <name> <commit>` (or a tag)",
        lost.len(),
        shown.join(", ")
    );
    Ok(Some(Finding::new(Code::TeardownUnreachableCommits, msg)))
}

fn operations(info: &WorktreeInfo) -> Vec<Finding> {
    safety::operations_in_progress(&info.admin_dir)
        .into_iter()
        .map(|(marker, what)| {
            let msg = format!("{what} is in progress in the worktree ({marker} exists)");
            Finding::new(Code::TeardownOperationInProgress, msg)
        })
        .collect()
}

/// The dirty tracked files and untracked files of `ctx.dir`, read now.
fn read_status(ctx: &Ctx) -> Result<WorktreeStatus> {
    if ctx.aside {
        safety::status_of_dir(ctx.dir, ctx.status_file, true)
    } else {
        ctx.repo.status_of(ctx.dir, ctx.status_file)
    }
}

/// Dirty tracked files and untracked files, one finding per file so every one is named.
fn status_findings(status: &WorktreeStatus) -> Vec<Finding> {
    let dirty = status.dirty.iter().cloned().map(|path| {
        let msg = format!("`{path}` has uncommitted changes");
        Finding::new(Code::TeardownDirty, msg).at_path(path)
    });
    let untracked = status.untracked.iter().cloned().map(|path| {
        let msg = format!("`{path}` is untracked and not ignored");
        Finding::new(Code::TeardownUntracked, msg).at_path(path)
    });
    dirty.chain(untracked).collect()
}

fn hidden(ctx: &Ctx, head: Oid) -> Result<Vec<Finding>> {
    let found = safety::hidden_changes(ctx.dir, &ctx.info.admin_dir, head)?;
    Ok(found
        .into_iter()
        .map(|h| {
            let msg = format!(
                "`{}` is marked {} and differs from the commit",
                h.path, h.flag
            );
            Finding::new(Code::TeardownHiddenChanges, msg).at_path(h.path)
        })
        .collect())
}

fn nested(ctx: &Ctx, seen: Option<&Seen>) -> Result<Vec<Finding>> {
    let found = match seen {
        Some(seen) => {
            let candidates = seen
                .repositories()
                .into_iter()
                .map(|(path, git)| safety::Candidate {
                    path: std::ffi::OsString::from_vec(path).into(),
                    git,
                })
                .collect();
            safety::judge_nested(ctx.dir, candidates)?
        }
        None => safety::nested_repos(ctx.dir)?,
    };
    Ok(found
        .into_iter()
        .map(|n| {
            let msg = format!("`{}` is {}", n.path, n.reason);
            Finding::new(Code::TeardownNestedRepo, msg).at_path(n.path)
        })
        .collect())
}

/// HEAD must be the verified commit, or the single status-only commit after it that the close
/// gate accepts.
fn moved(ctx: &Ctx, head: Option<Oid>) -> Option<Finding> {
    let verified = ctx.verified?;
    if head == Some(verified) || head.is_some_and(|h| is_status_only_child(ctx, verified, h)) {
        return None;
    }
    let now = head.map_or("no commit".to_string(), |h| h.to_string());
    let msg = format!("the worktree's HEAD is {now}, not the verified commit {verified}");
    Some(Finding::new(Code::TeardownMoved, msg))
}

/// `child` is the one commit after `commit` and changes only the status document.
pub fn is_status_only_child(ctx: &Ctx, commit: Oid, child: Oid) -> bool {
    crate::verdict::stands_for(ctx.repo, child, ctx.status_file) == Some(commit)
}

/// `--delete-branch`: the branch's work must be in the base (reachable, or squash/rebase merged).
fn unmerged(ctx: &Ctx) -> Result<Option<Finding>> {
    let Some(branch) = ctx.branch else {
        return Ok(None);
    };
    let Some(tip) = ctx.repo.branch_tip(branch) else {
        return Ok(None);
    };
    let Some(base) = ctx.base else {
        let msg =
            format!("no base resolved, so closegate cannot tell whether `{branch}` is merged");
        return Ok(Some(Finding::new(Code::TeardownUnmerged, msg)));
    };
    let mut merged = ctx.repo.merged_into(base, tip, ctx.status_file)?;
    // A trailing status-only commit holds nothing but the archived document.
    if let Some(verified) = ctx.verified.filter(|v| *v != tip)
        && merged == Merged::No
        && is_status_only_child(ctx, verified, tip)
    {
        merged = ctx.repo.merged_into(base, verified, ctx.status_file)?;
    }
    let landed = || {
        let book = crate::verdict::Book::about(
            ctx.repo,
            &crate::verdict::Claim::on_branch(branch, tip),
            ctx.status_file,
        );
        book.is_ok_and(|book| book.landed(ctx.repo, branch, tip, base))
    };
    if merged.is_merged() || landed() {
        return Ok(None);
    }
    let msg = format!(
        "`{branch}` ({}) is not merged into the base: its tip is not reachable from the base and \
         the base does not hold the same changes, so --delete-branch would lose it; run the \
         teardown without --delete-branch to keep the branch",
        short(tip)
    );
    Ok(Some(Finding::new(Code::TeardownUnmerged, msg)))
}

pub fn short(id: Oid) -> String {
    id.to_string()[..12].to_string()
}
