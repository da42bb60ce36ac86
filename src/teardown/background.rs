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
//! Only above [`FROM`] entries, and only when no branch is to be deleted (its compare-and-delete
//! is reported on the command line, after the removal): a small worktree is gone in
//! milliseconds, and then the report says exactly what was removed.
//!
//! `unsafe` here: `fork`, `setsid`, `dup2`, `close_range` and `_exit` — the child must not run
//! the parent's destructors nor keep its descriptors (a lock, the caller's pipes).
#![allow(unsafe_code)]

use std::os::fd::AsRawFd;

/// From this many entries in the last walk, the deletion runs in the background.
pub const FROM: usize = 8192;

/// Run `work` in a detached child (its own session, standard streams on `/dev/null`, no other
/// inherited descriptor) and return its process id; the child exits when `work` returns.
pub fn spawn(work: impl FnOnce()) -> std::io::Result<i32> {
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    // SAFETY: fork has no memory-safety preconditions. The child below only makes system calls
    // and runs `work`, which allocates (glibc's malloc is fork-safe) and opens its own files.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid > 0 {
        return Ok(pid);
    }
    // The child.
    let fd = null.as_raw_fd();
    // SAFETY: plain system calls on descriptors this process owns; `_exit` skips the parent's
    // destructors and atexit handlers, which are not the child's to run.
    unsafe {
        libc::setsid();
        for target in 0..3 {
            libc::dup2(fd, target);
        }
        libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
    }
    work();
    // SAFETY: see above.
    unsafe { libc::_exit(0) }
}
