//! Worktrees of a repository: the main one (which libgit2's list leaves out) and the linked ones,
//! their HEADs, and the scan of a worktree for changes and untracked files.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use git2::{Oid, Repository, Status, StatusOptions};

use super::scan::Scanned;
use super::{Repo, canonical};

/// One worktree of the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeInfo {
    /// Canonical path of the working directory.
    pub path: PathBuf,
    /// libgit2's name of a linked worktree; `None` for the main one.
    pub name: Option<String>,
    pub main: bool,
    /// Whether the working directory is on this machine.
    pub exists: bool,
    /// The lock reason when locked (empty when locked without a reason).
    pub locked: Option<String>,
    /// Its administrative directory (`.git` or `.git/worktrees/<name>`).
    pub admin_dir: PathBuf,
}

impl WorktreeInfo {
    /// The full ref HEAD points at (`refs/heads/x`), or `None` when detached or unreadable.
    pub fn head_ref(&self) -> Option<String> {
        let head = std::fs::read_to_string(self.admin_dir.join("HEAD")).ok()?;
        head.trim_end().strip_prefix("ref: ").map(str::to_string)
    }
}

/// What a worktree holds beyond its HEAD commit. Paths are as [`path_text`] writes them: a path
/// that is not UTF-8 is listed like any other, its invalid bytes escaped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorktreeStatus {
    /// Tracked paths with staged or unstaged changes.
    pub dirty: Vec<String>,
    /// Untracked, not-ignored files, one by one (inside untracked folders too).
    pub untracked: Vec<String>,
}

