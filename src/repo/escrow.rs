//! Escrow snapshots (SPEC §24): before a teardown removes anything, one commit under
//! `refs/closegate/escrow/<slug>/<n>` keeps what git does not already hold — tracked files as
//! they are on disk, untracked not-ignored files, the status document — with the worktree's HEAD
//! and every commit only its HEAD reflog held as parents. `restore` reads it back.
//!
//! The snapshot's tree is HEAD's tree with the named paths replaced by what is on disk, so a clean
//! worktree's escrow is one small commit whose tree is HEAD's own. Escrow refs never reach a
//! commit for the teardown's probes (`safety::surviving_ids` skips them).

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use anyhow::{Context, Result, bail};
use git2::{ErrorCode, FileMode, Oid, Signature};

use super::Repo;

/// Where escrow refs live.
pub const PREFIX: &str = "refs/closegate/escrow/";

/// One escrow ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escrow {
    pub refname: String,
    pub slug: String,
    pub n: u64,
    pub commit: Oid,
    /// The snapshot commit's committer time (seconds since the epoch).
    pub time: i64,
}

/// What a snapshot records about the worktree it was taken from (its commit message).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    pub worktree: String,
    pub branch: Option<String>,
    pub head: Option<Oid>,
    pub ts: String,
}

impl Meta {
    /// The commit message: a subject, then one `key: value` line per field.
    pub fn message(&self, slug: &str) -> String {
        let branch = self.branch.as_deref().unwrap_or("(detached)");
        let head = self.head.map_or("(unborn)".to_string(), |h| h.to_string());
        format!(
            "closegate escrow of {slug}\n\nworktree: {}\nbranch: {branch}\nhead: {head}\nts: {}\n",
            self.worktree, self.ts
        )
    }

    /// Read the fields back from a message written by [`Meta::message`].
    pub fn parse(message: &str) -> Option<Meta> {
        let mut meta = Meta::default();
        let mut seen = 0;
        for line in message.lines() {
            let Some((key, value)) = line.split_once(": ") else {
                continue;
            };
            match key {
                "worktree" => meta.worktree = value.to_string(),
                "branch" if value != "(detached)" => meta.branch = Some(value.to_string()),
                "branch" => {}
                "head" if value != "(unborn)" => meta.head = Some(Oid::from_str(value).ok()?),
                "head" => {}
                "ts" => meta.ts = value.to_string(),
                _ => continue,
            }
            seen += 1;
        }
        (seen == 4 && !meta.worktree.is_empty()).then_some(meta)
    }
}

/// A file of a snapshot that differs from its HEAD: written back by `restore`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A regular file (`exec`: mode 100755) or a symbolic link (`link`: the bytes are its target).
    File {
        path: Vec<u8>,
        bytes: Vec<u8>,
        exec: bool,
        link: bool,
    },
    /// A tracked file that was gone from disk.
    Deleted { path: Vec<u8> },
}

