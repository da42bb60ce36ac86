//! `close-no-change` (SPEC §17): "done" with nothing done is not VERIFIED.
//!
//! A returned `close-ok` or `stop-2-ready` whose claimed commit has the tree of its merge base
//! with the base adds nothing: an agent that never committed, or commits that cancel out. Work
//! that was verified and then merged or landed (the merge base is then the tip itself) is not
//! "nothing": an authenticated passing or `land` record **for this branch** naming the commit
//! exempts it, whatever configuration it was made under (`verdict::Book::attests`). Another
//! branch's records never do: a `land` record counts for its own branch and tip, never for the
//! commit the base moved from (SPEC §26.1).

use anyhow::Result;
use git2::Oid;

use crate::catalog::Code;
use crate::doc::State;
use crate::finding::Finding;
use crate::repo::Repo;
use crate::verdict::{Claim, Owner};

/// The finding, when `state` claims work and `commit` adds nothing to `merge_base`.
pub fn run(
    repo: &Repo,
    state: Option<State>,
    commit: Oid,
    merge_base: Option<Oid>,
    owner: Option<Owner>,
    status_file: &str,
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
    if tree != fork_tree {
        return Ok(None);
    }
    let attested = owner.is_some_and(|owner| {
        crate::verdict::attested(repo, &Claim::new(owner, commit), status_file)
    });
    if attested {
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
