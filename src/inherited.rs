//! The inherited status document (SPEC §17): a document the branch did not change is not this
//! agent's claim.
//!
//! A branch that committed its status document and was squash-merged puts that document on the
//! base; every worktree made from the base afterwards is "born" with another agent's CLOSE-OK.
//! A document byte-identical to the one at the merge base of the base and HEAD is therefore read
//! as absent: `check` gives state `in-progress` (gap `state-not-returned`), `board` shows
//! `RUNNING`, `close` overwrites it.
//!
//! Unless history says it is this agent's own (SPEC §26.1): after `check` (VERIFIED) → `git merge
//! --ff-only` with the document committed as the trailing status-only commit, the merge base is
//! the tip and the document there is the branch's own claim. An authenticated passing or `land`
//! record for this branch naming its tip (`verdict::Book::attests`) exempts it; the caller asks,
//! and only when the bytes match.

use git2::Oid;

use crate::repo::Repo;

/// Whether `bytes` are exactly the status document at the merge base of `base` and `head`, and
/// `attested` (asked only then) does not say the branch's own record names its tip.
pub fn is_inherited(
    repo: &Repo,
    base: Option<Oid>,
    head: Option<Oid>,
    status_file: &str,
    bytes: &[u8],
    attested: impl FnOnce() -> bool,
) -> bool {
    let (Some(base), Some(head)) = (base, head) else {
        return false;
    };
    is_at_merge_base(
        repo,
        repo.merge_base(base, head),
        status_file,
        bytes,
        attested,
    )
}

/// [`is_inherited`] with the merge base already known.
pub fn is_at_merge_base(
    repo: &Repo,
    merge_base: Option<Oid>,
    status_file: &str,
    bytes: &[u8],
    attested: impl FnOnce() -> bool,
) -> bool {
    let same = merge_base
        .and_then(|id| repo.read_blob(id, status_file))
        .is_some_and(|blob| blob == bytes);
    same && !attested()
}

/// The message of the `state-not-returned` gap for an inherited document.
pub fn message(status_file: &str) -> String {
    format!(
        "the agent has not returned: {status_file} is byte-identical to the one at the merge base \
         (inherited from the base, not this agent's claim), read as absent; write your own with \
         `closegate close`"
    )
}