impl Repo {
    /// Write the snapshot commit and its ref `refs/closegate/escrow/<slug>/<n>` (the next free
    /// `n`). `dir` is the worktree; `paths` the repo-relative paths taken from disk (a tracked
    /// path missing from disk is left out of the tree; an untracked one must be readable).
    /// Objects are written first and the ref last, so a process killed midway leaves no ref.
    pub fn write_escrow(
        &self,
        slug: &str,
        dir: &Path,
        paths: &[(String, bool)],
        parents: &[Oid],
        meta: &Meta,
    ) -> Result<(String, Oid)> {
        let base = match meta.head {
            Some(head) => self.git.find_commit(head)?.tree()?,
            None => {
                let empty = self.git.treebuilder(None)?.write()?;
                self.git.find_tree(empty)?
            }
        };
        let mut update = git2::build::TreeUpdateBuilder::new();
        for (path, tracked) in paths {
            let full = inside(dir, path)?;
            match blob_from_disk(&self.git, &full) {
                Ok(Some((id, mode))) => {
                    update.upsert(path.as_str(), id, mode);
                }
                Ok(None) if *tracked => {
                    update.remove(path.as_str());
                }
                Ok(None) => bail!("`{path}` is untracked and could not be read for the escrow"),
                Err(e) => return Err(e.context(format!("cannot read `{path}` for the escrow"))),
            }
        }
        let tree = update
            .create_updated(&self.git, &base)
            .context("cannot write the escrow's tree")?;
        let tree = self.git.find_tree(tree)?;
        let sig = self
            .git
            .signature()
            .or_else(|_| Signature::now("closegate", "closegate@localhost"))
            .context("cannot make a signature for the escrow commit")?;
        let mut commits = Vec::new();
        for id in meta.head.iter().chain(parents) {
            if !commits.iter().any(|c: &git2::Commit| c.id() == *id) {
                commits.push(self.git.find_commit(*id)?);
            }
        }
        let refs: Vec<&git2::Commit> = commits.iter().collect();
        let id = self
            .git
            .commit(None, &sig, &sig, &meta.message(slug), &tree, &refs)
            .context("cannot write the escrow commit")?;
        let refname = self.create_escrow_ref(slug, id)?;
        Ok((refname, id))
    }

    /// Create the next `refs/closegate/escrow/<slug>/<n>`; a concurrent teardown that took `n`
    /// makes this one try `n + 1`.
    fn create_escrow_ref(&self, slug: &str, id: Oid) -> Result<String> {
        let mut n = self
            .escrows()
            .iter()
            .filter(|e| e.slug == slug)
            .map(|e| e.n)
            .max()
            .unwrap_or(0);
        loop {
            n += 1;
            let name = format!("{PREFIX}{slug}/{n}");
            match self.git.reference(&name, id, false, "closegate escrow") {
                Ok(_) => return Ok(name),
                Err(e) if e.code() == ErrorCode::Exists && n < 1_000_000 => continue,
                Err(e) => return Err(e).with_context(|| format!("cannot create {name}")),
            }
        }
    }

    /// Every escrow ref, oldest slug-number first. A ref that does not name a commit is skipped.
    pub fn escrows(&self) -> Vec<Escrow> {
        let Ok(refs) = self.git.references_glob(&format!("{PREFIX}*")) else {
            return Vec::new();
        };
        let mut out: Vec<Escrow> = refs
            .flatten()
            .filter_map(|r| {
                let refname = r.name()?.to_string();
                let (slug, n) = refname.strip_prefix(PREFIX)?.rsplit_once('/')?;
                let commit = r.peel_to_commit().ok()?;
                Some(Escrow {
                    slug: slug.to_string(),
                    n: n.parse().ok()?,
                    commit: commit.id(),
                    time: commit.committer().when().seconds(),
                    refname,
                })
            })
            .collect();
        out.sort_by(|a, b| (&a.slug, a.n).cmp(&(&b.slug, b.n)));
        out
    }

    /// The snapshot's recorded fields and its files that differ from its HEAD's tree.
    pub fn escrow_content(&self, commit: Oid) -> Result<(Meta, Vec<Entry>)> {
        let c = self
            .git
            .find_commit(commit)
            .with_context(|| format!("{commit} is not a commit"))?;
        let message = String::from_utf8_lossy(c.message_bytes()).into_owned();
        let meta = Meta::parse(&message)
            .with_context(|| format!("{commit} is not an escrow commit (its message names no worktree, branch, head and ts)"))?;
        let head_tree = match meta.head {
            Some(head) => Some(self.git.find_commit(head)?.tree()?),
            None => None,
        };
        let tree = c.tree()?;
        let diff = self
            .git
            .diff_tree_to_tree(head_tree.as_ref(), Some(&tree), None)
            .context("cannot compare the escrow with its HEAD")?;
        let mut entries = Vec::new();
        for delta in diff.deltas() {
            let new = delta.new_file();
            let path = new
                .path_bytes()
                .or(delta.old_file().path_bytes())
                .unwrap_or_default()
                .to_vec();
            if delta.status() == git2::Delta::Deleted {
                entries.push(Entry::Deleted { path });
                continue;
            }
            let mode = new.mode();
            if mode == FileMode::Commit {
                continue;
            }
            let blob = self.git.find_blob(new.id())?;
            entries.push(Entry::File {
                path,
                bytes: blob.content().to_vec(),
                exec: mode == FileMode::BlobExecutable,
                link: mode == FileMode::Link,
            });
        }
        Ok((meta, entries))
    }

