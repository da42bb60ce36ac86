//! Composing commits in memory for `land` (SPEC §22) and the board's CONFLICT: a merge of trees, a
//! replay of commits, a commit object. Every object is written into the run's quarantine
//! ([`super::quarantine`], SPEC §26.4), never into the shared object store: a composition that is
//! only checked leaves nothing behind, and `land` copies the commit it moves the base to into
//! the store right before the move ([`Repo::promote`]). No worktree, index or ref is touched.

use anyhow::{Context, Result};
use git2::{Index, IndexEntry, MergeOptions, Oid, Sort};

use super::Repo;

/// A tree composed in memory, or the paths that conflict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Composed {
    Tree(Oid),
    Conflict(Vec<String>),
}

impl Repo {
    /// Merge `theirs`'s changes since `ancestor` onto `ours` (commit ids), keeping `status_file`
    /// as `ours` has it (absent when `ours` has none): the status document never reaches the
    /// base. `None` for `ancestor`: no common history, every path conflicts as git would say.
    pub fn compose_tree(
        &self,
        ancestor: Option<Oid>,
        ours: Oid,
        theirs: Oid,
        status_file: &str,
    ) -> Result<Composed> {
        let git = self.writer()?;
        let tree = |id: Oid| -> Result<git2::Tree<'_>> {
            let commit = git.find_commit(id).context("reading a commit")?;
            commit.tree().context("reading a commit's tree")
        };
        let ours_tree = tree(ours)?;
        let ancestor_tree = match ancestor {
            Some(id) => tree(id)?,
            None => {
                let empty = git.treebuilder(None)?.write()?;
                git.find_tree(empty)?
            }
        };
        let mut opts = MergeOptions::new();
        opts.find_renames(true);
        let mut index = git
            .merge_trees(&ancestor_tree, &ours_tree, &tree(theirs)?, Some(&opts))
            .context("merging two trees in memory")?;
        if index.has_conflicts() {
            let mut paths: Vec<String> = Vec::new();
            for conflict in index.conflicts().context("reading the conflicts")? {
                let conflict = conflict.context("reading a conflict")?;
                let side = conflict.our.or(conflict.their).or(conflict.ancestor);
                if let Some(entry) = side {
                    paths.push(super::path_text(&entry.path));
                }
            }
            paths.sort();
            paths.dedup();
            return Ok(Composed::Conflict(paths));
        }
        self.keep_status_file(&mut index, &ours_tree, status_file)?;
        let id = index
            .write_tree_to(git)
            .context("writing the composed tree")?;
        Ok(Composed::Tree(id))
    }

    /// Set `status_file` in `index` to what `base` holds there, or remove it.
    fn keep_status_file(
        &self,
        index: &mut Index,
        base: &git2::Tree<'_>,
        status_file: &str,
    ) -> Result<()> {
        let path = std::path::Path::new(status_file);
        match base.get_path(path) {
            Ok(entry) => {
                let blob = entry.id();
                let mode = entry.filemode() as u32;
                index.add(&index_entry(status_file, blob, mode))?;
            }
            Err(_) => {
                let _ = index.remove_path(path);
            }
        }
        Ok(())
    }

    /// The tree of `commit` with `status_file` as `base` has it (for `ff`: whether that changes
    /// anything says whether the branch carries a status document).
    pub fn tree_with_base_status(&self, commit: Oid, base: Oid, status_file: &str) -> Result<Oid> {
        let git = self.writer()?;
        let tree = git.find_commit(commit)?.tree()?;
        let base_tree = git.find_commit(base)?.tree()?;
        let mut index = Index::new()?;
        index.read_tree(&tree)?;
        self.keep_status_file(&mut index, &base_tree, status_file)?;
        Ok(index.write_tree_to(git)?)
    }

    /// Write a commit of `tree` with `parents` and `message` (into the quarantine); author and
    /// committer as git takes them (`GIT_AUTHOR_*`/`GIT_COMMITTER_*`, then the configuration, then
    /// git's default: see `ident`), or the author of `author_of` when given (a replayed commit
    /// keeps its author).
    pub fn write_commit(
        &self,
        tree: Oid,
        parents: &[Oid],
        message: &str,
        author_of: Option<Oid>,
    ) -> Result<Oid> {
        let committer = self.identity(super::ident::Role::Committer)?;
        let author = match author_of {
            Some(id) => self.git.find_commit(id)?.author().to_owned(),
            None => self.identity(super::ident::Role::Author)?,
        };
        let git = self.writer()?;
        let tree = git.find_tree(tree).context("reading the composed tree")?;
        let parents: Vec<git2::Commit<'_>> = parents
            .iter()
            .map(|id| git.find_commit(*id))
            .collect::<Result<_, _>>()
            .context("reading a parent commit")?;
        let refs: Vec<&git2::Commit<'_>> = parents.iter().collect();
        git.commit(None, &author, &committer, message, &tree, &refs)
            .context("writing the composed commit")
    }

    /// A commit's whole message.
    pub fn message(&self, id: Oid) -> Option<String> {
        let commit = self.git.find_commit(id).ok()?;
        Some(String::from_utf8_lossy(commit.message_bytes()).into_owned())
    }

    /// The commits reachable from `tip` and not from `base`, oldest first (merge commits too).
    pub fn commits_onto(&self, base: Oid, tip: Oid) -> Result<Vec<Oid>> {
        let mut walk = self.git.revwalk().context("walking the history")?;
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE)?;
        walk.push(tip)?;
        walk.hide(base)?;
        walk.map(|id| id.context("walking the history")).collect()
    }
}

/// An index entry for a tree built in memory (no stat data: nothing here is on disk).
pub(super) fn index_entry(path: impl AsRef<[u8]>, id: Oid, mode: u32) -> IndexEntry {
    let path = path.as_ref();
    IndexEntry {
        ctime: git2::IndexTime::new(0, 0),
        mtime: git2::IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode,
        uid: 0,
        gid: 0,
        file_size: 0,
        id,
        flags: path.len().min(0xfff) as u16,
        flags_extended: 0,
        path: path.to_vec(),
    }
}

impl Repo {
    /// Every local branch's short name, sorted.
    pub fn local_branches(&self) -> Vec<String> {
        let Ok(branches) = self.git.branches(Some(git2::BranchType::Local)) else {
            return Vec::new();
        };
        let mut names: Vec<String> = branches
            .flatten()
            .filter_map(|(b, _)| b.name().ok().flatten().map(str::to_string))
            .collect();
        names.sort();
        names
    }
}

impl Repo {
    /// A commit's committer time (seconds since the epoch).
    pub fn commit_time(&self, id: Oid) -> Option<i64> {
        Some(self.git.find_commit(id).ok()?.committer().when().seconds())
    }
}
