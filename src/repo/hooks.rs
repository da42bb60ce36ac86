//! What the reference-transaction hook needs from git: where hooks live, the local branches a
//! glob guards, and whether the base already holds a branch's changes.

use std::path::PathBuf;

use anyhow::{Context, Result};
use git2::{BranchType, Oid};

use super::Repo;

impl Repo {
    /// The directory git runs hooks from, as `git rev-parse --git-path hooks` resolves it:
    /// `core.hooksPath` when set (`~/` expanded; a relative path is relative to the worktree root,
    /// where git runs hooks, or to the git dir of a bare repository), else `<common dir>/hooks`,
    /// which every linked worktree shares.
    pub fn hooks_dir(&self) -> Result<PathBuf> {
        let config = self
            .git
            .config()
            .context("cannot read the repository's git configuration")?;
        let configured = match config.get_path("core.hooksPath") {
            Ok(path) if !path.as_os_str().is_empty() => Some(path),
            Ok(_) => None,
            Err(e) if e.code() == git2::ErrorCode::NotFound => None,
            Err(e) => return Err(e).context("cannot read core.hooksPath"),
        };
        let Some(path) = configured else {
            return Ok(self.common_dir().join("hooks"));
        };
        if path.is_absolute() {
            return Ok(path);
        }
        let anchor = match self.git.workdir() {
            Some(dir) => dir.to_path_buf(),
            None => self.git.path().to_path_buf(),
        };
        Ok(anchor.join(path))
    }

    /// Whether `name` is a remote configured in this repository (`remote.<name>.url`).
    pub fn is_remote(&self, name: &str) -> bool {
        self.git.find_remote(name).is_ok()
    }

    /// Local branches whose short name (after `refs/heads/`, as bytes: a name need not be UTF-8)
    /// satisfies `keep`, with their tips; names as [`super::path_text`] writes them.
    pub fn branches_matching(&self, keep: impl Fn(&[u8]) -> bool) -> Result<Vec<(String, Oid)>> {
        let mut found = Vec::new();
        for branch in self.git.branches(Some(BranchType::Local))? {
            let (branch, _) = branch?;
            let reference = branch.get();
            let short = reference.shorthand_bytes();
            if !keep(short) {
                continue;
            }
            if let Ok(commit) = reference.peel_to_commit() {
                found.push((super::path_text(short), commit.id()));
            }
        }
        Ok(found)
    }

    /// The commit the ref named by exactly these bytes points at (peeled); a name that is not
    /// UTF-8 is found among all references. An error when the references cannot be read.
    pub fn ref_target_bytes(&self, name: &[u8]) -> Result<Option<Oid>> {
        if let Ok(name) = std::str::from_utf8(name) {
            return Ok(self.ref_target(name));
        }
        for reference in self.git.references()? {
            let reference = reference?;
            if reference.name_bytes() == name {
                return Ok(reference.peel_to_commit().ok().map(|c| c.id()));
            }
        }
        Ok(None)
    }

    /// Whether `ancestor` is `descendant` or reachable from it; unlike `is_ancestor`, a missing
    /// object is an error, so a hook that cannot walk the history refuses instead of passing.
    pub fn reaches(&self, descendant: Oid, ancestor: Oid) -> Result<bool> {
        if ancestor == descendant {
            return Ok(true);
        }
        self.git
            .graph_descendant_of(descendant, ancestor)
            .with_context(|| format!("cannot walk the history from {descendant} to {ancestor}"))
    }
}
