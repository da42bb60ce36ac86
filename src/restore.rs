//! `closegate restore` (SPEC §24, §26.5): a torn-down worktree back from its escrow — `git
//! worktree add` at the recorded (or given) path on the recorded branch (re-created at the
//! recorded tip when it was deleted; detached at the recorded HEAD when the branch moved or is
//! checked out elsewhere), then the snapshot's files written back, untracked ones untracked again.
//!
//! All or nothing: everything that could stop the restore midway is looked at before anything is
//! added (a path taken, a link on the recorded path's way, a name git never checks out, a file
//! the escrow would write through a link or a file, a branch name git refuses), and a failure
//! or an interruption (SIGINT, SIGTERM, SIGHUP) once something was added removes what was added
//! (the worktree, its administrative data, the folders made for it, a re-created branch). Only
//! a SIGKILL can leave a half-restored worktree (`git worktree remove --force PATH` clears it).
//!
//! Without PATH only an escrow a teardown record names (authenticated where a record key exists)
//! is restored, at that record's worktree path: the path in an escrow's message is written by
//! whoever can write the common dir, so another escrow needs a PATH (`restore-unrecorded`).

pub mod expire;
mod undo;

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use git2::Oid;

use crate::catalog::Code;
use crate::finding::Finding;
use crate::repo::Repo;
use crate::repo::escrow::{Entry, Meta, PREFIX};
use crate::repo::git_cli::Git;

use undo::Added;

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
pub struct Refused {
    /// The finding, when the refusal has a code (`restore-unrecorded`).
    pub finding: Option<Finding>,
    pub message: String,
}

impl Refused {
    fn plain(message: impl Into<String>) -> Refused {
        Refused {
            finding: None,
            message: message.into(),
        }
    }

    fn coded(code: Code, message: String) -> Refused {
        Refused {
            finding: Some(Finding::new(code, message.clone())),
            message,
        }
    }
}

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

/// Restore the escrow `what` at `path` (default: the path its teardown record names).
pub fn run(repo: &Repo, what: &str, path: Option<&Path>) -> Result<Result<Restored, Refused>> {
    let (refname, commit) = resolve(repo, what)?;
    let (meta, entries) = repo.escrow_content(commit)?;
    let Some(head) = meta.head else {
        bail!("{refname} records no HEAD commit (the worktree's branch was unborn)");
    };
    let path_given = path;
    let path = match path {
        Some(p) => absolute(p)?,
        None => match recorded_path(repo, what, &refname, commit)? {
            Ok(path) => path,
            Err(refused) => return Ok(Err(refused)),
        },
    };
    let recorded = path_given.is_none();
    if let Some(why) = fault(repo, &meta, commit, head, &entries, &path, recorded)? {
        return Ok(Err(Refused::plain(why)));
    }
    let branch = choose_branch(repo, &meta, head, &path);
    // From here on every step is undone when a later one fails or a signal asks to stop.
    let _signals = crate::sys::interrupt::Guard::install();
    let mut added = Added::new(repo, &path);
    match apply(repo, &path, head, branch, &entries, &mut added) {
        Ok((branch, recreated, detached)) => Ok(Ok(Restored {
            refname,
            commit,
            path,
            branch,
            recreated,
            detached,
            head,
            files: entries.len(),
        })),
        Err(err) => Err(added.undo(repo, err)),
    }
}

/// Where a teardown record that names the escrow `commit` (authenticated where a record key
/// exists) says its worktree was; else the `restore-unrecorded` refusal, naming the newest
/// escrow of the slug that a record does name.
fn recorded_path(
    repo: &Repo,
    what: &str,
    refname: &str,
    commit: Oid,
) -> Result<Result<PathBuf, Refused>> {
    let common = repo.common_dir();
    if let Some(path) = record_of(&common, commit)? {
        return Ok(Ok(path));
    }
    let slug = refname
        .strip_prefix(PREFIX)
        .and_then(|rest| rest.rsplit_once('/'))
        .map_or(what, |(slug, _)| slug);
    let mut others = repo.escrows();
    others.retain(|e| e.slug == slug && e.commit != commit);
    others.sort_by_key(|e| std::cmp::Reverse(e.n));
    let mut recorded = None;
    for escrow in others {
        if record_of(&common, escrow.commit)?.is_some() {
            recorded = Some(escrow.refname);
            break;
        }
    }
    let instead = match recorded {
        Some(other) => format!(
            "; the newest escrow of `{slug}` a teardown recorded is {other} \
             (`closegate restore {other}`)"
        ),
        None => String::new(),
    };
    let message = format!(
        "no teardown record names {refname} (commit {commit}), so the path its message names \
         is nobody's word: look at it (`git show {refname}`) and, if it is yours, restore it at \
         a path you choose: `closegate restore {refname} PATH`{instead}"
    );
    Ok(Err(Refused::coded(Code::RestoreUnrecorded, message)))
}

/// The worktree path of the newest teardown record (that counts) naming the escrow `commit`.
fn record_of(common: &Path, commit: Oid) -> Result<Option<PathBuf>> {
    let hex = commit.to_string();
    // Not a verdict (SPEC §26.1 asks about claims, and an escrow is none): the teardown records
    // that name this escrow commit, among the records that count (authenticated where a record
    // key exists).
    let values = crate::record::read_mentioning(common, &hex)?;
    let path = values.iter().rev().find_map(|value| {
        let record = crate::ledger::Record::read(value)?;
        let steps = record.steps()?;
        (steps.escrow_commit.as_deref() == Some(hex.as_str()))
            .then_some(record.worktree)
            .flatten()
    });
    Ok(path.filter(|p| !p.is_empty()).map(PathBuf::from))
}

