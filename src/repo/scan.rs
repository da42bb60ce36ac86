//! The fast scan of a worktree (SPEC §11: held to the cost of `git status`), done the way git
//! does it rather than the way libgit2's `statuses()` does.
//!
//! libgit2 diffs HEAD's tree against the index by reading every tree of the commit (10,000 trees
//! inflated on a 100,000-file repository), then lstats every file on one thread. git instead
//! skips the HEAD–index diff where the index's cache-tree says a folder is unchanged, and lstats
//! in parallel. So: parse the index ourselves (libgit2 does not expose the cache-tree), compare
//! HEAD against it through the cache-tree, lstat the entries on two threads while this one walks
//! the folders for untracked files (all on this thread for a small index), and ask libgit2 only
//! about the few files whose stat data does not settle the question (it applies filters and config
//! we do not). Split and sparse indexes are read here (`index_file`), where libgit2 cannot read
//! them; a sparse index's folder entry is compared with HEAD as a whole tree. Submodules and
//! case-insensitive or symlink-less checkouts go to libgit2's general path instead
//! (`Scanned::General`), handed a split index in memory.

use std::collections::HashSet;
#[cfg(target_os = "linux")]
use std::ffi::CStr;
use std::ffi::OsStr;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
#[cfg(target_os = "linux")]
use std::ptr::NonNull;

use anyhow::{Context, Result};
use git2::{Repository, Status};

use super::WorktreeStatus;
use super::index_file::{self, CacheTree, Entry, Index, StatData};

/// What the lstat of one entry says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Clean,
    Dirty,
    /// Stat data differs or is racy: only the content can tell.
    Unsure,
}

const GITLINK: u32 = 0o160000;
const SYMLINK: u32 = 0o120000;
const EXECUTABLE: u32 = 0o100755;

/// Below this many index entries the lstat runs on this thread: spawning the two lstat threads
/// costs more than they save. Fresh `closegate check` runs on 2 cores, median of 400 each:
/// at 100 entries inline is 0.12 ms faster; at 250 and 300, a tie; at 400 the two threads are
/// 0.10 ms faster, at 1,000 0.46 ms, at 100,000 ~130 ms.
const PARALLEL_LSTAT: usize = 300;

/// What the scan made of a worktree.
pub(super) enum Scanned {
    Status(WorktreeStatus),
    /// The repository needs libgit2's general path. `index` is the index when libgit2 cannot
    /// read its file (split or sparse), for libgit2 to be handed in memory.
    General {
        index: Option<Index>,
    },
}

/// Scan the worktree of `repo`.
pub(super) fn scan(repo: &Repository, exempt: &str) -> Result<Scanned> {
    let general = Scanned::General { index: None };
    let Some(workdir) = repo.workdir() else {
        return Ok(general);
    };
    let index_path = repo.path().join("index");
    let Some(index) = index_file::read(repo.path())? else {
        return Ok(general);
    };
    if !plain_config(repo) || index.entries.iter().any(|e| e.mode == GITLINK) {
        let index = index.beyond_libgit2.then_some(index);
        return Ok(Scanned::General { index });
    }
    let index_mtime = std::fs::metadata(&index_path)?.mtime();
    let Index {
        entries,
        cache_tree,
        beyond_libgit2,
    } = index;
    let (walked, staged, verdicts) = if entries.len() < PARALLEL_LSTAT {
        let verdicts = lstat_all(workdir, &entries, index_mtime);
        let walked = Walk::run(repo, workdir, &entries, exempt);
        let staged = staged_paths(repo, &entries, cache_tree.as_ref());
        (walked, staged, verdicts)
    } else {
        std::thread::scope(|s| {
            let half = entries.len() / 2;
            let (first, second) = entries.split_at(half);
            let a = s.spawn(|| lstat_all(workdir, first, index_mtime));
            let b = s.spawn(|| lstat_all(workdir, second, index_mtime));
            let walked = Walk::run(repo, workdir, &entries, exempt);
            let staged = staged_paths(repo, &entries, cache_tree.as_ref());
            let mut verdicts = a.join().expect("lstat thread");
            verdicts.extend(b.join().expect("lstat thread"));
            (walked, staged, verdicts)
        })
    };
    let (walked, staged) = (walked?, staged?);
    // Entries under a tracked folder that is no longer a folder: dirty whatever their lstat says
    // (through a symlink to a folder, it can still succeed).
    let mut moved = vec![false; entries.len()];
    for range in &walked.not_dirs {
        moved[range.clone()].fill(true);
    }
    let mut dirty: Vec<Vec<u8>> = staged;
    dirty.extend(walked.dirty);
    let mut judge = Judge::new(repo, beyond_libgit2);
    for (i, (entry, verdict)) in entries.iter().zip(&verdicts).enumerate() {
        let under_moved = moved[i];
        let is_dirty = match verdict {
            Verdict::Clean => under_moved,
            Verdict::Dirty => true,
            Verdict::Unsure => under_moved || judge.content_dirty(entry),
        };
        if is_dirty {
            dirty.push(entry.path.clone());
        }
    }
    Ok(Scanned::Status(WorktreeStatus {
        dirty: finish(dirty, exempt),
        untracked: finish(walked.untracked, exempt),
    }))
}

