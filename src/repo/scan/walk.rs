//! The walk for untracked files: folders read with the crate's one folder reader
//! (`sys::fs::Folder`, `getdents64` with names lent from a buffer reused from folder to folder),
//! each name looked up among the sorted index entries by binary search.

use std::ffi::OsStr;
use std::ops::Range;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use anyhow::Result;
use git2::Repository;

use super::super::index_file::Entry;
use super::tree::gallop;
use crate::sys::fs::{Folder, Kind};

use super::*;

/// The folder walk for untracked files. Whether a path is a tracked file or folder is a binary
/// search among the (sorted) index entries under the folder being walked.
pub(super) struct Walk<'a> {
    repo: &'a Repository,
    entries: &'a [Entry],
    exempt: &'a [u8],
    /// `workdir/` and the folder being walked (ending in `/`), then the item in hand.
    path: Joined,
    untracked: Vec<Vec<u8>>,
    /// The entries under tracked folders that are no longer folders (a file or symlink took
    /// their place), as ranges of `entries`.
    not_dirs: Vec<Range<usize>>,
    /// Files on disk inside a sparse index's folder entry that differ from its tree.
    dirty: Vec<Vec<u8>>,
    /// The folder reader's buffers, one a level of the folders being read, reused.
    buffers: Vec<Vec<u8>>,
}

/// What the walk found.
pub(super) struct Walked {
    pub(super) untracked: Vec<Vec<u8>>,
    pub(super) not_dirs: Vec<Range<usize>>,
    pub(super) dirty: Vec<Vec<u8>>,
}

impl<'a> Walk<'a> {
    pub(super) fn run(
        repo: &'a Repository,
        workdir: &Path,
        entries: &'a [Entry],
        exempt: &'a str,
    ) -> Result<Walked> {
        let mut walk = Walk {
            repo,
            entries,
            exempt: exempt.as_bytes(),
            path: Joined::new(workdir),
            untracked: Vec::new(),
            not_dirs: Vec::new(),
            dirty: Vec::new(),
            buffers: Vec::new(),
        };
        walk.dir(0..entries.len())?;
        Ok(Walked {
            untracked: walk.untracked,
            not_dirs: walk.not_dirs,
            dirty: walk.dirty,
        })
    }

    /// Walk the folder in `self.path` (`""` or ending in `/`), whose entries are `under`.
    fn dir(&mut self, under: Range<usize>) -> Result<()> {
        let mut buf = self.buffers.pop().unwrap_or_default();
        let result = self.read_dir(&mut buf, under);
        self.buffers.push(buf);
        result
    }

    /// [`Walk::dir`], reading the folder into `buf`.
    fn read_dir(&mut self, buf: &mut Vec<u8>, under: Range<usize>) -> Result<()> {
        let Ok(mut folder) = self.path.with_c_str(|path| Folder::open(path, buf)) else {
            return Ok(()); // vanished or unreadable: the lstat of its entries reports them
        };
        let end = self.path.bytes.len();
        folder.each(|name, kind| self.item(name.to_bytes(), kind, end, under.clone()))
    }

    /// One item `name` of the folder `self.path.bytes[..end]`, whose entries are `under`.
    fn item(&mut self, name: &[u8], kind: Kind, end: usize, under: Range<usize>) -> Result<()> {
        if name == b".git" {
            return Ok(());
        }
        let prefix = end - self.path.base;
        self.path.bytes.truncate(end);
        self.path.bytes.extend_from_slice(name);
        let is_dir = match kind {
            Kind::Dir => true,
            Kind::NotDir => false,
            Kind::Unknown => self.path.lstat()?.st_mode & libc::S_IFMT == libc::S_IFDIR,
        };
        let (tracked_file, inside) = lookup(&self.entries[under.clone()], prefix, name);
        let inside = under.start + inside.start..under.start + inside.end;
        let tracked_dir = !inside.is_empty();
        if is_dir && tracked_dir {
            self.path.bytes.push(b'/');
            return match &self.entries[inside.clone()] {
                [only] if only.is_sparse_dir() && only.path == self.path.rel() => {
                    self.sparse_dir(only.oid)
                }
                _ => self.dir(inside),
            };
        }
        if tracked_dir {
            self.not_dirs.push(inside.clone());
        }
        if (tracked_file && !is_dir) || self.path.rel() == self.exempt {
            return Ok(());
        }
        if self.ignored(self.path.rel()) {
            return Ok(());
        }
        if is_dir {
            let rel = [self.path.rel(), b"/"].concat();
            self.path.bytes.extend_from_slice(b"/.git");
            if self.path.path().exists() {
                self.untracked.push(rel); // a nested repository
            } else {
                self.path.bytes.truncate(end + name.len() + 1);
                self.dir(inside)?;
            }
        } else {
            self.untracked.push(self.path.rel().to_vec());
        }
        Ok(())
    }

    /// A folder a sparse index keeps as one entry (tree `oid`) that is on disk anyway, in
    /// `self.path`. git then expands the index and judges each file, and so does this: a file
    /// of the tree is dirty when its kind or content (hashed raw) differs, any other file is
    /// untracked unless ignored. Otherwise a crafted sparse index could pass edited files off
    /// as untracked ones.
    fn sparse_dir(&mut self, oid: git2::Oid) -> Result<()> {
        let tree = self.repo.find_tree(oid).ok();
        let folder = self.path.path().to_path_buf();
        let base = self.path.rel().to_vec();
        let walk = walkdir::WalkDir::new(&folder)
            .follow_links(false)
            .into_iter()
            .filter_entry(|e| e.file_name() != ".git");
        for item in walk {
            let item = item?;
            if item.file_type().is_dir() {
                continue;
            }
            let inner = item.path().strip_prefix(&folder)?;
            let rel = [base.as_slice(), inner.as_os_str().as_bytes()].concat();
            let committed = tree.as_ref().and_then(|t| t.get_path(inner).ok());
            match committed {
                Some(c) if c.kind() == Some(git2::ObjectType::Blob) => {
                    if file_differs(item.path(), &item, c.id(), c.filemode())? {
                        self.dirty.push(rel);
                    }
                }
                _ if rel == self.exempt || self.ignored(&rel) => {}
                _ => self.untracked.push(rel),
            }
        }
        Ok(())
    }

