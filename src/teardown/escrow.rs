//! The escrow step of a teardown (SPEC §24): the snapshot commit written before anything is
//! removed, and the rule that lets `--force` override `teardown-untracked` and
//! `teardown-unreachable-commits` only for what that snapshot holds.

use std::path::Path;

use anyhow::Result;
use git2::Oid;

use crate::catalog::Code;
use crate::finding::Finding;
use crate::repo::{Repo, WorktreeInfo, WorktreeStatus, escrow::Meta};

/// The codes `--force` may override once the escrow is written; nothing else.
pub const FORCIBLE: [Code; 2] = [Code::TeardownUntracked, Code::TeardownUnreachableCommits];

/// A written escrow.
#[derive(Debug, Clone)]
pub struct Written {
    pub refname: String,
    pub commit: Oid,
    /// How long the snapshot took (scripts/bench-teardown.sh reads it from the record).
    pub ms: u64,
}

/// What the snapshot needs from the teardown.
pub struct Source<'a> {
    pub repo: &'a Repo,
    pub info: &'a WorktreeInfo,
    pub slug: &'a str,
    pub status_file: &'a str,
    /// The branch the teardown deletes (its commits then count as reached by nothing).
    pub deleting: Option<&'a str>,
    /// The record's `ts`, named in the snapshot's message.
    pub ts: &'a str,
    /// The teardown's first probe of the worktree, made just before with nothing run since;
    /// `None`: read the worktree now. A file that appears after it is not in the snapshot, and
    /// the last probe, on the renamed-aside directory, refuses it (or, under `--force`,
    /// [`uncovered`] does).
    pub scanned: Option<&'a WorktreeStatus>,
}

/// Write the escrow of the worktree: what is on disk of its changed tracked files, its untracked
/// not-ignored files and its status document, on top of its HEAD, with every commit only its
/// HEAD reflog holds as a parent.
pub fn write(src: &Source) -> Result<Written> {
    let start = std::time::Instant::now();
    let dir = &src.info.path;
    let repo = src.repo;
    let head = repo.worktree_head(dir);
    let status = match src.scanned {
        Some(status) => status.clone(),
        None => repo.status_of(dir, src.status_file)?,
    };
    let mut paths: Vec<(String, bool)> = status.dirty.into_iter().map(|p| (p, true)).collect();
    paths.extend(status.untracked.into_iter().map(|p| (p, false)));
    let doc_on_disk = dir.join(src.status_file).symlink_metadata().is_ok();
    let doc_tracked = head.is_some_and(|h| repo.tree_entry(h, src.status_file).is_some());
    if doc_on_disk || doc_tracked {
        paths.push((src.status_file.to_string(), doc_tracked));
    }
    let lost = repo.unreachable_commits(&src.info.admin_dir, src.deleting)?;
    let parents = tips(repo, &lost);
    let meta = Meta {
        worktree: dir.display().to_string(),
        branch: src
            .info
            .head_ref()
            .and_then(|r| r.strip_prefix("refs/heads/").map(str::to_string)),
        head,
        ts: src.ts.to_string(),
    };
    let (refname, commit) = repo.write_escrow(src.slug, dir, &paths, &parents, &meta)?;
    let ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    Ok(Written {
        refname,
        commit,
        ms,
    })
}

/// The commits of `lost` no other commit of `lost` has as a parent: as parents of the snapshot
/// they keep every one of `lost` reachable.
fn tips(repo: &Repo, lost: &[Oid]) -> Vec<Oid> {
    let parents: std::collections::HashSet<Oid> =
        lost.iter().flat_map(|id| repo.parents(*id)).collect();
    lost.iter()
        .filter(|id| !parents.contains(id))
        .copied()
        .collect()
}

/// The findings that still refuse once `escrow` is written under `--force`: an untracked file
/// counts as kept only when the escrow holds exactly its bytes and mode as they are in `dir` now,
/// and unreachable commits only when the escrow reaches every one of them. Anything the escrow
/// does not hold (a file added or changed after it was written) still refuses.
pub fn uncovered(
    ctx: &super::safety::Ctx,
    escrow: Oid,
    deleting: Option<&str>,
    findings: Vec<Finding>,
) -> Result<Vec<Finding>> {
    let (repo, dir, admin) = (ctx.repo, ctx.dir, &ctx.info.admin_dir);
    let mut out = Vec::new();
    for finding in findings {
        let held = match finding.code {
            Code::TeardownUntracked => finding
                .path
                .as_deref()
                .is_some_and(|p| holds_file(repo, escrow, dir, p)),
            Code::TeardownUnreachableCommits => repo
                .unreachable_commits(admin, deleting)?
                .iter()
                .all(|c| *c == escrow || repo.is_ancestor(*c, escrow)),
            _ => false,
        };
        if !held {
            out.push(finding);
        }
    }
    Ok(out)
}

/// Whether the escrow's tree holds `rel` with the bytes and mode it has in `dir`.
fn holds_file(repo: &Repo, escrow: Oid, dir: &Path, rel: &str) -> bool {
    let Some((id, mode)) = repo.tree_entry_mode(escrow, rel) else {
        return false;
    };
    let path = dir.join(rel);
    let Ok(meta) = path.symlink_metadata() else {
        return false;
    };
    let (bytes, want) = if meta.file_type().is_symlink() {
        let Ok(target) = std::fs::read_link(&path) else {
            return false;
        };
        (
            std::os::unix::ffi::OsStrExt::as_bytes(target.as_os_str()).to_vec(),
            0o120000,
        )
    } else {
        use std::os::unix::fs::PermissionsExt;
        let exec = meta.permissions().mode() & 0o111 != 0;
        let Ok(bytes) = std::fs::read(&path) else {
            return false;
        };
        (bytes, if exec { 0o100755 } else { 0o100644 })
    };
    mode == want && Repo::hash_blob(&bytes) == Some(id)
}
