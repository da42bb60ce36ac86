//! The fast scan of a worktree (SPEC §11: held to the cost of `git status`), done the way git
//! does it rather than the way libgit2's `statuses()` does.
//!
//! libgit2 diffs HEAD's tree against the index by reading every tree of the commit (10,000 trees
//! inflated on a 100,000-file repository), then lstats every file on one thread. git instead
//! skips the HEAD–index diff where the index's cache-tree says a folder is unchanged, and lstats
//! in parallel. So: parse the index ourselves (libgit2 does not expose the cache-tree), compare
//! HEAD against it through the cache-tree, lstat the entries on two threads while this one walks
//! the folders for untracked files, and ask libgit2 only about the few files whose stat data does
//! not settle the question (it applies filters and config we do not). Anything unusual (split or
//! sparse index, submodules, case-insensitive or symlink-less checkouts) returns `None` and the
//! caller falls back to libgit2.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use anyhow::Result;
use git2::{Repository, Status};

use super::WorktreeStatus;
use super::index_file::{CacheTree, Entry, StatData, parse_index};

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

/// Scan the worktree of `repo`; `None` when the repository needs libgit2's general path.
pub fn scan(repo: &Repository, exempt: &str) -> Result<Option<WorktreeStatus>> {
    let Some(workdir) = repo.workdir() else {
        return Ok(None);
    };
    if !plain_config(repo) {
        return Ok(None);
    }
    let index_path = repo.path().join("index");
    let Ok(bytes) = std::fs::read(&index_path) else {
        return Ok(None);
    };
    let index_mtime = std::fs::metadata(&index_path)?.mtime();
    let Some((entries, cache_tree)) = parse_index(&bytes) else {
        return Ok(None);
    };
    if entries.iter().any(|e| e.mode == GITLINK) {
        return Ok(None);
    }
    let verdicts = std::thread::scope(|s| {
        let half = entries.len() / 2;
        let (first, second) = entries.split_at(half);
        let a = s.spawn(|| lstat_all(workdir, first, index_mtime));
        let b = s.spawn(|| lstat_all(workdir, second, index_mtime));
        let walked = Walk::run(repo, workdir, &entries, exempt);
        let staged = staged_paths(repo, &entries, cache_tree.as_ref());
        let mut verdicts = a.join().expect("lstat thread");
        verdicts.extend(b.join().expect("lstat thread"));
        (walked, staged, verdicts)
    });
    let (walked, staged, verdicts) = verdicts;
    let (walked, staged) = (walked?, staged?);
    let mut dirty: Vec<Vec<u8>> = staged;
    for (entry, verdict) in entries.iter().zip(&verdicts) {
        let under_moved = walked
            .not_dirs
            .iter()
            .any(|d| entry.path.starts_with(d) && entry.path.get(d.len()) == Some(&b'/'));
        let is_dirty = match verdict {
            Verdict::Clean => under_moved,
            Verdict::Dirty => true,
            Verdict::Unsure => under_moved || content_dirty(repo, &entry.path),
        };
        if is_dirty {
            dirty.push(entry.path.clone());
        }
    }
    Ok(Some(WorktreeStatus {
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
        .map(|p| String::from_utf8_lossy(&p).into_owned())
        .collect()
}

/// Settings under which stat data and byte-wise path lookups mean what git means by them.
fn plain_config(repo: &Repository) -> bool {
    let Ok(config) = repo.config() else {
        return false;
    };
    let flag = |name: &str, default: bool| config.get_bool(name).unwrap_or(default);
    !flag("core.ignorecase", false)
        && flag("core.symlinks", true)
        && !flag("core.splitindex", false)
}

/// libgit2's verdict on one tracked file (filters, `core.filemode`, racy entries all handled).
fn content_dirty(repo: &Repository, path: &[u8]) -> bool {
    match repo.status_file(Path::new(OsStr::from_bytes(path))) {
        Ok(status) => !(status - Status::IGNORED).is_empty(),
        Err(_) => true,
    }
}

/// lstat each entry and compare with its stat data.
fn lstat_all(workdir: &Path, entries: &[Entry], index_mtime: i64) -> Vec<Verdict> {
    entries
        .iter()
        .map(|e| lstat_one(workdir, e, index_mtime))
        .collect()
}

fn lstat_one(workdir: &Path, entry: &Entry, index_mtime: i64) -> Verdict {
    if entry.stage != 0 || entry.intent_to_add {
        return Verdict::Dirty;
    }
    if entry.skip_worktree || entry.assume_valid {
        return Verdict::Clean;
    }
    let Ok(meta) = std::fs::symlink_metadata(workdir.join(OsStr::from_bytes(&entry.path))) else {
        return Verdict::Dirty;
    };
    let ft = meta.file_type();
    let kind_matches = match entry.mode {
        SYMLINK => ft.is_symlink(),
        EXECUTABLE => ft.is_file() && meta.mode() & 0o100 != 0,
        _ => ft.is_file() && meta.mode() & 0o100 == 0,
    };
    let stat = StatData {
        ctime: (meta.ctime() as u32, meta.ctime_nsec() as u32),
        mtime: (meta.mtime() as u32, meta.mtime_nsec() as u32),
        ino: meta.ino() as u32,
        uid: meta.uid(),
        gid: meta.gid(),
        size: meta.size() as u32,
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
    let mut dirs: HashSet<Vec<u8>> = HashSet::new();
    let mut files: HashSet<Vec<u8>> = HashSet::new();
    for item in tree.iter().flat_map(|t| t.iter()) {
        let name = item.name_bytes().to_vec();
        let path = [prefix, &name].concat();
        if item.kind() == Some(git2::ObjectType::Tree) {
            let sub = repo.find_tree(item.id())?;
            let child = cache.and_then(|c| c.children.iter().find(|n| n.name == name));
            let dir = [path.as_slice(), b"/"].concat();
            compare_tree(repo, Some(&sub), under, child, &dir, out)?;
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
    for entry in under {
        let rest = &entry.path[prefix.len()..];
        let in_head = match rest.iter().position(|&b| b == b'/') {
            Some(slash) => dirs.contains(&rest[..slash]),
            None => files.contains(rest),
        };
        if !in_head || entry.stage != 0 {
            out.push(entry.path.clone());
        }
    }
    Ok(())
}

/// The contiguous run of (sorted) entries whose path starts with `prefix`.
fn range_under<'e>(entries: &'e [Entry], prefix: &[u8]) -> &'e [Entry] {
    let start = entries.partition_point(|e| e.path.as_slice() < prefix);
    let len = entries[start..].partition_point(|e| e.path.starts_with(prefix));
    &entries[start..start + len]
}

/// The folder walk for untracked files.
struct Walk<'a> {
    repo: &'a Repository,
    workdir: &'a Path,
    files: HashSet<&'a [u8]>,
    dirs: HashSet<&'a [u8]>,
    untracked: Vec<Vec<u8>>,
    /// Tracked folders that are no longer folders (a file or symlink took their place).
    not_dirs: Vec<Vec<u8>>,
}

/// What the walk found.
struct Walked {
    untracked: Vec<Vec<u8>>,
    not_dirs: Vec<Vec<u8>>,
}

impl<'a> Walk<'a> {
    fn run(
        repo: &'a Repository,
        workdir: &'a Path,
        entries: &'a [Entry],
        exempt: &str,
    ) -> Result<Walked> {
        let mut files = HashSet::with_capacity(entries.len());
        let mut dirs = HashSet::new();
        for entry in entries {
            files.insert(entry.path.as_slice());
            let mut path = entry.path.as_slice();
            while let Some(slash) = path.iter().rposition(|&b| b == b'/') {
                path = &path[..slash];
                if !dirs.insert(path) {
                    break;
                }
            }
        }
        let mut walk = Walk {
            repo,
            workdir,
            files,
            dirs,
            untracked: Vec::new(),
            not_dirs: Vec::new(),
        };
        walk.dir(b"", exempt)?;
        Ok(Walked {
            untracked: walk.untracked,
            not_dirs: walk.not_dirs,
        })
    }

    fn dir(&mut self, rel: &[u8], exempt: &str) -> Result<()> {
        let abs = self.workdir.join(OsStr::from_bytes(rel));
        let Ok(reader) = std::fs::read_dir(&abs) else {
            return Ok(()); // vanished or unreadable: the lstat of its entries reports them
        };
        for item in reader {
            let item = item?;
            let name = item.file_name();
            let name = name.as_bytes();
            if name == b".git" {
                continue;
            }
            let path = if rel.is_empty() {
                name.to_vec()
            } else {
                [rel, b"/", name].concat()
            };
            let is_dir = item.file_type()?.is_dir();
            let tracked_dir = self.dirs.contains(path.as_slice());
            if is_dir && tracked_dir {
                self.dir(&path, exempt)?;
                continue;
            }
            if tracked_dir {
                self.not_dirs.push(path.clone());
            }
            if (self.files.contains(path.as_slice()) && !is_dir) || path == exempt.as_bytes() {
                continue;
            }
            if self.ignored(&path) {
                continue;
            }
            if is_dir && abs.join(OsStr::from_bytes(name)).join(".git").exists() {
                self.untracked.push([path.as_slice(), b"/"].concat()); // a nested repository
            } else if is_dir {
                self.dir(&path, exempt)?;
            } else {
                self.untracked.push(path);
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
