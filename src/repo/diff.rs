//! Tree-to-tree changes with rename detection, as the protected and contract gates need them.

use std::cmp::Ordering;

use anyhow::{Context, Result};
use git2::{Delta, DiffFindOptions, DiffOptions, Oid, Tree};

use super::Repo;
use super::objects::{self, Likely, RawEntry, RawTree};

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
///
/// Paths are bytes (SPEC §26.4): `old_bytes`/`new_bytes` are the names git stores, which need
/// not be UTF-8; `old_path`/`new_path` are the same paths as printed ([`super::path_text`],
/// invalid bytes escaped). Match and look up by the bytes; print the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub kind: ChangeKind,
    pub old_path: String,
    pub new_path: String,
    pub old_bytes: Vec<u8>,
    pub new_bytes: Vec<u8>,
}

impl Change {
    /// A change of one path or, for a rename, of two; the printed text follows the bytes.
    pub fn new(kind: ChangeKind, old: Vec<u8>, new: Vec<u8>) -> Change {
        Change {
            kind,
            old_path: super::worktree::path_text(&old),
            new_path: super::worktree::path_text(&new),
            old_bytes: old,
            new_bytes: new,
        }
    }

    /// The paths this change touches, as printed: one, or both sides of a rename.
    pub fn paths(&self) -> Vec<&str> {
        self.touched().into_iter().map(|(_, text)| text).collect()
    }

    /// The paths this change touches (one, or both sides of a rename), each as the bytes git
    /// stores and as printed.
    pub fn touched(&self) -> Vec<(&[u8], &str)> {
        let new = (self.new_bytes.as_slice(), self.new_path.as_str());
        if self.old_bytes == self.new_bytes {
            vec![new]
        } else {
            vec![(self.old_bytes.as_slice(), self.old_path.as_str()), new]
        }
    }
}

impl Repo {
    /// Every change from `from`'s tree (or the empty tree) to `to`'s tree, renames detected.
    /// Mode-only changes are `Modified`; file↔symlink↔submodule swaps are `TypeChanged`.
    pub fn changes(&self, from: Option<Oid>, to: Oid) -> Result<Vec<Change>> {
        let leaves = self.differing_leaves(from, to)?;
        if renames_possible(&leaves) {
            return self.libgit2_changes(from, to, &leaves);
        }
        // No rename can pair a source with a target, so libgit2's second pass over the same
        // trees would only restate the walk: build the changes from it, in libgit2's order.
        Ok(leaves.into_iter().map(Leaf::into_change).collect())
    }

    /// [`Repo::changes`] computed by libgit2's diff and rename detection whatever the changes;
    /// public only so a test can hold the direct path to it.
    #[doc(hidden)]
    pub fn changes_by_libgit2(&self, from: Option<Oid>, to: Oid) -> Result<Vec<Change>> {
        let leaves = self.differing_leaves(from, to)?;
        self.libgit2_changes(from, to, &leaves)
    }

    /// The leaves that differ between the two commits' trees, sorted by path.
    fn differing_leaves(&self, from: Option<Oid>, to: Oid) -> Result<Vec<Leaf>> {
        // libgit2 walks both trees whole (every subtree read and inflated, identical or not), so
        // on a large repository the diff cost follows the repository. Find the paths that differ
        // first, skipping identical subtrees by id (SPEC §11).
        let side = |commit: Oid| -> Result<Side> {
            let tree = self
                .tree_of(commit)
                .context("cannot read a commit's tree")?;
            let likely = self.trees.likely(commit);
            Ok(Side {
                tree: Some((tree, self.trees.get(&self.git, tree, likely)?)),
                likely,
            })
        };
        let old = match from {
            Some(id) => side(id)?,
            None => Side {
                tree: None,
                likely: Likely::Packed,
            },
        };
        let new = side(to)?;
        let mut leaves = Vec::new();
        self.walk(&old, &new, b"", &mut leaves)?;
        // libgit2 orders deltas by full path (bytes, as strcmp does).
        leaves.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        Ok(leaves)
    }

