//! "Merged into the base" (SPEC §7, §9): the tip is reachable from the base, or the base already
//! holds the same changes (a squash or rebase merge).
//!
//! The second test merges, in memory, the branch's changes (merge base → tip) onto the base and
//! compares the result with the base's tree. Nothing is written to any worktree or ref; libgit2
//! may store an automerged blob in the object database (unreferenced, gone at the next gc).

use anyhow::{Context, Result};
use git2::{Index, MergeOptions, Oid};

use super::Repo;

/// How (whether) a branch's work is in the base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merged {
    /// The tip is the base or reachable from it.
    Reachable,
    /// The base holds the same changes under other commits (squash or rebase merge).
    SameChanges,
    /// The base lacks some of the branch's changes.
    No,
}

impl Merged {
    pub fn is_merged(self) -> bool {
        self != Merged::No
    }
}

impl Repo {
    /// Whether the work of `tip` is integrated into `base`.
    pub fn merged_into(&self, base: Oid, tip: Oid) -> Result<Merged> {
        if self.is_ancestor(tip, base) {
            return Ok(Merged::Reachable);
        }
        let Some(merge_base) = self.merge_base(base, tip) else {
            return Ok(Merged::No);
        };
        let tree = |id: Oid| -> Result<git2::Tree<'_>> {
            let commit = self.git.find_commit(id).context("reading a commit")?;
            commit.tree().context("reading a commit's tree")
        };
        let (ancestor, ours, theirs) = (tree(merge_base)?, tree(base)?, tree(tip)?);
        let mut opts = MergeOptions::new();
        opts.find_renames(true);
        let merged = self
            .git
            .merge_trees(&ancestor, &ours, &theirs, Some(&opts))
            .context("merging the branch's changes onto the base in memory")?;
        if merged.has_conflicts() {
            return Ok(Merged::No);
        }
        let mut base_index = Index::new().context("creating an in-memory index")?;
        base_index
            .read_tree(&ours)
            .context("reading the base's tree")?;
        Ok(if same_entries(&merged, &base_index) {
            Merged::SameChanges
        } else {
            Merged::No
        })
    }
}

/// Whether two (conflict-free) indexes hold the same paths with the same ids and modes.
fn same_entries(one: &Index, two: &Index) -> bool {
    let key = |e: git2::IndexEntry| (e.path, e.id, e.mode);
    let mut a: Vec<_> = one.iter().map(key).collect();
    let mut b: Vec<_> = two.iter().map(key).collect();
    a.sort();
    b.sort();
    a == b
}
