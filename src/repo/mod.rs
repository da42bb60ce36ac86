//! All libgit2 use lives here: owned values out, "not found" as `Option`.
//!
//! Gates and commands never call libgit2 (they pass `Oid`s around, nothing else of git2).
//! Everything returned is owned: ids as `Oid`s or hex strings, paths as `PathBuf`, changes as
//! `Change`.

mod checkout;
pub mod compose;
pub mod config_file;
mod diff;
pub mod escrow;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod git_cli;
mod hooks;
pub mod ident;
mod index_file;
pub mod merged;
pub mod notes;
mod objects;
mod overlay;
pub mod quarantine;
#[cfg(feature = "fuzzing")]
pub mod reset_fuzz;
pub mod safety;
mod scan;
mod view;
mod workspace;
mod worktree;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use git2::{ErrorCode, ObjectType, Oid, Repository};

pub use diff::{Change, ChangeKind};
pub use quarantine::Shared;
pub use worktree::{WorktreeInfo, WorktreeStatus, path_text, status_of};

/// An opened repository.
pub struct Repo {
    git: Repository,
    /// Raw trees read so far (the gates' walks and path lookups).
    trees: objects::Trees,
    /// [`Repo::workdir`], canonicalised once (a `readlink` per path component each time).
    workdir: std::cell::OnceCell<Option<PathBuf>>,
    /// [`Repo::main_worktree_path`], found once (the configuration read and the path
    /// canonicalised each time otherwise).
    main_worktree: std::cell::OnceCell<Option<PathBuf>>,
    /// Where the objects of trees that are only checked go (SPEC §26.4), made on first use and
    /// removed when this handle is dropped.
    quarantine: std::cell::OnceCell<quarantine::Quarantine>,
}

/// The outcome of looking up a (possibly abbreviated) commit id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitLookup {
    Found(Oid),
    Unknown,
    Ambiguous,
    /// The id names an object that is not a commit (its type).
    NotACommit(String),
}

impl Repo {
    /// Discover the repository that `path` lies in, like `git -C path`.
    pub fn discover(path: &Path) -> Result<Repo> {
        tune();
        // One pass (`git_repository_open_ext`): `Repository::discover` finds the `.git` and
        // then opens it again, reading the gitlink and commondir files twice.
        let none: [&std::ffi::OsStr; 0] = [];
        let git = Repository::open_ext(path, git2::RepositoryOpenFlags::CROSS_FS, none)
            .map_err(|e| open_error(path, e))?;
        Ok(Repo::new(git))
    }

    /// Open the repository git's environment names (`GIT_DIR` and friends), as inside a hook.
    pub fn from_env() -> Result<Repo> {
        tune();
        let git = Repository::open_from_env().map_err(|err| {
            let dir = std::env::var_os("GIT_DIR").map_or_else(|| PathBuf::from("."), PathBuf::from);
            open_error(&dir, err).context("cannot open the repository named by git's environment")
        })?;
        Ok(Repo::new(git))
    }

    fn new(git: Repository) -> Repo {
        let trees = objects::Trees::new(git.commondir());
        Repo {
            git,
            trees,
            workdir: std::cell::OnceCell::new(),
            main_worktree: std::cell::OnceCell::new(),
            quarantine: std::cell::OnceCell::new(),
        }
    }

    /// The git common dir, shared by every worktree (`.git` of the main worktree).
    pub fn common_dir(&self) -> PathBuf {
        self.git.commondir().to_path_buf()
    }

    /// The root of the worktree this handle was opened from, canonicalised; `None` when bare.
    pub fn workdir(&self) -> Option<PathBuf> {
        let dir = self
            .workdir
            .get_or_init(|| self.git.workdir().map(canonical));
        dir.clone()
    }

    /// Look up a commit by full or abbreviated hex id.
    pub fn lookup_commit(&self, hex: &str) -> CommitLookup {
        let object = match self.git.find_object_by_prefix(hex, None) {
            Ok(object) => object,
            Err(e) if e.code() == ErrorCode::Ambiguous => return CommitLookup::Ambiguous,
            Err(_) => return CommitLookup::Unknown,
        };
        match object.kind() {
            Some(ObjectType::Commit) => CommitLookup::Found(object.id()),
            kind => CommitLookup::NotACommit(kind.map_or("unknown", |k| k.str()).into()),
        }
    }

    /// The short branch name HEAD of this handle's worktree is on (`agent/x`); `None` when
    /// detached. An unborn branch still has its name.
    pub fn head_branch(&self) -> Option<String> {
        let head = self.git.find_reference("HEAD").ok()?;
        let target = head.symbolic_target()?;
        target.strip_prefix("refs/heads/").map(str::to_string)
    }

