//! Resetting a warm workspace (SPEC §19) to a commit exactly: every tracked file the commit's
//! (content, mode, symlink target), everything else outside the `keep` paths removed, and a
//! fresh `.git` (HEAD detached at the commit, objects borrowed through alternates) as in
//! [`Repo::checkout_pristine`].
//!
//! The previous run was the agent's code, so this is the most exposed code in closegate:
//! - Nothing is resolved through a symbolic link. The walk works through directory handles
//!   (`openat` with `O_NOFOLLOW | O_DIRECTORY`, `statat` without following, `unlinkat`,
//!   `symlinkat`), as teardown's removal does: a link where a directory should be is removed,
//!   a link at a kept path is a link (kept only when the commit does not track that path).
//! - A tracked path at or under a kept path is reset like any other (`keep` keeps untracked
//!   outputs only), and every path the previous reset wrote from its tree (its tree id is kept
//!   beside the checkout, out of the check's reach) that this commit does not track is removed,
//!   kept path or not.
//! - The whole tree is read and every entry name checked before anything is written: `.`, `..`,
//!   `.git` in any case, or a name holding `/`, `\` or NUL is an error naming it.
//! - Every file the reset writes gets an mtime later than every mtime under the kept paths: a
//!   kept entry dated after the reset's start is dated back to it, and written files are dated
//!   one microsecond after it.
//!
//! Files already equal to the commit's are left untouched, mtime included, so builds in the
//! kept paths stay incremental. Equality is judged from the file itself (type, permission bits,
//! size, content hashed as a blob), never from an index the previous check could have written.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use anyhow::{Context, Result, bail};
use git2::{ObjectType, Oid, Repository, RepositoryInitOptions};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, Timespec, Timestamps};
use rustix::io::Errno;

use super::Repo;

/// Deeper trees (or directories on disk) than this are refused rather than walked.
pub const MAX_DEPTH: usize = 512;

/// What the commit's tree holds at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    /// A directory: the index of its [`Node`].
    Dir(usize),
    /// A submodule: an empty directory, as git2's checkout leaves it.
    Gitlink,
    File {
        id: Oid,
        exec: bool,
    },
    Link(Oid),
}

/// One directory of the commit's tree: its entries by name.
#[derive(Debug, Default)]
struct Node {
    entries: Vec<(Vec<u8>, Want)>,
}

impl Node {
    fn get(&self, name: &[u8]) -> Option<Want> {
        self.entries
            .binary_search_by(|(n, _)| n.as_slice().cmp(name))
            .ok()
            .map(|i| self.entries[i].1)
    }
}

/// The commit's whole tree, read and checked before anything is written.
struct Tree {
    nodes: Vec<Node>,
}

/// Why a tree entry name is never checked out (SPEC §19), or `None` for a good name.
pub fn bad_entry_name(name: &[u8]) -> Option<&'static str> {
    if name.is_empty() {
        Some("is empty")
    } else if name == b"." || name == b".." {
        Some("is `.` or `..`")
    } else if name.eq_ignore_ascii_case(b".git") {
        Some("is `.git`")
    } else if name.contains(&b'/') {
        Some("holds `/`")
    } else if name.contains(&b'\\') {
        Some("holds `\\`")
    } else if name.contains(&0) {
        Some("holds NUL")
    } else {
        None
    }
}

