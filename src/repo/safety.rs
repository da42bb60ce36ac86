//! What `git status` does not show but removing a worktree would lose (SPEC §7 step 2):
//! unfinished operations, files hidden by skip-worktree / assume-unchanged, nested repositories
//! and changed submodules. Also the compare-and-delete of a branch.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use git2::{ErrorCode, IndexEntryExtendedFlag, IndexEntryFlag, ObjectType, Oid, Repository};

use super::{Repo, WorktreeStatus};

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
///
/// `git_dir` is the worktree's administrative directory: its index is read there first with the
/// scan's reader (checksum verified), and when no entry carries either flag — the usual case —
/// there is nothing to compare, so the repository is not opened again and libgit2 does not read
/// the index a second time (most of this probe's cost on a large worktree).
pub fn hidden_changes(worktree: &Path, git_dir: &Path, commit: Oid) -> Result<Vec<HiddenChange>> {
    if let Some(index) = super::index_file::read(git_dir)?
        && !index.entries.iter().any(|e| {
            (e.skip_worktree || e.assume_valid) && e.mode != 0o160000 && !e.is_sparse_dir()
        })
    {
        return Ok(Vec::new());
    }
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

/// Every nested repository (a directory below the root holding its own `.git`, or holding
/// `HEAD`, `objects/` and `refs/` like a bare repository; ignored places included) and every submodule with changes of its own. A registered submodule (a gitlink in
/// the index) whose `.git` is a file counts only when it has changes, untracked files or a HEAD
/// other than the recorded commit; its history lives in the common dir and survives.
pub fn nested_repos(worktree: &Path) -> Result<Vec<Nested>> {
    let mut candidates = Vec::new();
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
        let git = match dot_git.symlink_metadata() {
            Ok(meta) => Some(meta.is_dir()),
            Err(_) if is_bare_repo(entry.path()) => None,
            Err(_) => continue,
        };
        walk.skip_current_dir();
        let path = entry.path().strip_prefix(worktree).unwrap_or(entry.path());
        candidates.push(Candidate {
            path: path.to_path_buf(),
            git,
        });
    }
    judge_nested(worktree, candidates)
}

/// A folder that holds a repository, found by a walk of the worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Worktree-relative path (its bytes: a name that is not UTF-8 must find its entry).
    pub path: PathBuf,
    /// It holds a `.git` entry (`Some(true)`: a folder); `None`: it is a bare repository by
    /// what it holds (`HEAD`, `objects/`, `refs/`).
    pub git: Option<bool>,
}

/// Judge the repositories a walk found (none inside another): which would lose something.
pub fn judge_nested(worktree: &Path, candidates: Vec<Candidate>) -> Result<Vec<Nested>> {
    // The repository and its index are read only when a `.git` is found (rarely): a gitlink
    // entry decides what kind of nested repository it is.
    let mut index: Option<git2::Index> = None;
    let admin = gitdir_of(worktree).map(|d| super::canonical(&d));
    let mut found = Vec::new();
    for Candidate { path: rel, git } in candidates {
        let path = rel.to_string_lossy().into_owned();
        let Some(git_is_dir) = git else {
            let reason = "a bare repository with its own history".to_string();
            found.push(Nested { path, reason });
            continue;
        };
        let index = match &mut index {
            Some(index) => index,
            None => index.insert(worktree_index(worktree)?),
        };
        let gitlink = index.get_path(&rel, 0).filter(|e| e.mode == 0o160000);
        let reason = match gitlink {
            // One opening of the submodule for both questions.
            Some(link) if !git_is_dir => match open_submodule(&worktree.join(&rel)) {
                None => Some("a submodule that cannot be opened".to_string()),
                Some(sub) => match changes_in(&sub, link.id)? {
                    None => unfetched_in(&sub, admin.as_deref())?,
                    changes => changes,
                },
            },
            Some(_) => Some("a submodule whose history lives inside the worktree".to_string()),
            None => Some("a repository with its own history".to_string()),
        };
        if let Some(reason) = reason {
            found.push(Nested { path, reason });
        }
    }
    Ok(found)
}

/// The index of the worktree at `worktree`, as libgit2's type.
fn worktree_index(worktree: &Path) -> Result<git2::Index> {
    let repo = Repository::open(worktree)
        .with_context(|| format!("cannot open the worktree {}", worktree.display()))?;
    super::scan::libgit2_index(&repo).context("cannot read the worktree's index")
}