    /// The commit `refs/heads/<branch>` points at.
    pub fn branch_tip(&self, branch: &str) -> Option<Oid> {
        self.branch_ref(&format!("refs/heads/{branch}"))
    }

    /// The commit a full ref name points at (peeled).
    pub fn ref_target(&self, refname: &str) -> Option<Oid> {
        let reference = self.git.find_reference(refname).ok()?;
        reference.peel_to_commit().ok().map(|c| c.id())
    }

    /// Resolve a revision (`main`, `origin/main`, an id, `HEAD~2`) to a commit: for `--rev`
    /// only, never for the base (see [`Repo::resolve_branch`]).
    pub fn resolve_rev(&self, rev: &str) -> Option<Oid> {
        let object = self.git.revparse_single(rev).ok()?;
        object.peel_to_commit().ok().map(|c| c.id())
    }

    /// Resolve a base NAME as a branch, never through revision DWIM (SPEC §5): `refs/heads/NAME`,
    /// else `refs/remotes/NAME`, else NAME itself when it is a full ref under `refs/heads/` or
    /// `refs/remotes/`. A tag, a note, any other ref or an object id is never a base. Returns the
    /// full ref name and the commit it points at (a ref to anything but a commit does not resolve).
    pub fn resolve_branch(&self, name: &str) -> Option<(String, Oid)> {
        let full = ["refs/heads/", "refs/remotes/"]
            .iter()
            .map(|prefix| format!("{prefix}{name}"))
            .chain(
                ["refs/heads/", "refs/remotes/"]
                    .iter()
                    .any(|prefix| name.starts_with(prefix))
                    .then(|| name.to_string()),
            );
        // Only a well-formed ref name: libgit2 would read `refs/heads//main` (`--base /main`) as
        // `refs/heads/main`, a name git itself refuses.
        full.into_iter()
            .filter(|refname| git2::Reference::is_valid_name(refname))
            .find_map(|refname| self.branch_ref(&refname).map(|id| (refname, id)))
    }

    /// The commit a branch ref points at, following symbolic refs only within `refs/heads/` and
    /// `refs/remotes/`; `None` when the ref is absent or does not end at a commit.
    fn branch_ref(&self, refname: &str) -> Option<Oid> {
        let mut reference = self.git.find_reference(refname).ok()?;
        for _ in 0..5 {
            match reference.symbolic_target() {
                None => break,
                Some(target) if is_branch_ref(target) => {
                    reference = self.git.find_reference(target).ok()?;
                }
                Some(_) => return None,
            }
        }
        let id = reference.target()?;
        let object = self.git.find_object(id, None).ok()?;
        (object.kind() == Some(ObjectType::Commit)).then_some(id)
    }

    /// The ref `refs/remotes/origin/HEAD` points at, only when it is a symbolic ref to a ref under
    /// `refs/remotes/origin/` (SPEC §5: a direct value or a target elsewhere is ignored).
    pub fn origin_head_target(&self) -> Option<String> {
        let reference = self.git.find_reference("refs/remotes/origin/HEAD").ok()?;
        let target = reference.symbolic_target()?;
        let rest = target.strip_prefix("refs/remotes/origin/")?;
        (!rest.is_empty() && rest != "HEAD").then(|| target.to_string())
    }

    /// Whether the repository is shallow (its history ends at grafted boundary commits).
    pub fn is_shallow(&self) -> bool {
        self.git.is_shallow()
    }

    /// Whether git compares paths ignoring case here (`core.ignorecase = true`).
    pub fn ignore_case(&self) -> bool {
        self.git
            .config()
            .and_then(|c| c.get_bool("core.ignorecase"))
            .unwrap_or(false)
    }

    /// Whether `ancestor` is `descendant` or reachable from it.
    pub fn is_ancestor(&self, ancestor: Oid, descendant: Oid) -> bool {
        ancestor == descendant
            || self
                .git
                .graph_descendant_of(descendant, ancestor)
                .unwrap_or(false)
    }

    /// How many commits `tip` has that `base` lacks, and `base` has that `tip` lacks (git's
    /// ahead/behind); `None` when the history cannot be walked.
    pub fn ahead_behind(&self, tip: Oid, base: Oid) -> Option<(usize, usize)> {
        self.git.graph_ahead_behind(tip, base).ok()
    }

    /// The best common ancestor of two commits.
    pub fn merge_base(&self, one: Oid, two: Oid) -> Option<Oid> {
        self.git.merge_base(one, two).ok()
    }