/// Read the tree `id` (and every tree below it) into `nodes`, refusing a bad entry name.
fn load(
    git: &Repository,
    id: Oid,
    path: &[u8],
    depth: usize,
    nodes: &mut Vec<Node>,
) -> Result<usize> {
    if depth > MAX_DEPTH {
        bail!(
            "the tree at `{}` is nested deeper than {MAX_DEPTH} directories",
            super::path_text(path)
        );
    }
    let tree = git
        .find_tree(id)
        .with_context(|| format!("reading the tree at `{}`", super::path_text(path)))?;
    let index = nodes.len();
    nodes.push(Node::default());
    let mut entries = Vec::with_capacity(tree.len());
    for entry in tree.iter() {
        let name = entry.name_bytes().to_vec();
        let mut full = path.to_vec();
        if !full.is_empty() {
            full.push(b'/');
        }
        full.extend_from_slice(&name);
        if let Some(why) = bad_entry_name(&name) {
            bail!(
                "the commit's tree holds an entry `{}` whose name {why}: such an entry is never \
                 checked out (nothing was written)",
                super::path_text(&full)
            );
        }
        let want = match entry.filemode() {
            0o040000 => Want::Dir(load(git, entry.id(), &full, depth + 1, nodes)?),
            0o160000 => Want::Gitlink,
            0o120000 => Want::Link(entry.id()),
            0o100755 => Want::File {
                id: entry.id(),
                exec: true,
            },
            _ => Want::File {
                id: entry.id(),
                exec: false,
            },
        };
        entries.push((name, want));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    if entries.windows(2).any(|w| w[0].0 == w[1].0) {
        bail!(
            "the commit's tree at `{}` names one entry twice (nothing was written)",
            super::path_text(path)
        );
    }
    nodes[index].entries = entries;
    Ok(index)
}

impl Repo {
    /// Refuse a commit whose tree holds an entry that is never checked out (SPEC §19): the
    /// pristine checkout and the warm reset both ask before writing anything.
    pub fn check_tree_names(&self, commit: Oid) -> Result<()> {
        self.read_tree(commit).map(|_| ())
    }

    fn read_tree(&self, commit: Oid) -> Result<(Oid, Tree)> {
        let tree = self
            .git
            .find_commit(commit)
            .map(|c| c.tree_id())
            .with_context(|| format!("reading commit {commit}"))?;
        let mut nodes = Vec::new();
        load(&self.git, tree, b"", 0, &mut nodes)
            .with_context(|| format!("checking out commit {commit}"))?;
        Ok((tree, Tree { nodes }))
    }

    /// Make `dir` exactly `commit`'s checkout, keeping the `keep` paths (relative, no trailing
    /// `/`) as they are unless the commit tracks them. The tree the reset wrote is remembered in
    /// `<dir>.tree` (beside `dir`, outside the check's reach).
    pub fn reset_workspace(&self, commit: Oid, dir: &Path, keep: &[String]) -> Result<()> {
        self.reset_workspace_at(commit, dir, keep, &memo_path(dir), true)
    }

    /// [`Repo::reset_workspace`], the tree id remembered in `memo` (a run on an overlay keeps
    /// its own, seeded from its snapshot's, SPEC §27.2). `date_kept: false` when the kept paths
    /// come from a complete base snapshot, written by a run that ended before this reset started
    /// and dated back when completed: they are not walked to date anything back (on a build
    /// tree that walk opens every directory under `target/` or `node_modules/`).
    pub fn reset_workspace_at(
        &self,
        commit: Oid,
        dir: &Path,
        keep: &[String],
        memo: &Path,
        date_kept: bool,
    ) -> Result<()> {
        let (tree_id, tree) = self.read_tree(commit)?;
        let fail = || format!("resetting the workspace {} to {commit}", dir.display());
        let memo = memo.to_path_buf();
        let prev = std::fs::read_to_string(&memo)
            .ok()
            .and_then(|t| Oid::from_str(t.trim()).ok())
            .filter(|id| self.git.find_tree(*id).is_ok());
        match rustix::fs::mkdir(dir, Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err(std::io::Error::from(e)).with_context(fail),
        }
        let root = open_dir(rustix::fs::CWD, dir.as_os_str()).with_context(fail)?;
        let keep: Vec<Vec<u8>> = keep.iter().map(|k| k.as_bytes().to_vec()).collect();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let start = Timespec {
            tv_sec: now.as_secs() as _,
            tv_nsec: now.subsec_nanos() as _,
        };
        let reset = Reset {
            git: &self.git,
            odb: self.git.odb().with_context(fail)?,
            tree: &tree,
            keep: &keep,
            start,
            written: written_time(start),
            date_kept,
        };
        let _ = std::fs::remove_file(&memo);
        reset
            .dir(root.as_fd(), b"", Some(0), prev, false, 0)
            .with_context(fail)?;
        self.fresh_git_dir(commit, dir).with_context(fail)?;
        std::fs::write(&memo, format!("{tree_id}\n")).with_context(fail)
    }

    /// A new `.git` in `dir`: HEAD detached at `commit`, objects through alternates, the index
    /// holding the commit's tree. The reset removed any `.git` the previous run left, so this
    /// creates every path below it anew.
    fn fresh_git_dir(&self, commit: Oid, dir: &Path) -> Result<()> {
        let mut init = RepositoryInitOptions::new();
        init.external_template(false).no_reinit(true);
        let git_dir = Repository::init_opts(dir, &init)?.path().to_path_buf();
        super::quarantine::write_alternates(&git_dir, &self.alternates())?;
        let checkout = Repository::open(&git_dir)?;
        let tree = checkout.find_commit(commit)?.tree()?;
        checkout.set_head_detached(commit)?;
        let mut index = checkout.index()?;
        index.read_tree(&tree)?;
        index.write()?;
        Ok(())
    }
}

/// Where the tree id of the last reset of `dir` is kept: `<dir>.tree`, beside it.
fn memo_path(dir: &Path) -> std::path::PathBuf {
    let mut name = dir.file_name().unwrap_or_default().to_os_string();
    name.push(".tree");
    dir.with_file_name(name)
}

/// The mtime of every file the reset writes: one microsecond after its start.
fn written_time(start: Timespec) -> Timespec {
    let nsec = start.tv_nsec + 1_000;
    if nsec >= 1_000_000_000 {
        Timespec {
            tv_sec: start.tv_sec + 1,
            tv_nsec: nsec - 1_000_000_000,
        }
    } else {
        Timespec {
            tv_sec: start.tv_sec,
            tv_nsec: nsec,
        }
    }
}

/// One directory being reset, as [`Reset::entry`] needs it.
#[derive(Clone, Copy)]
struct At<'f, 't> {
    fd: BorrowedFd<'f>,
    path: &'t [u8],
    node: Option<&'t Node>,
    prev: Option<&'t git2::Tree<'t>>,
    in_keep: bool,
    depth: usize,
}

struct Reset<'a> {
    git: &'a Repository,
    odb: git2::Odb<'a>,
    tree: &'a Tree,
    keep: &'a [Vec<u8>],
    start: Timespec,
    written: Timespec,
    /// Date back what the kept paths hold that is newer than `start` (else they are known older).
    date_kept: bool,
}

