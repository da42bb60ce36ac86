//! "Merged into the base" (SPEC §7, §9): the tip is reachable from the base, or the base already
//! holds the same changes — every path the branch changed since the merge base holds, at the
//! base tip, the very blob and mode the branch's tip holds there (a path the branch deleted is
//! absent there), the status document's path aside. That is what a squash or rebase merge
//! leaves, and what a cherry-pick of every commit or a hand-copied change leaves.
//!
//! Patch ids are never used: they ignore whitespace and hash every binary change alike, so two
//! different changes of one binary file, or of one file's indentation, would read as merged.
//! A squash merge the base changed again later is therefore not "merged": the branch's own
//! bytes are no longer all on the base, and deleting it needs a passing record.
//!
//! [`Repo::merged_into`] is the single predicate; a further way to be merged (a `land` record)
//! is one more arm there.

use anyhow::{Context, Result};
use git2::{Delta, DiffOptions, Oid, Tree};

use super::Repo;

/// How (whether) a branch's work is in the base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merged {
    /// The tip is the base or reachable from it.
    Reachable,
    /// The base holds the branch's changes byte for byte under other commits (a squash, rebase
    /// or cherry-pick merge, or the same change made by hand).
    SameChanges,
    /// The base lacks some of the branch's changes.
    No,
}

impl Merged {
    pub fn is_merged(self) -> bool {
        self != Merged::No
    }
}

/// What the branch left at one path it changed: the blob id and mode, or `None` when deleted.
pub type Change = (Vec<u8>, Option<(Oid, u32)>);

impl Repo {
    /// Whether the work of `tip` is integrated into `base`, `status_file` (the status document's
    /// repository-relative path) aside.
    pub fn merged_into(&self, base: Oid, tip: Oid, status_file: &str) -> Result<Merged> {
        if self.is_ancestor(tip, base) {
            return Ok(Merged::Reachable);
        }
        let Some(merge_base) = self.merge_base(base, tip) else {
            return Ok(Merged::No);
        };
        let changes = self.change_set(merge_base, tip)?;
        Ok(if self.holds_changes(base, &changes, status_file)? {
            Merged::SameChanges
        } else {
            Merged::No
        })
    }

    /// The paths `from` → `to` changed, each with what `to` holds there (no rename detection: a
    /// rename is a deletion and an addition). A cache key is the pair of commits.
    pub fn change_set(&self, from: Oid, to: Oid) -> Result<Vec<Change>> {
        let tree = |id: Oid| -> Result<Tree<'_>> {
            let commit = self.git.find_commit(id).context("reading a commit")?;
            commit.tree().context("reading a commit's tree")
        };
        let (old, new) = (tree(from)?, tree(to)?);
        let mut opts = DiffOptions::new();
        opts.include_typechange(true);
        let diff = self
            .git
            .diff_tree_to_tree(Some(&old), Some(&new), Some(&mut opts))
            .context("diffing the branch against its merge base")?;
        let mut changes = Vec::new();
        for delta in diff.deltas() {
            let file = delta.new_file();
            let Some(path) = file.path_bytes().or(delta.old_file().path_bytes()) else {
                continue;
            };
            let now = match delta.status() {
                Delta::Deleted => None,
                _ => Some((file.id(), u32::from(file.mode()))),
            };
            changes.push((path.to_vec(), now));
        }
        Ok(changes)
    }

    /// Whether the tree of `base` holds every change of `changes` exactly (SPEC §7's blob rule).
    pub fn holds_changes(&self, base: Oid, changes: &[Change], status_file: &str) -> Result<bool> {
        let commit = self.git.find_commit(base).context("reading the base")?;
        let tree = commit.tree().context("reading the base's tree")?;
        for (path, want) in changes {
            if path.as_slice() == status_file.as_bytes() {
                continue;
            }
            let at = std::str::from_utf8(path)
                .ok()
                .and_then(|p| tree.get_path(std::path::Path::new(p)).ok());
            let at = match at {
                Some(entry) => Some((entry.id(), entry.filemode() as u32)),
                // A path that is not UTF-8 is looked up byte by byte.
                None if std::str::from_utf8(path).is_err() => entry_bytes(&self.git, &tree, path),
                None => None,
            };
            if at != *want {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The blob id and mode at `path` (bytes, `/`-separated) in `tree`, one name at a time.
fn entry_bytes(git: &git2::Repository, tree: &Tree<'_>, path: &[u8]) -> Option<(Oid, u32)> {
    let mut current = tree.clone();
    let mut parts = path.split(|b| *b == b'/').peekable();
    while let Some(name) = parts.next() {
        let (id, mode) = current
            .iter()
            .find(|e| e.name_bytes() == name)
            .map(|e| (e.id(), e.filemode() as u32))?;
        if parts.peek().is_none() {
            return Some((id, mode));
        }
        current = git.find_tree(id).ok()?;
    }
    None
}