    /// The first line of a commit's message.
    pub fn summary(&self, id: Oid) -> Option<String> {
        let commit = self.git.find_commit(id).ok()?;
        commit.summary().map(str::to_string)
    }

    /// The parents of a commit.
    pub fn parents(&self, id: Oid) -> Vec<Oid> {
        self.git
            .find_commit(id)
            .map(|c| c.parent_ids().collect())
            .unwrap_or_default()
    }

    /// The tree id of a commit.
    pub fn tree_of(&self, id: Oid) -> Option<Oid> {
        self.git.find_commit(id).ok().map(|c| c.tree_id())
    }

    /// Number of commits reachable from `tip` but not from `base`.
    pub fn count_commits(&self, base: Option<Oid>, tip: Oid) -> Result<usize> {
        let mut walk = self.git.revwalk()?;
        walk.push(tip)?;
        if let Some(base) = base {
            walk.hide(base)?;
        }
        Ok(walk.count())
    }

    /// The blob at `path` in `commit`'s tree: `Ok(None)` when there is no file there, an error
    /// when an object on the way cannot be read or does not hash to its id (SPEC §11), so a
    /// damaged object is never taken for a missing file.
    /// `path` is text or the bytes git stores (a name need not be UTF-8, SPEC §26.4).
    pub fn read_file(&self, commit: Oid, path: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        let path = path.as_ref();
        match self.try_tree_entry(commit, path)? {
            Some((id, false)) => self.blob_at(id, path).map(Some),
            _ => Ok(None),
        }
    }

    /// The bytes of blob `id`, found at `path` (named in the error).
    fn blob_at(&self, id: Oid, path: impl AsRef<[u8]>) -> Result<Vec<u8>> {
        let blob = (self.git.find_blob(id))
            .with_context(|| format!("cannot read {} (blob {id})", path_text(path.as_ref())))?;
        Ok(blob.content().to_vec())
    }

    /// [`Repo::read_file`] for a file closegate is configured by (the configuration, a contract):
    /// a directory at `path` is an error naming it, not a missing file (SPEC §11); a submodule
    /// there is one already (its commit is no blob).
    pub fn read_config_file(&self, commit: Oid, path: &str) -> Result<Option<Vec<u8>>> {
        match self.try_tree_entry(commit, path)? {
            Some((_, true)) => anyhow::bail!("{path} is a directory, not a file"),
            Some((id, false)) => self.blob_at(id, path).map(Some),
            None => Ok(None),
        }
    }

    /// The entries of the folder at `path` in `commit`'s tree (name, id, whether a folder);
    /// empty when there is no folder there.
    pub fn list_dir(&self, commit: Oid, path: &str) -> Result<Vec<(String, Oid, bool)>> {
        let Some((id, true)) = self.try_tree_entry(commit, path)? else {
            return Ok(Vec::new());
        };
        let tree = self.trees.get(&self.git, id, self.trees.likely(commit))?;
        objects::entries(&tree)
            .map(|e| {
                let e = e.map_err(|()| anyhow::anyhow!("tree {id} is corrupt"))?;
                let name = String::from_utf8_lossy(e.name).into_owned();
                Ok((name, e.id(), e.is_tree()))
            })
            .collect()
    }

    /// The blob at `path` in `commit`'s tree, if it is a file.
    pub fn read_blob(&self, commit: Oid, path: &str) -> Option<Vec<u8>> {
        let (id, is_dir) = self.tree_entry(commit, path)?;
        if is_dir {
            return None;
        }
        let blob = self.git.find_blob(id).ok()?;
        Some(blob.content().to_vec())
    }

    /// What `path` is in `commit`'s tree: its object id and whether it is a directory.
    pub fn tree_entry(&self, commit: Oid, path: &str) -> Option<(Oid, bool)> {
        self.try_tree_entry(commit, path).ok().flatten()
    }

    /// [`Repo::tree_entry`], with an unreadable or corrupt object as an error, not as "absent".
    pub fn try_tree_entry(
        &self,
        commit: Oid,
        path: impl AsRef<[u8]>,
    ) -> Result<Option<(Oid, bool)>> {
        let entry = self.try_tree_entry_mode(commit, path)?;
        Ok(entry.map(|(id, mode)| (id, mode == 0o040000)))
    }

    /// What `path` is in `commit`'s tree: its object id and mode (as libgit2 normalises it), so
    /// a mode-only change or a file turned symlink with the same bytes is a change (SPEC §15).
    pub fn tree_entry_mode(&self, commit: Oid, path: impl AsRef<[u8]>) -> Option<(Oid, i32)> {
        self.try_tree_entry_mode(commit, path).ok().flatten()
    }