/// A repository path (bytes) as text: UTF-8 as it is, each byte of an invalid sequence as `\xNN`
/// (`caf\xe9.txt`), so no path is dropped and no byte of one is lost (SPEC §11). Paths are
/// compared as bytes before this; it is for reports only.
pub fn path_text(path: &[u8]) -> String {
    let mut out = String::with_capacity(path.len());
    for chunk in path.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

impl Repo {
    /// Every worktree: the main one first (when the repository is not bare), then linked ones.
    pub fn worktrees(&self) -> Vec<WorktreeInfo> {
        let common = canonical(&self.common_dir());
        let mut all = Vec::new();
        if let Some(main) = self.main_worktree(&common) {
            all.push(main);
        }
        let names = self
            .git
            .worktrees()
            .map(|a| a.iter().flatten().map(str::to_string).collect::<Vec<_>>());
        for name in names.unwrap_or_default() {
            if let Ok(wt) = self.git.find_worktree(&name) {
                let locked = match wt.is_locked() {
                    Ok(git2::WorktreeLockStatus::Locked(reason)) => {
                        Some(reason.unwrap_or_default())
                    }
                    _ => None,
                };
                all.push(WorktreeInfo {
                    path: canonical(wt.path()),
                    exists: wt.path().join(".git").exists(),
                    admin_dir: common.join("worktrees").join(&name),
                    name: Some(name),
                    main: false,
                    locked,
                });
            }
        }
        all
    }

    /// The worktree whose directory is `path` (compared canonicalised).
    pub fn worktree_at(&self, path: &Path) -> Option<WorktreeInfo> {
        let wanted = canonical(path);
        self.worktrees().into_iter().find(|w| w.path == wanted)
    }

    /// The main worktree's folder (canonical), without opening the linked ones: what
    /// [`Repo::worktrees`] lists first.
    pub fn main_worktree_path(&self) -> Option<PathBuf> {
        self.main_worktree
            .get_or_init(|| {
                self.main_worktree(&canonical(&self.common_dir()))
                    .map(|w| w.path)
            })
            .clone()
    }

    fn main_worktree(&self, common: &Path) -> Option<WorktreeInfo> {
        let path = canonical(&self.main_workdir(common)?);
        Some(WorktreeInfo {
            exists: path.is_dir(),
            path,
            name: None,
            main: true,
            locked: None,
            admin_dir: common.to_path_buf(),
        })
    }

    /// The main worktree's directory: the parent of a `.git` common dir unless the
    /// configuration says bare or names a `core.worktree`; anything else is libgit2's to decide,
    /// at the price of opening the repository a second time.
    fn main_workdir(&self, common: &Path) -> Option<PathBuf> {
        let config = self.git.config().ok()?;
        let plain = common.file_name().is_some_and(|n| n == ".git")
            && config.get_entry("core.worktree").is_err();
        if plain {
            return match config.get_bool("core.bare") {
                Ok(true) => None,
                _ => common.parent().map(Path::to_path_buf),
            };
        }
        let main = Repository::open(common).ok()?;
        if main.is_bare() {
            return None;
        }
        main.workdir().map(Path::to_path_buf)
    }

    /// The commit HEAD of the worktree at `path` points at.
    pub fn worktree_head(&self, path: &Path) -> Option<Oid> {
        let head = |repo: &Repository| repo.head().ok()?.peel_to_commit().ok().map(|c| c.id());
        self.in_worktree(path, head).ok().flatten()
    }

    /// Run `f` on a handle opened in the worktree at `path`: this one when it was opened there
    /// (the usual case: the checked worktree), so the repository is not opened twice.
    fn in_worktree<T>(&self, path: &Path, f: impl FnOnce(&Repository) -> T) -> Result<T> {
        // `path` is most often the canonical workdir itself (`inputs::open` passes it on).
        let here = self.workdir();
        match here {
            Some(dir) if dir == path || dir == canonical(path) => Ok(f(&self.git)),
            _ => {
                let repo = Repository::open(path)
                    .with_context(|| format!("cannot open the worktree {}", path.display()))?;
                Ok(f(&repo))
            }
        }
    }
}

/// Scan the worktree at `path` for changes to tracked files and for untracked files,
/// leaving out `exempt` (the status document, repo-relative).
pub fn status_of(path: &Path, exempt: &str) -> Result<WorktreeStatus> {
    let repo = Repository::open(path)
        .with_context(|| format!("cannot open the worktree {}", path.display()))?;
    status_in(&repo, path, exempt)
}

impl Repo {
    /// `status_of` the worktree at `path`, reusing this handle when it was opened there.
    pub fn status_of(&self, path: &Path, exempt: &str) -> Result<WorktreeStatus> {
        self.in_worktree(path, |repo| status_in(repo, path, exempt))?
    }
}

pub(super) fn status_in(repo: &Repository, path: &Path, exempt: &str) -> Result<WorktreeStatus> {
    let scanned = super::scan::scan(repo, exempt)
        .with_context(|| format!("cannot scan the worktree {}", path.display()))?;
    match scanned {
        Scanned::Status(status) => Ok(status),
        Scanned::General { index: None } => statuses(repo, path, exempt),
        Scanned::General { index: Some(index) } => {
            // libgit2 cannot read this index file (split or sparse): hand it the entries in
            // memory, on a handle of its own. A sparse index's folder entries have no libgit2
            // form: that combination is a gap, never a guess.
            if index.entries.iter().any(|e| e.is_sparse_dir()) {
                bail!(
                    "a sparse index in a worktree with submodules, core.ignorecase or \
                     core.symlinks=false is not supported (git sparse-checkout set --no-sparse-index)"
                );
            }
            let own = super::scan::open_at(path)?;
            if !super::scan::in_memory_index(&own, &index.entries) {
                bail!("libgit2 cannot take the index of {}", path.display());
            }
            statuses(&own, path, exempt)
        }
    }
}

/// libgit2's general (and, on large worktrees, slower) status, for what the fast scan declines.
fn statuses(repo: &Repository, path: &Path, exempt: &str) -> Result<WorktreeStatus> {
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .renames_head_to_index(false)
        .renames_index_to_workdir(false)
        .update_index(false);
    let statuses = repo
        .statuses(Some(&mut opts))
        .with_context(|| format!("cannot read the status of the worktree {}", path.display()))?;
    let mut status = WorktreeStatus::default();
    for entry in statuses.iter() {
        // The bytes: `path()` is `None` for a path that is not UTF-8, which must not vanish.
        let file = entry.path_bytes();
        if file == exempt.as_bytes() {
            continue;
        }
        // One path can be both: a file whose removal is staged and that is still on disk.
        let flags = entry.status();
        if flags.contains(Status::WT_NEW) {
            status.untracked.push(path_text(file));
        }
        if flags.intersects(!(Status::WT_NEW | Status::IGNORED | Status::CURRENT)) {
            status.dirty.push(path_text(file));
        }
    }
    Ok(status)
}