/// Sorted, deduplicated, as text, the exempt path left out.
fn finish(mut paths: Vec<Vec<u8>>, exempt: &str) -> Vec<String> {
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter(|p| p != exempt.as_bytes())
        .map(|p| super::path_text(&p))
        .collect()
}

/// Settings under which stat data and byte-wise path lookups mean what git means by them.
fn plain_config(repo: &Repository) -> bool {
    let Ok(config) = repo.config() else {
        return false;
    };
    let flag = |name: &str, default: bool| config.get_bool(name).unwrap_or(default);
    !flag("core.ignorecase", false) && flag("core.symlinks", true)
}

/// libgit2's verdict on the content of tracked files whose stat data settles nothing (filters,
/// `core.filemode`, racy entries all handled).
struct Judge<'r> {
    repo: &'r Repository,
    /// For an index libgit2 cannot read (split or sparse): a second handle on the worktree
    /// whose index is an in-memory one holding the entries asked about, opened on first use.
    memory: Option<Option<Repository>>,
}

impl<'r> Judge<'r> {
    fn new(repo: &'r Repository, beyond_libgit2: bool) -> Self {
        let memory = if beyond_libgit2 { Some(None) } else { None };
        Judge { repo, memory }
    }

    fn content_dirty(&mut self, entry: &Entry) -> bool {
        let repo = match &mut self.memory {
            None => self.repo,
            Some(slot) => {
                if slot.is_none() {
                    *slot = self.repo.workdir().and_then(|w| open_at(w).ok());
                }
                let Some(repo) = slot.as_ref() else {
                    return true;
                };
                if !in_memory_index(repo, std::slice::from_ref(entry)) {
                    return true;
                }
                repo
            }
        };
        match repo.status_file(Path::new(OsStr::from_bytes(&entry.path))) {
            Ok(status) => !(status - Status::IGNORED).is_empty(),
            Err(_) => true,
        }
    }
}

/// A handle of its own on the worktree at `dir`, with `dir` as its working directory: a linked
/// worktree's directory otherwise comes from its administrative `gitdir` file, which still names
/// the old path once teardown has renamed the directory aside.
pub(super) fn open_at(dir: &Path) -> Result<Repository> {
    let repo = Repository::open(dir)
        .with_context(|| format!("cannot open the worktree {}", dir.display()))?;
    repo.set_workdir(dir, false)
        .with_context(|| format!("cannot use {} as the worktree", dir.display()))?;
    Ok(repo)
}

/// Give `repo` an in-memory index holding `entries`, their times zeroed so libgit2 hashes the
/// content rather than trusting stat data; `false` when libgit2 refuses.
pub(super) fn in_memory_index(repo: &Repository, entries: &[Entry]) -> bool {
    match memory_index(entries) {
        Some(mut index) => repo.set_index(&mut index).is_ok(),
        None => false,
    }
}

