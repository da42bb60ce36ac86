//! What `git status` does not show but removing a worktree would lose (SPEC §7 step 2):
//! unfinished operations, files hidden by skip-worktree / assume-unchanged, nested repositories
//! and changed submodules. Also the compare-and-delete of a branch.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use git2::{ErrorCode, IndexEntryExtendedFlag, IndexEntryFlag, ObjectType, Oid, Repository};

use super::Repo;

/// Files and directories in a worktree's admin dir that mark an unfinished operation.
const OPERATIONS: [(&str, &str); 7] = [
    ("MERGE_HEAD", "a merge"),
    ("rebase-merge", "a rebase"),
    ("rebase-apply", "a rebase (or `git am`)"),
    ("CHERRY_PICK_HEAD", "a cherry-pick"),
    ("REVERT_HEAD", "a revert"),
    ("sequencer", "a cherry-pick or revert sequence"),
    ("BISECT_LOG", "a bisect"),
];

/// The unfinished operations in a worktree, from its admin dir: `(marker, what)`.
pub fn operations_in_progress(admin_dir: &Path) -> Vec<(&'static str, &'static str)> {
    OPERATIONS
        .into_iter()
        .filter(|(marker, _)| admin_dir.join(marker).symlink_metadata().is_ok())
        .collect()
}

/// One index entry marked skip-worktree or assume-unchanged whose file differs from the commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HiddenChange {
    pub path: String,
    /// `skip-worktree` or `assume-unchanged`.
    pub flag: &'static str,
}

/// Entries of the worktree's index marked skip-worktree or assume-unchanged whose file on disk
/// differs in content from `commit` (or, for a path the commit lacks, from the index). A missing
/// file is not a change: nothing is lost with it (sparse checkouts leave such files out).
/// Content is hashed raw, without clean filters: a filter that rewrites the bytes makes a file
/// look changed, so the teardown refuses rather than guesses.
pub fn hidden_changes(worktree: &Path, commit: Oid) -> Result<Vec<HiddenChange>> {
    let repo = Repository::open(worktree)
        .with_context(|| format!("cannot open the worktree {}", worktree.display()))?;
    let index = super::scan::libgit2_index(&repo).context("cannot read the worktree's index")?;
    let tree = repo.find_commit(commit).and_then(|c| c.tree()).ok();
    let mut found = Vec::new();
    for entry in index.iter() {
        let skip = IndexEntryExtendedFlag::from_bits_truncate(entry.flags_extended)
            .contains(IndexEntryExtendedFlag::SKIP_WORKTREE);
        let assume =
            IndexEntryFlag::from_bits_truncate(entry.flags).contains(IndexEntryFlag::VALID);
        if (!skip && !assume) || entry.mode == 0o160000 {
            continue;
        }
        // The path's bytes, not a lossy string: a name that is not UTF-8 must find its file.
        let rel = Path::new(std::ffi::OsStr::from_bytes(&entry.path));
        let committed = tree
            .as_ref()
            .and_then(|t| t.get_path(rel).ok())
            .map_or(entry.id, |e| e.id());
        if file_differs(&worktree.join(rel), committed)? {
            let path = super::path_text(&entry.path);
            let flag = if skip {
                "skip-worktree"
            } else {
                "assume-unchanged"
            };
            found.push(HiddenChange { path, flag });
        }
    }
    Ok(found)
}

/// Whether the file at `path` (absent: no) hashes to another blob than `want`.
fn file_differs(path: &Path, want: Oid) -> Result<bool> {
    let meta = match path.symlink_metadata() {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let id = if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path)
            .with_context(|| format!("cannot read the link {}", path.display()))?;
        Oid::hash_object(ObjectType::Blob, target.as_os_str().as_encoded_bytes())?
    } else if meta.is_file() {
        Oid::hash_file(ObjectType::Blob, path)
            .with_context(|| format!("cannot hash {}", path.display()))?
    } else {
        // A directory where the commit has a file: whatever is inside is not in the commit.
        return Ok(true);
    };
    Ok(id != want)
}

/// A repository inside a worktree that removing the directory would delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nested {
    /// Worktree-relative path of its working directory.
    pub path: String,
    /// What it holds that would be lost.
    pub reason: String,
}

