//! What a restore added, so a failure or an interruption midway removes it again (SPEC §26.5):
//! the re-created branch (deleted only while it still points where restore put it), the
//! worktree's administrative data (every folder under `<common>/worktrees/` whose `gitdir` names
//! the restored path), the worktree itself and the folders made above it, and the `worktrees`
//! folder when restore made it. Nothing that was there before restore began is touched.

use std::path::{Path, PathBuf};

use git2::Oid;

use crate::repo::{self, Repo};

/// What has been added so far.
pub struct Added {
    path: PathBuf,
    /// The topmost folder on `path`'s way (or `path` itself) that did not exist before restore.
    first_new: PathBuf,
    /// Whether `<common>/worktrees` existed before restore.
    admin_root_existed: bool,
    branch: Option<(String, Oid)>,
    worktree: bool,
}

impl Added {
    /// Nothing added yet; remembers what already exists on `path`'s way.
    pub fn new(repo: &Repo, path: &Path) -> Added {
        let first_new = path
            .ancestors()
            .take_while(|a| a.symlink_metadata().is_err())
            .last()
            .unwrap_or(path)
            .to_path_buf();
        Added {
            path: path.to_path_buf(),
            first_new,
            admin_root_existed: admin_root(repo).symlink_metadata().is_ok(),
            branch: None,
            worktree: false,
        }
    }

    /// The branch `name` was created at `at`.
    pub fn branch(&mut self, name: &str, at: Oid) {
        self.branch = Some((name.to_string(), at));
    }

    /// `git worktree add` is about to run: from now on its results are undone.
    pub fn worktree(&mut self) {
        self.worktree = true;
    }

    /// Remove what was added; `err` (why the restore stopped) says what was undone, or what
    /// could not be and how to finish by hand.
    pub fn undo(self, repo: &Repo, err: anyhow::Error) -> anyhow::Error {
        let mut left = Vec::new();
        if self.worktree {
            for admin in admin_dirs_naming(repo, &self.path) {
                if let Err(e) = std::fs::remove_dir_all(&admin) {
                    left.push(format!("{} ({e})", admin.display()));
                }
            }
            match std::fs::remove_dir_all(&self.first_new) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => left.push(format!("{} ({e})", self.first_new.display())),
            }
            if !self.admin_root_existed {
                // Only when empty: another worktree added meanwhile keeps it.
                let _ = std::fs::remove_dir(admin_root(repo));
            }
        }
        if let Some((name, at)) = &self.branch {
            let refname = format!("refs/heads/{name}");
            if let Err(e) = repo.delete_ref_if_at(&refname, *at) {
                left.push(format!("branch {name} ({e:#})"));
            }
        }
        if left.is_empty() {
            return err.context(
                "restore stopped; everything it had added was removed again (nothing changed)",
            );
        }
        err.context(format!(
            "restore stopped and could not remove all it had added: {}; remove them by hand \
             (`git worktree remove --force {}`, `git worktree prune`)",
            left.join(", "),
            self.path.display()
        ))
    }
}

fn admin_root(repo: &Repo) -> PathBuf {
    repo.common_dir().join("worktrees")
}

/// The administrative folders whose `gitdir` file names `<path>/.git`.
fn admin_dirs_naming(repo: &Repo, path: &Path) -> Vec<PathBuf> {
    let wanted = [path.join(".git"), repo::canonical(path).join(".git")];
    let Ok(entries) = std::fs::read_dir(admin_root(repo)) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| e.path())
        .filter(|dir| {
            std::fs::read_to_string(dir.join("gitdir"))
                .is_ok_and(|named| wanted.iter().any(|w| Path::new(named.trim_end()) == w))
        })
        .collect()
}