/// The index of the worktree `repo` as libgit2's type: libgit2's own reading, or, for a split or
/// sparse index libgit2 cannot read, ours in memory (a sparse index's folder entries left out:
/// libgit2 has no form for them, and no file of theirs is on disk to be lost).
pub(super) fn libgit2_index(repo: &Repository) -> Result<git2::Index> {
    // Ours first: it refuses an index that is not a regular file (a FIFO would block libgit2)
    // and verifies the checksum, which libgit2 does too.
    let read = index_file::read(repo.path())?;
    let error = match repo.index() {
        Ok(index) => return Ok(index),
        Err(error) => error,
    };
    let Some(index) = read.filter(|i| i.beyond_libgit2) else {
        return Err(error.into());
    };
    let files: Vec<Entry> = index
        .entries
        .into_iter()
        .filter(|e| !e.is_sparse_dir())
        .collect();
    memory_index(&files).ok_or(error.into())
}

/// An in-memory libgit2 index of `entries` (times zeroed, see `in_memory_index`).
fn memory_index(entries: &[Entry]) -> Option<git2::Index> {
    let mut index = git2::Index::new().ok()?;
    for entry in entries {
        let flags = (entry.path.len().min(0xfff) as u16) | (entry.stage << 12);
        let mut flags_extended = 0;
        if entry.skip_worktree {
            flags_extended |= git2::IndexEntryExtendedFlag::SKIP_WORKTREE.bits();
        }
        if entry.intent_to_add {
            flags_extended |= git2::IndexEntryExtendedFlag::INTENT_TO_ADD.bits();
        }
        let zero = git2::IndexTime::new(0, 0);
        let added = index.add(&git2::IndexEntry {
            ctime: zero,
            mtime: zero,
            dev: 0,
            ino: entry.stat.ino,
            mode: entry.mode,
            uid: entry.stat.uid,
            gid: entry.stat.gid,
            file_size: entry.stat.size,
            id: entry.oid,
            flags,
            flags_extended,
            path: entry.path.clone(),
        });
        added.ok()?;
    }
    Some(index)
}

/// lstat each entry and compare with its stat data.
fn lstat_all(workdir: &Path, entries: &[Entry], index_mtime: i64) -> Vec<Verdict> {
    let mut path = Joined::new(workdir);
    entries
        .iter()
        .map(|e| lstat_one(&mut path, e, index_mtime))
        .collect()
}

