//! The destructive half of the teardown: archive the status document, then remove the worktree
//! directory and its administrative data. Only called after every check of `safety` passed.
//!
//! The worktree directory is first renamed to a hidden sibling whose name is unique to this
//! teardown and recorded before the rename (`.<name>.closegate-removing-<token>`), so it disappears
//! as a whole at once. The probes run again there; then exactly the entries their walk saw are
//! removed through directory handles (`handles`), going on past failures so the report can name
//! everything that is left. The worktree's `.git` file goes last, with the administrative data:
//! it is how a rerun from anywhere finds the repository. A later teardown of the same path
//! finishes the job, and only for a sibling its record names.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::failpoint;
use super::handles::{self, Left, Removal};
use crate::record;

/// `<common>/closegate/records/<slug>/<commit>.md`.
pub fn archive_path(common_dir: &Path, slug: &str, commit: &str) -> PathBuf {
    record::dir(common_dir)
        .join("records")
        .join(slug)
        .join(format!("{commit}.md"))
}

/// Write the status document to its archive path under `common_dir`: a temporary name in the same
/// directory first, synced, then renamed over the final name. Every folder from the common
/// directory down is opened (or made) relative to its parent's handle without following a link:
/// the agent can write the common directory (SPEC §16), so a link or a file planted at
/// `closegate`, `records` or `records/<slug>` is an error naming it, and nothing is written
/// outside the common directory.
pub fn archive(common_dir: &Path, target: &Path, bytes: &[u8]) -> Result<()> {
    let dir = archive_dir(common_dir, target, true)?
        .context("the archive's directory could not be made")?;
    let name = target
        .file_name()
        .context("the archive path has no file name")?;
    let tmp = std::ffi::OsString::from(format!(".archive-{}", handles::token()));
    let shown = target.with_file_name(&tmp);
    let mut file = dir
        .create_new(&tmp)
        .with_context(|| format!("creating {}", shown.display()))?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing {}", shown.display()))
        .and_then(|()| {
            dir.rename(&tmp, name)
                .with_context(|| format!("renaming the archive to {}", target.display()))
        });
    if written.is_err() {
        let _ = dir.remove_file(&tmp);
    }
    written
}

/// The directory of the archive path `target`, reached from the common directory one folder at a
/// time without following a link (made when `create`; `None` when missing and not made). A link or
/// a non-directory on the way is an error naming it.
pub fn archive_dir(common_dir: &Path, target: &Path, create: bool) -> Result<Option<handles::Dir>> {
    let parent = target.parent().context("the archive path has no parent")?;
    let rel = parent.strip_prefix(common_dir).with_context(|| {
        format!(
            "the archive path {} is not inside the common directory {}",
            target.display(),
            common_dir.display()
        )
    })?;
    let root = crate::repo::canonical(common_dir);
    let mut dir = handles::Dir::open(&root)
        .with_context(|| format!("cannot open the common directory {}", root.display()))?;
    let mut at = common_dir.to_path_buf();
    for part in rel.components() {
        let std::path::Component::Normal(name) = part else {
            bail!("the archive path {} leaves its directory", target.display());
        };
        at.push(name);
        match dir.child_dir(name, create) {
            Ok(Some(child)) => dir = child,
            Ok(None) => return Ok(None),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::ENOTDIR)) => bail!(
                "cannot archive the status document: {} is a symbolic link or not a directory; \
                 closegate writes its record only inside the common directory and follows no link \
                 there (move it away, then run the teardown again; nothing was removed)",
                at.display()
            ),
            Err(e) => return Err(e).with_context(|| format!("cannot open {}", at.display())),
        }
    }
    Ok(Some(dir))
}

/// Check the archive path as [`archive`] will meet it, before anything is moved: a link or a
/// non-directory on the way (see [`archive_dir`]), or a directory planted at the target itself
/// (the rename over it would fail), is an error naming it. A dry run calls this too, so it
/// predicts the real run.
pub fn check_archive_target(common_dir: &Path, target: &Path) -> Result<()> {
    let Some(dir) = archive_dir(common_dir, target, false)? else {
        return Ok(());
    };
    let name = target
        .file_name()
        .context("the archive path has no file name")?;
    // A directory opens as one; a file or a link (replaced by the rename) does not.
    if let Ok(Some(_)) = dir.child_dir(name, false) {
        bail!(
            "cannot archive the status document: {} is a directory; closegate archives the \
             record there (move it away, then run the teardown again; nothing was removed)",
            target.display()
        );
    }
    Ok(())
}

