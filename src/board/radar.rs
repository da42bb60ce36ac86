//! The board's view of the base (SPEC §13, §22): MERGED for a branch whose work is in the base
//! (§7's "merged", or landed), CONFLICT for a COMPLETED branch that no longer merges cleanly into
//! the base tip, and the conflict radar of `board --conflicts`: pairs of live agent branches that
//! conflict with each other, from in-memory merges.

use git2::Oid;
use serde::Serialize;

use super::Stage;
use crate::finding::Verdict;
use crate::repo::Repo;
use crate::repo::compose::Composed;
use crate::repo::merged::Merged;
use crate::verdict::Owner;

/// MERGED outranks every stage (REJECTED aside); CONFLICT replaces only COMPLETED.
pub fn refine(stage: Stage, merged: bool, conflict: bool) -> Stage {
    match stage {
        _ if merged => Stage::Merged,
        Stage::Completed if conflict => Stage::Conflict,
        other => other,
    }
}

/// [`judge`] for a board row: a row without a HEAD or a base is neither.
pub fn judge_row(
    repo: &Repo,
    ledger: &super::Ledger,
    owner: &Owner,
    head: Option<Oid>,
    base: Option<Oid>,
    verdict: Option<Verdict>,
    status_file: &str,
) -> (bool, bool) {
    match (head, base) {
        (Some(head), Some(base)) => judge(repo, ledger, owner, base, head, verdict, status_file),
        _ => (false, false),
    }
}

/// `(merged, conflict)` for `owner`'s HEAD `head` against the base tip `base`. MERGED needs §7's
/// "merged" and either a passing or `land` record **of this branch** for the tip (history: any
/// configuration), or a change of the branch's own (a squash or rebase merge, or a landing, holds
/// one; a tip merely reachable from the base with no record of its own — a branch just created at
/// the base, or at a commit another branch verified — takes its stage from its state, SPEC
/// §26.1). CONFLICT is judged only for a tip whose verdict is VERIFIED.
fn judge(
    repo: &Repo,
    ledger: &super::Ledger,
    owner: &Owner,
    base: Oid,
    head: Oid,
    verdict: Option<Verdict>,
    status_file: &str,
) -> (bool, bool) {
    let passing = verdict == Some(Verdict::Verified);
    let commit = crate::verdict::stands_for(repo, head, status_file).unwrap_or(head);
    let own = || {
        let claim = crate::verdict::Claim::new(owner.clone(), head);
        ledger.book().attests(repo, &claim, status_file)
    };
    let landed = || {
        owner
            .branch()
            .is_some_and(|b| ledger.book().landed(repo, b, head, base))
    };
    let merged = match repo.merged_into(base, commit, status_file) {
        Ok(Merged::Reachable) => own() || landed(),
        Ok(Merged::SameChanges) => {
            changed_any(repo, base, commit, status_file) || own() || landed()
        }
        Ok(Merged::No) | Err(_) => landed(),
    };
    if merged || !passing {
        return (merged, false);
    }
    let conflict = matches!(
        repo.compose_tree(repo.merge_base(base, commit), base, commit, status_file),
        Ok(Composed::Conflict(_))
    );
    (false, conflict)
}

/// Whether `commit` changed any path (the status document aside) since its merge base with
/// `base`: the base "holding" an empty change set says nothing about a branch's own work.
fn changed_any(repo: &Repo, base: Oid, commit: Oid, status_file: &str) -> bool {
    let Some(merge_base) = repo.merge_base(base, commit) else {
        return false;
    };
    repo.change_set(merge_base, commit).is_ok_and(|changes| {
        changes
            .iter()
            .any(|(p, _)| p.as_slice() != status_file.as_bytes())
    })
}

/// Two live branches whose tips conflict with each other, with the paths.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Pair {
    pub one: String,
    pub two: String,
    pub paths: Vec<String>,
}

/// Every pair of `branches` (name, tip) that does not merge cleanly, by an in-memory merge of
/// the two tips (each pair once).
pub fn conflicts(repo: &Repo, branches: &[(String, Oid)], status_file: &str) -> Vec<Pair> {
    let mut pairs = Vec::new();
    for (i, (one, a)) in branches.iter().enumerate() {
        for (two, b) in &branches[i + 1..] {
            if a == b {
                continue;
            }
            let merge_base = repo.merge_base(*a, *b);
            if let Ok(Composed::Conflict(paths)) =
                repo.compose_tree(merge_base, *a, *b, status_file)
            {
                pairs.push(Pair {
                    one: one.clone(),
                    two: two.clone(),
                    paths,
                });
            }
        }
    }
    pairs
}
