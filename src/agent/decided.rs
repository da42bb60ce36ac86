//! What the stop hook asks the one verdict query (SPEC §26.1, `crate::verdict`): whether the
//! status document is a claim no decision has seen yet, and whether a VERIFIED stop can be
//! accepted on the decision already recorded for this branch at this commit instead of running
//! the gate again. Only the comparison of a decision with the document lives here.

use std::path::Path;

use crate::doc::StatusDoc;
use crate::finding::Verdict;
use crate::inputs::Trusted;
use crate::ledger::Record;
use crate::repo::Repo;
use crate::verdict::{Book, Claim, Decision, Owner, Under};

/// The claim of the worktree at `root`: its branch (its path on a detached HEAD) at its HEAD,
/// its latest word read there (a decision reached in another worktree of the branch never
/// speaks for this one).
pub fn claim(repo: &Repo, root: &Path) -> Option<Claim> {
    let head = repo.worktree_head(root)?;
    let owner = Owner::of(repo.head_branch().as_deref(), Some(root))?;
    Some(Claim::new(owner, head).read_in(Some(root)))
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
    // A return the hook itself verified is seen too: its gate run is a verdict recorded for this
    // branch, though no decision (SPEC §26.1, §26.3).
    decided.is_some_and(|d| judged(&d.record, doc))
        || (book.gate_run(repo, &claim, status_file)).is_some_and(|r| judged(r, doc))
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
    // A `guard` record's `claimed` is its token, not a state word: it names no state.
    let same_state = match record.claimed.as_deref() {
        Some(word) if crate::doc::State::parse(word).is_some() => Some(word) == state,
        _ => true,
    };
    record.slug.as_deref() == Some(doc.slug.as_str())
        && record.claimed_commit.as_deref() == claimed_commit
        && same_state
}
