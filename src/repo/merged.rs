//! "Merged into the base" (SPEC §7, §9): the tip is reachable from the base, or the base already
//! holds the same changes (a squash or rebase merge).
//!
//! The second test merges, in memory, the branch's changes (merge base → tip) onto the base and
//! compares the result with the base's tree. Nothing is written to any worktree or ref; libgit2
//! may store an automerged blob in the object database (unreferenced, gone at the next gc).
//!
//! The third test catches what the second cannot: a squash or rebase merge that the base later
//! changed in the same files (the branch's changes no longer apply cleanly, yet they are in). It
//! compares patch ids (`git patch-id --stable`, libgit2's `git_diff_patchid`): the branch's whole
//! change (merge base → tip) against each commit the base gained since the merge base (a squash
//! merge), and each of the branch's own commits against them (a rebase merge, as `git cherry`
//! does). Only base commits that change exactly the same set of paths have their patch id
//! computed, and at most [`PATCH_ID_WALK`] base commits are looked at: past that the branch is
//! reported unmerged, the safe answer for a branch about to be deleted.

use std::collections::{BTreeSet, HashMap, HashSet};

use anyhow::{Context, Result};
use git2::{Diff, DiffOptions, Index, MergeOptions, Oid, Sort};

use super::Repo;

/// How (whether) a branch's work is in the base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merged {
    /// The tip is the base or reachable from it.
    Reachable,
    /// The base holds the same changes under other commits (squash or rebase merge).
    SameChanges,
    /// The base holds a commit with the same patch id as the branch's whole change (a squash
    /// merge), or one for each of the branch's commits (a rebase merge), and changed those files
    /// again since.
    SamePatch,
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
        if !merged.has_conflicts() {
            let mut base_index = Index::new().context("creating an in-memory index")?;
            base_index
                .read_tree(&ours)
                .context("reading the base's tree")?;
            if same_entries(&merged, &base_index) {
                return Ok(Merged::SameChanges);
            }
        }
        Ok(if self.same_patch(merge_base, base, tip)? {
            Merged::SamePatch
        } else {
            Merged::No
        })
    }

    /// Whether a commit the base gained since `merge_base` carries the branch's whole change, or
    /// commits there carry each of the branch's own commits, by patch id.
    fn same_patch(&self, merge_base: Oid, base: Oid, tip: Oid) -> Result<bool> {
        let whole = self.patch(Some(merge_base), tip)?;
        if whole.paths.is_empty() {
            return Ok(false);
        }
        let (Some(branch), Some(gained)) = (
            self.commits_since(merge_base, tip, PATCH_ID_WALK)?,
            self.commits_since(merge_base, base, PATCH_ID_WALK)?,
        ) else {
            return Ok(false);
        };
        let mut own = Vec::new();
        for &commit in &branch {
            match self.parents(commit)[..] {
                [parent] => own.push(self.patch(Some(parent), commit)?),
                // A merge on the branch has no patch of its own: only the squash test applies.
                _ => {
                    own.clear();
                    break;
                }
            }
        }
        own.retain(|p| !p.paths.is_empty());
        let mut wanted: HashMap<BTreeSet<String>, Vec<&Patch>> = HashMap::new();
        for patch in std::iter::once(&whole).chain(&own) {
            wanted.entry(patch.paths.clone()).or_default().push(patch);
        }
        let mut found: HashSet<Oid> = HashSet::new();
        for commit in gained {
            let [parent] = self.parents(commit)[..] else {
                continue;
            };
            let diff = self.tree_diff(Some(parent), commit)?;
            let Some(candidates) = wanted.get(&diff_paths(&diff)) else {
                continue;
            };
            let id = diff.patchid(None).context("computing a patch id")?;
            if candidates.iter().any(|p| p.id == id) {
                found.insert(id);
            }
        }
        let squashed = found.contains(&whole.id);
        let rebased = !own.is_empty() && own.iter().all(|p| found.contains(&p.id));
        Ok(squashed || rebased)
    }

    /// The commits reachable from `tip` and not from `merge_base` (newest first); `None` past
    /// `max` of them, so a long walk reads as "not merged".
    fn commits_since(&self, merge_base: Oid, tip: Oid, max: usize) -> Result<Option<Vec<Oid>>> {
        let mut walk = self.git.revwalk().context("walking the history")?;
        walk.set_sorting(Sort::TOPOLOGICAL)?;
        walk.push(tip)?;
        walk.hide(merge_base)?;
        let mut commits = Vec::new();
        for id in walk {
            commits.push(id.context("walking the history")?);
            if commits.len() > max {
                return Ok(None);
            }
        }
        Ok(Some(commits))
    }

    fn tree_diff(&self, from: Option<Oid>, to: Oid) -> Result<Diff<'_>> {
        let tree = |id: Oid| -> Result<git2::Tree<'_>> {
            let commit = self.git.find_commit(id).context("reading a commit")?;
            commit.tree().context("reading a commit's tree")
        };
        let old = from.map(tree).transpose()?;
        let mut opts = DiffOptions::new();
        self.git
            .diff_tree_to_tree(old.as_ref(), Some(&tree(to)?), Some(&mut opts))
            .context("diffing two commits")
    }

    /// The patch id and changed paths of `from` → `to`.
    fn patch(&self, from: Option<Oid>, to: Oid) -> Result<Patch> {
        let diff = self.tree_diff(from, to)?;
        let id = diff.patchid(None).context("computing a patch id")?;
        Ok(Patch {
            id,
            paths: diff_paths(&diff),
        })
    }

    /// The patch id of commit `id` against its only parent (`git show <id> | git patch-id
    /// --stable`); `None` for a root or a merge. Public for the tests that hold it to git's.
    #[doc(hidden)]
    pub fn patch_id(&self, id: Oid) -> Result<Option<Oid>> {
        let [parent] = self.parents(id)[..] else {
            return Ok(None);
        };
        Ok(Some(self.patch(Some(parent), id)?.id))
    }
}

/// Base commits looked at for a patch-id match (see the module doc).
pub const PATCH_ID_WALK: usize = 5_000;

/// A change's patch id and the set of paths it touches.
struct Patch {
    id: Oid,
    paths: BTreeSet<String>,
}

/// Every path a diff touches (both sides), as text.
fn diff_paths(diff: &Diff<'_>) -> BTreeSet<String> {
    let mut paths = BTreeSet::new();
    for delta in diff.deltas() {
        for file in [delta.old_file(), delta.new_file()] {
            if let Some(path) = file.path_bytes() {
                paths.insert(super::path_text(path));
            }
        }
    }
    paths
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