    /// Why `restore` could not write the escrow `commit` back over a checkout of its HEAD
    /// `head` exactly, or `None`: a name in either tree that git never checks out (`.`, `..`,
    /// `.git` in any case, `/`, `\\`, NUL — the rule pristine checkouts apply), or a file of
    /// `entries` that would be written through something other than a folder (a link or a file
    /// on its way, in the escrow's tree or in the HEAD checkout it lands on). Read before
    /// anything is added (SPEC §26.5).
    pub fn escrow_fault(
        &self,
        commit: Oid,
        head: Oid,
        entries: &[Entry],
    ) -> Result<Option<String>> {
        let escrow = self.git.find_commit(commit)?.tree()?;
        let checkout = self.git.find_commit(head)?.tree()?;
        let mut seen = std::collections::HashSet::new();
        for (tree, what) in [(&checkout, "its HEAD"), (&escrow, "the escrow")] {
            if let Some(why) = bad_name(&self.git, tree, b"", 0, &mut seen)? {
                return Ok(Some(format!("{what} {why}")));
            }
        }
        let deleted: std::collections::HashSet<&[u8]> = entries
            .iter()
            .filter_map(|e| match e {
                Entry::Deleted { path } => Some(path.as_slice()),
                Entry::File { .. } => None,
            })
            .collect();
        let written: std::collections::HashSet<&[u8]> = entries
            .iter()
            .filter_map(|e| match e {
                Entry::File { path, .. } => Some(path.as_slice()),
                Entry::Deleted { .. } => None,
            })
            .collect();
        for path in &written {
            let mut at = 0;
            while let Some(slash) = path[at..].iter().position(|b| *b == b'/') {
                let folder = &path[..at + slash];
                at += slash + 1;
                let shown = super::path_text(path);
                if written.contains(folder) || !is_tree(&escrow, folder) {
                    return Ok(Some(format!(
                        "the escrow would write `{shown}` through `{}`, which is not a folder",
                        super::path_text(folder)
                    )));
                }
                if !deleted.contains(folder) && is_blob(&checkout, folder) {
                    return Ok(Some(format!(
                        "the escrow would write `{shown}` through `{}`, a file or link of its \
                         HEAD that it does not remove",
                        super::path_text(folder)
                    )));
                }
            }
        }
        Ok(None)
    }

    /// Delete `refname` only while it still names `expected`.
    pub fn delete_ref_if_at(&self, refname: &str, expected: Oid) -> Result<bool> {
        let mut reference = match self.git.find_reference(refname) {
            Ok(r) => r,
            Err(e) if e.code() == ErrorCode::NotFound => return Ok(false),
            Err(e) => return Err(e).with_context(|| format!("cannot read {refname}")),
        };
        if reference.target() != Some(expected) {
            return Ok(false);
        }
        match reference.delete() {
            Ok(()) => Ok(true),
            Err(e) if e.code() == ErrorCode::Modified => Ok(false),
            Err(e) => Err(e).with_context(|| format!("cannot delete {refname}")),
        }
    }

    /// Create `refs/heads/<branch>` at `at`; `false` when it exists already.
    pub fn create_branch_at(&self, branch: &str, at: Oid) -> Result<bool> {
        let name = format!("refs/heads/{branch}");
        match self.git.reference(&name, at, false, "closegate restore") {
            Ok(_) => Ok(true),
            Err(e) if e.code() == ErrorCode::Exists => Ok(false),
            Err(e) => Err(e).with_context(|| format!("cannot create {name}")),
        }
    }
}

