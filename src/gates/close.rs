//! Gate `close` (SPEC §4.3): the CLOSE-OK line against the repository, never against prose.

use std::path::Path;

use git2::Oid;

use crate::catalog::Code;
use crate::doc::{CloseLine, StatusDoc};
use crate::finding::{Finding, Severity};
use crate::repo::{self, CommitLookup, Repo};

/// What the close gate needs besides the document.
pub struct Ctx<'a> {
    pub repo: &'a Repo,
    /// The worktree being checked (canonical root).
    pub worktree: &'a Path,
    /// The status document's repo-relative path (exempt from dirty/untracked and "not tip").
    pub status_file: &'a str,
    /// Branch tips being pushed (short name, new value): in a pre-receive hook the pushed value
    /// stands for a branch whose ref does not exist or has not moved yet (SPEC §20).
    pub pushed: &'a [(String, Oid)],
    /// `--no-worktree`: the worktree cannot exist here (CI).
    pub no_worktree: bool,
}

/// What the close gate found.
pub struct Closed {
    /// The commit the close line names, when it exists.
    pub commit: Option<Oid>,
    pub findings: Vec<Finding>,
    /// The scan of the checked worktree, when the gate made one (teardown reuses it).
    pub status: Option<repo::WorktreeStatus>,
}

/// Check the close line against the repository and the worktree it names.
pub fn run(ctx: &Ctx, doc: &StatusDoc, close: &CloseLine) -> Closed {
    let mut findings = Vec::new();
    let commit = resolve_commit(ctx.repo, close, &mut findings);
    let pushed = ctx.pushed.iter().find(|(name, _)| *name == close.branch);
    let tip = pushed
        .map(|(_, id)| *id)
        .or_else(|| ctx.repo.branch_tip(&close.branch));
    if tip.is_none() {
        let msg = format!("no branch `refs/heads/{}` in this repository", close.branch);
        findings.push(Finding::new(Code::CloseBranchUnknown, msg).at_line(close.line));
    }
    if let (Some(commit), Some(tip)) = (commit, tip) {
        findings.extend(branch_position(ctx, close, commit, tip));
    }
    if let Some(commit) = commit {
        findings.extend(last_commit(ctx.repo, doc, commit));
    }
    let (more, status) = worktree(ctx, close);
    findings.extend(more);
    Closed {
        commit,
        findings,
        status,
    }
}

fn resolve_commit(repo: &Repo, close: &CloseLine, findings: &mut Vec<Finding>) -> Option<Oid> {
    let (code, msg) = match repo.lookup_commit(&close.commit) {
        CommitLookup::Found(id) => return Some(id),
        CommitLookup::Unknown => (
            Code::CloseCommitUnknown,
            format!("no commit `{}` in this repository", close.commit),
        ),
        CommitLookup::NotACommit(kind) => (
            Code::CloseCommitUnknown,
            format!("`{}` names a {kind}, not a commit", close.commit),
        ),
        CommitLookup::Ambiguous => (
            Code::CloseCommitAmbiguous,
            format!(
                "`{}` matches several objects; write more digits of the commit id",
                close.commit
            ),
        ),
    };
    findings.push(Finding::new(code, msg).at_line(close.line));
    None
}

/// `close-commit-not-on-branch` / `close-commit-not-tip` (one trailing status-only commit allowed).
fn branch_position(ctx: &Ctx, close: &CloseLine, commit: Oid, tip: Oid) -> Option<Finding> {
    let repo = ctx.repo;
    if commit == tip {
        return None;
    }
    let branch = &close.branch;
    if !repo.is_ancestor(commit, tip) {
        let msg = format!(
            "commit {} is not reachable from `{branch}` (tip {})",
            short(commit),
            short(tip)
        );
        return Some(Finding::new(Code::CloseCommitNotOnBranch, msg).at_line(close.line));
    }
    if is_status_only_commit(ctx, commit, tip) {
        return None;
    }
    let ahead = repo.count_commits(Some(commit), tip).unwrap_or(0);
    let msg = format!(
        "`{branch}` has moved {ahead} commit(s) past {} to {}; the close line must name the tip",
        short(commit),
        short(tip)
    );
    Some(Finding::new(Code::CloseCommitNotTip, msg).at_line(close.line))
}