fn join(path: &[u8], name: &[u8]) -> Vec<u8> {
    let mut full = path.to_vec();
    if !full.is_empty() {
        full.push(b'/');
    }
    full.extend_from_slice(name);
    full
}

fn io(e: Errno) -> std::io::Error {
    std::io::Error::from(e)
}

/// Open `name` in `at` as a directory, never through a link.
fn open_dir(at: BorrowedFd<'_>, name: &OsStr) -> std::io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    rustix::fs::openat(at, name, flags, Mode::empty()).map_err(io)
}

/// The names in the directory `fd` (without `.` and `..`).
fn names(fd: BorrowedFd<'_>) -> std::io::Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    for entry in rustix::fs::Dir::read_from(fd).map_err(io)? {
        let entry = entry.map_err(io)?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            out.push(name.to_vec());
        }
    }
    Ok(out)
}

fn os(name: &[u8]) -> &OsStr {
    OsStr::from_bytes(name)
}

impl Reset<'_> {
    /// Is `path` a kept path, or does one lie below it?
    fn kept(&self, path: &[u8]) -> (bool, bool) {
        let is = self.keep.iter().any(|k| k.as_slice() == path);
        let holds = self
            .keep
            .iter()
            .any(|k| k.len() > path.len() && k.starts_with(path) && k[path.len()] == b'/');
        (is, holds)
    }

    /// Reset the directory `fd` (at `path`) to tree node `node` (`None`: untracked here). `prev`
    /// is the previous reset's tree at this path; `in_keep` says a kept path holds this one.
    fn dir(
        &self,
        fd: BorrowedFd<'_>,
        path: &[u8],
        node: Option<usize>,
        prev: Option<Oid>,
        in_keep: bool,
        depth: usize,
    ) -> Result<()> {
        if depth > MAX_DEPTH {
            bail!(
                "`{}` is nested deeper than {MAX_DEPTH} directories; run `closegate gc`",
                super::path_text(path)
            );
        }
        let node = node.map(|i| &self.tree.nodes[i]);
        let prev_tree = prev.and_then(|id| self.git.find_tree(id).ok());
        let mut present: HashMap<Vec<u8>, ()> = HashMap::new();
        for name in names(fd).with_context(|| format!("reading `{}`", super::path_text(path)))? {
            let at = At {
                fd,
                path,
                node,
                prev: prev_tree.as_ref(),
                in_keep,
                depth,
            };
            if self.entry(&at, &name)? {
                present.insert(name, ());
            }
        }
        let Some(node) = node else {
            return Ok(());
        };
        for (name, want) in &node.entries {
            if present.contains_key(name) {
                continue;
            }
            let full = join(path, name);
            self.create(fd, name, &full, *want, depth)?;
        }
        Ok(())
    }

    /// Reset the entry `name` of the directory `at`; whether it is still there (fits or kept).
    fn entry(&self, at: &At<'_, '_>, name: &[u8]) -> Result<bool> {
        let (fd, path, node, prev_tree, in_keep) = (at.fd, at.path, at.node, at.prev, at.in_keep);
        let name = name.to_vec();
        let full = join(path, &name);
        let want = node.and_then(|n| n.get(&name));
        let (is_kept, holds_kept) = self.kept(&full);
        let kept_here = in_keep || is_kept;
        let stat = match rustix::fs::statat(fd, os(&name), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            Err(Errno::NOENT) => return Ok(false),
            Err(e) => return Err(io(e)).with_context(|| describe(&full)),
        };
        let kind = FileType::from_raw_mode(stat.st_mode);
        let prev_entry = prev_tree
            .as_ref()
            .and_then(|t| t.get_name_bytes(&name).map(|e| (e.id(), e.filemode())));
        let top_git = path.is_empty() && name == b".git";
        let fits = match want {
            _ if top_git => false,
            Some(Want::Dir(_)) | Some(Want::Gitlink) => kind == FileType::Directory,
            Some(Want::File { id, exec }) => {
                kind == FileType::RegularFile && self.same_file(fd, &name, &stat, id, exec)
            }
            Some(Want::Link(id)) => kind == FileType::Symlink && self.same_link(fd, &name, id),
            None => kept_here || (holds_kept && kind == FileType::Directory),
        };
        if !fits {
            remove(fd, &name, &full, 0)?;
            return Ok(false);
        }
        let prev_entry = prev_entry.map(|(id, mode)| (id, mode == 0o040000));
        self.descend(at, &name, &full, want, kind, kept_here, prev_entry)?;
        Ok(true)
    }

    /// Go on with the entry `name` of `at` that stays: into a directory, remove what the previous
    /// reset tracked under a kept path, or date a kept entry back. `prev` is the previous tree's
    /// entry there (id, whether a directory).
    #[allow(clippy::too_many_arguments)]
    fn descend(
        &self,
        at: &At<'_, '_>,
        name: &[u8],
        full: &[u8],
        want: Option<Want>,
        kind: FileType,
        kept_here: bool,
        prev: Option<(Oid, bool)>,
    ) -> Result<()> {
        let (fd, depth) = (at.fd, at.depth);
        let prev_dir = prev.filter(|(_, dir)| *dir).map(|(id, _)| id);
        match want {
            Some(Want::Dir(i)) => {
                let child = self.open_child(fd, name, full)?;
                self.dir(child.as_fd(), full, Some(i), prev_dir, kept_here, depth + 1)
            }
            Some(Want::Gitlink) => {
                let child = self.open_child(fd, name, full)?;
                self.dir(child.as_fd(), full, None, None, false, depth + 1)
            }
            Some(_) => Ok(()),
            None if kept_here => match prev {
                // The previous reset wrote it from its tree; this commit does not track it.
                Some((id, true)) if kind == FileType::Directory => {
                    let child = self.open_child(fd, name, full)?;
                    self.dir(child.as_fd(), full, None, Some(id), true, depth + 1)?;
                    drop(child);
                    match rustix::fs::unlinkat(fd, os(name), AtFlags::REMOVEDIR) {
                        Ok(()) | Err(Errno::NOTEMPTY) | Err(Errno::EXIST) => Ok(()),
                        Err(e) => Err(io(e)).with_context(|| describe(full)),
                    }
                }
                Some(_) => remove(fd, name, full, 0),
                None if self.date_kept => self.date_back(fd, name, full, depth),
                None => Ok(()),
            },
            None => {
                // Holds a kept path: descend to it, removing everything else.
                let child = self.open_child(fd, name, full)?;
                self.dir(child.as_fd(), full, None, prev_dir, false, depth + 1)
            }
        }
    }

    /// Open the directory `name` of `fd`, giving its owner every right first when the check
    /// took them away.
    fn open_child(&self, fd: BorrowedFd<'_>, name: &[u8], full: &[u8]) -> Result<OwnedFd> {
        match open_dir(fd, os(name)) {
            Ok(child) => {
                let _ = rustix::fs::fchmod(&child, Mode::from_raw_mode(0o755));
                Ok(child)
            }
            Err(e) if e.raw_os_error() == Some(libc_eacces()) => {
                // statat said directory; chmodat cannot be told not to follow, so check again.
                open_up(fd, name);
                open_dir(fd, os(name)).with_context(|| describe(full))
            }
            Err(e) => Err(e).with_context(|| describe(full)),
        }
    }

    /// Write `want` at `name` of `fd` (nothing is there).
    fn create(
        &self,
        fd: BorrowedFd<'_>,
        name: &[u8],
        full: &[u8],
        want: Want,
        depth: usize,
    ) -> Result<()> {
        let ctx = || describe(full);
        match want {
            Want::Dir(i) => {
                rustix::fs::mkdirat(fd, os(name), Mode::from_raw_mode(0o755))
                    .map_err(io)
                    .with_context(ctx)?;
                let child = open_dir(fd, os(name)).with_context(ctx)?;
                self.dir(child.as_fd(), full, Some(i), None, false, depth + 1)?;
            }
            Want::Gitlink => {
                rustix::fs::mkdirat(fd, os(name), Mode::from_raw_mode(0o755))
                    .map_err(io)
                    .with_context(ctx)?;
            }
            Want::File { id, exec } => self.write_file(fd, name, id, exec).with_context(ctx)?,
            Want::Link(id) => {
                let blob = self.git.find_blob(id).with_context(ctx)?;
                rustix::fs::symlinkat(os(blob.content()), fd, os(name))
                    .map_err(io)
                    .with_context(ctx)?;
                let times = Timestamps {
                    last_access: self.written,
                    last_modification: self.written,
                };
                rustix::fs::utimensat(fd, os(name), &times, AtFlags::SYMLINK_NOFOLLOW)
                    .map_err(io)
                    .with_context(ctx)?;
            }
        }
        Ok(())
    }

    /// Create the file `name` of `fd` (nothing is there) with blob `id`'s content, mode 0644 or
    /// 0755, dated [`Reset::written`].
    fn write_file(&self, fd: BorrowedFd<'_>, name: &[u8], id: Oid, exec: bool) -> Result<()> {
        let blob = self.git.find_blob(id)?;
        let mode = Mode::from_raw_mode(if exec { 0o755 } else { 0o644 });
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let file = rustix::fs::openat(fd, os(name), flags, mode).map_err(io)?;
        rustix::fs::fchmod(&file, mode).map_err(io)?;
        let mut file = std::fs::File::from(file);
        file.write_all(blob.content())?;
        let times = Timestamps {
            last_access: self.written,
            last_modification: self.written,
        };
        rustix::fs::futimens(&file, &times).map_err(io)?;
        Ok(())
    }

    fn same_file(
        &self,
        fd: BorrowedFd<'_>,
        name: &[u8],
        stat: &rustix::fs::Stat,
        id: Oid,
        exec: bool,
    ) -> bool {
        let want_mode = if exec { 0o755 } else { 0o644 };
        if stat.st_mode & 0o7777 != want_mode {
            return false;
        }
        let Ok((size, _)) = self.odb.read_header(id) else {
            return false;
        };
        if stat.st_size as u64 != size as u64 {
            return false;
        }
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let Ok(file) = rustix::fs::openat(fd, os(name), flags, Mode::empty()) else {
            return false;
        };
        let mut bytes = Vec::with_capacity(size);
        if std::fs::File::from(file).read_to_end(&mut bytes).is_err() {
            return false;
        }
        Oid::hash_object(ObjectType::Blob, &bytes).is_ok_and(|h| h == id)
    }

    fn same_link(&self, fd: BorrowedFd<'_>, name: &[u8], id: Oid) -> bool {
        let (Ok(blob), Ok(target)) = (
            self.git.find_blob(id),
            rustix::fs::readlinkat(fd, os(name), Vec::new()),
        ) else {
            return false;
        };
        target.as_bytes() == blob.content()
    }

    /// Date back to the reset's start every entry at and below the kept `name` of `fd` whose
    /// mtime is later (never following a link).
    fn date_back(&self, fd: BorrowedFd<'_>, name: &[u8], full: &[u8], depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            bail!(
                "`{}` is nested deeper than {MAX_DEPTH} directories; run `closegate gc`",
                super::path_text(full)
            );
        }
        let stat = match rustix::fs::statat(fd, os(name), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => stat,
            Err(Errno::NOENT) => return Ok(()),
            Err(e) => return Err(io(e)).with_context(|| describe(full)),
        };
        if FileType::from_raw_mode(stat.st_mode) == FileType::Directory
            && let Ok(child) = open_dir(fd, os(name))
        {
            for sub in names(child.as_fd()).with_context(|| describe(full))? {
                self.date_back(child.as_fd(), &sub, &join(full, &sub), depth + 1)?;
            }
        }
        let mtime = (stat.st_mtime as i64, stat.st_mtime_nsec as i64);
        if mtime > (self.start.tv_sec, self.start.tv_nsec) {
            let times = Timestamps {
                last_access: Timespec {
                    tv_sec: 0,
                    tv_nsec: rustix::fs::UTIME_OMIT,
                },
                last_modification: self.start,
            };
            rustix::fs::utimensat(fd, os(name), &times, AtFlags::SYMLINK_NOFOLLOW)
                .map_err(io)
                .with_context(|| describe(full))?;
        }
        Ok(())
    }
}