    fn try_tree_entry_mode(
        &self,
        commit: Oid,
        path: impl AsRef<[u8]>,
    ) -> Result<Option<(Oid, i32)>> {
        let mut path = path.as_ref();
        while let Some(rest) = path.strip_suffix(b"/") {
            path = rest;
        }
        let likely = self.trees.likely(commit);
        let root = self
            .git
            .find_commit(commit)
            .with_context(|| format!("cannot read commit {commit}"))?
            .tree_id();
        let mut tree = self.trees.get(&self.git, root, likely)?;
        let mut names = path.split(|&b| b == b'/').peekable();
        while let Some(name) = names.next() {
            let found = objects::find(&tree, name)
                .map_err(|()| anyhow::anyhow!("a tree of commit {commit} is corrupt"))?;
            let Some(entry) = found else {
                return Ok(None);
            };
            if names.peek().is_none() {
                return Ok(Some((entry.id(), entry.mode)));
            }
            if !entry.is_tree() {
                return Ok(None);
            }
            tree = self.trees.get(&self.git, entry.id(), likely)?;
        }
        Ok(None)
    }

    /// The blob id of `path` in `commit`, for binding approvals to a contract version.
    pub fn blob_id(&self, commit: Oid, path: &str) -> Option<Oid> {
        self.tree_entry(commit, path)
            .filter(|(_, dir)| !dir)
            .map(|(id, _)| id)
    }

    /// The files directly inside the directory `dir` of `commit`'s tree, by name, with their
    /// contents (subdirectories, links and submodules left out); empty when `dir` is no directory.
    pub fn dir_files(&self, commit: Oid, dir: &str) -> Vec<(String, Vec<u8>)> {
        let Some((id, true)) = self.tree_entry(commit, dir) else {
            return Vec::new();
        };
        let Ok(tree) = self.git.find_tree(id) else {
            return Vec::new();
        };
        tree.iter()
            .filter(|e| e.kind() == Some(ObjectType::Blob) && e.filemode() != 0o120000)
            .filter_map(|e| {
                let name = e.name()?.to_string();
                let blob = self.git.find_blob(e.id()).ok()?;
                Some((name, blob.content().to_vec()))
            })
            .collect()
    }

    /// The blob id `git hash-object` would give `bytes`.
    pub fn hash_blob(bytes: &[u8]) -> Option<Oid> {
        Oid::hash_object(ObjectType::Blob, bytes).ok()
    }
}

/// Every object read is checked against its id (SPEC §11): libgit2 re-hashes what it reads when
/// strict hash verification is on (its default, set here so nothing else can have turned it off).
/// Cost on the 100,000-file bench repository: see README "Trust model".
fn tune() {
    git2::opts::strict_hash_verification(true);
}

/// Whether a ref name is a branch: local or remote-tracking.
fn is_branch_ref(name: &str) -> bool {
    name.starts_with("refs/heads/") || name.starts_with("refs/remotes/")
}

/// Canonicalise a path (symlinks resolved); when it does not exist, drop trailing slashes only.
pub fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| {
        let text = path.to_string_lossy();
        let trimmed = text.trim_end_matches('/');
        PathBuf::from(if trimmed.is_empty() { "/" } else { trimmed })
    })
}

/// A repository libgit2 cannot open because of an extension it does not support (SPEC §15):
/// every command, the hooks included, answers exit 2 naming the extension.
#[derive(Debug)]
pub struct Unsupported(String);

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unsupported {}

/// Whether `err` is, or was caused by, an [`Unsupported`] repository.
pub fn is_unsupported(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.is::<Unsupported>())
}

/// Turn a libgit2 open error into one that names the path and, for an unsupported
/// extension (reftable, …), the extension.
fn open_error(path: &Path, err: git2::Error) -> anyhow::Error {
    let msg = err.message().to_string();
    if err.code() == ErrorCode::NotFound && msg.contains("could not find repository") {
        anyhow::anyhow!("{} is not inside a git repository", path.display())
    } else if msg.contains("extension") {
        anyhow::Error::new(Unsupported(format!(
            "cannot open the repository at {}: {msg} (libgit2 does not support this repository extension)",
            path.display()
        )))
    } else if msg.contains("object format") {
        // SPEC §15: name the extension; libgit2 says only "unknown object format 'sha256'".
        anyhow::Error::new(Unsupported(format!(
            "cannot open the repository at {}: {msg}: extensions.objectformat (libgit2 as built \
             here reads SHA-1 repositories only)",
            path.display()
        )))
    } else {
        anyhow::anyhow!("cannot open the repository at {}: {msg}", path.display())
    }
}
