//! Resetting a warm workspace (SPEC §19) to a commit exactly: every tracked file the commit's
//! (content, mode, symlink target), everything else outside the `keep` paths removed, and a
//! fresh `.git` (HEAD detached at the commit, objects borrowed through alternates) as in
//! [`Repo::checkout_pristine`].
//!
//! Files already equal to the commit's are left untouched, mtime included, so builds in the
//! kept paths stay incremental. Equality is judged from the file itself (size, executable bit,
//! content hashed as a blob), never from an index or anything else the previous check could
//! have written. Nothing is followed through a symlink: a symlink where a directory should be
//! is removed, so the reset never writes outside the workspace.

use std::collections::HashMap;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use git2::{ObjectType, Oid, Repository, RepositoryInitOptions, TreeWalkMode, TreeWalkResult};

use super::Repo;

/// What the commit's tree holds at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Dir,
    File { id: Oid, exec: bool },
    Link(Oid),
}

impl Repo {
    /// Make `dir` exactly `commit`'s checkout, keeping the `keep` paths (relative, no trailing
    /// `/`) as they are.
    pub fn reset_workspace(&self, commit: Oid, dir: &Path, keep: &[String]) -> Result<()> {
        let fail = || format!("resetting the workspace {} to {commit}", dir.display());
        let tree = self
            .git
            .find_commit(commit)
            .and_then(|c| c.tree())
            .with_context(|| format!("reading commit {commit}"))?;
        let mut wants: HashMap<PathBuf, Want> = HashMap::new();
        let mut order: Vec<PathBuf> = Vec::new();
        tree.walk(TreeWalkMode::PreOrder, |root, entry| {
            let path = PathBuf::from(format!("{root}{}", entry.name().unwrap_or("")));
            let want = match entry.filemode() {
                0o040000 | 0o160000 => Want::Dir,
                0o120000 => Want::Link(entry.id()),
                0o100755 => Want::File {
                    id: entry.id(),
                    exec: true,
                },
                _ => Want::File {
                    id: entry.id(),
                    exec: false,
                },
            };
            if entry.name().is_some() {
                order.push(path.clone());
                wants.insert(path, want);
            }
            // A submodule is an empty directory, as git2's checkout leaves it.
            if entry.filemode() == 0o160000 {
                TreeWalkResult::Skip
            } else {
                TreeWalkResult::Ok
            }
        })
        .with_context(fail)?;
        fs::create_dir_all(dir).with_context(fail)?;
        let keep: Vec<PathBuf> = keep.iter().map(PathBuf::from).collect();
        prune(&self.git, dir, Path::new(""), &wants, &keep).with_context(fail)?;
        for path in &order {
            let full = dir.join(path);
            if fs::symlink_metadata(&full).is_ok() {
                continue;
            }
            match wants[path] {
                Want::Dir => fs::create_dir(&full)?,
                Want::File { id, exec } => {
                    let blob = self.git.find_blob(id)?;
                    fs::write(&full, blob.content())?;
                    let mode = if exec { 0o755 } else { 0o644 };
                    fs::set_permissions(&full, fs::Permissions::from_mode(mode))?;
                }
                Want::Link(id) => {
                    let blob = self.git.find_blob(id)?;
                    let target = std::ffi::OsStr::from_bytes(blob.content());
                    symlink(target, &full)?;
                }
            }
        }
        self.fresh_git_dir(commit, dir).with_context(fail)
    }

    /// A new `.git` in `dir`: HEAD detached at `commit`, objects through alternates, the index
    /// holding the commit's tree.
    fn fresh_git_dir(&self, commit: Oid, dir: &Path) -> Result<()> {
        let mut init = RepositoryInitOptions::new();
        init.external_template(false).no_reinit(true);
        let git_dir = Repository::init_opts(dir, &init)?.path().to_path_buf();
        let objects = super::canonical(&self.common_dir().join("objects"));
        fs::write(
            git_dir.join("objects/info/alternates"),
            format!("{}\n", objects.display()),
        )?;
        let checkout = Repository::open(&git_dir)?;
        let tree = checkout.find_commit(commit)?.tree()?;
        checkout.set_head_detached(commit)?;
        let mut index = checkout.index()?;
        index.read_tree(&tree)?;
        index.write()?;
        Ok(())
    }
}

/// Remove from `dir/rel` everything that is not the commit's and not kept; descend into
/// directories the commit has or that hold a kept path.
fn prune(
    git: &Repository,
    dir: &Path,
    rel: &Path,
    wants: &HashMap<PathBuf, Want>,
    keep: &[PathBuf],
) -> Result<()> {
    let here = dir.join(rel);
    for entry in fs::read_dir(&here).with_context(|| format!("reading {}", here.display()))? {
        let entry = entry?;
        let path = rel.join(entry.file_name());
        let full = dir.join(&path);
        if keep.contains(&path) {
            continue;
        }
        let meta = fs::symlink_metadata(&full)?;
        let holds_kept = keep.iter().any(|k| k.starts_with(&path));
        let fits = match (path.as_os_str() == ".git", wants.get(&path)) {
            (true, _) => false,
            (false, Some(Want::Dir)) => meta.is_dir(),
            (false, Some(Want::File { id, exec })) => {
                meta.is_file() && same_file(git, &full, &meta, *id, *exec)
            }
            (false, Some(Want::Link(id))) => {
                meta.file_type().is_symlink() && same_link(git, &full, *id)
            }
            (false, None) => meta.is_dir() && holds_kept,
        };
        if !fits {
            remove(&full, &meta)?;
        } else if meta.is_dir() {
            prune(git, dir, &path, wants, keep)?;
        }
    }
    Ok(())
}

fn same_file(git: &Repository, full: &Path, meta: &fs::Metadata, id: Oid, exec: bool) -> bool {
    let Ok(blob) = git.find_blob(id) else {
        return false;
    };
    // Executable as git sees it: the owner's x bit alone (git's and libgit2's rule).
    let is_exec = meta.permissions().mode() & 0o100 != 0;
    is_exec == exec
        && meta.len() == blob.size() as u64
        && Oid::hash_file(ObjectType::Blob, full).is_ok_and(|h| h == id)
}

fn same_link(git: &Repository, full: &Path, id: Oid) -> bool {
    let (Ok(blob), Ok(target)) = (git.find_blob(id), fs::read_link(full)) else {
        return false;
    };
    target.as_os_str().as_encoded_bytes() == blob.content()
}

/// Remove a file, a symlink (never what it points to) or a whole directory; a directory the
/// check made unwritable is opened first.
fn remove(full: &Path, meta: &fs::Metadata) -> Result<()> {
    let result = if meta.is_dir() {
        fs::remove_dir_all(full).or_else(|_| {
            open_up(full);
            fs::remove_dir_all(full)
        })
    } else {
        fs::remove_file(full)
    };
    result.with_context(|| format!("removing {}", full.display()))
}

/// Give the owner every right on each directory below `dir` (not following symlinks).
fn open_up(dir: &Path) {
    for entry in walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .flatten()
    {
        if entry.file_type().is_dir() {
            let _ = fs::set_permissions(entry.path(), fs::Permissions::from_mode(0o700));
        }
    }
}
