//! The mount helper (SPEC §27.2): how a check's checkout is made from a base snapshot without
//! writing the snapshot.
//!
//! A check with `keep` runs at one fixed path per check (so what its tools record — absolute
//! paths in build caches, virtual environments, dependency stamps — stays valid from run to
//! run). closegate starts the check through itself, `closegate __mount <spec> -- <program>
//! <args>`: a fresh single-threaded process that enters a user and mount namespace of its own
//! (`sys::ns`), mounts the checkout at that path — an overlay whose lower layer is the base
//! snapshot and whose upper layer is the run's own ([`Layer::Overlay`]), or a bind of a
//! snapshot being built by a run on the base's code ([`Layer::Bind`]) — resets it to the
//! commit (`Repo::reset_workspace_at`), and replaces itself with the check (bwrap, or the
//! shell when unsandboxed). The mount is seen by the check alone and ends with it; another
//! branch's check, running at the same path at the same time, sees its own.
//!
//! [`available`] asks once per process whether the kernel lets an unprivileged process mount an
//! overlay (Linux ≥ 5.11 in a user namespace); where it does not, the caller copies the
//! snapshot instead and says so.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// The first argument that makes `closegate` the mount helper.
pub const HELPER: &str = "__mount";
/// The helper's exit status when it could not prepare the checkout (before the check ran).
pub const HELPER_FAILED: i32 = 125;

/// What is mounted at the check's path.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub enum Layer {
    /// The snapshot `lower`, read-only, under the run's own `upper` (`work`: the kernel's).
    Overlay {
        lower: PathBuf,
        upper: PathBuf,
        work: PathBuf,
    },
    /// A directory the run writes itself (a snapshot being built from the base's code).
    Bind { source: PathBuf },
}

/// How the checkout is reset once mounted.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Reset {
    /// The repository, with the quarantine the commit's objects may lie in.
    pub repo: crate::repo::Shared,
    pub commit: String,
    pub keep: Vec<String>,
    /// Where the reset's tree id is remembered.
    pub memo: PathBuf,
    /// The kept paths come from a complete base snapshot (older than this run): not walked to
    /// date anything back (`Repo::reset_workspace_at`).
    #[serde(default)]
    pub snapshot_layer: bool,
}

impl Reset {
    /// Reset `dir` (the check's path, mounted) as this says, with `repo`.
    pub fn apply(&self, repo: &crate::repo::Repo, dir: &Path) -> Result<()> {
        let commit = git2::Oid::from_str(&self.commit).context("reading the commit id")?;
        repo.reset_workspace_at(commit, dir, &self.keep, &self.memo, !self.snapshot_layer)
    }
}

/// One mount: what goes at `target` and how it is reset (`None`: as the previous helper left
/// it, for the run after `prepare`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Mount {
    pub target: PathBuf,
    pub layer: Layer,
    pub reset: Option<Reset>,
    /// Where the helper writes why it could not prepare the checkout (a file the check cannot
    /// write: closegate then reports an error, not the check's failure).
    pub failure: PathBuf,
}

impl Mount {
    /// `cmd` (its program and arguments only) started through the helper, which mounts and
    /// resets first. The caller sets the environment, directory and descriptors after.
    pub fn wrap(&self, cmd: &Command) -> Result<Command> {
        let exe = std::env::current_exe().context("finding closegate's own executable")?;
        let spec = serde_json::to_string(self).context("describing the check's mount")?;
        let mut wrapped = Command::new(exe);
        wrapped
            .arg(HELPER)
            .arg(spec)
            .arg("--")
            .arg(cmd.get_program())
            .args(cmd.get_args());
        Ok(wrapped)
    }
}

/// The helper's whole work (`closegate __mount …`, see the module doc); returns only on failure,
/// with the exit status to end with.
pub fn helper_main(args: &[OsString]) -> i32 {
    if let [flag, dir] = args
        && flag == "--probe"
    {
        return match probe_here(Path::new(dir)) {
            Ok(()) => 0,
            Err(_) => HELPER_FAILED,
        };
    }
    let mount = match read_spec(args) {
        Ok(mount) => mount,
        Err(err) => {
            eprintln!("closegate: {err:#}");
            return HELPER_FAILED;
        }
    };
    let Err(err) = run(&mount, &args[2..]);
    let text = format!(
        "preparing the checkout at {}: {err:#}\n",
        mount.target.display()
    );
    let _ = std::fs::write(&mount.failure, &text);
    eprint!("closegate: {text}");
    HELPER_FAILED
}

/// The mount spec of `<spec> -- <program> …`.
fn read_spec(args: &[OsString]) -> Result<Mount> {
    let [spec, dashes, _program, ..] = args else {
        bail!("usage: closegate {HELPER} <spec> -- <program> [<args>…]");
    };
    if dashes != "--" {
        bail!("usage: closegate {HELPER} <spec> -- <program> [<args>…]");
    }
    let spec = spec.to_str().context("the mount spec is not UTF-8")?;
    serde_json::from_str(spec).context("reading the mount spec")
}

/// Mount, reset, and become the check (`command`: the program and its arguments).
fn run(mount: &Mount, command: &[OsString]) -> Result<std::convert::Infallible> {
    let [program, rest @ ..] = command else {
        bail!("no program to run");
    };
    crate::sys::ns::enter_private_mounts().context("entering a mount namespace")?;
    let target = &mount.target;
    match &mount.layer {
        Layer::Overlay { lower, upper, work } => {
            crate::sys::ns::mount_overlay(lower, upper, work, target)
        }
        Layer::Bind { source } => crate::sys::ns::mount_bind(source, target),
    }
    .with_context(|| format!("mounting the checkout at {}", target.display()))?;
    if let Some(reset) = &mount.reset {
        reset.apply(&reset.repo.open()?, target)?;
    }
    std::env::set_current_dir(target).with_context(|| format!("entering {}", target.display()))?;
    let err = Command::new(program).args(rest).exec();
    Err(err).with_context(|| format!("starting {}", Path::new(program).display()))
}

/// The probe's own work: mount a small overlay under `dir`, write through it and remove a
/// directory of the lower layer (a whiteout).
fn probe_here(dir: &Path) -> Result<()> {
    let [lower, upper, work, target] = ["l", "u", "w", "m"].map(|d| dir.join(d));
    crate::sys::ns::enter_private_mounts()?;
    crate::sys::ns::mount_overlay(&lower, &upper, &work, &target)?;
    std::fs::remove_dir_all(target.join("d"))?;
    std::fs::write(target.join("probe"), b"")?;
    Ok(())
}

/// Whether checks can run on an overlay here: asked once per process, by starting the helper
/// with `--probe` on a scratch directory under `cache` (the file system the layers live on).
pub fn available(cache: &Path) -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| probe(cache))
}

fn probe(cache: &Path) -> bool {
    let Ok(exe) = std::env::current_exe() else {
        return false;
    };
    if std::fs::create_dir_all(cache).is_err() {
        return false;
    }
    let Ok(dir) = tempfile::Builder::new().prefix("probe-").tempdir_in(cache) else {
        return false;
    };
    for d in ["l", "l/d", "l/d/e", "u", "w", "m"] {
        if std::fs::create_dir(dir.path().join(d)).is_err() {
            return false;
        }
    }
    let status = Command::new(exe)
        .arg(HELPER)
        .arg("--probe")
        .arg(dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    let written = dir.path().join("u/probe").is_file();
    let _ = crate::sandbox::scratch::remove_tree(dir.path());
    status.is_ok_and(|s| s.success()) && written
}
