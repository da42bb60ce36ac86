//! Warm state that no agent can plant (SPEC §19, §27.2): base snapshots.
//!
//! A check with `keep = [...]` keeps state between runs — build outputs, installed dependencies,
//! tool caches. That state is made only by running the check on the base's code (trusted,
//! §16): the **base snapshot**, one per (base commit, check, configuration), under
//! `$XDG_CACHE_HOME/closegate/<repository id>/checks/<check>/snapshots/<id>/` — outside the
//! repository's common directory, which every agent can write — and never written again once
//! complete. Every run on an agent's tree (the commit, an overlay, a composed tree) starts from
//! the snapshot of the base tip as the read-only lower layer of an overlay mounted for that run
//! alone (`sandbox::mount`), and writes only its own upper layer under `runs/`, dropped after the
//! run. So no agent, and no check of an agent's code, writes what another branch's check reads.
//!
//! Layout under the cache root `<cache>` ([`Cache`]):
//! - `checks/<check>/checkout`: the fixed path every run of the check sees its checkout at (the
//!   mount point); tools that record absolute paths find the same ones in every run.
//! - `checks/<check>/snapshots/<id>/{checkout, checkout.tree, complete}` and `<id>.lock`; a
//!   snapshot is complete when `complete` names its id, written last. A build goes to
//!   `<id>.part/` and is renamed into place: a half-written or corrupt one is rebuilt, never
//!   used. A new base's snapshot starts from a copy of the newest complete one (reflinked where
//!   the file system can), so it builds incrementally.
//! - `runs/<random>/{upper, work, tmp, empty, checkout.tree}` and `<random>.lock`: one run's
//!   layer, its private temporary directory and its reset memo.
//!
//! Locks (`flock`): a build holds its snapshot's lock exclusively, so a second check waits for a
//! base run already under way instead of taking it again; a run on a snapshot holds it shared,
//! so `gc` never removes a layer in use. Where the kernel mounts no overlay for an unprivileged
//! process, the snapshot is copied to the check's path under `checks/<check>.lock` (one run of
//! the check at a time) and the report says so; a shared writable directory is never used.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use git2::Oid;

use crate::config::CheckSpec;
use crate::repo::Repo;
use crate::sandbox::mount::{self, Layer, Mount, Reset};

/// What `complete` holds before the snapshot's id.
const COMPLETE: &str = "closegate snapshot ";

/// The warm state of one repository: `$XDG_CACHE_HOME/closegate/<repository id>` (else
/// `~/.cache/…`), the id a digest of the canonical common directory's path.
#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
}

/// One complete base snapshot.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub id: String,
    dir: PathBuf,
}

impl Snapshot {
    fn checkout(&self) -> PathBuf {
        self.dir.join("checkout")
    }

    /// The base commit whose lock files its build's `prepare` fetched for; `None` when the
    /// check had no `prepare` then.
    fn prepared_on(&self) -> Option<Oid> {
        let text = fs::read_to_string(self.dir.join("complete")).ok()?;
        text.lines()
            .any(|l| l == "prepared")
            .then(|| base_of(self))
            .flatten()
    }
}

/// The id of the snapshot of `check` on `base` under the configuration blob `config`.
pub fn snapshot_id(base: Oid, check: &str, config: Option<&str>) -> String {
    let text = format!(
        "closegate snapshot\nbase {base}\ncheck {check}\nconfig {}\n",
        config.unwrap_or("-")
    );
    let id = Oid::hash_object(git2::ObjectType::Blob, text.as_bytes()).unwrap_or(Oid::zero());
    id.to_string()[..24].to_string()
}