    /// The trees of `from` (none: the empty tree) and `to`.
    fn trees(&self, from: Option<Oid>, to: Oid) -> Result<(Option<Tree<'_>>, Tree<'_>)> {
        let old = match from {
            Some(id) => Some(self.git.find_commit(id)?.tree()?),
            None => None,
        };
        Ok((old, self.git.find_commit(to)?.tree()?))
    }

    /// libgit2's diff of the two trees restricted to `leaves`, with rename detection.
    fn libgit2_changes(&self, from: Option<Oid>, to: Oid, leaves: &[Leaf]) -> Result<Vec<Change>> {
        if leaves.is_empty() {
            return Ok(Vec::new()); // an empty pathspec would mean "every path"
        }
        let git = &self.git;
        let (old_tree, new_tree) = self.trees(from, to)?;
        let mut opts = DiffOptions::new();
        opts.include_typechange(true)
            .ignore_submodules(false)
            .disable_pathspec_match(true);
        for leaf in leaves {
            opts.pathspec(leaf.path.as_slice());
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

/// One tree entry while walking: its raw id bytes and file mode.
type RawId<'t> = (&'t [u8], i32);

/// A path as the bytes git stores (names need not be UTF-8).
type RawPath = Vec<u8>;

/// A leaf path (file, symlink, submodule) that differs, with its entry on each side.
struct Leaf {
    path: RawPath,
    old: Option<Entry>,
    new: Option<Entry>,
}

impl Leaf {
    /// How libgit2 classifies the leaf without rename detection (`maybe_modified`): the same
    /// kind of object on both sides is a modification (mode-only too), another kind a type change.
    fn kind(&self) -> ChangeKind {
        const TYPE_BITS: i32 = 0o170000;
        match (self.old, self.new) {
            (None, _) => ChangeKind::Added,
            (_, None) => ChangeKind::Deleted,
            (Some((_, a)), Some((_, b))) if a & TYPE_BITS == b & TYPE_BITS => ChangeKind::Modified,
            _ => ChangeKind::TypeChanged,
        }
    }

    fn into_change(self) -> Change {
        let kind = self.kind();
        Change::new(kind, self.path.clone(), self.path)
    }
}

/// Whether libgit2's rename detection could pair anything: it needs a source (a deleted or
/// type-changed path) and a target (an added or type-changed path). Errs on the side of yes.
fn renames_possible(leaves: &[Leaf]) -> bool {
    let kinds = || leaves.iter().map(Leaf::kind);
    let source = kinds().any(|k| matches!(k, ChangeKind::Deleted | ChangeKind::TypeChanged));
    let target = kinds().any(|k| matches!(k, ChangeKind::Added | ChangeKind::TypeChanged));
    source && target
}

/// One side of the walk: a folder's raw tree (none: absent on this side) and where its
/// subtrees are likely stored.
struct Side {
    /// The tree's id and bytes.
    tree: Option<(Oid, RawTree)>,
    likely: Likely,
}

impl Repo {
    /// Every leaf under `prefix` that differs between `old` and `new`; subtrees with the same id
    /// on both sides are not read. A name that is a tree on one side and a leaf on the other
    /// gives the leaf (one-sided) and the subtree's leaves, as libgit2 splits it.
    fn walk(&self, old: &Side, new: &Side, prefix: &[u8], out: &mut Vec<Leaf>) -> Result<()> {
        let (a_all, b_all) = (sorted_entries(&old.tree)?, sorted_entries(&new.tree)?);
        let (mut i, mut j) = (0, 0);
        while i < a_all.len() || j < b_all.len() {
            let order = match (a_all.get(i), b_all.get(j)) {
                (Some(a), Some(b)) => a.name.cmp(b.name),
                (Some(_), None) => Ordering::Less,
                _ => Ordering::Greater,
            };
            let (a, b) = match order {
                Ordering::Less => (a_all.get(i), None),
                Ordering::Greater => (None, b_all.get(j)),
                Ordering::Equal => (a_all.get(i), b_all.get(j)),
            };
            i += usize::from(order != Ordering::Greater);
            j += usize::from(order != Ordering::Less);
            let name = a.or(b).map(|e| e.name).unwrap_or_default();
            let (a, b) = (a.map(raw_id), b.map(raw_id));
            if a == b {
                continue;
            }
            let (a, b) = (a.map(entry), b.map(entry));
            let path = [prefix, name].concat();
            let subtree = |e: Option<Entry>, side: &Side| -> Result<Side> {
                let tree = match e {
                    Some((id, mode)) if mode == i32::from(git2::FileMode::Tree) => {
                        Some((id, self.trees.get(&self.git, id, side.likely)?))
                    }
                    _ => None,
                };
                Ok(Side {
                    tree,
                    likely: side.likely,
                })
            };
            let (ta, tb) = (subtree(a, old)?, subtree(b, new)?);
            if ta.tree.is_some() || tb.tree.is_some() {
                let dir = [path.as_slice(), b"/"].concat();
                self.walk(&ta, &tb, &dir, out)?;
            }
            let old_leaf = a.filter(|_| ta.tree.is_none());
            let new_leaf = b.filter(|_| tb.tree.is_none());
            if old_leaf.is_some() || new_leaf.is_some() {
                out.push(Leaf {
                    path,
                    old: old_leaf,
                    new: new_leaf,
                });
            }
        }
        Ok(())
    }
}

/// A tree's entries sorted by name bytes (git's own order puts `a/` after `a.txt`).
fn sorted_entries(tree: &Option<(Oid, RawTree)>) -> Result<Vec<RawEntry<'_>>> {
    let Some((id, raw)) = tree else {
        return Ok(Vec::new());
    };
    let mut entries = objects::entries(raw)
        .collect::<Result<Vec<_>, ()>>()
        .map_err(|()| anyhow::anyhow!("tree {id} is corrupt: an entry does not parse"))?;
    if !entries.is_sorted_by(|a, b| a.name <= b.name) {
        entries.sort_by(|a, b| a.name.cmp(b.name));
    }
    Ok(entries)
}

fn raw_id<'t>(e: &RawEntry<'t>) -> RawId<'t> {
    (e.raw_id, e.mode)
}