/// A directory that is a repository by what it holds (`HEAD`, `objects/`, `refs/`), whatever
/// its name: a bare clone or a backup (`build/backup.git`). Nothing is followed through a link.
fn is_bare_repo(dir: &Path) -> bool {
    let is = |name: &str, dir_wanted: bool| {
        dir.join(name)
            .symlink_metadata()
            .is_ok_and(|m| if dir_wanted { m.is_dir() } else { m.is_file() })
    };
    is("HEAD", false) && is("objects", true) && is("refs", true)
}

/// What the submodule at `path` holds beyond the commit the superproject records, if anything.
fn submodule_changes(path: &Path, recorded: Oid) -> Result<Option<String>> {
    match open_submodule(path) {
        Some(sub) => changes_in(&sub, recorded),
        None => Ok(Some("a submodule that cannot be opened".into())),
    }
}

/// [`submodule_changes`] of a submodule already opened.
fn changes_in(sub: &Repository, recorded: Oid) -> Result<Option<String>> {
    let path = sub.workdir().unwrap_or(sub.path());
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

/// The commits of a submodule's own refs (branches, tags, a stash) and HEAD that none of its
/// remote-tracking branches holds, when its repository lies in `admin` (a linked worktree's administrative
/// directory, removed with the worktree): removing it would lose them. A submodule whose repository
/// lives elsewhere (the common `modules/`) keeps them.
fn unfetched_in(sub: &Repository, admin: Option<&Path>) -> Result<Option<String>> {
    let Some(admin) = admin else {
        return Ok(None);
    };
    if !super::canonical(sub.path()).starts_with(admin) {
        return Ok(None);
    }
    let mut walk = sub
        .revwalk()
        .context("cannot walk the submodule's history")?;
    let refs = sub
        .references()
        .context("cannot list the submodule's refs")?;
    let _ = walk.push_head();
    for reference in refs.flatten() {
        let (Some(name), Ok(commit)) = (reference.name(), reference.peel_to_commit()) else {
            continue;
        };
        if name.starts_with("refs/remotes/") {
            let _ = walk.hide(commit.id());
        } else {
            // Branches, tags, a stash: whatever the submodule's own refs hold.
            let _ = walk.push(commit.id());
        }
    }
    let lost = walk.flatten().count();
    Ok((lost > 0).then(|| {
        format!(
            "a submodule with {lost} commit(s) no remote-tracking branch holds, in a repository \
             the teardown removes with the worktree's administrative data"
        )
    }))
}

/// The directory a `.git` file at `dir/.git` names (`gitdir: …`), if it is one.
fn gitdir_of(dir: &Path) -> Option<PathBuf> {
    gitdir_line(&dir.join(".git")).map(|named| dir.join(named))
}

/// The path a `.git` file `link` names (`gitdir: PATH`), as written (a relative one is relative
/// to the folder whose `.git` it is); `None` when `link` is no such small regular file. Bytes,
/// so a path that is not UTF-8 is read too.
pub fn gitdir_line(link: &Path) -> Option<PathBuf> {
    let meta = link.symlink_metadata().ok()?;
    if !meta.is_file() || meta.len() > 4096 {
        return None;
    }
    let text = std::fs::read(link).ok()?;
    let text = text.strip_prefix(b"gitdir: ")?;
    let end = text
        .iter()
        .rposition(|b| !matches!(b, b'\n' | b'\r'))
        .map_or(0, |i| i + 1);
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(&text[..end])))
}

/// The submodule whose `.git` file is at `path/.git`, with `path` itself as its work tree.
///
/// A submodule of a linked worktree keeps its repository under the worktree's administrative
/// data, whose `core.worktree` names the worktree's path: once the worktree is renamed aside that
/// path is gone, and an agent could point it at a clean copy elsewhere. So the work tree is never
/// taken from there: the repository is opened as its gitdir and given `path` as its work tree.
fn open_submodule(path: &Path) -> Option<Repository> {
    let gitdir = gitdir_of(path)?;
    let repo = Repository::open_bare(&gitdir).ok()?;
    repo.set_workdir(path, false).ok()?;
    Some(repo)
}