impl Cache {
    /// The cache of the repository whose common directory is `common_dir`.
    pub fn of(common_dir: &Path) -> Result<Cache> {
        let env = |k| {
            std::env::var_os(k)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        let base = env("XDG_CACHE_HOME")
            .or_else(|| env("HOME").map(|h| h.join(".cache")))
            .context("neither $XDG_CACHE_HOME nor $HOME names where the checks' warm state goes")?;
        let repo = crate::repo::canonical(common_dir);
        let digest = Oid::hash_object(git2::ObjectType::Blob, repo.as_os_str().as_encoded_bytes())
            .unwrap_or(Oid::zero());
        let root = base.join("closegate").join(&digest.to_string()[..16]);
        Ok(Cache { root })
    }

    /// The cache root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The snapshots and run layers of every repository of this user
    /// (`$XDG_CACHE_HOME/closegate/*/{checks,runs}`): what no check may write. The caches `init`
    /// shares beside them (npm's, verified on every read) stay as `writable` lists them.
    pub fn every_repository(&self) -> Vec<PathBuf> {
        let all = self.root.parent().unwrap_or(&self.root);
        let mut dirs: Vec<PathBuf> = subdirs(all)
            .into_iter()
            .flat_map(|repo| ["checks", "runs"].map(|d| all.join(&repo).join(d)))
            .collect();
        dirs.extend(["checks", "runs"].map(|d| self.root.join(d)));
        dirs.sort();
        dirs.dedup();
        dirs
    }

    /// `checks/<check>`: the check's directory (its runs' `GIT_CEILING_DIRECTORIES`).
    pub fn check_dir(&self, check: &str) -> PathBuf {
        self.root.join("checks").join(dir_name(check))
    }

    /// The fixed path every run of `check` sees its checkout at.
    pub fn target(&self, check: &str) -> PathBuf {
        self.check_dir(check).join("checkout")
    }

    fn snapshots(&self, check: &str) -> PathBuf {
        self.check_dir(check).join("snapshots")
    }

    /// The complete snapshot `id` of `check`, if there is one.
    pub fn snapshot(&self, check: &str, id: &str) -> Option<Snapshot> {
        self.snapshot_in(&dir_name(check), id)
    }

    /// Hold the right to build the snapshot `id` of `check` (`<id>.ensure.lock`): a second
    /// closegate that needs it waits here for the first one's build, then finds it complete,
    /// instead of running the base again (SPEC §27.2).
    pub fn claim_build(&self, check: &str, id: &str, stop: &dyn Fn() -> bool) -> Result<File> {
        let snaps = self.snapshots(check);
        make_dirs(&snaps)?;
        let lock = open_lock(&snaps.join(format!("{id}.ensure.lock")))?;
        lock_unless(&lock, Hold::Exclusive, true, stop)?;
        Ok(lock)
    }

    /// Every complete snapshot of `check`, newest first (by when it was completed).
    fn complete(&self, check_dir: &str) -> Vec<(Snapshot, std::time::SystemTime)> {
        let dir = self.root.join("checks").join(check_dir).join("snapshots");
        let Ok(entries) = fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut found: Vec<_> = entries
            .flatten()
            .filter_map(|e| {
                let id = e.file_name().to_str()?.to_string();
                let snap = self.snapshot_in(check_dir, &id)?;
                let when = fs::metadata(snap.dir.join("complete"))
                    .ok()?
                    .modified()
                    .ok()?;
                Some((snap, when))
            })
            .collect();
        found.sort_by_key(|f| std::cmp::Reverse(f.1));
        found
    }

    fn snapshot_in(&self, check_dir: &str, id: &str) -> Option<Snapshot> {
        let dir = self
            .root
            .join("checks")
            .join(check_dir)
            .join("snapshots")
            .join(id);
        let complete = fs::read_to_string(dir.join("complete")).ok()?;
        let ok = complete
            .strip_prefix(COMPLETE)
            .is_some_and(|rest| rest.lines().next() == Some(id));
        (ok && dir.join("checkout").is_dir()).then(|| Snapshot {
            id: id.to_string(),
            dir,
        })
    }
}

/// Where one run of a check with `keep` happens (see the module doc).
pub struct Warm {
    /// The check's directory: the run's `GIT_CEILING_DIRECTORIES`.
    pub root: PathBuf,
    /// The fixed path the run sees its checkout at.
    pub checkout: PathBuf,
    /// The run's private temporary directory.
    pub tmp: PathBuf,
    /// An empty file the sandbox binds over secrets.
    pub empty: PathBuf,
    /// What the mount helper puts at `checkout`; `None` when the checkout was moved or copied
    /// there and reset already (no overlay mount here).
    pub mount: Option<Mount>,
    /// The snapshot the run starts from or builds (the report's `snapshot`).
    pub snapshot: String,
    /// No overlay here: the snapshot was copied to the check's path (said in the report).
    pub copied: bool,
    /// The base commit the snapshot's dependencies were fetched for by its `prepare`
    /// ([`fetch_needed`] says when a run must fetch again); `None` for a snapshot being built,
    /// or one built without `prepare`.
    pub prepared_on: Option<Oid>,
    run_dir: PathBuf,
    publish: Option<Publish>,
    /// A build without an overlay: the checkout goes back into the snapshot after the run.
    move_back: Option<PathBuf>,
    /// A run on a copy of the snapshot: the copy is removed after the run.
    remove_copy: bool,
    _locks: Vec<File>,
}

/// A snapshot being built: `part` becomes `done` once the run on the base's code has ended.
struct Publish {
    part: PathBuf,
    done: PathBuf,
    text: String,
}

impl Cache {
    /// A run of `spec` on the base's own code at `commit`: it builds the snapshot of `commit`
    /// unless that is complete (then the run starts from it, as any other). Waits, unless `stop`
    /// says a signal asked to stop, for a build of the same snapshot already under way.
    pub fn build(
        &self,
        repo: &Repo,
        spec: &CheckSpec,
        commit: Oid,
        config: Option<&str>,
        stop: &dyn Fn() -> bool,
    ) -> Result<Warm> {
        let id = snapshot_id(commit, &spec.name, config);
        let snaps = self.snapshots(&spec.name);
        let fail = || {
            format!(
                "preparing the base snapshot of check `{}` in {}",
                spec.name,
                snaps.display()
            )
        };
        make_dirs(&snaps).with_context(fail)?;
        let lock = open_lock(&snaps.join(format!("{id}.lock"))).with_context(fail)?;
        lock_unless(&lock, Hold::Exclusive, true, stop).with_context(fail)?;
        if let Some(snap) = self.snapshot(&spec.name, &id) {
            drop(lock);
            return self.layer(repo, spec, commit, &snap, stop);
        }
        let (part, done) = (snaps.join(format!("{id}.part")), snaps.join(&id));
        remove_if_present(&part).with_context(fail)?;
        remove_if_present(&done).with_context(fail)?;
        fs::create_dir(&part).with_context(fail)?;
        self.seed(&spec.name, &part).with_context(fail)?;
        let mut text = format!("{COMPLETE}{id}\nbase {commit}\ncheck {}\n", spec.name);
        if spec.prepare.is_some() {
            text.push_str("prepared\n");
        }
        let publish = Publish {
            part: part.clone(),
            done,
            text,
        };
        let from = From::Build { part };
        self.place(
            repo,
            spec,
            commit,
            id,
            from,
            Some(publish),
            vec![lock],
            stop,
        )
    }

