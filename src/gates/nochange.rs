//! `close-no-change` (SPEC §17): "done" with nothing done is not VERIFIED.
//!
//! A returned `close-ok` or `stop-2-ready` whose claimed commit has the tree of its merge base
//! with the base adds nothing: an agent that never committed, or commits that cancel out. Work
//! that was verified and then merged or landed (the merge base is then the tip itself) is not
//! "nothing": an authenticated passing record for this branch and commit, or a `land` record
//! naming the commit, exempts it, whatever configuration it was made under.

use anyhow::Result;
use git2::Oid;

use crate::catalog::Code;
use crate::doc::State;
use crate::finding::Finding;
use crate::ledger::Record;
use crate::repo::Repo;

/// The finding, when `state` claims work and `commit` adds nothing to `merge_base`.
pub fn run(
    repo: &Repo,
    state: Option<State>,
    commit: Oid,
    merge_base: Option<Oid>,
    branch: Option<&str>,
) -> Result<Option<Finding>> {
    if !matches!(state, Some(State::CloseOk | State::Stop2Ready)) {
        return Ok(None);
    }
    let Some(merge_base) = merge_base else {
        return Ok(None);
    };
    let (Some(tree), Some(fork_tree)) = (repo.tree_of(commit), repo.tree_of(merge_base)) else {
        return Ok(None);
    };
    if tree != fork_tree || attested_before(repo, commit, branch)? {
        return Ok(None);
    }
    let short = &commit.to_string()[..12];
    let msg = format!(
        "{short} adds nothing: its tree is the tree of its merge base with the base ({}); \
         commit the work, or write `closed-without-merge` if nothing was to be done",
        &merge_base.to_string()[..12]
    );
    Ok(Some(Finding::new(Code::CloseNoChange, msg)))
}

/// Whether the audit log holds, authenticated, a passing record for this commit on this branch
/// (verified before it was merged), or a `land` record naming the commit.
fn attested_before(repo: &Repo, commit: Oid, branch: Option<&str>) -> Result<bool> {
    let commit = commit.to_string();
    let values = crate::record::read_mentioning(&repo.common_dir(), &commit)?;
    Ok(values.iter().any(|value| {
        if value["event"].as_str() == Some("land") {
            return true;
        }
        Record::read(value).is_some_and(|r| {
            r.is_passing()
                && r.commit.as_deref() == Some(commit.as_str())
                && (branch.is_none() || r.branch.as_deref() == branch)
        })
    }))
}
