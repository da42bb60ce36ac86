//! What the stop hook asks the one verdict query (SPEC §26.1, `crate::verdict`): whether the
//! status document is a claim no decision has seen yet, and whether a VERIFIED stop can be
//! accepted on the decision already recorded for this branch at this commit instead of running
//! the gate again. Only the comparison of a decision with the document lives here.

use std::path::Path;

use crate::doc::StatusDoc;
use crate::finding::Verdict;
use crate::inputs::Trusted;
use crate::ledger::{Event, Record};
use crate::repo::Repo;
use crate::verdict::{Book, Claim, Decision, Owner, Under};

/// The claim of the worktree at `root`: its branch (its path on a detached HEAD) at its HEAD.
pub fn claim(repo: &Repo, root: &Path) -> Option<Claim> {
    let head = repo.worktree_head(root)?;
    let owner = Owner::of(repo.head_branch().as_deref(), Some(root))?;
    Some(Claim::new(owner, head))
}

/// Whether a decision recorded for the worktree's claim judged `doc` (SPEC §26.3: the document
/// changed since the last verdict recorded for this branch is a claim; one a verdict has seen is
/// not). Any configuration counts: the question is whether this document was judged, not whether
/// that judgement still stands. A log that cannot be read has seen nothing.
pub fn seen(repo: &Repo, root: &Path, doc: &StatusDoc, status_file: &str) -> bool {
    let Some(claim) = claim(repo, root) else {
        return false;
    };
    let Ok(book) = Book::about(repo, &claim, status_file) else {
        return false;
    };
    let decided = book.decision(repo, &claim, status_file, &Under::history());
    decided.is_some_and(|d| judged(&d.record, doc))
        || hook_run(repo, &claim, status_file).is_some_and(|r| judged(&r, doc))
}

/// The newest gate run the stop hook itself made on `claim`: the `guard` or `signal` record
/// (`--worktree`) that carries a verdict for this owner at this commit (or the commit it stands
/// for). Not a decision (SPEC §26.1: nothing is admitted or landed on it), but a verdict recorded
/// for this branch (SPEC §26.3): after a return the hook verified, the question that follows is
/// no claim. `verdict::Book` holds decisions only, so these lines are read here, by the same
/// commits it would ask about. A log that cannot be read has none.
fn hook_run(repo: &Repo, claim: &Claim, status_file: &str) -> Option<Record> {
    let commits: Vec<String> = crate::verdict::candidates(repo, claim.commit, status_file)
        .iter()
        .map(ToString::to_string)
        .collect();
    let needles: Vec<&str> = commits.iter().map(String::as_str).collect();
    let lines = crate::record::read_mentioning_any(&repo.common_dir(), &needles).ok()?;
    let owns = |r: &Record| match &claim.owner {
        Owner::Branch(b) => r.branch.as_deref() == Some(b.as_str()),
        Owner::Detached(w) => r.branch.is_none() && r.worktree.as_deref() == Some(w.as_str()),
    };
    lines.iter().filter_map(Record::read).rfind(|r| {
        matches!(r.event, Event::Guard(_) | Event::Signal(_))
            && r.verdict.is_some()
            && owns(r)
            && r.commit
                .as_deref()
                .is_some_and(|c| commits.iter().any(|x| x == c))
    })
}

/// The decision a VERIFIED stop can be accepted on: the newest decision for this branch at this
/// commit under the base tip's configuration and the contract that binds the branch now, when it
/// is VERIFIED, no reviewer's rejection, and judged the claim `doc` makes.
pub fn reusable(
    repo: &Repo,
    claim: &Claim,
    doc: &StatusDoc,
    trusted: &Trusted,
) -> Option<Decision> {
    let status_file = &trusted.config.status_file;
    let book = Book::about(repo, claim, status_file).ok()?;
    let under = Under::base(trusted.config_blob.clone(), trusted.tip.clone());
    let decision = book.decision(repo, claim, status_file, &under)?;
    let stands = decision.verdict == Verdict::Verified
        && !decision.rejected()
        && judged(&decision.record, doc);
    stands.then_some(decision)
}

/// Whether `record` judged the claim `doc` makes: the same slug and claimed commit, and the same
/// state when the record names one (a `guard` record names the token instead).
pub fn judged(record: &Record, doc: &StatusDoc) -> bool {
    let claimed_commit = doc.close.as_ref().map(|c| c.commit.as_str());
    let state = doc.state.map(|s| s.as_str());
    let states = [
        "close-ok",
        "stop-2-ready",
        "closed-without-merge",
        "in-progress",
        "blocked",
    ];
    let same_state = match record.claimed.as_deref() {
        Some(word) if states.contains(&word) => Some(word) == state,
        _ => true,
    };
    record.slug.as_deref() == Some(doc.slug.as_str())
        && record.claimed_commit.as_deref() == claimed_commit
        && same_state
}
