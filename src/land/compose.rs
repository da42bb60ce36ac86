//! Step 2 of `land` (SPEC §22): compose a branch onto a base commit in memory with a strategy.
//! The status document never reaches the base: the trailing status-only commit is left out (the
//! target's `commit`), and the composed tree holds the status document as the base has it.

use anyhow::Result;
use git2::Oid;

use super::target::Target;
use crate::catalog::Code;
use crate::finding::Finding;
use crate::repo::Repo;
use crate::repo::compose::Composed;

/// `--strategy` (`cmd::values` lets clap read it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    Merge,
    Squash,
    Rebase,
    Ff,
}

impl Strategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Merge => "merge",
            Strategy::Squash => "squash",
            Strategy::Rebase => "rebase",
            Strategy::Ff => "ff",
        }
    }
}

/// Compose `target` onto `onto`: the new commit, or `land-conflict` naming the paths or reason.
pub fn compose(
    repo: &Repo,
    onto: Oid,
    target: &Target,
    strategy: Strategy,
    status_file: &str,
) -> Result<Result<Oid, Finding>> {
    let commit = target.commit;
    if repo.is_ancestor(commit, onto) {
        let msg = format!(
            "`{}` ({}) is already in the base: nothing to land",
            target.branch,
            short(commit)
        );
        return Ok(Err(Finding::new(Code::LandConflict, msg)));
    }
    let merge_base = repo.merge_base(onto, commit);
    match strategy {
        Strategy::Ff => ff(repo, onto, merge_base, target, status_file),
        Strategy::Rebase => rebase(repo, onto, merge_base, target, status_file),
        Strategy::Merge | Strategy::Squash => {
            let tree = match repo.compose_tree(merge_base, onto, commit, status_file)? {
                Composed::Tree(tree) => tree,
                Composed::Conflict(paths) => return Ok(Err(conflict(target, &paths))),
            };
            let (parents, message) = if strategy == Strategy::Merge {
                (vec![onto, commit], title(target))
            } else {
                (vec![onto], squash_message(repo, onto, target)?)
            };
            Ok(Ok(repo.write_commit(tree, &parents, &message, None)?))
        }
    }
}

/// `Land <slug>: <first line of abstract>`.
fn title(target: &Target) -> String {
    match &target.abstract_line {
        Some(line) => format!("Land {}: {line}\n", target.slug),
        None => format!("Land {}\n", target.slug),
    }
}

/// The title, then the branch's commit subjects (oldest first) in the body.
fn squash_message(repo: &Repo, onto: Oid, target: &Target) -> Result<String> {
    let mut message = title(target);
    message.push('\n');
    for id in repo.commits_onto(onto, target.commit)? {
        if let Some(subject) = repo.summary(id) {
            message.push_str(&format!("- {subject}\n"));
        }
    }
    Ok(message)
}

/// `ff`: only when the base tip is the merge base, and only when the branch's tree carries no
/// status document of its own.
fn ff(
    repo: &Repo,
    onto: Oid,
    merge_base: Option<Oid>,
    target: &Target,
    status_file: &str,
) -> Result<Result<Oid, Finding>> {
    if merge_base != Some(onto) {
        let msg = format!(
            "`{}` cannot be fast-forwarded: the base tip {} is not its merge base (the base moved \
             since it forked); land with --strategy merge, squash or rebase",
            target.branch,
            short(onto)
        );
        return Ok(Err(Finding::new(Code::LandConflict, msg)));
    }
    let tree = repo.tree_of(target.commit);
    let cleaned = repo.tree_with_base_status(target.commit, onto, status_file)?;
    if tree != Some(cleaned) {
        let msg = format!(
            "`{}` cannot be fast-forwarded: its commit {} carries a status document ({status_file}) \
             that would reach the base; land with --strategy merge, squash or rebase",
            target.branch,
            short(target.commit)
        );
        return Ok(Err(Finding::new(Code::LandConflict, msg)));
    }
    Ok(Ok(target.commit))
}

/// `rebase`: the branch's own commits (merges left out) replayed one by one onto the base, each
/// keeping its author and message; a commit left with no change of its own is dropped.
fn rebase(
    repo: &Repo,
    onto: Oid,
    merge_base: Option<Oid>,
    target: &Target,
    status_file: &str,
) -> Result<Result<Oid, Finding>> {
    let Some(merge_base) = merge_base else {
        return Ok(Err(conflict(target, &[])));
    };
    let mut head = onto;
    for id in repo.commits_onto(merge_base, target.commit)? {
        let [parent] = repo.parents(id)[..] else {
            continue;
        };
        let tree = match repo.compose_tree(Some(parent), head, id, status_file)? {
            Composed::Tree(tree) => tree,
            Composed::Conflict(paths) => return Ok(Err(conflict(target, &paths))),
        };
        if Some(tree) == repo.tree_of(head) {
            continue;
        }
        let message = repo.message(id).unwrap_or_default();
        head = repo.write_commit(tree, &[head], &message, Some(id))?;
    }
    if head == onto {
        let msg = format!(
            "`{}` has no change left to land once replayed onto the base",
            target.branch
        );
        return Ok(Err(Finding::new(Code::LandConflict, msg)));
    }
    Ok(Ok(head))
}

fn conflict(target: &Target, paths: &[String]) -> Finding {
    let what = if paths.is_empty() {
        "it shares no history with the base".to_string()
    } else {
        format!("conflicting paths: {}", paths.join(", "))
    };
    let msg = format!(
        "`{}` ({}) does not merge cleanly into the base tip: {what}",
        target.branch,
        short(target.commit)
    );
    let mut finding = Finding::new(Code::LandConflict, msg);
    if let Some(first) = paths.first() {
        finding = finding.at_path(first.clone());
    }
    finding
}

fn short(id: Oid) -> String {
    id.to_string()[..12].to_string()
}
