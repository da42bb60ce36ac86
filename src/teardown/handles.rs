//! Removal relative to open directory handles (SPEC §7 step 2): the walk that records what the
//! last probe saw, and the removal that deletes only that.
//!
//! Every directory is opened with `openat(…, O_NOFOLLOW | O_DIRECTORY)` from its parent's handle,
//! every entry is looked at with `fstatat(…, AT_SYMLINK_NOFOLLOW)` and removed with `unlinkat`
//! relative to the handle it was found in — the technique of std's `remove_dir_all` on Linux
//! (CVE-2022-21658). A folder swapped for a symbolic link mid-way is a link: it does not match
//! what the probe saw, so it is left and reported; nothing is ever reached through it. An entry
//! is removed only when the probe's walk saw it under the same name with the same identity and
//! (files) the same size, times and mode; anything else is left and reported.
//!
//! POSIX has no "unlink if this inode": between the last `fstatat` and the `unlinkat` of a file
//! (microseconds, no failpoint in between) a name renamed into place would lose its name. Only
//! that one name, never a link's target, never outside the directory.
//!
//! The handles themselves and their system calls are `sys::fs::Dir` (rustix).

use std::collections::HashMap;
use std::ffi::{CStr, OsStr};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::failpoint;

use crate::sys::fs::Stat;
pub use crate::sys::fs::{Dir, rename_noreplace};

/// Deeper than this, a walk stops: what lies below is not seen, so it is never removed.
const MAX_DEPTH: usize = 400;

/// What `fstatat` says about one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    dev: u64,
    ino: u64,
    mode: u32,
    nlink: u64,
    size: i64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Meta {
    fn from_stat(st: &Stat) -> Meta {
        Meta {
            dev: st.st_dev,
            ino: st.st_ino,
            mode: st.st_mode,
            nlink: st.st_nlink,
            size: st.st_size,
            mtime: (st.st_mtime, st.st_mtime_nsec as i64),
            ctime: (st.st_ctime, st.st_ctime_nsec as i64),
        }
    }

    fn of(st: io::Result<Stat>) -> io::Result<Meta> {
        st.map(|st| Meta::from_stat(&st))
    }

    pub fn is_dir(&self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFDIR
    }

    fn same_object(&self, other: &Meta) -> bool {
        self.dev == other.dev
            && self.ino == other.ino
            && self.mode & libc::S_IFMT == other.mode & libc::S_IFMT
    }

    /// The same entry, unchanged. A directory's own times change as its entries are removed, so
    /// a directory is compared by identity; its entries are compared one by one. A file with
    /// other hard links has its change time moved by the removal of a sibling link, so then the
    /// change time is not compared (size, modification time and mode still are).
    fn unchanged(&self, now: &Meta) -> bool {
        if !self.same_object(now) {
            return false;
        }
        if self.is_dir() {
            return true;
        }
        let same = self.mode == now.mode && self.size == now.size && self.mtime == now.mtime;
        same && (self.nlink > 1 || self.ctime == now.ctime)
    }
}

/// Every entry the walk saw, by path relative to the walked root (`a/b`), and the root itself.
#[derive(Debug, Default)]
pub struct Seen {
    root: Option<Meta>,
    entries: HashMap<Vec<u8>, Meta>,
    /// Folders the walk could not read through, with why: left in place.
    unreadable: HashMap<Vec<u8>, String>,
}

impl Seen {
    /// Walk `root` through handles, never following a link, recording every entry.
    pub fn walk(root: &Path) -> io::Result<Seen> {
        let dir = Dir::open(root)?;
        let mut seen = Seen {
            root: Some(Meta::of(dir.stat_self())?),
            ..Seen::default()
        };
        seen.walk_dir(&dir, &[], 0)?;
        Ok(seen)
    }

