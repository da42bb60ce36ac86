//! Trees that are not a commit's (SPEC §23): the overlay and the reverse overlay, built in memory
//! from two existing trees and written as tree objects, plus the stand-in commit a pristine
//! checkout or a warm workspace needs to check one out.
//!
//! Only objects are written (content-addressed, the same ids every time), and only into the run's
//! quarantine ([`super::quarantine`], SPEC §26.4), never into the shared object store; no ref,
//! index or worktree of the repository is touched.

use anyhow::{Context, Result};
use git2::{Index, Oid, Signature, Time};

use super::Repo;

/// The fixed author of stand-in commits, so the same tree and parent give the same commit id.
const STAND_IN_NAME: &str = "closegate";
const STAND_IN_EMAIL: &str = "closegate@localhost";

impl Repo {
    /// `onto`'s tree (a commit) with each of `paths` as `from`'s tree (a commit) has it: present
    /// there, its entry (blob, mode, symlink or submodule) replaces whatever `onto` has at that
    /// path, a file or folder in the way included; absent there, the path is removed. Returns
    /// the new tree's id.
    pub fn overlay_tree(&self, onto: Oid, from: Oid, paths: &[String]) -> Result<Oid> {
        let fail = || format!("building the overlay of {onto} with paths from {from}");
        let git = self.writer().with_context(fail)?;
        let onto_tree = git.find_commit(onto).and_then(|c| c.tree());
        let from_tree = git.find_commit(from).and_then(|c| c.tree());
        let (onto_tree, from_tree) = (onto_tree.with_context(fail)?, from_tree.with_context(fail)?);
        let mut index = Index::new().with_context(fail)?;
        index.read_tree(&onto_tree).with_context(fail)?;
        let mut wanted = Vec::new();
        for path in paths {
            let std_path = std::path::Path::new(path);
            remove_path(&mut index, path).with_context(fail)?;
            if let Ok(entry) = from_tree.get_path(std_path) {
                if entry.kind() == Some(git2::ObjectType::Tree) {
                    continue;
                }
                wanted.push((path.clone(), entry.id(), entry.filemode() as u32));
            }
        }
        for (path, id, mode) in wanted {
            // A file where the restored path needs a folder (`tests` replacing `tests/`) is in
            // the way: the overlay is the base's at that path.
            let mut prefix = String::new();
            for part in path.split('/').take(path.split('/').count() - 1) {
                if !prefix.is_empty() {
                    prefix.push('/');
                }
                prefix.push_str(part);
                let _ = index.remove(std::path::Path::new(&prefix), 0);
            }
            index
                .add(&super::compose::index_entry(&path, id, mode))
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
fn remove_path(index: &mut Index, path: &str) -> Result<(), git2::Error> {
    let std_path = std::path::Path::new(path);
    if index.get_path(std_path, 0).is_some() {
        index.remove(std_path, 0)?;
    }
    index.remove_dir(std_path, 0)
}
