//! "Merged" includes a landed tip (SPEC §7): a `land` record names the tip and its `composed`
//! commit is reachable from the base tip. Kept apart from the blob rule of `repo::merged` so each
//! reads on its own; the callers of "merged" ask both. A rule on records, so it sits with them
//! below the verbs: `teardown`, `board` and `hook` ask it without importing `land` (which tears a
//! landed worktree down, so `teardown` reaching into `land` was an import cycle).

use git2::Oid;

use crate::ledger::Record;
use crate::repo::Repo;

/// Whether a trusted `land` record names `tip` and its composed commit is in `base`.
pub fn landed(repo: &Repo, base: Oid, tip: Oid) -> bool {
    let hex = tip.to_string();
    let Ok(values) = crate::record::read_mentioning(&repo.common_dir(), &hex) else {
        return false;
    };
    values.iter().filter_map(Record::read).any(|r| {
        let Some(land) = r.landing() else {
            return false;
        };
        let composed = Oid::from_str(&land.composed).ok();
        land.tip == hex
            && r.is_trusted()
            && composed.is_some_and(|c| c == base || repo.is_ancestor(c, base))
    })
}
