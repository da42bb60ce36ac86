//! The index against HEAD through the cache-tree: a folder whose cache-tree id equals HEAD's tree
//! is skipped unread, as git does.

use std::collections::HashSet;

use anyhow::Result;
use git2::Repository;

use super::super::index_file::{CacheTree, Entry};

/// Paths whose staged content differs from HEAD: HEAD's tree against the index, skipping every
/// folder whose cache-tree id equals HEAD's.
pub(super) fn staged_paths(
    repo: &Repository,
    entries: &[Entry],
    cache: Option<&CacheTree>,
) -> Result<Vec<Vec<u8>>> {
    let head = match repo.head() {
        Ok(head) => Some(head.peel_to_tree()?),
        Err(e) if e.code() == git2::ErrorCode::UnbornBranch => None,
        Err(e) => return Err(e.into()),
    };
    let mut out = Vec::new();
    compare_tree(repo, head.as_ref(), entries, cache, b"", &mut out)?;
    Ok(out)
}

/// Compare the HEAD folder `tree` (at `prefix`, `""` or ending in `/`) with the index entries
/// under that prefix.
pub(super) fn compare_tree(
    repo: &Repository,
    tree: Option<&git2::Tree>,
    entries: &[Entry],
    cache: Option<&CacheTree>,
    prefix: &[u8],
    out: &mut Vec<Vec<u8>>,
) -> Result<()> {
    if let (Some(tree), Some(oid)) = (tree, cache.and_then(|c| c.oid))
        && tree.id() == oid
    {
        return Ok(());
    }
    let under = range_under(entries, prefix);
    if let [only] = under
        && only.is_sparse_dir()
        && only.path == prefix
    {
        if tree.is_none_or(|t| t.id() != only.oid) {
            sparse_dir_changes(repo, tree, only, out);
        }
        return Ok(());
    }
    let mut dirs: HashSet<Vec<u8>> = HashSet::new();
    let mut files: HashSet<Vec<u8>> = HashSet::new();
    for item in tree.iter().flat_map(|t| t.iter()) {
        let name = item.name_bytes().to_vec();
        let path = [prefix, &name].concat();
        if item.kind() == Some(git2::ObjectType::Tree) {
            let child = cache.and_then(|c| c.children.iter().find(|n| n.name == name));
            // A subfolder the cache-tree vouches for is skipped before its tree is read.
            if child.and_then(|c| c.oid) != Some(item.id()) {
                let sub = repo.find_tree(item.id())?;
                let dir = [path.as_slice(), b"/"].concat();
                compare_tree(repo, Some(&sub), under, child, &dir, out)?;
            }
            dirs.insert(name);
            continue;
        }
        let same = under
            .binary_search_by(|e| e.path.cmp(&path))
            .is_ok_and(|i| {
                let e = &under[i];
                e.stage == 0 && e.oid == item.id() && e.mode == item.filemode() as u32
            });
        if !same {
            out.push(path);
        }
        files.insert(name);
    }
    index_side(under, prefix, &dirs, &files, out);
    Ok(())
}

/// The index's side of a folder: its entries HEAD's folder (`dirs`, `files`) lacks, and those
/// in conflict. One child of the folder at a time: a subfolder's entries are one run, looked up
/// in HEAD once rather than once an entry (on a folder of the 100,000-file bench, that was
/// 100,000 hashes).
fn index_side(
    under: &[Entry],
    prefix: &[u8],
    dirs: &HashSet<Vec<u8>>,
    files: &HashSet<Vec<u8>>,
    out: &mut Vec<Vec<u8>>,
) {
    let mut at = 0;
    while at < under.len() {
        let rest = &under[at].path[prefix.len()..];
        let (run, in_head) = match rest.iter().position(|&b| b == b'/') {
            Some(slash) => {
                let name = &rest[..slash];
                let len = gallop(&under[at..], |e| in_dir(&e.path[prefix.len()..], name));
                (&under[at..at + len], dirs.contains(name))
            }
            None => (&under[at..at + 1], files.contains(rest)),
        };
        for entry in run {
            if !in_head || entry.stage != 0 {
                out.push(entry.path.clone());
            }
        }
        at += run.len();
    }
}

/// The paths where a sparse index's folder entry (a whole tree, staged) differs from HEAD's
/// folder `head`; the folder itself when its tree cannot be read.
pub(super) fn sparse_dir_changes(
    repo: &Repository,
    head: Option<&git2::Tree>,
    entry: &Entry,
    out: &mut Vec<Vec<u8>>,
) {
    let listed = (|| -> Option<()> {
        let staged = repo.find_tree(entry.oid).ok()?;
        let diff = repo.diff_tree_to_tree(head, Some(&staged), None).ok()?;
        for delta in diff.deltas() {
            for file in [delta.old_file(), delta.new_file()] {
                if let Some(path) = file.path_bytes() {
                    out.push([entry.path.as_slice(), path].concat());
                }
            }
        }
        Some(())
    })();
    if listed.is_none() {
        out.push(entry.path.clone());
    }
}

/// `slice.partition_point(pred)`, probing 1, 2, 4, … items in first: as cheap as a binary search
/// on a long run and cheaper on the usual short one (often none).
pub(super) fn gallop<T>(slice: &[T], pred: impl Fn(&T) -> bool) -> usize {
    let mut lo = 0; // `slice[..lo]` all satisfy `pred`
    let mut probe = 1;
    let hi = loop {
        if probe > slice.len() {
            break slice.len();
        }
        if !pred(&slice[probe - 1]) {
            break probe - 1;
        }
        lo = probe;
        probe *= 2;
    };
    lo + slice[lo..hi].partition_point(pred)
}

/// Whether `path` is inside the folder `dir` (starts with `dir/`).
pub(super) fn in_dir(path: &[u8], dir: &[u8]) -> bool {
    path.len() > dir.len() && path[dir.len()] == b'/' && path.starts_with(dir)
}

/// The contiguous run of (sorted) entries whose path starts with `prefix`.
pub(super) fn range_under<'e>(entries: &'e [Entry], prefix: &[u8]) -> &'e [Entry] {
    let start = entries.partition_point(|e| e.path.as_slice() < prefix);
    let len = entries[start..].partition_point(|e| e.path.starts_with(prefix));
    &entries[start..start + len]
}