    /// A run of `spec` at `commit` on the complete snapshot `snap`: its own upper layer over it,
    /// dropped after the run.
    pub fn layer(
        &self,
        repo: &Repo,
        spec: &CheckSpec,
        commit: Oid,
        snap: &Snapshot,
        stop: &dyn Fn() -> bool,
    ) -> Result<Warm> {
        let fail = || format!("starting check `{}` from snapshot {}", spec.name, snap.id);
        let lock = open_lock(&snap.dir.with_extension("lock")).with_context(fail)?;
        lock_unless(&lock, Hold::Shared, true, stop).with_context(fail)?;
        if self.snapshot(&spec.name, &snap.id).is_none() {
            bail!(
                "the base snapshot {} of check `{}` was removed while it was opened",
                snap.id,
                spec.name
            );
        }
        let from = From::Snapshot(snap.clone());
        self.place(
            repo,
            spec,
            commit,
            snap.id.clone(),
            from,
            None,
            vec![lock],
            stop,
        )
    }
}

/// What a run's checkout is made from.
enum From {
    /// A snapshot being built in `part` (the run is on the base's code).
    Build { part: PathBuf },
    /// A complete snapshot, read-only under the run's own layer.
    Snapshot(Snapshot),
}

impl From {
    /// What is mounted for a run whose directory is `run_dir`, where its reset's memo lives, and
    /// the base commit the layer below was fetched for.
    fn layer(self, run_dir: &Path) -> (Layer, PathBuf, Option<Oid>) {
        match self {
            From::Build { part } => {
                let source = part.join("checkout");
                (Layer::Bind { source }, part.join("checkout.tree"), None)
            }
            From::Snapshot(snap) => {
                let memo = run_dir.join("checkout.tree");
                let _ = fs::copy(snap.dir.join("checkout.tree"), &memo);
                let (upper, work) = (run_dir.join("upper"), run_dir.join("work"));
                let lower = snap.checkout();
                let fetched = snap.prepared_on();
                (Layer::Overlay { lower, upper, work }, memo, fetched)
            }
        }
    }
}

impl Cache {
    /// The reset the helper (or, without an overlay, closegate) makes at the check's path.
    fn reset(&self, repo: &Repo, spec: &CheckSpec, commit: Oid, memo: PathBuf) -> Reset {
        Reset {
            repo: repo.share(),
            commit: commit.to_string(),
            keep: spec.keep.clone(),
            memo,
            snapshot_layer: false,
        }
    }