    fn walk_dir(&mut self, dir: &Dir, rel: &[u8], depth: usize) -> io::Result<()> {
        for name in dir.names()? {
            let path = join(rel, name.to_bytes());
            let meta = match Meta::of(dir.stat_at(&name)) {
                Ok(meta) => meta,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            if !meta.is_dir() {
                self.entries.insert(path, meta);
                continue;
            }
            if depth >= MAX_DEPTH {
                let why = format!("more than {MAX_DEPTH} folders deep: not walked");
                self.unreadable.insert(path, why);
                continue;
            }
            let child = match dir.open_child(&name) {
                Ok(child) => child,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => {
                    self.unreadable
                        .insert(path, format!("cannot be read ({e})"));
                    continue;
                }
            };
            if !Meta::of(child.stat_self())?.same_object(&meta) {
                continue;
            }
            self.entries.insert(path.clone(), meta);
            if let Err(e) = self.walk_dir(&child, &path, depth + 1) {
                self.unreadable
                    .insert(path, format!("cannot be read ({e})"));
            }
        }
        Ok(())
    }

    /// Only the root: nothing inside may be removed.
    pub fn root_only(root: &Path) -> io::Result<Seen> {
        Ok(Seen {
            root: Some(Meta::of(Dir::open(root)?.stat_self())?),
            ..Seen::default()
        })
    }

    /// Whether the walk saw exactly one entry, `name`, and nothing it could not read.
    pub fn holds_only(&self, name: &[u8]) -> bool {
        self.unreadable.is_empty() && self.entries.len() == 1 && self.entries.contains_key(name)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The folders the walk saw that hold a repository, as the nested-repository probe judges
    /// them (`repo::safety::nested_repos` finds the same by walking): a `.git` entry of any kind
    /// (`Some(is a folder)`), or `HEAD` (a file), `objects/` and `refs/` (folders) like a bare
    /// repository (`None`). None lies inside another or inside the root's own `.git` folder.
    /// The last probe uses this instead of walking the directory a second time, so it judges
    /// exactly the entries the removal may delete.
    pub fn repositories(&self) -> Vec<(Vec<u8>, Option<bool>)> {
        let is = |path: Vec<u8>, dir: bool| {
            self.entries.get(&path).is_some_and(|m| {
                m.is_dir() == dir && (dir || m.mode & libc::S_IFMT == libc::S_IFREG)
            })
        };
        let mut dirs: Vec<&Vec<u8>> = self
            .entries
            .iter()
            .filter(|(path, meta)| meta.is_dir() && path.as_slice() != b".git")
            .map(|(path, _)| path)
            .collect();
        dirs.sort();
        let mut found: Vec<(Vec<u8>, Option<bool>)> = Vec::new();
        let mut holders: std::collections::HashSet<&[u8]> = std::collections::HashSet::new();
        holders.insert(b".git");
        for dir in dirs {
            let inside = dir
                .iter()
                .enumerate()
                .any(|(i, b)| *b == b'/' && holders.contains(&dir[..i]));
            if inside {
                continue;
            }
            let git = self.entries.get(&join(dir, b".git")).map(Meta::is_dir);
            let bare = git.is_none()
                && is(join(dir, b"HEAD"), false)
                && is(join(dir, b"objects"), true)
                && is(join(dir, b"refs"), true);
            if git.is_some() || bare {
                holders.insert(dir);
                found.push((dir.clone(), git));
            }
        }
        found
    }
}

fn join(rel: &[u8], name: &[u8]) -> Vec<u8> {
    let mut path = rel.to_vec();
    if !path.is_empty() {
        path.push(b'/');
    }
    path.extend_from_slice(name);
    path
}

/// Names removed in a second pass, after everything else: the rules that make build output
/// ignored (and files clean) for a probe that runs again after an interruption.
const DEFERRED: [&[u8]; 2] = [b".gitignore", b".gitattributes"];

/// What a removal left in place and why: a path and a reason.
pub type Left = Vec<(PathBuf, String)>;

/// What may be removed: entries the walk saw, minus those kept (and everything below them).
pub struct Removal<'a> {
    pub seen: &'a Seen,
    /// Relative paths kept in place and reported as left, with why (a status document that could
    /// not be archived, …).
    pub keep: HashMap<Vec<u8>, String>,
    /// Relative paths kept in place silently (the worktree's `.git` file, removed last).
    pub hold: HashMap<Vec<u8>, ()>,
}

impl Removal<'_> {
    /// Remove what the walk saw inside `root`, never `root` itself. Returns what is left.
    pub fn run(&self, root: &Path) -> Left {
        let mut left = Left::new();
        let dir = match Dir::open(root) {
            Ok(dir) => dir,
            Err(e) => {
                left.push((root.to_path_buf(), e.to_string()));
                return left;
            }
        };
        let same_root = match (Meta::of(dir.stat_self()), self.seen.root) {
            (Ok(now), Some(seen)) => seen.same_object(&now),
            _ => false,
        };
        if !same_root {
            let why = "the directory is not the one the last probe saw".to_string();
            left.push((root.to_path_buf(), why));
            return left;
        }
        // The ignore and attribute rules go last: a rerun after an interruption probes again,
        // and without them ignored build output would read as untracked work.
        self.remove_in(&dir, root, &[], true, &mut left);
        if left.is_empty() {
            self.remove_in(&dir, root, &[], false, &mut left);
        }
        left
    }