/// Every nested repository (a directory below the root holding its own `.git`, ignored places
/// included) and every submodule with changes of its own. A registered submodule (a gitlink in
/// the index) whose `.git` is a file counts only when it has changes, untracked files or a HEAD
/// other than the recorded commit; its history lives in the common dir and survives.
pub fn nested_repos(worktree: &Path) -> Result<Vec<Nested>> {
    let repo = Repository::open(worktree)
        .with_context(|| format!("cannot open the worktree {}", worktree.display()))?;
    let index = super::scan::libgit2_index(&repo).context("cannot read the worktree's index")?;
    let mut found = Vec::new();
    let mut walk = walkdir::WalkDir::new(worktree)
        .follow_links(false)
        .into_iter();
    while let Some(entry) = walk.next() {
        let entry = entry.with_context(|| format!("cannot scan {}", worktree.display()))?;
        if entry.depth() == 0 || !entry.file_type().is_dir() {
            continue;
        }
        if entry.depth() == 1 && entry.file_name() == ".git" {
            walk.skip_current_dir();
            continue;
        }
        let dot_git = entry.path().join(".git");
        let Ok(meta) = dot_git.symlink_metadata() else {
            continue;
        };
        walk.skip_current_dir();
        let rel = relative(worktree, entry.path());
        let gitlink = index
            .get_path(Path::new(&rel), 0)
            .filter(|e| e.mode == 0o160000);
        let reason = match gitlink {
            Some(link) if !meta.is_dir() => submodule_changes(entry.path(), link.id)?,
            Some(_) => Some("a submodule whose history lives inside the worktree".to_string()),
            None => Some("a repository with its own history".to_string()),
        };
        if let Some(reason) = reason {
            found.push(Nested { path: rel, reason });
        }
    }
    Ok(found)
}

/// What a submodule holds beyond the commit the superproject records, if anything.
fn submodule_changes(path: &Path, recorded: Oid) -> Result<Option<String>> {
    let Ok(sub) = Repository::open(path) else {
        return Ok(Some("a submodule that cannot be opened".into()));
    };
    let head = sub.head().ok().and_then(|h| h.target());
    if head != Some(recorded) {
        return Ok(Some(format!(
            "a submodule whose HEAD is not the recorded commit {recorded}"
        )));
    }
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true).recurse_untracked_dirs(true);
    let statuses = sub
        .statuses(Some(&mut opts))
        .with_context(|| format!("cannot read the status of the submodule {}", path.display()))?;
    let changed = statuses
        .iter()
        .filter(|s| !s.status().is_empty() && !s.status().contains(git2::Status::IGNORED))
        .count();
    Ok((changed > 0).then(|| format!("a submodule with {changed} changed or untracked file(s)")))
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// The outcome of a compare-and-delete of a branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BranchDeletion {
    Deleted,
    /// The branch no longer points at the expected commit (where it points now, if anywhere).
    Moved(Option<Oid>),
}

impl Repo {
    /// Delete `refs/heads/<branch>` only if it still points at `expected`. libgit2 compares the
    /// loaded value under the ref's lock, so a concurrent move makes the delete fail instead of
    /// losing the new commit. libgit2 runs no hooks (SPEC §15): the teardown record names the
    /// deletion instead.
    pub fn delete_branch_if_at(&self, branch: &str, expected: Oid) -> Result<BranchDeletion> {
        let name = format!("refs/heads/{branch}");
        let mut reference = match self.git.find_reference(&name) {
            Ok(r) => r,
            Err(e) if e.code() == ErrorCode::NotFound => return Ok(BranchDeletion::Moved(None)),
            Err(e) => return Err(e).with_context(|| format!("cannot read {name}")),
        };
        if reference.target() != Some(expected) {
            return Ok(BranchDeletion::Moved(reference.target()));
        }
        match reference.delete() {
            Ok(()) => Ok(BranchDeletion::Deleted),
            Err(e) if e.code() == ErrorCode::Modified => {
                Ok(BranchDeletion::Moved(self.branch_tip(branch)))
            }
            Err(e) => Err(e).with_context(|| format!("cannot delete {name}")),
        }
    }

    /// Worktrees (other than `except`) whose HEAD is `refs/heads/<branch>`.
    pub fn branch_checked_out_elsewhere(&self, branch: &str, except: &Path) -> Vec<PathBuf> {
        let want = format!("refs/heads/{branch}");
        self.worktrees()
            .into_iter()
            .filter(|w| w.path != except && w.head_ref().as_deref() == Some(want.as_str()))
            .map(|w| w.path)
            .collect()
    }
}
