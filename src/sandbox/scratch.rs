//! The scratch directory of one run of the checks: `closegate-check-<ns>-<pid>-<start>-XXXXXX`
//! in the system's temporary directory, holding the pristine `checkout/`, the check's private
//! `tmp/` and the `empty` file the sandbox binds over the record key.
//!
//! Its name says which process owns it (PID namespace, pid and that process's start time, so a
//! reused pid is not mistaken for the owner). A closegate killed with SIGKILL cannot remove its
//! scratch directory; the next run that finds one whose owner is gone removes it. Entries of
//! another PID namespace or another user, and names of any other shape, are left alone.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tempfile::TempDir;

/// The prefix every scratch directory's name starts with.
pub const PREFIX: &str = "closegate-check-";

/// One run's scratch directory; removed by [`Scratch::remove`] (or, failing that, on drop).
pub struct Scratch {
    dir: TempDir,
}

impl Scratch {
    /// A fresh scratch directory in the temporary directory, `tmp/` and `empty` created.
    pub fn create() -> Result<Scratch> {
        let (ns, pid, start) = owner().unwrap_or((0, 0, 0));
        let dir = tempfile::Builder::new()
            .prefix(&format!("{PREFIX}{ns}-{pid}-{start}-"))
            .tempdir()
            .context("creating a temporary directory for the checkout")?;
        let scratch = Scratch { dir };
        std::fs::create_dir(scratch.tmp()).context("creating the checks' temporary directory")?;
        std::fs::write(scratch.empty(), b"").context("creating the sandbox's empty file")?;
        Ok(scratch)
    }

    /// The scratch directory itself (the checks' `GIT_CEILING_DIRECTORIES`).
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Where the commit is checked out (created by the checkout).
    pub fn checkout(&self) -> PathBuf {
        self.root().join("checkout")
    }

    /// The checks' private temporary directory (`TMPDIR`).
    pub fn tmp(&self) -> PathBuf {
        self.root().join("tmp")
    }

    /// An empty file, bound read-only over the record key inside the sandbox.
    pub fn empty(&self) -> PathBuf {
        self.root().join("empty")
    }

    /// Remove the directory; what a check left read-only is made writable first.
    pub fn remove(self) -> Result<()> {
        let path = self.dir.path().to_path_buf();
        if self.dir.close().is_ok() {
            return Ok(());
        }
        remove_tree(&path).with_context(|| format!("removing the checkout {}", path.display()))
    }
}

/// Remove every scratch directory in `dir` whose owning process is gone; returns how many.
/// Failures are skipped: a leftover is retried by the next run, never an error of this one.
pub fn sweep_stale(dir: &Path) -> usize {
    let Some((ns, ..)) = owner() else {
        return 0;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((entry_ns, pid, start)) = name.to_str().and_then(parse_name) else {
            continue;
        };
        if entry_ns != ns || pid == 0 || start_time(pid) == Some(start) || !ours(&entry.path()) {
            continue;
        }
        if remove_tree(&entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// `(pid namespace, pid, start time)` of a scratch directory's name.
fn parse_name(name: &str) -> Option<(u64, u32, u64)> {
    let mut parts = name.strip_prefix(PREFIX)?.splitn(4, '-');
    let ns = parts.next()?.parse().ok()?;
    let pid = parts.next()?.parse().ok()?;
    let start = parts.next()?.parse().ok()?;
    parts.next()?;
    Some((ns, pid, start))
}

/// A real directory (not a symlink) owned by this user.
fn ours(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let uid = crate::sys::process::euid();
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir() && m.uid() == uid)
}

/// This process's PID namespace id, pid and start time; `None` without a Linux `/proc`.
fn owner() -> Option<(u64, u32, u64)> {
    let link = std::fs::read_link("/proc/self/ns/pid").ok()?;
    let ns = link
        .to_str()?
        .strip_prefix("pid:[")?
        .strip_suffix(']')?
        .parse()
        .ok()?;
    let pid = std::process::id();
    Some((ns, pid, start_time(pid)?))
}

/// Field 22 of `/proc/<pid>/stat`: when the process started, in clock ticks since boot.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// `remove_dir_all`, after making every directory writable (a check may leave `chmod 500`
/// directories behind). Symlinks are neither followed nor changed.
pub fn remove_tree(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    for entry in walkdir::WalkDir::new(path).into_iter().flatten() {
        if entry.file_type().is_dir() {
            let _ = std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o700));
        }
    }
    std::fs::remove_dir_all(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_owner() {
        assert_eq!(
            parse_name("closegate-check-4026531836-123-456-AbC12x"),
            Some((4026531836, 123, 456))
        );
        assert_eq!(parse_name("closegate-check-AbC12x"), None);
        assert_eq!(parse_name("closegate-check-1-2-3"), None);
        assert_eq!(parse_name("other-1-2-3-x"), None);
    }

    #[test]
    fn this_process_is_its_own_live_owner() {
        let (_, pid, start) = owner().expect("a Linux /proc");
        assert_eq!(start_time(pid), Some(start));
    }
}