/// The first part of every aside name of the worktree at `worktree`: `.<name>.closegate-removing-`.
pub fn aside_prefix(worktree: &Path) -> String {
    let name = worktree
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(".{name}.closegate-removing-")
}

/// Where this teardown moves the worktree: a sibling named with a fresh random token.
pub fn aside_path(worktree: &Path, token: &str) -> PathBuf {
    worktree.with_file_name(format!("{}{token}", aside_prefix(worktree)))
}

/// Where the aside's `.git` file is moved just before the emptied aside is removed, so that a
/// rerun can still find the repository: `<aside>.git`.
pub fn breadcrumb(aside: &Path) -> PathBuf {
    let mut name = aside.file_name().unwrap_or_default().to_os_string();
    name.push(".git");
    aside.with_file_name(name)
}

/// `<commit>.worktree.md` beside `<commit>.md`: the worktree's own status document when it
/// differs from the one archived.
pub fn worktree_archive_path(archive: &Path) -> PathBuf {
    let stem = archive
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    archive.with_file_name(format!("{stem}.worktree.md"))
}

/// Rename the worktree aside (never over anything that exists there).
pub fn move_aside(worktree: &Path, aside: &Path) -> Result<()> {
    failpoint::step("rename aside");
    handles::rename_noreplace(worktree, aside).with_context(|| {
        format!(
            "cannot move {} aside to {}",
            worktree.display(),
            aside.display()
        )
    })
}

/// Remove what the last probe saw in `aside`, then the administrative data, then the `.git` file
/// and the emptied directory. Returns what is left (then the `.git` file and the administrative
/// data are kept too, so a rerun can finish).
pub fn finish(aside: &Path, admin_dir: Option<&Path>, removal: &Removal) -> Left {
    let mut left = removal.run(aside);
    if !left.is_empty() {
        return left;
    }
    if let Some(admin) = admin_dir {
        failpoint::step("remove administrative data");
        handles::remove_all(admin, &mut left);
        if !left.is_empty() {
            return left;
        }
    }
    finalize(aside, &mut left);
    left
}

/// The last steps: move the `.git` file out as `<aside>.git`, remove the (now empty) aside, then
/// that file. Each can be interrupted; a rerun takes it from where it stopped.
pub fn finalize(aside: &Path, left: &mut Left) {
    let gitlink = aside.join(".git");
    let crumb = breadcrumb(aside);
    match gitlink.symlink_metadata() {
        Ok(meta) if meta.is_file() => {
            failpoint::step("move .git out");
            if let Err(e) = handles::rename_noreplace(&gitlink, &crumb) {
                return left.push((gitlink, e.to_string()));
            }
        }
        Ok(_) => return left.push((gitlink, "not the worktree's `.git` file".into())),
        Err(_) => {}
    }
    if aside.symlink_metadata().is_ok() {
        failpoint::step("remove aside");
        if let Err(e) = std::fs::remove_dir(aside) {
            return left.push((aside.to_path_buf(), e.to_string()));
        }
    }
    if crumb.symlink_metadata().is_ok_and(|m| m.is_file()) {
        failpoint::step("remove .git");
        if let Err(e) = std::fs::remove_file(&crumb) {
            left.push((crumb, e.to_string()));
        }
    }
}

/// Remove a worktree's administrative directory (`<common>/worktrees/<name>`), as prune does.
pub fn remove_admin(admin_dir: &Path, left: &mut Left) {
    failpoint::step("remove administrative data");
    handles::remove_all(admin_dir, left);
}

/// SPEC §11's cap on every input file.
const MAX_DOC_BYTES: u64 = 16 << 20;

/// The worktree's own status document at `dir/<status_file>`, when it is a regular file: its
/// bytes, or `Err` when it cannot be read safely (too large, unreadable), so it must be kept.
pub fn read_doc(dir: &Path, status_file: &str) -> std::result::Result<Option<Vec<u8>>, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join(status_file);
    match path.symlink_metadata() {
        Ok(meta) if meta.is_file() => {}
        _ => return Ok(None),
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&path);
    let mut file = match file {
        Ok(file) if file.metadata().is_ok_and(|m| m.is_file()) => file,
        Ok(_) => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let mut bytes = Vec::new();
    let cap = MAX_DOC_BYTES;
    match (&mut file).take(cap + 1).read_to_end(&mut bytes) {
        Ok(_) if bytes.len() as u64 > cap => Err(format!("larger than {cap} bytes")),
        Ok(_) => Ok(Some(bytes)),
        Err(e) => Err(e.to_string()),
    }
}