/// The first entry name under `tree` (at `path`) that git never checks out, with its path; each
/// tree id is read once.
fn bad_name(
    git: &git2::Repository,
    tree: &git2::Tree,
    path: &[u8],
    depth: usize,
    seen: &mut std::collections::HashSet<Oid>,
) -> Result<Option<String>> {
    if depth > super::workspace::MAX_DEPTH || !seen.insert(tree.id()) {
        return Ok(None);
    }
    for entry in tree.iter() {
        let name = entry.name_bytes();
        let mut full = path.to_vec();
        if !full.is_empty() {
            full.push(b'/');
        }
        full.extend_from_slice(name);
        if let Some(why) = super::workspace::bad_entry_name(name) {
            let shown = super::path_text(&full);
            return Ok(Some(format!("holds `{shown}`, whose name {why}")));
        }
        if entry.filemode() == 0o040000 {
            let sub = git.find_tree(entry.id())?;
            if let Some(why) = bad_name(git, &sub, &full, depth + 1, seen)? {
                return Ok(Some(why));
            }
        }
    }
    Ok(None)
}

/// What `tree` holds at `path`: its mode, `None` when nothing.
fn mode_at(tree: &git2::Tree, path: &[u8]) -> Option<i32> {
    let entry = tree
        .get_path(Path::new(std::ffi::OsStr::from_bytes(path)))
        .ok()?;
    Some(entry.filemode())
}

fn is_tree(tree: &git2::Tree, path: &[u8]) -> bool {
    mode_at(tree, path) == Some(0o040000)
}

fn is_blob(tree: &git2::Tree, path: &[u8]) -> bool {
    mode_at(tree, path).is_some_and(|m| m != 0o040000 && m != 0o160000)
}

/// `dir/rel`, refused when a folder on the way is a symbolic link: the snapshot never reads a
/// file outside the worktree.
fn inside(dir: &Path, rel: &str) -> Result<std::path::PathBuf> {
    let mut at = dir.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        if part.is_empty() || *part == "." || *part == ".." {
            bail!("`{rel}` is not a plain path inside the worktree");
        }
        at.push(part);
        if at
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
        {
            bail!(
                "`{rel}` lies under a symbolic link; the escrow reads nothing outside the worktree"
            );
        }
    }
    Ok(dir.join(rel))
}

/// The blob of the file at `path` as it is on disk, written to the object store, and its mode;
/// `None` when nothing (or a directory) is there. A symbolic link is stored as git stores one.
fn blob_from_disk(git: &git2::Repository, path: &Path) -> Result<Option<(Oid, FileMode)>> {
    let meta = match path.symlink_metadata() {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path)?;
        let id = git.blob(target.as_os_str().as_bytes())?;
        return Ok(Some((id, FileMode::Link)));
    }
    if !meta.is_file() {
        return Ok(None);
    }
    let bytes = std::fs::read(path)?;
    let id = git.blob(&bytes)?;
    let exec = meta.permissions().mode() & 0o111 != 0;
    let mode = if exec {
        FileMode::BlobExecutable
    } else {
        FileMode::Blob
    };
    Ok(Some((id, mode)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_reads_back() {
        let meta = Meta {
            worktree: "/srv/wt/a b".into(),
            branch: Some("agent/x".into()),
            head: Some(Oid::from_str("0123456789abcdef0123456789abcdef01234567").unwrap()),
            ts: "2026-12-01T12:00:00Z".into(),
        };
        assert_eq!(Meta::parse(&meta.message("x")), Some(meta.clone()));
        let detached = Meta {
            branch: None,
            ..meta
        };
        assert_eq!(Meta::parse(&detached.message("x")), Some(detached));
        // A commit that is not an escrow's names none of the fields.
        assert_eq!(Meta::parse("fix the parser\n\nworktree: /x\n"), None);
    }
}
