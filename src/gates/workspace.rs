//! Warm workspaces (SPEC §19): a check with `keep = [...]` runs in
//! `<git common dir>/closegate/work/<check name>/checkout`, reset to the commit before each run
//! (`Repo::reset_workspace`) with the kept paths left as they were. One run at a time per
//! workspace: `work/<check name>.lock` is held (`flock`) from the reset to the check's end.
//! The workspaces belong to the repository: teardown leaves them; `closegate gc` drops them.
//!
//! Each check has two workspaces ([`Slot`]): the main one, for the commit's own runs and the
//! overlay (the commit's code), and `work/_base-<check name>/` (its lock
//! `work/_base-<check name>.lock`) for the runs on the base's code (the reverse overlay and the
//! merge base's own tree, SPEC §23). So the overlay and the reverse overlay of one check can run
//! side by side, and each workspace stays close to the code it is reset to next. `work/` and the
//! workspace directory are made real directories first, and a lock file is never followed: a
//! symbolic link there (the agent can write the common dir) is removed, not followed. A lock file
//! is never removed (`gc` leaves it): a run waiting on it would then lock a file no other run
//! sees.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Which of a check's two workspaces a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// `work/<check name>/`: the commit's own runs and the overlay (the commit's code).
    Main,
    /// `work/_base-<check name>/`: the runs on the base's code (the reverse overlay and the merge
    /// base's own tree).
    Base,
}

/// Before the directory name of a check's base workspace. [`dir_name`] never gives a name that
/// starts so (a plain name does not start with `_`; an escaped one has only hex digits after
/// it, and `s` is none), so no check's main workspace can meet another's base one.
const BASE_PREFIX: &str = "_base-";

/// The directory name of check `name`'s workspace `slot`.
fn slot_dir(name: &str, slot: Slot) -> String {
    match slot {
        Slot::Main => dir_name(name),
        Slot::Base => format!("{BASE_PREFIX}{}", dir_name(name)),
    }
}

/// One locked workspace.
pub struct Workspace {
    root: PathBuf,
    _lock: File,
}

/// `<git common dir>/closegate/work`; for a bare repository (a server, SPEC §19, §20) a
/// directory beside it, `<repository>.closegate-work`, outside the repository directory: nothing
/// a check leaves in its workspace lies among the repository's hooks, config or refs.
pub fn base(common_dir: &Path) -> PathBuf {
    if is_bare(common_dir) {
        let repo = crate::repo::canonical(common_dir);
        let mut name = repo.file_name().unwrap_or_default().to_os_string();
        name.push(".closegate-work");
        return repo.with_file_name(name);
    }
    crate::record::dir(common_dir).join("work")
}

/// Whether the repository whose common dir is `common_dir` is bare (`core.bare`).
fn is_bare(common_dir: &Path) -> bool {
    git2::Config::open(&common_dir.join("config"))
        .and_then(|c| c.get_bool("core.bare"))
        .unwrap_or(false)
}

/// The directory name of a check's workspace: the name itself when it is a plain file name
/// (letters, digits, `.`, `-`, `_`, not starting with `.` or `_`), else `_` and its hex bytes.
pub fn dir_name(check: &str) -> String {
    let plain = !check.is_empty()
        && !check.starts_with(['.', '_'])
        && check
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
    if plain {
        check.to_string()
    } else {
        let hex: String = check.bytes().map(|b| format!("{b:02x}")).collect();
        format!("_{hex}")
    }
}

/// Make `path` a real directory: a symbolic link or any other non-directory there is removed
/// (not followed), then the directory is created if missing.
fn real_dir(path: &Path) -> std::io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => remove_link(path)?,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(err),
    }
    match fs::create_dir(path) {
        Err(err) if err.kind() != std::io::ErrorKind::AlreadyExists => Err(err),
        _ => Ok(()),
    }
}

/// Remove the non-directory at `path`; already gone (another run removed it first) is fine.
fn remove_link(path: &Path) -> std::io::Result<()> {
    match fs::remove_file(path) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(err),
        _ => Ok(()),
    }
}

/// Open (creating it) the lock file at `path`. A symbolic link there is removed first (a lock
/// file is ours to make), and the open does not follow one.
fn lock_file(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        remove_link(path)?;
    }
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
}

