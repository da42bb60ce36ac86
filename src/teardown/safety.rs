//! "Nothing can be lost" (SPEC §7 step 2): every reason not to remove a worktree, as findings.
//!
//! Everything is checked before anything is removed, and every reason is reported together.

use anyhow::Result;
use git2::Oid;

use crate::finding::Finding;
use crate::repo::{Repo, WorktreeInfo, WorktreeStatus, merged::Merged, safety};

/// What the checks need to know about the worktree and the verdict.
pub struct Ctx<'a> {
    pub repo: &'a Repo,
    pub info: &'a WorktreeInfo,
    /// The status document (repo-relative): exempt from dirty and untracked.
    pub status_file: &'a str,
    /// The gate's scan of this worktree, when it made one: not repeated.
    pub scanned: Option<&'a WorktreeStatus>,
    /// The commit the gate verified.
    pub verified: Option<Oid>,
    /// The branch the teardown would delete with `--delete-branch`.
    pub branch: Option<&'a str>,
    /// The resolved base.
    pub base: Option<Oid>,
    pub delete_branch: bool,
}

/// Run every check; the main worktree is refused alone (its contents are not ours to judge).
pub fn run(ctx: &Ctx) -> Result<Vec<Finding>> {
    let info = ctx.info;
    if info.main {
        let msg = format!(
            "{} is the main worktree of the repository; closegate never removes it",
            info.path.display()
        );
        return Ok(vec![Finding::new("teardown-main-worktree", msg)]);
    }
    let mut findings = Vec::new();
    if let Some(reason) = &info.locked {
        let why = if reason.is_empty() {
            String::new()
        } else {
            format!(": {}", crate::render::escape(reason.trim()))
        };
        let msg = format!("the worktree is locked{why}");
        findings.push(Finding::new("teardown-locked", msg));
    }
    findings.extend(operations(info));
    findings.extend(status(ctx)?);
    let head = ctx.repo.worktree_head(&info.path);
    if let Some(head) = head {
        findings.extend(hidden(ctx, head)?);
    }
    findings.extend(nested(ctx)?);
    findings.extend(moved(ctx, head));
    if ctx.delete_branch {
        findings.extend(unmerged(ctx)?);
    }
    Ok(findings)
}

fn operations(info: &WorktreeInfo) -> Vec<Finding> {
    safety::operations_in_progress(&info.admin_dir)
        .into_iter()
        .map(|(marker, what)| {
            let msg = format!("{what} is in progress in the worktree ({marker} exists)");
            Finding::new("teardown-operation-in-progress", msg)
        })
        .collect()
}

/// Dirty tracked files and untracked files, one finding per file so every one is named.
fn status(ctx: &Ctx) -> Result<Vec<Finding>> {
    let status = match ctx.scanned {
        Some(status) => status.clone(),
        None => ctx.repo.status_of(&ctx.info.path, ctx.status_file)?,
    };
    let dirty = status.dirty.into_iter().map(|path| {
        let msg = format!("`{}` has uncommitted changes", crate::render::escape(&path));
        Finding::new("teardown-dirty", msg).at_path(path)
    });
    let untracked = status.untracked.into_iter().map(|path| {
        let msg = format!(
            "`{}` is untracked and not ignored",
            crate::render::escape(&path)
        );
        Finding::new("teardown-untracked", msg).at_path(path)
    });
    Ok(dirty.chain(untracked).collect())
}

fn hidden(ctx: &Ctx, head: Oid) -> Result<Vec<Finding>> {
    let found = safety::hidden_changes(&ctx.info.path, head)?;
    Ok(found
        .into_iter()
        .map(|h| {
            let msg = format!(
                "`{}` is marked {} and differs from the commit",
                crate::render::escape(&h.path),
                h.flag
            );
            Finding::new("teardown-hidden-changes", msg).at_path(h.path)
        })
        .collect())
}

fn nested(ctx: &Ctx) -> Result<Vec<Finding>> {
    let found = safety::nested_repos(&ctx.info.path)?;
    Ok(found
        .into_iter()
        .map(|n| {
            let msg = format!("`{}` is {}", crate::render::escape(&n.path), n.reason);
            Finding::new("teardown-nested-repo", msg).at_path(n.path)
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
    Some(Finding::new("teardown-moved", msg))
}

/// `child` is the one commit after `commit` and changes only the status document.
pub fn is_status_only_child(ctx: &Ctx, commit: Oid, child: Oid) -> bool {
    crate::covered::stands_for(ctx.repo, child, ctx.status_file) == Some(commit)
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
        return Ok(Some(Finding::new("teardown-unmerged", msg)));
    };
    let mut merged = ctx.repo.merged_into(base, tip)?;
    // A trailing status-only commit holds nothing but the archived document.
    if let Some(verified) = ctx.verified.filter(|v| *v != tip)
        && merged == Merged::No
        && is_status_only_child(ctx, verified, tip)
    {
        merged = ctx.repo.merged_into(base, verified)?;
    }
    if merged.is_merged() {
        return Ok(None);
    }
    let msg = format!(
        "`{branch}` ({}) is not merged into the base: its tip is not reachable from the base and \
         the base does not hold the same changes",
        short(tip)
    );
    Ok(Some(Finding::new("teardown-unmerged", msg)))
}

pub fn short(id: Oid) -> String {
    id.to_string()[..12].to_string()
}
