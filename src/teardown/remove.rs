//! The destructive half of the teardown: archive the status document, then remove the worktree
//! directory and its administrative data. Only called after every check of `safety` passed.
//!
//! The worktree directory is first renamed to a hidden sibling (`.<name>.closegate-removing`), so
//! it disappears as a whole at once; its contents are then removed one entry at a time, going on
//! past failures so the report can name everything that is left. A later teardown of the same
//! path finishes removing that sibling.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::record;

/// `<common>/closegate/records/<slug>/<commit>.md`.
pub fn archive_path(common_dir: &Path, slug: &str, commit: &str) -> PathBuf {
    record::dir(common_dir)
        .join("records")
        .join(slug)
        .join(format!("{commit}.md"))
}

/// Write the status document to its archive path: a temporary name in the same directory first,
/// synced, then renamed over the final name.
pub fn archive(target: &Path, bytes: &[u8]) -> Result<()> {
    let dir = target.parent().context("the archive path has no parent")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".archive-")
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .with_context(|| format!("writing {}", tmp.path().display()))?;
    tmp.persist(target)
        .with_context(|| format!("renaming the archive to {}", target.display()))?;
    Ok(())
}

/// Where a worktree directory is moved while it is being removed.
pub fn removing_path(worktree: &Path) -> PathBuf {
    let name = worktree
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    worktree.with_file_name(format!(".{name}.closegate-removing"))
}

/// What could not be removed: a path and why.
pub type Left = Vec<(PathBuf, String)>;

/// Move the worktree directory aside, remove its admin dir, then its contents. Returns what is
/// left; an `Err` means nothing was removed (the directory could not be moved aside).
pub fn remove_worktree(worktree: &Path, admin_dir: &Path) -> Result<Left> {
    let aside = removing_path(worktree);
    let mut left = Left::new();
    if aside.symlink_metadata().is_ok() {
        // An earlier teardown of this path stopped midway: finish it first.
        remove_tree(&aside, &mut left);
        if !left.is_empty() {
            return Ok(left);
        }
    }
    std::fs::rename(worktree, &aside).with_context(|| {
        format!(
            "cannot move {} aside to {}",
            worktree.display(),
            aside.display()
        )
    })?;
    remove_admin(admin_dir, &mut left);
    remove_tree(&aside, &mut left);
    Ok(left)
}

/// Remove a worktree's administrative directory (`<common>/worktrees/<name>`), as prune does.
pub fn remove_admin(admin_dir: &Path, left: &mut Left) {
    if admin_dir.symlink_metadata().is_ok() {
        remove_tree(admin_dir, left);
    }
}

/// Remove `path` and everything below it without following symlinks, going on past failures.
/// A directory is removed only when everything inside it was, so only root causes are listed.
pub fn remove_tree(path: &Path, left: &mut Left) {
    let meta = match path.symlink_metadata() {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => return left.push((path.to_path_buf(), e.to_string())),
    };
    if !meta.is_dir() {
        if let Err(e) = std::fs::remove_file(path) {
            left.push((path.to_path_buf(), e.to_string()));
        }
        return;
    }
    let before = left.len();
    match std::fs::read_dir(path) {
        Ok(entries) => {
            for entry in entries {
                match entry {
                    Ok(entry) => remove_tree(&entry.path(), left),
                    Err(e) => left.push((path.to_path_buf(), e.to_string())),
                }
            }
        }
        Err(e) => left.push((path.to_path_buf(), e.to_string())),
    }
    if left.len() == before
        && let Err(e) = std::fs::remove_dir(path)
    {
        left.push((path.to_path_buf(), e.to_string()));
    }
}