/// Whether the gitlink at `rel` (a dirty path of the worktree at `dir`) is only reported dirty
/// because libgit2 opened its submodule at a work tree that is not `dir/rel`: the index and HEAD
/// agree on its commit and the submodule, opened at `dir/rel`, is at that commit and clean.
fn clean_submodule(
    dir: &Path,
    rel: &str,
    index: &git2::Index,
    head: Option<&git2::Tree>,
) -> Result<bool> {
    let rel_path = Path::new(rel);
    let Some(staged) = index
        .get_path(rel_path, 0)
        .filter(|e| e.mode == 0o160000)
        .map(|e| e.id)
    else {
        return Ok(false);
    };
    let committed = head.and_then(|t| t.get_path(rel_path).ok()).map(|e| e.id());
    if committed != Some(staged) {
        return Ok(false);
    }
    Ok(submodule_changes(&dir.join(rel_path), staged)?.is_none())
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

/// The status of a worktree directory that was renamed aside: libgit2 takes a linked worktree's
/// directory from its administrative `gitdir` file (the old path), so the directory is set here.
/// With `tolerate_removed`, a tracked file that is gone from disk and unchanged in the index is
/// no change: a removal that stopped midway deleted it, and its content is in the commit.
pub fn status_of_dir(dir: &Path, exempt: &str, tolerate_removed: bool) -> Result<WorktreeStatus> {
    let repo = Repository::open(dir)
        .with_context(|| format!("cannot open the worktree {}", dir.display()))?;
    repo.set_workdir(dir, false)
        .with_context(|| format!("cannot use {} as the worktree", dir.display()))?;
    let mut status = super::worktree::status_in(&repo, dir, exempt)?;
    // Only a dirty path needs the index and HEAD to tell a removal that stopped midway.
    if tolerate_removed && !status.dirty.is_empty() {
        let index =
            super::scan::libgit2_index(&repo).context("cannot read the worktree's index")?;
        let head = repo.head().ok().and_then(|h| h.peel_to_tree().ok());
        status.dirty.retain(|path| {
            let gone = dir.join(path).symlink_metadata().is_err();
            let staged = index.get_path(Path::new(path), 0).map(|e| e.id);
            let committed = head
                .as_ref()
                .and_then(|t| t.get_path(Path::new(path)).ok())
                .map(|e| e.id());
            !(gone && staged.is_some() && staged == committed)
        });
    }
    // A submodule's repository names the worktree's old path as its work tree: judge it at the
    // aside instead (a clean one is no change; one with changes stays dirty).
    if !status.dirty.is_empty() {
        let index =
            super::scan::libgit2_index(&repo).context("cannot read the worktree's index")?;
        let head = repo.head().ok().and_then(|h| h.peel_to_tree().ok());
        let mut kept = Vec::new();
        for path in std::mem::take(&mut status.dirty) {
            if !clean_submodule(dir, &path, &index, head.as_ref())? {
                kept.push(path);
            }
        }
        status.dirty = kept;
    }
    Ok(status)
}

/// Object ids named in a reflog file (both columns), in file order; an unreadable log is empty.
fn reflog_ids(path: &Path) -> Vec<Oid> {
    let Ok(text) = std::fs::read(path) else {
        return Vec::new();
    };
    text.split(|b| *b == b'\n')
        .flat_map(|line| line.split(|b| *b == b' ').take(2))
        .filter_map(|hex| std::str::from_utf8(hex).ok())
        .filter_map(|hex| Oid::from_str(hex).ok())
        .filter(|id| !id.is_zero())
        .collect()
}

/// The commits a worktree's HEAD reflog holds, but those a rebase made on its way (`rebase (pick)`,
/// `rebase -i (fixup)`, …): a rebase's result is the new HEAD or branch tip, and what it replaced
/// is the old value of its `(start)` line (also in the branch's reflog), so its intermediate
/// commits are not work of their own.
fn head_reflog_ids(path: &Path) -> Vec<Oid> {
    let Ok(text) = std::fs::read(path) else {
        return Vec::new();
    };
    let mut ids = Vec::new();
    for line in text.split(|b| *b == b'\n') {
        let message = line
            .iter()
            .position(|b| *b == b'\t')
            .map_or(&[][..], |i| &line[i + 1..]);
        let rebase = message.starts_with(b"rebase");
        let start = rebase
            && message
                .split(|b| *b == b':')
                .next()
                .is_some_and(|head| head.ends_with(b"(start)"));
        let mut cols = line.split(|b| *b == b' ').take(2);
        let parse = |hex: Option<&[u8]>| {
            let hex = std::str::from_utf8(hex?).ok()?;
            Oid::from_str(hex).ok().filter(|id| !id.is_zero())
        };
        let (old, new) = (parse(cols.next()), parse(cols.next()));
        if !rebase || start {
            ids.extend(old);
        }
        if !rebase {
            ids.extend(new);
        }
    }
    ids
}

/// The commit a HEAD file names when it is detached.
fn detached_head(admin_dir: &Path) -> Option<Oid> {
    let text = std::fs::read_to_string(admin_dir.join("HEAD")).ok()?;
    Oid::from_str(text.trim()).ok()
}

/// Refs that live in a worktree's administrative directory and go with it.
const PER_WORKTREE: [&str; 3] = ["refs/bisect/", "refs/worktree/", "refs/rewritten/"];

impl Repo {
    /// Commits the worktree's HEAD or HEAD reflog (both removed with `admin_dir`) holds that
    /// nothing surviving the teardown reaches: no ref (but `deleting`, the branch the teardown
    /// deletes), no other worktree's HEAD or HEAD reflog, no reflog of a ref. An amend or rebase on
    /// a branch leaves the old commits in the branch's reflog, so it does not count.
    pub fn unreachable_commits(
        &self,
        admin_dir: &Path,
        deleting: Option<&str>,
    ) -> Result<Vec<Oid>> {
        let mut candidates: Vec<Oid> = detached_head(admin_dir).into_iter().collect();
        candidates.extend(head_reflog_ids(&admin_dir.join("logs/HEAD")));
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let survivors = self.surviving_ids(admin_dir, deleting)?;
        let mut remaining: Vec<Oid> = candidates
            .into_iter()
            .filter(|id| !survivors.contains(id))
            .filter(|id| self.git.find_commit(*id).is_ok())
            .collect();
        remaining.sort();
        remaining.dedup();
        if remaining.is_empty() {
            return Ok(Vec::new());
        }
        let mut walk = self.git.revwalk().context("cannot walk the history")?;
        for id in &remaining {
            walk.push(*id).context("cannot walk the history")?;
        }
        for id in &survivors {
            // Refs to blobs or trees, and ids whose objects are gone, reach no commit.
            let _ = walk.hide(*id);
        }
        let mut lost = Vec::new();
        for id in walk {
            lost.push(id.context("cannot walk the history")?);
        }
        Ok(lost)
    }

    /// Paths whose staged content in the index of the worktree at `admin_dir` differs from its
    /// HEAD: when the worktree's directory is gone, that index is the only thing naming it.
    /// `Err` when the index exists and libgit2 cannot read it.
    pub fn staged_in(&self, admin_dir: &Path) -> Result<Vec<String>> {
        let path = admin_dir.join("index");
        if path.symlink_metadata().is_err() {
            return Ok(Vec::new());
        }
        let index = git2::Index::open(&path)
            .with_context(|| format!("cannot read the index {}", path.display()))?;
        let head = std::fs::read_to_string(admin_dir.join("HEAD")).unwrap_or_default();
        let id = match head.trim_end().strip_prefix("ref: ") {
            Some(name) => self.git.refname_to_id(name).ok(),
            None => Oid::from_str(head.trim()).ok(),
        };
        let tree = id.and_then(|id| self.git.find_commit(id).and_then(|c| c.tree()).ok());
        let diff = self
            .git
            .diff_tree_to_index(tree.as_ref(), Some(&index), None)
            .with_context(|| format!("cannot compare the index {} with HEAD", path.display()))?;
        Ok(diff
            .deltas()
            .filter_map(|d| d.new_file().path_bytes().or(d.old_file().path_bytes()))
            .map(super::path_text)
            .collect())
    }

    /// Every commit id a ref, a reflog or another worktree's HEAD keeps after the teardown.
    fn surviving_ids(
        &self,
        admin_dir: &Path,
        deleting: Option<&str>,
    ) -> Result<std::collections::HashSet<Oid>> {
        let deleted = deleting.map(|b| format!("refs/heads/{b}"));
        let mut ids = std::collections::HashSet::new();
        let refs = self.git.references().context("cannot list the refs")?;
        for reference in refs.flatten() {
            let Some(name) = reference.name().map(str::to_string) else {
                continue;
            };
            // Escrow refs never count as reaching a commit (SPEC §24).
            let escrow = name.starts_with(super::escrow::PREFIX);
            if escrow
                || PER_WORKTREE.iter().any(|p| name.starts_with(p))
                || Some(&name) == deleted.as_ref()
            {
                continue;
            }
            if let Ok(commit) = reference.peel_to_commit() {
                ids.insert(commit.id());
            }
        }
        let common = self.common_dir();
        let logs = common.join("logs");
        for entry in walkdir::WalkDir::new(logs.join("refs"))
            .into_iter()
            .flatten()
        {
            let rel = entry.path().strip_prefix(&logs).unwrap_or(entry.path());
            let name = rel.to_string_lossy();
            let escrow = name.starts_with(super::escrow::PREFIX);
            if escrow || !entry.file_type().is_file() || Some(name.as_ref()) == deleted.as_deref() {
                continue;
            }
            ids.extend(reflog_ids(entry.path()));
        }
        let this = super::canonical(admin_dir);
        for wt in self.worktrees() {
            if super::canonical(&wt.admin_dir) == this {
                continue;
            }
            ids.extend(detached_head(&wt.admin_dir));
            ids.extend(reflog_ids(&wt.admin_dir.join("logs/HEAD")));
        }
        Ok(ids)
    }
}
