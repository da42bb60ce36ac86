//! `closegate restore` (SPEC §24): a torn-down worktree back from its escrow — `git worktree
//! add` at the recorded (or given) path on the recorded branch (re-created at the recorded tip
//! when it was deleted; detached at the recorded HEAD when the branch moved or is checked out
//! elsewhere), then the snapshot's files written back, untracked ones untracked again. It never
//! writes over an existing path.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use git2::Oid;

use crate::repo::Repo;
use crate::repo::escrow::{Entry, Meta, PREFIX};
use crate::repo::git_cli::Git;

/// What `restore` did, or why it refused.
#[derive(Debug)]
pub struct Restored {
    pub refname: String,
    pub commit: Oid,
    pub path: PathBuf,
    /// The branch checked out, when the worktree is on one.
    pub branch: Option<String>,
    /// Set when the recorded branch was re-created at the recorded tip.
    pub recreated: bool,
    /// Why the worktree is detached, when it is.
    pub detached: Option<String>,
    pub head: Oid,
    pub files: usize,
}

/// Why `restore` refused (exit 1): nothing was written.
#[derive(Debug)]
pub struct Refused(pub String);

/// The escrow ref `what` names: a ref under `refs/closegate/escrow/`, or a slug (its newest).
pub fn resolve(repo: &Repo, what: &str) -> Result<(String, Oid)> {
    if what.starts_with("refs/") {
        if !what.starts_with(PREFIX) {
            bail!("{what} is not an escrow ref (they live under {PREFIX})");
        }
        let id = repo
            .ref_target(what)
            .with_context(|| format!("no escrow {what}"))?;
        return Ok((what.to_string(), id));
    }
    if let Some(fault) = crate::doc::slug_fault(what) {
        bail!("`{what}` is neither an escrow ref nor a slug: {fault}");
    }
    let newest = repo
        .escrows()
        .into_iter()
        .filter(|e| e.slug == what)
        .max_by_key(|e| e.n)
        .with_context(|| format!("no escrow of `{what}` (none under {PREFIX}{what}/)"))?;
    Ok((newest.refname, newest.commit))
}

/// Restore the escrow `what` at `path` (default: the recorded worktree path).
pub fn run(repo: &Repo, what: &str, path: Option<&Path>) -> Result<Result<Restored, Refused>> {
    let (refname, commit) = resolve(repo, what)?;
    let (meta, entries) = repo.escrow_content(commit)?;
    let Some(head) = meta.head else {
        bail!("{refname} records no HEAD commit (the worktree's branch was unborn)");
    };
    let path = match path {
        Some(p) => absolute(p)?,
        None => PathBuf::from(&meta.worktree),
    };
    if path.symlink_metadata().is_ok() {
        return Ok(Err(Refused(format!(
            "{} exists; restore never writes over an existing path (give another PATH)",
            path.display()
        ))));
    }
    let (branch, recreated, detached) = choose_branch(repo, &meta, head, &path)?;
    worktree_add(repo, &path, branch.as_deref(), head)?;
    let files = write_entries(&path, &entries)
        .with_context(|| format!("cannot write the escrow's files into {}", path.display()))?;
    Ok(Ok(Restored {
        refname,
        commit,
        path,
        branch,
        recreated,
        detached,
        head,
        files,
    }))
}

/// The branch to check out (re-created when deleted), or why the worktree is detached.
fn choose_branch(
    repo: &Repo,
    meta: &Meta,
    head: Oid,
    path: &Path,
) -> Result<(Option<String>, bool, Option<String>)> {
    let Some(branch) = meta.branch.clone() else {
        return Ok((None, false, Some("the worktree was detached".into())));
    };
    match repo.branch_tip(&branch) {
        None => {
            if repo.create_branch_at(&branch, head)? {
                return Ok((Some(branch), true, None));
            }
            let why = format!("branch {branch} appeared meanwhile");
            Ok((None, false, Some(why)))
        }
        Some(tip) if tip != head => {
            let why = format!("branch {branch} moved to {tip} since the teardown");
            Ok((None, false, Some(why)))
        }
        Some(_) => match repo.branch_checked_out_elsewhere(&branch, path).first() {
            Some(other) => {
                let why = format!("branch {branch} is checked out in {}", other.display());
                Ok((None, false, Some(why)))
            }
            None => Ok((Some(branch), false, None)),
        },
    }
}

/// `git worktree add` through the git runner: no hook (`post-checkout`) and no filter of the
/// repository's configuration runs; the escrow's own bytes are written over the checkout next.
fn worktree_add(repo: &Repo, path: &Path, branch: Option<&str>, head: Oid) -> Result<()> {
    let mut args: Vec<OsString> = vec!["worktree".into(), "add".into(), "--quiet".into()];
    match branch {
        Some(b) => args.extend([path.into(), b.into()]),
        None => args.extend(["--detach".into(), path.into(), head.to_string().into()]),
    }
    let out = Git::repo(&repo.common_dir()).run(&args)?;
    if !out.status.success() {
        bail!(
            "`git worktree add {}` failed: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Write the snapshot's files over the fresh checkout: deletions first, then files and links,
/// never through a symbolic link on the way. Returns how many paths were written or removed.
fn write_entries(root: &Path, entries: &[Entry]) -> Result<usize> {
    for entry in entries {
        if let Entry::Deleted { path } = entry {
            let full = on_way(root, path, false)?;
            match std::fs::remove_file(&full) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot remove {}", full.display()));
                }
            }
        }
    }
    for entry in entries {
        let Entry::File {
            path,
            bytes,
            exec,
            link,
        } = entry
        else {
            continue;
        };
        let full = on_way(root, path, true)?;
        match full.symlink_metadata() {
            Ok(m) if m.is_dir() => bail!("{} is a folder in the checkout", full.display()),
            Ok(_) => std::fs::remove_file(&full)
                .with_context(|| format!("cannot replace {}", full.display()))?,
            Err(_) => {}
        }
        if *link {
            std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(bytes), &full)
                .with_context(|| format!("cannot create the link {}", full.display()))?;
            continue;
        }
        let mode = if *exec { 0o755 } else { 0o644 };
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&full)
            .with_context(|| format!("cannot create {}", full.display()))?;
        file.write_all(bytes)?;
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    Ok(entries.len())
}

/// `root/rel`, its folders created when `create`; refused when one on the way is a link or a file.
fn on_way(root: &Path, rel: &[u8], create: bool) -> Result<PathBuf> {
    let parts: Vec<&[u8]> = rel.split(|b| *b == b'/').collect();
    let mut at = root.to_path_buf();
    for (i, part) in parts.iter().enumerate() {
        if part.is_empty() || *part == b"." || *part == b".." || *part == b".git" {
            bail!("`{}` is no plain path", String::from_utf8_lossy(rel));
        }
        at.push(std::ffi::OsStr::from_bytes(part));
        if i + 1 == parts.len() {
            break;
        }
        match at.symlink_metadata() {
            Ok(m) if m.is_dir() => {}
            Ok(_) => bail!("{} is not a folder", at.display()),
            Err(_) if create => std::fs::create_dir(&at)
                .with_context(|| format!("cannot create {}", at.display()))?,
            Err(_) => return Ok(at.join("missing")),
        }
    }
    Ok(at)
}

/// `path` made absolute against the current directory.
fn absolute(path: &Path) -> Result<PathBuf> {
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    Ok(std::env::current_dir()
        .context("cannot read the current directory")?
        .join(path))
}
