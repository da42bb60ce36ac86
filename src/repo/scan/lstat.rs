//! The lstat pass: each index entry's stat data against the file on disk, `lstat(2)` straight from
//! one reused path buffer; what it does not settle goes to libgit2.

use std::ffi::{CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::super::index_file::{Entry, StatData};

use super::*;

/// lstat each entry and compare with its stat data.
pub(super) fn lstat_all(workdir: &Path, entries: &[Entry], index_mtime: i64) -> Vec<Verdict> {
    let mut path = Joined::new(workdir);
    entries
        .iter()
        .map(|e| lstat_one(&mut path, e, index_mtime))
        .collect()
}

pub(super) fn lstat_one(path: &mut Joined, entry: &Entry, index_mtime: i64) -> Verdict {
    if entry.stage != 0 || entry.intent_to_add {
        return Verdict::Dirty;
    }
    if entry.skip_worktree || entry.assume_valid {
        return Verdict::Clean;
    }
    path.set(&entry.path);
    let Ok(st) = path.lstat() else {
        return Verdict::Dirty;
    };
    let (kind, executable) = (st.st_mode & libc::S_IFMT, st.st_mode & libc::S_IXUSR != 0);
    let kind_matches = match entry.mode {
        SYMLINK => kind == libc::S_IFLNK,
        EXECUTABLE => kind == libc::S_IFREG && executable,
        _ => kind == libc::S_IFREG && !executable,
    };
    let stat = StatData {
        ctime: (st.st_ctime as u32, st.st_ctime_nsec as u32),
        mtime: (st.st_mtime as u32, st.st_mtime_nsec as u32),
        ino: st.st_ino as u32,
        uid: st.st_uid,
        gid: st.st_gid,
        size: st.st_size as u32,
    };
    // Racy: written in the second the index was, so a later same-size edit keeps the stat data.
    let racy = i64::from(entry.stat.mtime.0) >= index_mtime;
    if kind_matches && stat == entry.stat && !racy {
        Verdict::Clean
    } else {
        Verdict::Unsure
    }
}

/// `workdir/` and a path inside it, in one buffer reused from file to file.
pub(super) struct Joined {
    pub(super) bytes: Vec<u8>,
    /// The length of `workdir/`.
    pub(super) base: usize,
}

impl Joined {
    pub(super) fn new(workdir: &Path) -> Self {
        let mut bytes = workdir.as_os_str().as_bytes().to_vec();
        if bytes.last() != Some(&b'/') {
            bytes.push(b'/');
        }
        let base = bytes.len();
        Joined { bytes, base }
    }

    /// Make the path `workdir/rel`.
    pub(super) fn set(&mut self, rel: &[u8]) {
        self.bytes.truncate(self.base);
        self.bytes.extend_from_slice(rel);
    }

    /// Call `f` with the path as a C string (NUL-terminated for the call only); a path holding a
    /// NUL is an error (index paths and file names hold none).
    pub(super) fn with_c_str<R>(
        &mut self,
        f: impl FnOnce(&CStr) -> std::io::Result<R>,
    ) -> std::io::Result<R> {
        self.bytes.push(0);
        let result = match CStr::from_bytes_with_nul(&self.bytes) {
            Ok(path) => f(path),
            Err(_) => Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "NUL in a path",
            )),
        };
        self.bytes.pop();
        result
    }

    /// `lstat(2)` of the path, straight from the buffer (`sys::fs::lstat_in`): std's
    /// `symlink_metadata` copies the path into a C string (scanning it for NULs) and goes through
    /// `statx`, some 300 instructions a file more.
    pub(super) fn lstat(&mut self) -> std::io::Result<libc::stat> {
        crate::sys::fs::lstat_in(&mut self.bytes)
    }

    pub(super) fn path(&self) -> &Path {
        Path::new(OsStr::from_bytes(&self.bytes))
    }

    /// The path relative to the workdir.
    pub(super) fn rel(&self) -> &[u8] {
        &self.bytes[self.base..]
    }
}