fn lstat_one(path: &mut Joined, entry: &Entry, index_mtime: i64) -> Verdict {
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

/// Paths whose staged content differs from HEAD: HEAD's tree against the index, skipping every
/// folder whose cache-tree id equals HEAD's.
fn staged_paths(
    repo: &Repository,
    entries: &[Entry],
    cache: Option<&CacheTree>,
) -> Result<Vec<Vec<u8>>> {
    let head = match repo.head() {
        Ok(head) => Some(head.peel_to_tree()?),
        Err(e) if e.code() == git2::ErrorCode::UnbornBranch => None,
        Err(e) => return Err(e.into()),
    };
    let mut out = Vec::new();
    compare_tree(repo, head.as_ref(), entries, cache, b"", &mut out)?;
    Ok(out)
}

/// Compare the HEAD folder `tree` (at `prefix`, `""` or ending in `/`) with the index entries
/// under that prefix.
fn compare_tree(
    repo: &Repository,
    tree: Option<&git2::Tree>,
    entries: &[Entry],
    cache: Option<&CacheTree>,
    prefix: &[u8],
    out: &mut Vec<Vec<u8>>,
) -> Result<()> {
    if let (Some(tree), Some(oid)) = (tree, cache.and_then(|c| c.oid))
        && tree.id() == oid
    {
        return Ok(());
    }
    let under = range_under(entries, prefix);
    if let [only] = under
        && only.is_sparse_dir()
        && only.path == prefix
    {
        if tree.is_none_or(|t| t.id() != only.oid) {
            sparse_dir_changes(repo, tree, only, out);
        }
        return Ok(());
    }
    let mut dirs: HashSet<Vec<u8>> = HashSet::new();
    let mut files: HashSet<Vec<u8>> = HashSet::new();
    for item in tree.iter().flat_map(|t| t.iter()) {
        let name = item.name_bytes().to_vec();
        let path = [prefix, &name].concat();
        if item.kind() == Some(git2::ObjectType::Tree) {
            let child = cache.and_then(|c| c.children.iter().find(|n| n.name == name));
            // A subfolder the cache-tree vouches for is skipped before its tree is read.
            if child.and_then(|c| c.oid) != Some(item.id()) {
                let sub = repo.find_tree(item.id())?;
                let dir = [path.as_slice(), b"/"].concat();
                compare_tree(repo, Some(&sub), under, child, &dir, out)?;
            }
            dirs.insert(name);
            continue;
        }
        let same = under
            .binary_search_by(|e| e.path.cmp(&path))
            .is_ok_and(|i| {
                let e = &under[i];
                e.stage == 0 && e.oid == item.id() && e.mode == item.filemode() as u32
            });
        if !same {
            out.push(path);
        }
        files.insert(name);
    }
    // The index's side, one child of the folder at a time: a subfolder's entries are one run,
    // looked up in HEAD once rather than once an entry (on a folder of the 100,000-file bench,
    // that was 100,000 hashes).
    let mut at = 0;
    while at < under.len() {
        let rest = &under[at].path[prefix.len()..];
        let (run, in_head) = match rest.iter().position(|&b| b == b'/') {
            Some(slash) => {
                let name = &rest[..slash];
                let len = gallop(&under[at..], |e| in_dir(&e.path[prefix.len()..], name));
                (&under[at..at + len], dirs.contains(name))
            }
            None => (&under[at..at + 1], files.contains(rest)),
        };
        for entry in run {
            if !in_head || entry.stage != 0 {
                out.push(entry.path.clone());
            }
        }
        at += run.len();
    }
    Ok(())
}

/// The paths where a sparse index's folder entry (a whole tree, staged) differs from HEAD's
/// folder `head`; the folder itself when its tree cannot be read.
fn sparse_dir_changes(
    repo: &Repository,
    head: Option<&git2::Tree>,
    entry: &Entry,
    out: &mut Vec<Vec<u8>>,
) {
    let listed = (|| -> Option<()> {
        let staged = repo.find_tree(entry.oid).ok()?;
        let diff = repo.diff_tree_to_tree(head, Some(&staged), None).ok()?;
        for delta in diff.deltas() {
            for file in [delta.old_file(), delta.new_file()] {
                if let Some(path) = file.path_bytes() {
                    out.push([entry.path.as_slice(), path].concat());
                }
            }
        }
        Some(())
    })();
    if listed.is_none() {
        out.push(entry.path.clone());
    }
}

/// Whether `path` is inside the folder `dir` (starts with `dir/`).
fn in_dir(path: &[u8], dir: &[u8]) -> bool {
    path.len() > dir.len() && path[dir.len()] == b'/' && path.starts_with(dir)
}

/// The contiguous run of (sorted) entries whose path starts with `prefix`.
fn range_under<'e>(entries: &'e [Entry], prefix: &[u8]) -> &'e [Entry] {
    let start = entries.partition_point(|e| e.path.as_slice() < prefix);
    let len = entries[start..].partition_point(|e| e.path.starts_with(prefix));
    &entries[start..start + len]
}

/// `workdir/` and a path inside it, in one buffer reused from file to file.
struct Joined {
    bytes: Vec<u8>,
    /// The length of `workdir/`.
    base: usize,
}

impl Joined {
    fn new(workdir: &Path) -> Self {
        let mut bytes = workdir.as_os_str().as_bytes().to_vec();
        if bytes.last() != Some(&b'/') {
            bytes.push(b'/');
        }
        let base = bytes.len();
        Joined { bytes, base }
    }

    /// Make the path `workdir/rel`.
    fn set(&mut self, rel: &[u8]) {
        self.bytes.truncate(self.base);
        self.bytes.extend_from_slice(rel);
    }

    /// Call `f` with the path as a C string (NUL-terminated for the call only).
    fn with_c_str<R>(&mut self, f: impl FnOnce(*const libc::c_char) -> R) -> R {
        self.bytes.push(0);
        let result = f(self.bytes.as_ptr().cast());
        self.bytes.pop();
        result
    }