    /// The run's place: the mount the helper makes, or, where no overlay can be mounted, the
    /// snapshot moved (a build) or copied (a run on it) to the check's path, one run at a time.
    #[allow(clippy::too_many_arguments)]
    fn place(
        &self,
        repo: &Repo,
        spec: &CheckSpec,
        commit: Oid,
        snapshot: String,
        from: From,
        publish: Option<Publish>,
        mut locks: Vec<File>,
        stop: &dyn Fn() -> bool,
    ) -> Result<Warm> {
        let root = self.check_dir(&spec.name);
        let target = root.join("checkout");
        let fail = || {
            format!(
                "preparing the checkout of check `{}` at {}",
                spec.name,
                target.display()
            )
        };
        make_dirs(&target).with_context(fail)?;
        let run = RunDir::create(&self.root).with_context(fail)?;
        let (layer, memo, fetched) = from.layer(&run.dir);
        let mut reset = self.reset(repo, spec, commit, memo);
        reset.snapshot_layer = matches!(layer, Layer::Overlay { .. });
        locks.push(run.lock);
        let mut warm = Warm {
            root: root.clone(),
            checkout: target.clone(),
            tmp: run.dir.join("tmp"),
            empty: run.dir.join("empty"),
            mount: None,
            prepared_on: fetched,
            snapshot,
            copied: false,
            run_dir: run.dir,
            publish,
            move_back: None,
            remove_copy: false,
            _locks: locks,
        };
        if mount::available(&self.root) {
            let failure = warm.run_dir.join("failure");
            warm.mount = Some(Mount {
                target,
                layer,
                reset: Some(reset),
                failure,
            });
            return Ok(warm);
        }
        copy_in(repo, &mut warm, layer, &reset, stop).with_context(fail)?;
        Ok(warm)
    }

