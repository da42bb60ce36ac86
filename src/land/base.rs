//! Step 4 of `land` (SPEC §22): one `land` per base at a time (a lock in the common dir), and the
//! move of the base in one reference transaction from the tip read to the composed commit
//! (compare-and-swap, `git update-ref`). Every git here goes through the one git runner
//! (`repo::git_cli`, SPEC §26.2): no hook runs, closegate's reference-transaction hook included —
//! the move is gated by `land`'s own step 1; the hook (SPEC §9) is for merges people make by
//! hand. A worktree that has the base checked out moves with it, index and files, as
//! `git merge --ff-only` would (no filter or fsmonitor of the repository's configuration runs).

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use git2::Oid;

use crate::repo::Repo;
use crate::repo::git_cli::Git;

/// The held lock of one base; released when dropped (the process ending releases it too).
pub struct Lock {
    _file: File,
}

/// Take the lock of base `name`, waiting at most `wait` for a `land` that holds it; `None` when
/// it was still held then (`land-base-busy`).
pub fn lock(common: &Path, name: &str, wait: std::time::Duration) -> Result<Option<Lock>> {
    let dir = crate::record::dir(common);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = dir.join(format!("land-{safe}.lock"));
    // The common dir is the agent's to write: a link planted at the lock's name is never
    // followed, a FIFO never waited on (`O_NONBLOCK`), and only a regular file is taken.
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&path)
        .with_context(|| {
            format!(
                "cannot open the land lock {} (a symbolic link is refused)",
                path.display()
            )
        })?;
    let meta = file
        .metadata()
        .with_context(|| format!("cannot stat the land lock {}", path.display()))?;
    if !meta.is_file() {
        anyhow::bail!("the land lock {} is not a regular file", path.display());
    }
    let deadline = std::time::Instant::now() + wait;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(Some(Lock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", path.display()));
            }
        }
    }
}

/// How a move of the base went.
#[derive(Debug)]
pub enum Moved {
    /// The base moved; `Some(why)` when a worktree that has it checked out could not follow (the
    /// landing stands and is recorded; the message says how to bring that worktree along).
    Done(Option<String>),
    /// Someone else moved the base since it was read: compose again.
    Raced,
    /// git refused the update (or, with `--push`, the remote did); its message.
    Refused(String),
    /// The worktree that has the base checked out has changes the move would overwrite.
    Dirty(PathBuf, String),
}

/// The worktrees (on this machine) that have `refs/heads/<name>` checked out.
pub fn checked_out(repo: &Repo, name: &str) -> Vec<PathBuf> {
    let want = format!("refs/heads/{name}");
    repo.worktrees()
        .into_iter()
        .filter(|w| w.exists && w.head_ref().as_deref() == Some(want.as_str()))
        .map(|w| w.path)
        .collect()
}

/// Whether moving the worktree `dir` from `old` to `new` would overwrite a change there (a dry
/// run of git's two-tree merge): `Some(git's message)` when it would.
pub fn would_overwrite(dir: &Path, old: Oid, new: Oid) -> Result<Option<String>> {
    let _ = Git::worktree(dir).run(&["update-index", "-q", "--refresh"]);
    let out = Git::worktree(dir).run(&[
        "read-tree",
        "-m",
        "-u",
        "-n",
        &old.to_string(),
        &new.to_string(),
    ])?;
    Ok((!out.status.success()).then(|| stderr(&out)))
}

/// Move `refs/heads/<name>` from `old` to `new` (compare-and-swap), then every worktree that has
/// it checked out, after copying `new` out of the quarantine into the object store. Nothing moves
/// when one of those worktrees would lose a change.
pub fn move_base(repo: &Repo, name: &str, old: Oid, new: Oid, message: &str) -> Result<Moved> {
    // The composed commit passed: only now does it leave the quarantine (SPEC §26.4), right
    // before git (the worktree's two-tree merge, `update-ref`, the hook) has to read it.
    repo.promote(new)?;
    let worktrees = checked_out(repo, name);
    for dir in &worktrees {
        if let Some(why) = would_overwrite(dir, old, new)? {
            return Ok(Moved::Dirty(dir.clone(), why));
        }
    }
    let refname = format!("refs/heads/{name}");
    let common = repo.common_dir();
    let out = Git::repo(&common).run(&[
        "update-ref",
        "-m",
        message,
        &refname,
        &new.to_string(),
        &old.to_string(),
    ])?;
    if !out.status.success() {
        let now = current(&common, &refname)?;
        if now != Some(old) {
            return Ok(Moved::Raced);
        }
        return Ok(Moved::Refused(stderr(&out)));
    }
    let mut stuck = Vec::new();
    for dir in &worktrees {
        let (old, new) = (old.to_string(), new.to_string());
        let out = Git::worktree(dir).run(&["read-tree", "-m", "-u", &old, &new])?;
        if !out.status.success() {
            stuck.push(format!(
                "the worktree {} that has the base checked out could not follow ({}); run `git \
                 -C {} reset --merge {new}` there",
                dir.display(),
                stderr(&out),
                dir.display()
            ));
        }
    }
    Ok(Moved::Done((!stuck.is_empty()).then(|| stuck.join("; "))))
}

/// The value of `refname` as git reads it now.
pub fn current(common: &Path, refname: &str) -> Result<Option<Oid>> {
    let out = Git::repo(common).run(&["rev-parse", "--verify", "-q", refname])?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(Oid::from_str(text.trim()).ok())
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).trim().to_string()
}