    /// `lstat(2)` of the path, straight from the buffer: std's `symlink_metadata` copies the path
    /// into a C string (scanning it for NULs) and goes through `statx`, some 300 instructions a
    /// file more.
    fn lstat(&mut self) -> std::io::Result<libc::stat> {
        let mut st = MaybeUninit::<libc::stat>::uninit();
        // SAFETY: the path is NUL-terminated for the call (index paths and file names hold no
        // NUL); lstat writes nothing but `st`.
        let rc = self.with_c_str(|path| unsafe { libc::lstat(path, st.as_mut_ptr()) });
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: lstat succeeded, so it filled `st`.
        Ok(unsafe { st.assume_init() })
    }

    fn path(&self) -> &Path {
        Path::new(OsStr::from_bytes(&self.bytes))
    }

    /// The path relative to the workdir.
    fn rel(&self) -> &[u8] {
        &self.bytes[self.base..]
    }
}

/// The folder walk for untracked files. Whether a path is a tracked file or folder is a binary
/// search among the (sorted) index entries under the folder being walked.
struct Walk<'a> {
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
}

/// What the walk found.
struct Walked {
    untracked: Vec<Vec<u8>>,
    not_dirs: Vec<Range<usize>>,
    dirty: Vec<Vec<u8>>,
}

impl<'a> Walk<'a> {
    fn run(
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
        let Some(mut reader) = Folder::open(&mut self.path) else {
            return Ok(()); // vanished or unreadable: the lstat of its entries reports them
        };
        let end = self.path.bytes.len();
        let prefix = end - self.path.base;
        while let Some(item) = reader.next() {
            let (name, kind) = item?;
            if name == b".git" {
                continue;
            }
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
                match &self.entries[inside.clone()] {
                    [only] if only.is_sparse_dir() && only.path == self.path.rel() => {
                        self.sparse_dir(only.oid)?;
                    }
                    _ => self.dir(inside)?,
                }
                continue;
            }
            if tracked_dir {
                self.not_dirs.push(inside.clone());
            }
            if (tracked_file && !is_dir) || self.path.rel() == self.exempt {
                continue;
            }
            if self.ignored(self.path.rel()) {
                continue;
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
fn file_differs(path: &Path, item: &walkdir::DirEntry, id: git2::Oid, mode: i32) -> Result<bool> {
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

/// What a folder's item is, as far as the walk needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dir,
    NotDir,
    /// The file system did not say (`DT_UNKNOWN`): lstat it.
    Unknown,
}

/// A name in a folder, and its kind.
type Item<'a> = std::io::Result<(&'a [u8], Kind)>;

/// The folder reader of the walk.
#[cfg(target_os = "linux")]
type Folder = Dir;
#[cfg(not(target_os = "linux"))]
type Folder = StdDir;

/// A folder read with `readdir(3)`, each name lent rather than copied (std's `ReadDir` allocates
/// twice an item, which was a third of the walk's instructions). Linux only, for errno's location.
#[cfg(target_os = "linux")]
struct Dir(NonNull<libc::DIR>);

#[cfg(target_os = "linux")]
impl Dir {
    fn open(path: &mut Joined) -> Option<Dir> {
        // SAFETY: the path is NUL-terminated for the call.
        let dir = path.with_c_str(|path| unsafe { libc::opendir(path) });
        NonNull::new(dir).map(Dir)
    }

    /// The next name (never `.` or `..`) and its kind.
    fn next(&mut self) -> Option<Item<'_>> {
        loop {
            // `readdir` returns null both at the end, leaving errno alone, and on an error.
            // SAFETY: errno is this thread's own.
            unsafe { *libc::__errno_location() = 0 };
            // SAFETY: the stream is open until `drop`.
            let entry = unsafe { libc::readdir(self.0.as_ptr()) };
            if entry.is_null() {
                let error = std::io::Error::last_os_error();
                return (error.raw_os_error() != Some(0)).then_some(Err(error));
            }
            // SAFETY: the entry readdir returned stays valid until the next call on the stream,
            // which the borrow of `self` rules out while the name is in use.
            let (name, kind) = unsafe {
                let entry = &*entry;
                (
                    CStr::from_ptr(entry.d_name.as_ptr()).to_bytes(),
                    entry.d_type,
                )
            };
            let kind = match kind {
                libc::DT_DIR => Kind::Dir,
                libc::DT_UNKNOWN => Kind::Unknown,
                _ => Kind::NotDir,
            };
            if name != b"." && name != b".." {
                return Some(Ok((name, kind)));
            }
        }
    }
}

#[cfg(target_os = "linux")]
impl Drop for Dir {
    fn drop(&mut self) {
        // SAFETY: the stream is open, and closed only here.
        unsafe { libc::closedir(self.0.as_ptr()) };
    }
}

/// The same reader over std's `ReadDir`, where errno's location is not known.
#[cfg_attr(target_os = "linux", allow(dead_code))]
struct StdDir {
    reader: std::fs::ReadDir,
    name: std::ffi::OsString,
}

#[cfg_attr(target_os = "linux", allow(dead_code))]
impl StdDir {
    fn open(path: &mut Joined) -> Option<StdDir> {
        let reader = std::fs::read_dir(path.path()).ok()?;
        Some(StdDir {
            reader,
            name: Default::default(),
        })
    }

