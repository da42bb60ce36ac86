//! The pristine checkout the checks gate runs in: a repository of its own in a temporary
//! directory, borrowing this repository's objects (and the run's quarantine's) through
//! `objects/info/alternates`, its HEAD
//! detached at the commit and its index and files written from the commit's tree. Checks that
//! ask git (`git describe`, `git log`, `git status`) see the exact commit and a clean checkout;
//! nothing is written to this repository (no worktree entry, no ref, no object), and its index
//! and every worktree stay untouched. Submodules are not checked out.
//!
//! The files are the tree's bytes (SPEC §26.2): libgit2's filters are off (no `text`/`eol`/`crlf`
//! conversion, no `ident` expansion, whatever `.gitattributes` or `core.autocrlf` say), and
//! libgit2 runs no hook and no configured filter program.

use std::path::Path;

use anyhow::{Context, Result, bail};
use git2::build::CheckoutBuilder;
use git2::{Oid, Repository, RepositoryInitOptions};

use super::Repo;

impl Repo {
    /// Check `commit` out into `dir`, which must lie outside every worktree.
    pub fn checkout_pristine(&self, commit: Oid, dir: &Path) -> Result<()> {
        self.ensure_outside_worktrees(dir)?;
        self.check_tree_names(commit)?;
        let fail = || format!("checking out commit {commit} into {}", dir.display());
        let mut init = RepositoryInitOptions::new();
        init.external_template(false).no_reinit(true);
        let git_dir = Repository::init_opts(dir, &init)
            .with_context(fail)?
            .path()
            .to_path_buf();
        // The object store, git's incoming quarantine in a pre-receive hook (SPEC §20) and this
        // run's quarantine, which holds the stand-in commits of overlays (SPEC §26.4).
        super::quarantine::write_alternates(&git_dir, &self.alternates()).with_context(fail)?;
        // Opened again so the object database reads the alternates file just written.
        let checkout = Repository::open(&git_dir).with_context(fail)?;
        checkout
            .find_commit(commit)
            .with_context(|| format!("reading commit {commit}"))?;
        checkout.set_head_detached(commit).with_context(fail)?;
        let mut opts = CheckoutBuilder::new();
        opts.force().recreate_missing(true).disable_filters(true);
        checkout.checkout_head(Some(&mut opts)).with_context(fail)
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