/// Take `file`'s lock: waiting when `wait`, else `Ok(false)` when another run holds it.
pub fn lock(file: &File, wait: bool) -> std::io::Result<bool> {
    lock_unless(file, wait, &|| false)
}

/// [`lock`], giving up with an error when a wait is interrupted by a signal and `stop` says so.
fn lock_unless(file: &File, wait: bool, stop: &dyn Fn() -> bool) -> std::io::Result<bool> {
    use rustix::fs::FlockOperation;
    use rustix::io::Errno;
    let op = if wait {
        FlockOperation::LockExclusive
    } else {
        FlockOperation::NonBlockingLockExclusive
    };
    loop {
        match rustix::fs::flock(file, op) {
            Ok(()) => return Ok(true),
            Err(Errno::INTR) if stop() => {
                return Err(std::io::Error::other(
                    "interrupted by a signal while waiting for the workspace's lock",
                ));
            }
            Err(Errno::INTR) => continue,
            Err(Errno::WOULDBLOCK) if !wait => return Ok(false),
            Err(err) => return Err(err.into()),
        }
    }
}

impl Workspace {
    /// Lock (waiting for another run to end, unless `stop` says a signal asked to stop) and
    /// prepare the workspace `slot` of check `name`: its private temporary directory emptied,
    /// the sandbox's empty file present.
    pub fn open(
        common_dir: &Path,
        name: &str,
        slot: Slot,
        stop: &dyn Fn() -> bool,
    ) -> Result<Workspace> {
        let base = base(common_dir);
        let dir = slot_dir(name, slot);
        let fail = || {
            format!(
                "preparing the workspace of check `{name}` in {}",
                base.display()
            )
        };
        fs::create_dir_all(base.parent().unwrap_or(&base)).with_context(fail)?;
        real_dir(&base).with_context(fail)?;
        let lock_file = lock_file(&base.join(format!("{dir}.lock"))).with_context(fail)?;
        lock_unless(&lock_file, true, stop).with_context(fail)?;
        let root = base.join(dir);
        real_dir(&root).with_context(fail)?;
        let ws = Workspace {
            root,
            _lock: lock_file,
        };
        let tmp = ws.tmp();
        if fs::symlink_metadata(&tmp).is_ok() {
            fs::remove_dir_all(&tmp).with_context(fail)?;
        }
        fs::create_dir(&tmp).with_context(fail)?;
        fs::write(ws.empty(), b"").with_context(fail)?;
        Ok(ws)
    }

    /// The workspace directory itself (the check's `GIT_CEILING_DIRECTORIES`).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the commit is checked out; the kept paths live inside it.
    pub fn checkout(&self) -> PathBuf {
        self.root.join("checkout")
    }

    /// The check's private temporary directory (`TMPDIR`), emptied before each run.
    pub fn tmp(&self) -> PathBuf {
        self.root.join("tmp")
    }

    /// An empty file the sandbox binds over the record key.
    pub fn empty(&self) -> PathBuf {
        self.root.join("empty")
    }
}

/// Every workspace under `base`, as (directory name, whether it is in use).
pub fn list(common_dir: &Path) -> Result<Vec<(String, bool)>> {
    let base = base(common_dir);
    let mut found = Vec::new();
    let Ok(entries) = fs::read_dir(&base) else {
        return Ok(found);
    };
    for entry in entries {
        let entry = entry.with_context(|| format!("reading {}", base.display()))?;
        if !entry.file_type()?.is_dir() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let busy = match File::open(base.join(format!("{name}.lock"))) {
            Ok(file) => !lock(&file, false)?,
            Err(_) => false,
        };
        found.push((name, busy));
    }
    found.sort();
    Ok(found)
}

/// Remove the workspace `name` (a directory name from [`list`]) unless a run holds its lock;
/// whether it was removed. The lock file stays: a run waiting on it would otherwise go on with
/// a lock on a removed file while the next run creates and locks a new one, both in one
/// workspace.
pub fn drop_workspace(common_dir: &Path, name: &str) -> Result<bool> {
    let base = base(common_dir);
    let lock_path = base.join(format!("{name}.lock"));
    let lock_file =
        lock_file(&lock_path).with_context(|| format!("opening {}", lock_path.display()))?;
    if !lock(&lock_file, false)? {
        return Ok(false);
    }
    let root = base.join(name);
    crate::sandbox::scratch::remove_tree(&root)
        .with_context(|| format!("removing {}", root.display()))?;
    Ok(true)
}
