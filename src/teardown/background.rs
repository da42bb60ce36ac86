//! The final deletion of a large worktree, in a detached process (SPEC §7 step 3; README:
//! "Teardown in the background").
//!
//! Removing tens of thousands of files is most of a teardown's wall-clock time (one `unlinkat`
//! each); `git worktree remove` pays it too. Once every probe has passed — on the worktree, then
//! again on the directory renamed aside, whose walk fixes what may be deleted — nothing is left to
//! decide, so the teardown records, reports and exits, and a forked child deletes exactly what
//! that last walk saw, through the same directory handles (`handles::Removal`): an entry that
//! appears or changes meanwhile is left and named in an `incomplete` record, a folder swapped for
//! a link is never followed, and a child that dies midway leaves the aside and its record, which
//! `closegate teardown <worktree>` finishes as it finishes any interrupted teardown.
//!
//! Only above [`FROM`] entries: a small worktree is gone in milliseconds, and then the report
//! says exactly what was removed. A branch to delete is deleted first (compare-and-delete, SPEC
//! §26.2), so nothing is left to report after the removal.
//!
//! The fork itself (`sys::process::spawn_detached`): the child gets its own session, `/dev/null`
//! as its standard streams and no other descriptor (a lock, the caller's pipes), and never runs
//! the parent's destructors.

/// From this many entries in the last walk, the deletion runs in the background.
pub const FROM: usize = 8192;

/// Run `work` in a detached child (its own session, standard streams on `/dev/null`, no other
/// inherited descriptor) and return its process id; the child exits when `work` returns.
pub fn spawn(work: impl FnOnce()) -> std::io::Result<i32> {
    crate::sys::process::spawn_detached(work)
}