    fn next(&mut self) -> Option<Item<'_>> {
        let item = match self.reader.next()? {
            Ok(item) => item,
            Err(error) => return Some(Err(error)),
        };
        let kind = match item.file_type() {
            Ok(kind) if kind.is_dir() => Kind::Dir,
            Ok(_) => Kind::NotDir,
            Err(error) => return Some(Err(error)),
        };
        self.name = item.file_name();
        Some(Ok((self.name.as_bytes(), kind)))
    }
}

/// Among `entries` (sorted, all under the same folder of length `prefix`), whether `name` in that
/// folder is a tracked file, and the range of the entries inside it as a folder (empty when it is
/// not a tracked folder).
fn lookup(entries: &[Entry], prefix: usize, name: &[u8]) -> (bool, Range<usize>) {
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
enum Place {
    Before,
    File,
    Between,
    Inside,
    After,
}

fn place(path: &[u8], name: &[u8]) -> Place {
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

/// `slice.partition_point(pred)`, probing 1, 2, 4, … items in first: as cheap as a binary search
/// on a long run and cheaper on the usual short one (often none).
fn gallop<T>(slice: &[T], pred: impl Fn(&T) -> bool) -> usize {
    let mut lo = 0; // `slice[..lo]` all satisfy `pred`
    let mut probe = 1;
    let hi = loop {
        if probe > slice.len() {
            break slice.len();
        }
        if !pred(&slice[probe - 1]) {
            break probe - 1;
        }
        lo = probe;
        probe *= 2;
    };
    lo + slice[lo..hi].partition_point(pred)
}

#[cfg(test)]
mod tests {
    use super::*;
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

    /// The names and kinds a folder reader yields, sorted by name.
    fn listing<R>(
        folder: &Path,
        open: fn(&mut Joined) -> Option<R>,
        next: fn(&mut R) -> Option<Item<'_>>,
    ) -> Option<Vec<(String, Kind)>> {
        let mut reader = open(&mut Joined::new(folder))?;
        let mut items = Vec::new();
        while let Some(item) = next(&mut reader) {
            let (name, kind) = item.unwrap();
            items.push((String::from_utf8(name.to_vec()).unwrap(), kind));
        }
        items.sort_by(|a, b| a.0.cmp(&b.0));
        Some(items)
    }

    /// `readdir` straight from libc lists what std's `ReadDir` lists (which other systems use).
    #[test]
    fn both_folder_readers_agree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.txt"), "a").unwrap();
        std::fs::write(root.join(".hidden"), "").unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::os::unix::fs::symlink("sub", root.join("link")).unwrap();
        let expected = [
            (".hidden", Kind::NotDir),
            ("a.txt", Kind::NotDir),
            ("link", Kind::NotDir),
            ("sub", Kind::Dir),
        ]
        .map(|(name, kind)| (name.to_string(), kind));
        let by_std = listing(root, StdDir::open, StdDir::next);
        assert_eq!(by_std.as_deref(), Some(&expected[..]));
        assert_eq!(listing(root, Folder::open, Folder::next), by_std);
        let gone = root.join("gone");
        assert_eq!(listing(&gone, StdDir::open, StdDir::next), None);
        assert_eq!(listing(&gone, Folder::open, Folder::next), None);
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
