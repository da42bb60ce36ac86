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

/// MERGED outranks every stage (REJECTED aside); CONFLICT replaces only COMPLETED.
pub fn refine(stage: Stage, merged: bool, conflict: bool) -> Stage {
    match stage {
        _ if merged => Stage::Merged,
        Stage::Completed if conflict => Stage::Conflict,
        other => other,
    }
}

/// [`judge`] for a board row: the main worktree (the base itself) and a row without a HEAD or
/// a base are neither.
pub fn judge_row(
    repo: &Repo,
    main: bool,
    head: Option<Oid>,
    base: Option<Oid>,
    verdict: Option<Verdict>,
    status_file: &str,
) -> (bool, bool) {
    match (head, base, main) {
        (Some(head), Some(base), false) => judge(repo, base, head, verdict, status_file),
        _ => (false, false),
    }
}

/// `(merged, conflict)` for the worktree HEAD `head` against the base tip `base`. MERGED needs
/// §7's "merged" and either a passing or `land` record for the tip (`verdict`) or a change of the
/// branch's own (a squash or rebase merge, or a landing, holds one; a tip merely reachable from
/// the base with no record — a branch just created at the base — takes its stage from its
/// state). CONFLICT is judged only for a passing tip.
pub fn judge(
    repo: &Repo,
    base: Oid,
    head: Oid,
    verdict: Option<Verdict>,
    status_file: &str,
) -> (bool, bool) {
    let passing = verdict == Some(Verdict::Verified);
    let commit = crate::covered::stands_for(repo, head, status_file).unwrap_or(head);
    let merged = match repo.merged_into(base, commit, status_file) {
        Ok(Merged::Reachable) => passing || crate::landed::landed(repo, base, head),
        Ok(Merged::No) | Err(_) => crate::landed::landed(repo, base, head),
        Ok(_) => true,
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

/// Two live branches whose tips conflict with each other, with the paths.
#[derive(Debug, Clone, Serialize)]
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