/// Exactly one commit after `commit` that changes only the status document (the same rule the
/// hook, `board` and teardown use: `crate::covered`).
fn is_status_only_commit(ctx: &Ctx, commit: Oid, tip: Oid) -> bool {
    crate::verdict::stands_for(ctx.repo, tip, ctx.status_file) == Some(commit)
}

/// `close-last-commit-mismatch`: `last commit` must name the same commit with its summary.
fn last_commit(repo: &Repo, doc: &StatusDoc, commit: Oid) -> Option<Finding> {
    let last = doc.last_commit.as_ref()?;
    let full = commit.to_string();
    let msg = if !full.starts_with(&last.sha.to_ascii_lowercase()) {
        format!(
            "`last commit` names {} but the close line names {}",
            last.sha,
            short(commit)
        )
    } else {
        let summary = repo.summary(commit).unwrap_or_default();
        if summary == last.subject {
            return None;
        }
        format!(
            "`last commit` subject {:?} differs from the commit's summary {:?}",
            last.subject, summary
        )
    };
    Some(Finding::new(Code::CloseLastCommitMismatch, msg).at_line(last.line))
}

/// The worktree checks: registered, the one checked, on the branch, clean, untracked.
fn worktree(ctx: &Ctx, close: &CloseLine) -> (Vec<Finding>, Option<repo::WorktreeStatus>) {
    let named = Path::new(&close.worktree);
    let at = |code: Code, msg: String| Finding::new(code, msg).at_line(close.line);
    if ctx.no_worktree {
        if named.is_dir() {
            return (Vec::new(), None);
        }
        let msg = format!(
            "worktree {} is not on this machine (not checked: --no-worktree)",
            close.worktree
        );
        return (
            vec![at(Code::CloseWorktreeAbsent, msg).with_severity(Severity::Warning)],
            None,
        );
    }
    let Some(info) = ctx.repo.worktree_at(named) else {
        let msg = format!("{} is not a worktree of this repository", close.worktree);
        return (vec![at(Code::CloseWorktreeUnknown, msg)], None);
    };
    if !info.exists {
        let msg = format!(
            "worktree {} is registered but not on this machine",
            close.worktree
        );
        return (vec![at(Code::CloseWorktreeAbsent, msg)], None);
    }
    if info.path != ctx.worktree {
        let msg = format!(
            "the close line names {} but the worktree checked is {}",
            info.path.display(),
            ctx.worktree.display()
        );
        return (vec![at(Code::CloseWorktreeMismatch, msg)], None);
    }
    let mut findings = Vec::new();
    let want = format!("refs/heads/{}", close.branch);
    let head = info.head_ref();
    if head.as_deref() != Some(want.as_str()) {
        let found = head.unwrap_or_else(|| "a detached HEAD".into());
        findings.push(at(
            Code::CloseWorktreeBranch,
            format!("the worktree's HEAD is {found}, expected {want}"),
        ));
    }
    match ctx.repo.status_of(&info.path, ctx.status_file) {
        Ok(status) => {
            findings.extend(status_findings(&status, close.line));
            (findings, Some(status))
        }
        Err(err) => {
            let msg = format!("cannot read the worktree: {err:#}");
            findings.push(at(Code::CloseWorktreeAbsent, msg));
            (findings, None)
        }
    }
}

fn status_findings(status: &repo::WorktreeStatus, line: usize) -> Vec<Finding> {
    let mut findings = Vec::new();
    if !status.dirty.is_empty() {
        let msg = format!(
            "uncommitted changes to tracked files: {}",
            list(&status.dirty)
        );
        findings.push(Finding::new(Code::CloseWorktreeDirty, msg).at_line(line));
    }
    if !status.untracked.is_empty() {
        let msg = format!(
            "untracked files (teardown refuses them): {}",
            list(&status.untracked)
        );
        findings.push(Finding::new(Code::CloseWorktreeUntracked, msg).at_line(line));
    }
    findings
}

/// At most ten paths, then a count of the rest.
pub fn list(paths: &[String]) -> String {
    let shown: Vec<&str> = paths.iter().take(10).map(String::as_str).collect();
    let mut text = shown.join(", ");
    if paths.len() > 10 {
        text.push_str(&format!(" and {} more", paths.len() - 10));
    }
    text
}

/// The first 12 hex digits of an id.
pub fn short(id: Oid) -> String {
    id.to_string()[..12].to_string()
}