    /// Start the snapshot being built in `part` from a copy of the newest complete one of the
    /// check (both are the base's), or empty.
    fn seed(&self, check: &str, part: &Path) -> Result<()> {
        match self.complete(&dir_name(check)).into_iter().next() {
            Some((snap, _)) => {
                copy_tree(&snap.checkout(), &part.join("checkout"))?;
                let _ = fs::copy(snap.dir.join("checkout.tree"), part.join("checkout.tree"));
                Ok(())
            }
            None => Ok(fs::create_dir(part.join("checkout"))?),
        }
    }
}

impl Warm {
    /// End the run: a snapshot built is published when `publish` (the run ended, not
    /// interrupted) and removed otherwise; the run's own layer is dropped. A snapshot that
    /// cannot be completed (a full disk) is removed, never left half-written.
    pub fn finish(mut self, publish: bool) -> Result<()> {
        if let Some(source) = self.move_back.take() {
            fs::rename(&self.checkout, &source)
                .with_context(|| format!("moving {} back", self.checkout.display()))?;
            fs::create_dir(&self.checkout)?;
        }
        if self.remove_copy {
            remove_if_present(&self.checkout)?;
            fs::create_dir(&self.checkout)?;
        }
        if let Some(p) = self.publish.take()
            && !(publish && complete(&p).is_ok())
        {
            remove_if_present(&p.part)?;
        }
        remove_if_present(&self.run_dir)?;
        let _ = fs::remove_file(self.run_dir.with_extension("lock"));
        Ok(())
    }
}

/// Without an overlay: one run of the check at a time (`checks/<check>.lock`), the snapshot moved
/// (a build) or copied (a run on it) to the check's path, and reset there.
fn copy_in(
    repo: &Repo,
    warm: &mut Warm,
    layer: Layer,
    reset: &Reset,
    stop: &dyn Fn() -> bool,
) -> Result<()> {
    let check_lock = open_lock(&warm.root.with_extension("lock"))?;
    lock_unless(&check_lock, Hold::Exclusive, true, stop)?;
    warm._locks.push(check_lock);
    remove_if_present(&warm.checkout)?;
    match layer {
        Layer::Bind { source } => {
            fs::rename(&source, &warm.checkout)?;
            warm.move_back = Some(source);
        }
        Layer::Overlay { lower, .. } => {
            copy_tree(&lower, &warm.checkout)?;
            warm.remove_copy = true;
        }
    }
    warm.copied = true;
    reset.apply(repo, &warm.checkout)
}

/// Mark `p.part` complete and move it into place. Anything the base's run dated in the future
/// is dated back to now first: runs on the snapshot do not walk its kept paths to do so.
fn complete(p: &Publish) -> std::io::Result<()> {
    date_back_future(&p.part.join("checkout"))?;
    let tmp = p.part.join("complete.new");
    fs::write(&tmp, &p.text)?;
    File::open(&tmp)?.sync_all()?;
    fs::rename(&tmp, p.part.join("complete"))?;
    fs::rename(&p.part, &p.done)
}

/// Date back to now every entry under `dir` dated later (never following a link).
fn date_back_future(dir: &Path) -> std::io::Result<()> {
    use rustix::fs::{AtFlags, CWD, Timespec, Timestamps, UTIME_OMIT};
    let now = std::time::SystemTime::now();
    let since = now
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let times = Timestamps {
        last_access: Timespec {
            tv_sec: 0,
            tv_nsec: UTIME_OMIT,
        },
        last_modification: Timespec {
            tv_sec: since.as_secs() as _,
            tv_nsec: since.subsec_nanos() as _,
        },
    };
    for entry in walkdir::WalkDir::new(dir).into_iter().flatten() {
        let later = entry.metadata().ok().and_then(|m| m.modified().ok()) > Some(now);
        if later {
            rustix::fs::utimensat(CWD, entry.path(), &times, AtFlags::SYMLINK_NOFOLLOW)?;
        }
    }
    Ok(())
}

/// One run's directory under `runs/`, locked while the run lasts.
struct RunDir {
    dir: PathBuf,
    lock: File,
}

impl RunDir {
    fn create(root: &Path) -> Result<RunDir> {
        let runs = root.join("runs");
        make_dirs(&runs)?;
        let dir = tempfile::Builder::new()
            .prefix("run-")
            .tempdir_in(&runs)?
            .keep();
        let lock = open_lock(&dir.with_extension("lock"))?;
        lock_unless(&lock, Hold::Exclusive, false, &|| false)?;
        for d in ["upper", "work", "tmp"] {
            fs::create_dir(dir.join(d))?;
        }
        fs::write(dir.join("empty"), b"")?;
        Ok(RunDir { dir, lock })
    }
}

/// `cp -a --reflink=auto`: the file system shares the blocks where it can.
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    let out = std::process::Command::new("cp")
        .args(["-a", "--reflink=auto", "--no-target-directory"])
        .arg(from)
        .arg(to)
        .stdin(std::process::Stdio::null())
        .output()
        .context("running cp")?;
    if !out.status.success() {
        let _ = remove_if_present(to);
        bail!(
            "copying {} to {}: {}",
            from.display(),
            to.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Create `path` and its parents as directories.
fn make_dirs(path: &Path) -> std::io::Result<()> {
    fs::create_dir_all(path)
}

/// Remove whatever is at `path` (a tree, a file, a link); nothing there is fine.
fn remove_if_present(path: &Path) -> std::io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => crate::sandbox::scratch::remove_tree(path),
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// How a lock is held.
#[derive(Clone, Copy)]
enum Hold {
    /// A build, `gc`.
    Exclusive,
    /// A run on a snapshot.
    Shared,
}

/// Take `file`'s lock: waiting when `wait` (giving up with an error when a signal interrupts
/// the wait and `stop` says so), else `Ok(false)` when it is held.
fn lock_unless(
    file: &File,
    hold: Hold,
    wait: bool,
    stop: &dyn Fn() -> bool,
) -> std::io::Result<bool> {
    use rustix::fs::FlockOperation as Op;
    use rustix::io::Errno;
    let op = match (hold, wait) {
        (Hold::Exclusive, true) => Op::LockExclusive,
        (Hold::Exclusive, false) => Op::NonBlockingLockExclusive,
        (Hold::Shared, true) => Op::LockShared,
        (Hold::Shared, false) => Op::NonBlockingLockShared,
    };
    loop {
        match rustix::fs::flock(file, op) {
            Ok(()) => return Ok(true),
            Err(Errno::INTR) if stop() => {
                return Err(std::io::Error::other(
                    "interrupted by a signal while waiting for a lock of the checks' warm state",
                ));
            }
            Err(Errno::INTR) => continue,
            Err(Errno::WOULDBLOCK) if !wait => return Ok(false),
            Err(err) => return Err(err.into()),
        }
    }
}

/// Open (creating it) the lock file at `path`, never through a symbolic link.
fn open_lock(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        fs::remove_file(path)?;
    }
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
}

/// The directory name of a check's state: the name itself when it is a plain file name
/// (letters, digits, `.`, `-`, `_`, not starting with `.` or `_`), else `_` and its hex bytes.
pub fn dir_name(check: &str) -> String {
    let plain = !check.is_empty()
        && !check.starts_with(['.', '_'])
        && check
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
    if plain {
        check.to_string()
    } else {
        let hex: String = check.bytes().map(|b| format!("{b:02x}")).collect();
        format!("_{hex}")
    }
}

/// The files whose content decides what a `prepare` fetches: lock files and manifests, by name.
const LOCK_FILES: &[&str] = &[
    "Cargo.lock",
    "Cargo.toml",
    "go.mod",
    "go.sum",
    "go.work",
    "go.work.sum",
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "pnpm-workspace.yaml",
    "yarn.lock",
    ".yarnrc.yml",
    ".npmrc",
    "poetry.lock",
    "uv.lock",
    "Pipfile.lock",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
];

/// Whether a run of `commit` on a snapshot whose `prepare` fetched for `base` must fetch again
/// (SPEC §27.2: the dependency cache is keyed by the lock files): a lock file or manifest (by
/// name, in any folder; requirement files too: [`names_dependencies`]), or a file a word of the
/// command names, differs between the two.
pub fn fetch_needed(repo: &Repo, base: Oid, commit: Oid, prepare: &str) -> Result<bool> {
    let named: Vec<&str> = prepare
        .split_whitespace()
        .map(|w| w.trim_matches(['\'', '"']).trim_end_matches('/'))
        .collect();
    let lock = |path: &str| names_dependencies(path) || named.contains(&path);
    let changes = repo.changes(Some(base), commit)?;
    Ok(changes.iter().any(|c| c.paths().into_iter().any(lock)))
}

/// Whether the file at `path` names dependencies: a lock file or manifest by name, in any
/// folder; a `.txt` whose name holds `requirements` (`requirements-dev.txt`,
/// `test-requirements.txt`), or any `.txt` in a `requirements/` folder (pip-tools' layout:
/// `requirements/tests.txt`).
fn names_dependencies(path: &str) -> bool {
    let mut parts = path.rsplit('/');
    let name = parts.next().unwrap_or(path);
    LOCK_FILES.contains(&name)
        || (name.contains("requirements") && name.ends_with(".txt"))
        || (parts.next() == Some("requirements") && name.ends_with(".txt"))
}

/// What `gc` did, or would do, with one directory of the warm state.
#[derive(Debug, PartialEq, Eq)]
pub enum Swept {
    Removed(PathBuf),
    Would(PathBuf),
    /// In use by a running check: kept.
    Busy(PathBuf),
}

impl Cache {
    /// Remove the snapshots of bases `near` does not keep (the newest of each check stays: the
    /// next base's snapshot starts from it), the half-built ones, and the layers of runs that
    /// ended without removing theirs; a directory in use stays.
    pub fn sweep(&self, near: &dyn Fn(Oid) -> bool, dry_run: bool) -> Result<Vec<Swept>> {
        let mut swept = Vec::new();
        for check in subdirs(&self.root.join("checks")) {
            let snaps = self.root.join("checks").join(&check).join("snapshots");
            let complete = self.complete(&check);
            let keep: Vec<&str> = complete
                .iter()
                .enumerate()
                .filter(|(i, (s, _))| *i == 0 || base_of(s).is_some_and(near))
                .map(|(_, (s, _))| s.id.as_str())
                .collect();
            for name in subdirs(&snaps) {
                if keep.contains(&name.as_str()) {
                    continue;
                }
                let id = name.trim_end_matches(".part");
                let lock = snaps.join(format!("{id}.lock"));
                swept.push(sweep_one(&snaps.join(&name), &lock, dry_run)?);
            }
        }
        let runs = self.root.join("runs");
        for name in subdirs(&runs) {
            let dir = runs.join(&name);
            swept.push(sweep_one(&dir, &dir.with_extension("lock"), dry_run)?);
        }
        Ok(swept)
    }
}

/// The base commit a complete snapshot was built on.
fn base_of(snap: &Snapshot) -> Option<Oid> {
    let text = fs::read_to_string(snap.dir.join("complete")).ok()?;
    let line = text.lines().find_map(|l| l.strip_prefix("base "))?;
    Oid::from_str(line).ok()
}

/// Remove `dir` unless `lock` is held.
fn sweep_one(dir: &Path, lock: &Path, dry_run: bool) -> Result<Swept> {
    let file = open_lock(lock).with_context(|| format!("opening {}", lock.display()))?;
    if !lock_unless(&file, Hold::Exclusive, false, &|| false)? {
        return Ok(Swept::Busy(dir.to_path_buf()));
    }
    if dry_run {
        return Ok(Swept::Would(dir.to_path_buf()));
    }
    remove_if_present(dir).with_context(|| format!("removing {}", dir.display()))?;
    Ok(Swept::Removed(dir.to_path_buf()))
}

/// The names of the directories in `dir` (none when it cannot be read).
fn subdirs(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect();
    names.sort();
    names
}

/// Where closegate kept warm workspaces before base snapshots, inside the common directory (or,
/// for a bare repository, beside it): `gc` removes them; nothing reads them.
pub fn legacy(common_dir: &Path) -> Vec<PathBuf> {
    let repo = crate::repo::canonical(common_dir);
    let mut beside = repo.file_name().unwrap_or_default().to_os_string();
    beside.push(".closegate-work");
    [
        crate::record::dir(common_dir).join("work"),
        repo.with_file_name(beside),
    ]
    .into_iter()
    .filter(|p| fs::symlink_metadata(p).is_ok())
    .collect()
}

/// Remove a legacy workspace directory (see [`legacy`]).
pub fn remove_legacy(path: &Path) -> Result<()> {
    remove_if_present(path).with_context(|| format!("removing {}", path.display()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn requirement_files_name_dependencies_in_any_folder_and_in_requirements() {
        for path in [
            "Cargo.lock",
            "sub/package-lock.json",
            "requirements-dev.txt",
            "test-requirements.txt",
            "requirements/tests.txt",
            "py/requirements/docs.txt",
        ] {
            assert!(super::names_dependencies(path), "{path}");
        }
        for path in [
            "README.md",
            "notes/tests.txt",
            "requirements/README.md",
            "src/lock.rs",
        ] {
            assert!(!super::names_dependencies(path), "{path}");
        }
    }
}