    fn ignored(&self, path: &[u8]) -> bool {
        self.repo
            .status_should_ignore(Path::new(OsStr::from_bytes(path)))
            .unwrap_or(false)
    }
}

/// Whether the file at `path` differs from the blob `id` of mode `mode` (content hashed raw).
pub(super) fn file_differs(
    path: &Path,
    item: &walkdir::DirEntry,
    id: git2::Oid,
    mode: i32,
) -> Result<bool> {
    let meta = item.metadata()?;
    let mode = mode as u32;
    let content = if meta.file_type().is_symlink() {
        if mode != SYMLINK {
            return Ok(true);
        }
        let target = std::fs::read_link(path)?;
        git2::Oid::hash_object(git2::ObjectType::Blob, target.as_os_str().as_bytes())?
    } else {
        let executable = meta.mode() & 0o100 != 0;
        if mode == SYMLINK || executable != (mode == EXECUTABLE) {
            return Ok(true);
        }
        git2::Oid::hash_file(git2::ObjectType::Blob, path)?
    };
    Ok(content != id)
}

/// Among `entries` (sorted, all under the same folder of length `prefix`), whether `name` in that
/// folder is a tracked file, and the range of the entries inside it as a folder (empty when it is
/// not a tracked folder).
pub(super) fn lookup(entries: &[Entry], prefix: usize, name: &[u8]) -> (bool, Range<usize>) {
    let place = |e: &Entry| place(&e.path[prefix..], name);
    let at = |i: usize| entries.get(i).map_or(Place::After, place);
    // Each entry is placed once past the binary search: usually the file itself and the next.
    let mut first = entries.partition_point(|e| place(e) < Place::File);
    let mut here = at(first);
    let tracked_file = here == Place::File;
    if tracked_file {
        first += 1;
        here = at(first);
    }
    if here == Place::Between {
        first += 1 + gallop(&entries[first + 1..], |e| place(e) < Place::Inside);
        here = at(first);
    }
    let mut last = first;
    if here == Place::Inside {
        last += 1 + gallop(&entries[first + 1..], |e| place(e) == Place::Inside);
    }
    (tracked_file, first..last)
}

/// Where a path sorts against the child `name` of a folder, both relative to that folder: the
/// index sorts by bytes, so `name-x` and `name.x` come between `name` and `name/…`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Place {
    Before,
    File,
    Between,
    Inside,
    After,
}

pub(super) fn place(path: &[u8], name: &[u8]) -> Place {
    // A byte loop rather than `Ord` on slices: these are short and usually differ early, where a
    // call to `memcmp` per comparison cost more than the comparison.
    let common = path.len().min(name.len());
    let mut i = 0;
    while i < common && path[i] == name[i] {
        i += 1;
    }
    if i < common {
        return if path[i] < name[i] {
            Place::Before
        } else {
            Place::After
        };
    }
    match path.get(name.len()) {
        _ if path.len() < name.len() => Place::Before,
        None => Place::File,
        Some(b'/') => Place::Inside,
        Some(&b) if b < b'/' => Place::Between,
        Some(_) => Place::After,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo::index_file::StatData;
    use crate::repo::scan::tree::range_under;
    use proptest::prelude::*;

    fn entry(path: &[u8]) -> Entry {
        let zero = (0, 0);
        Entry {
            path: path.to_vec(),
            oid: git2::Oid::zero(),
            mode: 0o100644,
            stat: StatData {
                ctime: zero,
                mtime: zero,
                ino: 0,
                uid: 0,
                gid: 0,
                size: 0,
            },
            stage: 0,
            assume_valid: false,
            skip_worktree: false,
            intent_to_add: false,
        }
    }

    /// A name from bytes that sort around `/` (`-`, `.` before it, `0`, `a` after).
    fn name() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(proptest::sample::select(&b"-.0a"[..]), 1..4)
    }

    fn path() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(name(), 1..4).prop_map(|names| names.join(&b'/'))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The binary searches find what a scan of every entry finds, in any folder.
        #[test]
        fn lookup_agrees_with_a_linear_scan(
            paths in proptest::collection::vec(path(), 0..40),
            folder in proptest::option::of(name()),
            child in name(),
        ) {
            let mut paths = paths;
            paths.sort();
            paths.dedup();
            let all: Vec<Entry> = paths.iter().map(|p| entry(p)).collect();
            let prefix = folder.map(|f| [f.as_slice(), b"/"].concat()).unwrap_or_default();
            let under = range_under(&all, &prefix);
            let (file, inside) = lookup(under, prefix.len(), &child);
            let full = [prefix.as_slice(), child.as_slice()].concat();
            let dir = [full.as_slice(), b"/"].concat();
            prop_assert_eq!(file, under.iter().any(|e| e.path == full));
            let expected: Vec<usize> = (0..under.len())
                .filter(|&i| under[i].path.starts_with(&dir))
                .collect();
            prop_assert_eq!(inside.collect::<Vec<_>>(), expected);
        }

        #[test]
        fn gallop_is_a_partition_point(len in 0usize..70, split in 0usize..70) {
            let items: Vec<usize> = (0..len).collect();
            let split = split.min(len);
            prop_assert_eq!(gallop(&items, |&i| i < split), split);
        }
    }
}