fn describe(full: &[u8]) -> String {
    format!("at `{}`", super::path_text(full))
}

fn libc_eacces() -> i32 {
    Errno::ACCESS.raw_os_error()
}

/// Give the owner every right on the directory `name` of `fd`, only when it is a directory.
fn open_up(fd: BorrowedFd<'_>, name: &[u8]) {
    let is_dir = rustix::fs::statat(fd, os(name), AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::Directory);
    if is_dir {
        let _ = rustix::fs::chmodat(fd, os(name), Mode::from_raw_mode(0o700), AtFlags::empty());
    }
}

/// Remove the entry `name` of `fd`: a file or a link itself (never what it points to), or a
/// directory and everything in it, through handles.
fn remove(fd: BorrowedFd<'_>, name: &[u8], full: &[u8], depth: usize) -> Result<()> {
    if depth > MAX_DEPTH {
        bail!(
            "`{}` is nested deeper than {MAX_DEPTH} directories; run `closegate gc`",
            super::path_text(full)
        );
    }
    match rustix::fs::unlinkat(fd, os(name), AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => return Ok(()),
        Err(Errno::ISDIR) | Err(Errno::PERM) => {}
        Err(e) => return Err(io(e)).with_context(|| format!("removing {}", describe(full))),
    }
    let child = match open_dir(fd, os(name)) {
        Ok(child) => child,
        Err(e) if e.raw_os_error() == Some(libc_eacces()) => {
            open_up(fd, name);
            open_dir(fd, os(name)).with_context(|| format!("removing {}", describe(full)))?
        }
        Err(e) => return Err(e).with_context(|| format!("removing {}", describe(full))),
    };
    let _ = rustix::fs::fchmod(&child, Mode::from_raw_mode(0o700));
    for sub in names(child.as_fd()).with_context(|| format!("removing {}", describe(full)))? {
        remove(child.as_fd(), &sub, &join(full, &sub), depth + 1)?;
    }
    drop(child);
    rustix::fs::unlinkat(fd, os(name), AtFlags::REMOVEDIR)
        .map_err(io)
        .with_context(|| format!("removing {}", describe(full)))
}