/// Why the escrow cannot be restored at `path` whole, or `None`: the path is taken, a link lies
/// on its way, the branch name is one git refuses, or the escrow holds what restore never
/// writes (SPEC §26.5). Looked at before anything is added.
fn fault(
    repo: &Repo,
    meta: &Meta,
    commit: Oid,
    head: Oid,
    entries: &[Entry],
    path: &Path,
    recorded: bool,
) -> Result<Option<String>> {
    if path.symlink_metadata().is_ok() {
        return Ok(Some(format!(
            "{} exists; restore never writes over an existing path (give another PATH)",
            path.display()
        )));
    }
    // The recorded path was canonical when the teardown recorded it: a link on its way now was
    // put there since.
    if let Some(link) = link_on_way(path).filter(|_| recorded) {
        return Ok(Some(format!(
            "{} is a symbolic link on the way to the recorded path {}, put there since the \
             teardown; restore writes only where the record says (give a PATH)",
            link.display(),
            path.display()
        )));
    }
    if let Some(branch) = &meta.branch {
        let valid = git2::Reference::is_valid_name(&format!("refs/heads/{branch}"));
        if !valid || branch.starts_with('-') {
            return Ok(Some(format!(
                "the escrow names the branch `{branch}`, which git refuses as a branch name: a \
                 teardown never writes that; look at the escrow with `git show {commit} --stat`"
            )));
        }
    }
    let why = repo.escrow_fault(commit, head, entries)?;
    Ok(why.map(|why| {
        format!(
            "{why}: restore never writes it, and a teardown never escrows it; look at the escrow \
             with `git show {commit} --stat`"
        )
    }))
}

/// The first symbolic link among the existing folders above `path`.
fn link_on_way(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .filter(|a| a.parent().is_some())
        .find(|a| {
            a.symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink())
        })
        .map(Path::to_path_buf)
}

/// What to check out.
enum Branch {
    /// The recorded branch, at the recorded HEAD.
    Existing(String),
    /// The recorded branch was deleted: re-create it at the recorded HEAD.
    Recreate(String),
    /// Detached at the recorded HEAD, and why.
    Detached(String),
}

/// The branch to check out (re-created when deleted), or why the worktree is detached. Reads
/// only: the branch is created by [`apply`].
fn choose_branch(repo: &Repo, meta: &Meta, head: Oid, path: &Path) -> Branch {
    let Some(branch) = meta.branch.clone() else {
        return Branch::Detached("the worktree was detached".into());
    };
    match repo.branch_tip(&branch) {
        None => Branch::Recreate(branch),
        Some(tip) if tip != head => {
            Branch::Detached(format!("branch {branch} moved to {tip} since the teardown"))
        }
        Some(_) => match repo.branch_checked_out_elsewhere(&branch, path).first() {
            Some(other) => Branch::Detached(format!(
                "branch {branch} is checked out in {}",
                other.display()
            )),
            None => Branch::Existing(branch),
        },
    }
}

/// The steps that add something, each noted in `added` first so a failure undoes it:
/// the branch, the worktree, then the snapshot's files.
fn apply(
    repo: &Repo,
    path: &Path,
    head: Oid,
    branch: Branch,
    entries: &[Entry],
    added: &mut Added,
) -> Result<(Option<String>, bool, Option<String>)> {
    step("branch")?;
    let (branch, recreated, detached) = match branch {
        Branch::Existing(name) => (Some(name), false, None),
        Branch::Detached(why) => (None, false, Some(why)),
        Branch::Recreate(name) => {
            if repo.create_branch_at(&name, head)? {
                added.branch(&name, head);
                (Some(name), true, None)
            } else {
                let why = format!("branch {name} appeared meanwhile");
                (None, false, Some(why))
            }
        }
    };
    step("worktree add")?;
    added.worktree();
    worktree_add(repo, path, branch.as_deref(), head)?;
    write_entries(path, entries)
        .with_context(|| format!("cannot write the escrow's files into {}", path.display()))?;
    step("done")?;
    Ok((branch, recreated, detached))
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
            step(&format!("delete {}", crate::repo::path_text(path)))?;
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
        step(&format!("write {}", crate::repo::path_text(path)))?;
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

/// One step that adds something: stops here when a signal asked to (the restore is then
/// undone). Under test, `CLOSEGATE_TEST_RESTORE_INTERRUPT=N` (or the step's name) sends this
/// process SIGTERM just before the N-th step, as a user's Ctrl-C or a service manager would
/// (debug builds only, [`crate::sys::test_switch`]).
fn step(name: &str) -> Result<()> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static STEP: AtomicUsize = AtomicUsize::new(0);
    let n = STEP.fetch_add(1, Ordering::SeqCst) + 1;
    if let Some(at) = crate::sys::test_switch("CLOSEGATE_TEST_RESTORE_INTERRUPT")
        && (at.to_str() == Some(name) || at.to_str().and_then(|a| a.parse().ok()) == Some(n))
    {
        let me = rustix::process::getpid();
        let _ = rustix::process::kill_process(me, rustix::process::Signal::TERM);
        let start = std::time::Instant::now();
        while !crate::sys::interrupt::requested() && start.elapsed().as_secs() < 5 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    if crate::sys::interrupt::requested() {
        bail!("interrupted by a signal before step {n} ({name})");
    }
    Ok(())
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
