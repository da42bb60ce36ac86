//! The pristine checkout the checks gate runs in: a commit's tree written into a directory from
//! an in-memory index (`checkout_index` with `target_dir` and `update_index(false)`), so the
//! repository's own index, HEAD, refs and every worktree stay untouched. No `.git` is written
//! and submodules are not checked out.

use std::path::Path;

use anyhow::{Context, Result, bail};
use git2::Oid;
use git2::build::CheckoutBuilder;

use super::Repo;

impl Repo {
    /// Write `commit`'s tree into `dir`, which must lie outside every worktree.
    pub fn checkout_pristine(&self, commit: Oid, dir: &Path) -> Result<()> {
        self.ensure_outside_worktrees(dir)?;
        let tree = self
            .git
            .find_commit(commit)
            .and_then(|c| c.tree())
            .with_context(|| format!("reading the tree of commit {commit}"))?;
        let mut index = git2::Index::new().context("creating an in-memory index")?;
        index
            .read_tree(&tree)
            .with_context(|| format!("reading the tree of commit {commit}"))?;
        let mut opts = CheckoutBuilder::new();
        opts.target_dir(dir)
            .force()
            .recreate_missing(true)
            .update_index(false);
        self.git
            .checkout_index(Some(&mut index), Some(&mut opts))
            .with_context(|| format!("checking out commit {commit} into {}", dir.display()))
    }

    /// Refuse a directory that lies inside a worktree (e.g. `TMPDIR` set into one).
    fn ensure_outside_worktrees(&self, dir: &Path) -> Result<()> {
        let dir = super::canonical(dir);
        for worktree in self.worktrees() {
            if dir.starts_with(&worktree.path) {
                bail!(
                    "the temporary directory {} lies inside the worktree {}; set TMPDIR elsewhere",
                    dir.display(),
                    worktree.path.display()
                );
            }
        }
        Ok(())
    }
}
