//! "Covered" (SPEC §9), defined once for the hook, `board` and teardown: a commit is covered by a
//! passing record for itself, or, when it is a single trailing commit that changes only the status
//! document, by a passing record for its parent (the commit its close line names, SPEC §4.3).
//!
//! Which records count as passing is the ledger's business (`ledger::passes`, bound to the base
//! tip's configuration and contract by [`Binding`]); this module says which commit's record
//! stands for which.

use anyhow::Result;
use git2::Oid;

use crate::ledger;
use crate::repo::Repo;

/// The parent `commit` stands in for when it is a single trailing commit that changes nothing but
/// the status document `status_file`; `None` for any other commit (a merge, a root, a commit
/// that changes another path, or one whose trees cannot be read).
pub fn stands_for(repo: &Repo, commit: Oid, status_file: &str) -> Option<Oid> {
    let [parent] = repo.parents(commit)[..] else {
        return None;
    };
    let changes = repo.changes(Some(parent), commit).ok()?;
    let status_only = changes
        .iter()
        .all(|c| c.paths().iter().all(|p| *p == status_file));
    status_only.then_some(parent)
}

/// The commits whose passing record would cover `commit`: itself, then the parent it stands for.
pub fn candidates(repo: &Repo, commit: Oid, status_file: &str) -> Vec<Oid> {
    std::iter::once(commit)
        .chain(stands_for(repo, commit, status_file))
        .collect()
}

/// What a passing record must have been made under to count now (SPEC §9): the configuration
/// blob at the base tip, and for each record the contract that applies at that tip to its slug
/// and branch.
pub struct Binding {
    /// The configuration blob at the base tip (`Some(None)`: no file there, the defaults);
    /// `None` when there is no base tip at all (a base being created): nothing to be stale
    /// against, so any configuration counts.
    pub config: Option<Option<String>>,
    /// The tip contracts are read from (name, commit); `None`: no contract applies.
    pub tip: Option<(String, Oid)>,
}

impl Binding {
    /// The contract blob that applies now to a return claiming `slug` on `branch`; an error
    /// reading it reads as "some other contract" (the record then does not count).
    fn contract_now(
        &self,
        repo: &Repo,
        slug: Option<&str>,
        branch: Option<&str>,
    ) -> Result<Option<String>> {
        let Some((name, tip)) = &self.tip else {
            return Ok(None);
        };
        let lookup = crate::contract::Lookup::Tip(name.clone(), *tip);
        let found = lookup.find(repo, slug.unwrap_or(""), branch)?;
        Ok(found.and_then(|f| f.source).map(|s| s.blob_id()))
    }

    /// Whether `pass` was made under the configuration and contract that apply now.
    pub fn holds(&self, repo: &Repo, pass: &ledger::Pass) -> bool {
        if self.config.as_ref().is_some_and(|now| pass.config != *now) {
            return false;
        }
        let Ok(now) = self.contract_now(repo, pass.slug.as_deref(), pass.branch.as_deref()) else {
            return false;
        };
        match &pass.contract {
            Some(recorded) => *recorded == now,
            None => now.is_none(),
        }
    }
}

/// Whether `commit` is covered by one of `passes` made under `binding` (SPEC §9); with `merge`,
/// only a VERIFIED record counts (a `closed-without-merge` teardown covers deleting the branch,
/// never merging it).
pub fn is_covered_under(
    repo: &Repo,
    passes: &[ledger::Pass],
    binding: &Binding,
    commit: Oid,
    status_file: &str,
    merge: bool,
) -> bool {
    let wanted: Vec<String> = candidates(repo, commit, status_file)
        .iter()
        .map(Oid::to_string)
        .collect();
    passes
        .iter()
        .any(|p| wanted.contains(&p.commit) && (p.merge || !merge) && binding.holds(repo, p))
}