    /// Whether `rel` or a folder above it is in `set`.
    fn kept<V>(&self, rel: &[u8], set: &HashMap<Vec<u8>, V>) -> Option<Vec<u8>> {
        if set.contains_key(rel) {
            return Some(rel.to_vec());
        }
        rel.iter()
            .enumerate()
            .find(|(i, b)| **b == b'/' && set.contains_key(&rel[..*i]))
            .map(|(i, _)| rel[..i].to_vec())
    }

    /// Remove the seen entries of `dir`; true when it is now empty of everything seen. With
    /// `defer`, the `.gitignore` and `.gitattributes` files are kept for a second pass.
    fn remove_in(&self, dir: &Dir, root: &Path, rel: &[u8], defer: bool, left: &mut Left) -> bool {
        let names = match dir.names() {
            Ok(names) => names,
            Err(e) => {
                left.push((display(root, rel), e.to_string()));
                return false;
            }
        };
        let mut all = true;
        for name in &names {
            let name = name.as_c_str();
            let path = join(rel, name.to_bytes());
            if self.kept(&path, &self.hold).is_some() {
                all = false;
                continue;
            }
            if defer && DEFERRED.contains(&name.to_bytes()) {
                all = false;
                continue;
            }
            if let Some(at) = self.kept(&path, &self.keep) {
                left.push((display(root, &path), self.keep[&at].clone()));
                all = false;
                continue;
            }
            if !self.remove_entry(dir, name, root, &path, defer, left) {
                all = false;
            }
        }
        // Names that appeared while this folder was being emptied are left, and named.
        for name in dir.names().unwrap_or_default() {
            if names.binary_search(&name).is_err() {
                let path = join(rel, name.to_bytes());
                left.push((display(root, &path), "appeared after the last probe".into()));
                all = false;
            }
        }
        all
    }

    fn remove_entry(
        &self,
        dir: &Dir,
        name: &CStr,
        root: &Path,
        path: &[u8],
        defer: bool,
        left: &mut Left,
    ) -> bool {
        let shown = || display(root, path);
        if let Some(why) = self.seen.unreadable.get(path) {
            left.push((shown(), why.clone()));
            return false;
        }
        let Some(seen) = self.seen.entries.get(path) else {
            left.push((shown(), "appeared after the last probe".into()));
            return false;
        };
        if seen.is_dir() {
            failpoint::step(&format!("open {}", String::from_utf8_lossy(path)));
            let child = match dir.open_child(name) {
                Ok(child) => child,
                Err(e) => {
                    left.push((shown(), format!("changed after the last probe ({e})")));
                    return false;
                }
            };
            if !Meta::of(child.stat_self()).is_ok_and(|now| seen.same_object(&now)) {
                left.push((shown(), "changed after the last probe".into()));
                return false;
            }
            if !self.remove_in(&child, root, path, defer, left) {
                return false;
            }
        }
        failpoint::step(&format!("remove {}", String::from_utf8_lossy(path)));
        match Meta::of(dir.stat_at(name)) {
            Ok(now) if seen.unchanged(&now) => {}
            Ok(_) => {
                left.push((shown(), "changed after the last probe".into()));
                return false;
            }
            Err(e) => {
                left.push((shown(), format!("changed after the last probe ({e})")));
                return false;
            }
        }
        match dir.unlink_at(name, seen.is_dir()) {
            Ok(()) => true,
            Err(e) => {
                left.push((shown(), e.to_string()));
                false
            }
        }
    }
}

fn display(root: &Path, rel: &[u8]) -> PathBuf {
    if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(OsStr::from_bytes(rel))
    }
}

/// Remove `path` and everything below it through handles, never following a link (the
/// administrative directory: git's own files, judged by the probes before). Returns what is left.
pub fn remove_all(path: &Path, left: &mut Left) {
    let meta = match path.symlink_metadata() {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return,
        Err(e) => return left.push((path.to_path_buf(), e.to_string())),
    };
    if !meta.is_dir() {
        if let Err(e) = std::fs::remove_file(path) {
            left.push((path.to_path_buf(), e.to_string()));
        }
        return;
    }
    // std's remove_dir_all works relative to directory handles and never follows a link.
    if let Err(e) = std::fs::remove_dir_all(path) {
        left.push((path.to_path_buf(), e.to_string()));
    }
}

/// Sixteen hex digits from the kernel's random source (the process id and the clock if it cannot
/// be read): the aside name's token, unique to one teardown.
pub fn token() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 8];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        bytes = (nanos ^ (u64::from(std::process::id()) << 32)).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
