//! Tree-to-tree changes with rename detection, as the protected and contract gates need them.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use git2::{Delta, DiffFindOptions, DiffOptions, Oid, Repository, Tree};

use super::Repo;

/// How a path changed between two trees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
    Renamed,
    TypeChanged,
}

impl ChangeKind {
    /// The word the report uses (SPEC §4.5).
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Modified => "modified",
            ChangeKind::Deleted => "deleted",
            ChangeKind::Renamed => "renamed",
            ChangeKind::TypeChanged => "type-changed",
        }
    }
}

/// One changed path. A rename has both sides; every other change has `old == new`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub kind: ChangeKind,
    pub old_path: String,
    pub new_path: String,
}

impl Change {
    /// The paths this change touches: one, or both sides of a rename.
    pub fn paths(&self) -> Vec<&str> {
        if self.old_path == self.new_path {
            vec![self.new_path.as_str()]
        } else {
            vec![self.old_path.as_str(), self.new_path.as_str()]
        }
    }
}

impl Repo {
    /// Every change from `from`'s tree (or the empty tree) to `to`'s tree, renames detected.
    /// Mode-only changes are `Modified`; file↔symlink↔submodule swaps are `TypeChanged`.
    pub fn changes(&self, from: Option<Oid>, to: Oid) -> Result<Vec<Change>> {
        let git = &self.git;
        let new_tree = git.find_commit(to)?.tree()?;
        let old_tree = match from {
            Some(id) => Some(git.find_commit(id)?.tree()?),
            None => None,
        };
        // libgit2 walks both trees whole (every subtree read and inflated, identical or not), so
        // on a large repository the diff cost follows the repository. Find the paths that differ
        // first, skipping identical subtrees by id, and hand libgit2 only those (SPEC §11).
        let mut paths = Vec::new();
        differing_paths(git, old_tree.as_ref(), Some(&new_tree), b"", &mut paths)?;
        if paths.is_empty() {
            return Ok(Vec::new()); // an empty pathspec would mean "every path"
        }
        let mut opts = DiffOptions::new();
        opts.include_typechange(true)
            .ignore_submodules(false)
            .disable_pathspec_match(true);
        for path in &paths {
            opts.pathspec(path.as_slice());
        }
        let mut diff = git
            .diff_tree_to_tree(old_tree.as_ref(), Some(&new_tree), Some(&mut opts))
            .context("cannot diff the commit against its merge base")?;
        let mut find = DiffFindOptions::new();
        find.renames(true).exact_match_only(false);
        diff.find_similar(Some(&mut find))?;
        Ok(diff.deltas().filter_map(to_change).collect())
    }
}

/// One tree entry: its id and file mode.
type Entry = (Oid, i32);

/// A path as the bytes git stores (names need not be UTF-8).
type RawPath = Vec<u8>;

/// Every leaf path (file, symlink, submodule) under `prefix` that differs between `old` and
/// `new`; subtrees with the same id on both sides are not read.
fn differing_paths(
    git: &Repository,
    old: Option<&Tree>,
    new: Option<&Tree>,
    prefix: &[u8],
    out: &mut Vec<RawPath>,
) -> Result<()> {
    let (old, new) = (entries(old), entries(new));
    let names: std::collections::BTreeSet<&RawPath> = old.keys().chain(new.keys()).collect();
    for name in names {
        let (a, b) = (old.get(name), new.get(name));
        if a == b {
            continue;
        }
        let path = [prefix, name].concat();
        let subtree = |e: Option<&Entry>| -> Result<Option<Tree>> {
            match e {
                Some((id, mode)) if *mode == i32::from(git2::FileMode::Tree) => {
                    Ok(Some(git.find_tree(*id)?))
                }
                _ => Ok(None),
            }
        };
        let (ta, tb) = (subtree(a)?, subtree(b)?);
        let leaf_a = a.is_some() && ta.is_none();
        let leaf_b = b.is_some() && tb.is_none();
        if leaf_a || leaf_b {
            out.push(path.clone());
        }
        if ta.is_some() || tb.is_some() {
            let dir = [path.as_slice(), b"/"].concat();
            differing_paths(git, ta.as_ref(), tb.as_ref(), &dir, out)?;
        }
    }
    Ok(())
}

/// A tree's entries by name.
fn entries(tree: Option<&Tree>) -> BTreeMap<RawPath, Entry> {
    let Some(tree) = tree else {
        return BTreeMap::new();
    };
    tree.iter()
        .map(|e| (e.name_bytes().to_vec(), (e.id(), e.filemode())))
        .collect()
}

fn to_change(delta: git2::DiffDelta<'_>) -> Option<Change> {
    let kind = match delta.status() {
        Delta::Added | Delta::Copied => ChangeKind::Added,
        Delta::Modified => ChangeKind::Modified,
        Delta::Deleted => ChangeKind::Deleted,
        Delta::Renamed => ChangeKind::Renamed,
        Delta::Typechange => ChangeKind::TypeChanged,
        _ => return None,
    };
    let path = |f: git2::DiffFile<'_>| f.path().map(|p| p.to_string_lossy().into_owned());
    let old_path = path(delta.old_file());
    let new_path = path(delta.new_file());
    let (old_path, new_path) = match (old_path, new_path) {
        (Some(o), Some(n)) => (o, n),
        (Some(o), None) => (o.clone(), o),
        (None, Some(n)) => (n.clone(), n),
        (None, None) => return None,
    };
    let (old_path, new_path) = if kind == ChangeKind::Renamed {
        (old_path, new_path)
    } else {
        (new_path.clone(), new_path)
    };
    Some(Change {
        kind,
        old_path,
        new_path,
    })
}
