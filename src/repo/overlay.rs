//! Trees that are not a commit's (SPEC §23): the overlay and the reverse overlay, built in memory
//! from two existing trees and written as tree objects, plus the stand-in commit a pristine
//! checkout or a warm workspace needs to check one out.
//!
//! Only objects are written (content-addressed, the same ids every time), and only into the run's
//! quarantine ([`super::quarantine`], SPEC §26.4), never into the shared object store; no ref,
//! index or worktree of the repository is touched.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use anyhow::{Context, Result};
use git2::{Index, Oid, Signature, Time};

use super::Repo;

/// The fixed author of stand-in commits, so the same tree and parent give the same commit id.
const STAND_IN_NAME: &str = "closegate";
const STAND_IN_EMAIL: &str = "closegate@localhost";

impl Repo {
    /// `onto`'s tree (a commit) with each of `paths` as `from`'s tree (a commit) has it: present
    /// there, its entry (blob, mode, symlink or submodule) replaces whatever `onto` has at that
    /// path, a file or folder in the way included; absent there, the path is removed. Paths are
    /// the bytes git stores (SPEC §26.4: a name that is not UTF-8 is put back like any other).
    /// Then each of `rewrites` (a path `onto` holds as a file, and its new content) is written
    /// as a blob there, `onto`'s mode kept: a source file with the other side's test modules
    /// spliced in. Returns the new tree's id.
    pub fn overlay_tree(
        &self,
        onto: Oid,
        from: Oid,
        paths: &[Vec<u8>],
        rewrites: &[(Vec<u8>, Vec<u8>)],
    ) -> Result<Oid> {
        let fail = || format!("building the overlay of {onto} with paths from {from}");
        let git = self.writer().with_context(fail)?;
        let onto_tree = git.find_commit(onto).and_then(|c| c.tree());
        let from_tree = git.find_commit(from).and_then(|c| c.tree());
        let (onto_tree, from_tree) = (onto_tree.with_context(fail)?, from_tree.with_context(fail)?);
        let mut index = Index::new().with_context(fail)?;
        index.read_tree(&onto_tree).with_context(fail)?;
        let mut wanted = Vec::new();
        for path in paths {
            remove_path(&mut index, path).with_context(fail)?;
            if let Ok(entry) = from_tree.get_path(os_path(path)) {
                if entry.kind() == Some(git2::ObjectType::Tree) {
                    continue;
                }
                wanted.push((path, entry.id(), entry.filemode() as u32));
            }
        }
        for (path, id, mode) in wanted {
            // A file where the restored path needs a folder (`tests` replacing `tests/`) is in
            // the way: the overlay is the base's at that path.
            for (end, _) in path.iter().enumerate().filter(|(_, b)| **b == b'/') {
                let _ = index.remove(os_path(&path[..end]), 0);
            }
            index
                .add(&super::compose::index_entry(path, id, mode))
                .with_context(fail)?;
        }
        for (path, content) in rewrites {
            let Some(mode) = index.get_path(os_path(path), 0).map(|e| e.mode) else {
                continue;
            };
            let id = git.blob(content).with_context(fail)?;
            index
                .add(&super::compose::index_entry(path, id, mode))
                .with_context(fail)?;
        }
        index.write_tree_to(git).with_context(fail)
    }

    /// A commit object for `tree` whose parent is `parent`, so a pristine checkout or a warm
    /// workspace can check the tree out with `parent`'s history behind it. Its author and time
    /// are fixed: the same tree and parent give the same id, and nothing refers to it.
    pub fn stand_in_commit(&self, tree: Oid, parent: Oid, what: &str) -> Result<Oid> {
        let fail = || format!("writing a stand-in commit for tree {tree}");
        let git = self.writer().with_context(fail)?;
        let sig =
            Signature::new(STAND_IN_NAME, STAND_IN_EMAIL, &Time::new(0, 0)).with_context(fail)?;
        let tree = git.find_tree(tree).with_context(fail)?;
        let parent = git.find_commit(parent).with_context(fail)?;
        let message = format!("closegate: {what} of {}\n", parent.id());
        git.commit(None, &sig, &sig, &message, &tree, &[&parent])
            .with_context(fail)
    }
}

/// Remove `path` from the index: the entry itself, or every entry under it when it is a folder.
fn remove_path(index: &mut Index, path: &[u8]) -> Result<(), git2::Error> {
    let std_path = os_path(path);
    if index.get_path(std_path, 0).is_some() {
        index.remove(std_path, 0)?;
    }
    index.remove_dir(std_path, 0)
}

/// A tree path's bytes as a `Path` (libgit2 takes a path's bytes as they are on Unix).
fn os_path(path: &[u8]) -> &Path {
    Path::new(OsStr::from_bytes(path))
}
