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

mod content;
mod lstat;
mod tree;
mod walk;

use lstat::{Joined, lstat_all};
use tree::staged_paths;
use walk::{Walk, Walked};

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use anyhow::{Context, Result};
use git2::{Repository, Status};

use super::WorktreeStatus;
use super::index_file::{self, CacheTree, Entry, Index};

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

const REGULAR: u32 = 0o100644;

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
    let (walked, staged, verdicts) = three_passes(
        repo,
        workdir,
        &entries,
        cache_tree.as_ref(),
        exempt,
        index_mtime,
    );
    let (walked, staged) = (walked?, staged?);
    let mut judge = Judge::new(repo, beyond_libgit2);
    let unsure = hash_unsure(repo, workdir, &entries, &verdicts, &walked);
    let dirty = fold(&entries, &verdicts, &walked, staged, &unsure, &mut judge);
    Ok(Scanned::Status(WorktreeStatus {
        dirty: finish(dirty, exempt),
        untracked: finish(walked.untracked, exempt),
    }))
}

type Passes = (Result<Walked>, Result<Vec<Vec<u8>>>, Vec<Verdict>);

/// The lstat pass, the untracked walk and the index against HEAD: on this thread for a small
/// index, else the lstat on two threads while this one walks.
fn three_passes(
    repo: &Repository,
    workdir: &Path,
    entries: &[Entry],
    cache_tree: Option<&CacheTree>,
    exempt: &str,
    index_mtime: i64,
) -> Passes {
    if entries.len() < PARALLEL_LSTAT {
        let verdicts = lstat_all(workdir, entries, index_mtime);
        let walked = Walk::run(repo, workdir, entries, exempt);
        let staged = staged_paths(repo, entries, cache_tree);
        return (walked, staged, verdicts);
    }
    std::thread::scope(|s| {
        let half = entries.len() / 2;
        let (first, second) = entries.split_at(half);
        let a = s.spawn(|| lstat_all(workdir, first, index_mtime));
        let b = s.spawn(|| lstat_all(workdir, second, index_mtime));
        let walked = Walk::run(repo, workdir, entries, exempt);
        let staged = staged_paths(repo, entries, cache_tree);
        let mut verdicts = a.join().expect("lstat thread");
        verdicts.extend(b.join().expect("lstat thread"));
        (walked, staged, verdicts)
    })
}

/// The content verdict of every unsure entry (by position), hashed ahead of the fold; a
/// difference counts as a change only when no attributes could hide it (else libgit2 decides).
fn hash_unsure(
    repo: &Repository,
    workdir: &Path,
    entries: &[Entry],
    verdicts: &[Verdict],
    walked: &Walked,
) -> std::collections::HashMap<usize, content::Content> {
    let unsure: Vec<usize> = (0..entries.len())
        .filter(|i| verdicts[*i] == Verdict::Unsure)
        .collect();
    if unsure.is_empty() {
        return Default::default();
    }
    let refs: Vec<&Entry> = unsure.iter().map(|i| &entries[*i]).collect();
    let mut judged = content::judge_all(workdir, &refs);
    if !content::bytes_are_content(repo, entries, &walked.untracked) {
        for c in &mut judged {
            if *c == content::Content::Differs {
                *c = content::Content::Ask;
            }
        }
    }
    unsure.into_iter().zip(judged).collect()
}

/// The dirty paths: staged changes, the walk's, and each entry by its lstat verdict (the unsure
/// by their hashed content, asking libgit2 about what that does not settle).
fn fold(
    entries: &[Entry],
    verdicts: &[Verdict],
    walked: &Walked,
    staged: Vec<Vec<u8>>,
    unsure: &std::collections::HashMap<usize, content::Content>,
    judge: &mut Judge,
) -> Vec<Vec<u8>> {
    // Entries under a tracked folder that is no longer a folder: dirty whatever their lstat says
    // (through a symlink to a folder, it can still succeed).
    let mut moved = vec![false; entries.len()];
    for range in &walked.not_dirs {
        moved[range.clone()].fill(true);
    }
    let mut dirty = staged;
    dirty.extend(walked.dirty.iter().cloned());
    for (i, (entry, verdict)) in entries.iter().zip(verdicts).enumerate() {
        let under_moved = moved[i];
        let is_dirty = match verdict {
            Verdict::Clean => under_moved,
            Verdict::Dirty => true,
            Verdict::Unsure => {
                under_moved
                    || match unsure.get(&i) {
                        Some(content::Content::Same) => false,
                        Some(content::Content::Differs) => true,
                        _ => judge.content_dirty(entry),
                    }
            }
        };
        if is_dirty {
            dirty.push(entry.path.clone());
        }
    }
    dirty
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