fn entry((id, mode): RawId<'_>) -> Entry {
    (Oid::from_bytes(id).expect("20 bytes make an id"), mode)
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
    let path = |f: git2::DiffFile<'_>| f.path_bytes().map(<[u8]>::to_vec);
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
    Some(Change::new(kind, old_path, new_path))
}

impl Repo {
    /// Per changed path of `paths` (as printed, [`super::path_text`]) between the commits `from`
    /// and `to`: the path as printed, insertions, deletions and whether it is binary, as `git
    /// diff --stat` counts them. A name that is not UTF-8 is found by its bytes, never skipped.
    pub fn diff_stat(
        &self,
        from: Oid,
        to: Oid,
        paths: &[&str],
    ) -> Result<Vec<(String, usize, usize, bool)>> {
        let changes = self.changes(Some(from), to)?;
        let wanted: Vec<&[u8]> = (changes.iter())
            .flat_map(Change::touched)
            .filter(|(_, text)| paths.contains(text))
            .map(|(bytes, _)| bytes)
            .collect();
        if wanted.is_empty() {
            return Ok(Vec::new()); // an empty pathspec would mean "every path"
        }
        let old = self.git.find_commit(from)?.tree()?;
        let new = self.git.find_commit(to)?.tree()?;
        let mut opts = DiffOptions::new();
        opts.disable_pathspec_match(true);
        for path in wanted {
            opts.pathspec(path);
        }
        let diff = self
            .git
            .diff_tree_to_tree(Some(&old), Some(&new), Some(&mut opts))?;
        let mut stats = Vec::new();
        for index in 0..diff.deltas().len() {
            let Some(delta) = diff.get_delta(index) else {
                continue;
            };
            let file = (delta.new_file().path_bytes()).or(delta.old_file().path_bytes());
            let path = file.map(super::worktree::path_text).unwrap_or_default();
            let patch = git2::Patch::from_diff(&diff, index)?;
            let binary = delta.flags().is_binary() || patch.is_none();
            let (plus, minus) = match &patch {
                Some(patch) => {
                    let (_, plus, minus) = patch.line_stats()?;
                    (plus, minus)
                }
                None => (0, 0),
            };
            stats.push((path, plus, minus, binary));
        }
        Ok(stats)
    }
}
