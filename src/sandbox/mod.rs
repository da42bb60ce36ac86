//! The sandbox a check runs in (SPEC §4.6, §16): a check runs the agent's code, so it must not
//! reach what the gate refuses to let the agent touch.
//!
//! On Linux the check runs under bubblewrap (`bwrap`): the whole filesystem is bound read-only,
//! `/tmp` and `/var/tmp` are replaced by empty tmpfs of the check's own ([`private_tmp`]), then
//! the check's checkout, its private temporary directory and the check's `writable` paths are
//! bound writable; the repository's common dir, every worktree and the hooks directory are
//! bound read-only again when a `writable` path contains them; every secret the run's
//! [`Shield`] names (the record key, the signing key in use, `~/.ssh` and the other credential
//! paths, agent sockets, `[sandbox] hide`) is covered, a directory with an empty tmpfs and a
//! file with an empty file. The check gets its own user, PID and IPC namespaces and its own `/proc`, so
//! `/proc/<pid>/cwd|root` of closegate and its ancestors do not exist inside it; `network = false`
//! adds a network namespace, which holds only `lo`. When bwrap is killed, the PID namespace dies
//! with it, so no process of the check survives (`setsid` included).
//!
//! Why bwrap rather than Landlock: Landlock only allow-lists accesses under directory
//! hierarchies, so it cannot make one file (the key) unreadable inside a readable tree, and its
//! network rules are per TCP port, so it cannot allow loopback while denying the rest. Measured
//! on the 2-core development machine: Landlock costs nothing measurable per spawn; bwrap about
//! 8 ms over `sh -c true` unloaded and 22 ms under a load average of 10, most of it the kernel's
//! mount-namespace creation (`scripts/bench-sandbox.sh`).
//!
//! The kernel is asked for the namespaces in a forked child (`sys::process::try_unshare`, see
//! [`probe`]), without starting a process image.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::catalog::Code;
use crate::config::SandboxMode;
use crate::finding::{Finding, Severity};

pub mod git_config;
pub mod mount;
pub mod private_tmp;
pub mod scratch;
pub mod shared_caches;
pub mod shield;

pub use private_tmp::PrivateTmp;
pub use shield::Shield;

/// Set (to anything but `0` or empty) to make the sandbox unavailable: for tests only, read by
/// debug builds only ([`crate::sys::test_switch`]).
pub const TEST_SWITCH: &str = "CLOSEGATE_TEST_NO_SANDBOX";

/// What a sandboxed check may write and what it must not see.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    /// The checkout the check runs in (its working directory).
    pub checkout: PathBuf,
    /// The check's private temporary directory (`TMPDIR`).
    pub tmp: PathBuf,
    /// Further writable paths (`writable`, already expanded and existing).
    pub writable: Vec<PathBuf>,
    /// Paths that stay read-only even under a writable path: common dir, worktrees, hooks.
    pub read_only: Vec<PathBuf>,
    /// An empty file bound over each hidden file.
    pub empty: PathBuf,
    /// `network = false` → only loopback.
    pub network: bool,
    /// The check's own empty `/tmp` and `/var/tmp`, each with what of the host's is bound back.
    pub private_tmp: Vec<PrivateTmp>,
}

/// How a run's checks are confined, decided once per run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confinement {
    /// Under bubblewrap at this path.
    Bwrap(PathBuf),
    /// Unconfined: `sandbox = "off"`, or `auto` where no sandbox can be set up.
    None,
}

/// The decision for one run: how the checks run (`None`: they do not run at all), the
/// `checks-unsandboxed` finding if any, and the report's `sandbox` word (`bwrap`, `off`, `none`).
pub struct Decision {
    pub confinement: Option<Confinement>,
    pub finding: Option<Finding>,
    pub label: &'static str,
}

/// Decide how to confine checks under `mode`; `network_off` when some check says
/// `network = false` (the probe then also needs a network namespace); `shield` is what the
/// checks must not see.
pub fn decide(mode: SandboxMode, network_off: bool, shield: &Shield) -> Decision {
    if mode == SandboxMode::Off {
        return Decision {
            confinement: Some(Confinement::None),
            finding: None,
            label: "off",
        };
    }
    if let Some(linked) = secret_with_other_names(shield) {
        // bwrap hides paths; a hard link is another path to the same file, which no mount over
        // the known names covers (SPEC §4.6: the key is not readable through any path).
        let msg = format!(
            "no check ran: {linked}, so no sandbox can keep it from the checks; remove the other \
             names (`find / -xdev -samefile <file>` lists them)"
        );
        let finding = Finding::new(Code::ChecksUnsandboxed, msg).with_severity(Severity::Gap);
        return Decision {
            confinement: None,
            finding: Some(finding),
            label: "none",
        };
    }
    let reason = match probe(network_off) {
        Ok(bwrap) => {
            return Decision {
                confinement: Some(Confinement::Bwrap(bwrap)),
                finding: None,
                label: "bwrap",
            };
        }
        Err(reason) => reason,
    };
    let visible = visible(shield);
    if mode == SandboxMode::Required {
        let msg = format!(
            "no check ran: `sandbox = \"required\"` and no sandbox can be set up ({reason}){visible}"
        );
        let finding = Finding::new(Code::ChecksUnsandboxed, msg).with_severity(Severity::Gap);
        return Decision {
            confinement: None,
            finding: Some(finding),
            label: "none",
        };
    }
    let msg = format!(
        "the checks ran without a sandbox, with every right of this user: {reason}{visible}"
    );
    Decision {
        confinement: Some(Confinement::None),
        finding: Some(Finding::new(Code::ChecksUnsandboxed, msg)),
        label: "none",
    }
}

/// What stays visible to checks no sandbox confines: `; visible to them: <paths>`, or nothing.
fn visible(shield: &Shield) -> String {
    let covered = shield.covered();
    if covered.is_empty() {
        return String::new();
    }
    let names: Vec<String> = covered.iter().map(|p| p.display().to_string()).collect();
    format!("; visible to them: {}", names.join(", "))
}

/// The bwrap binary when a sandbox can be set up here, else why not (one line, lowercase).
///
/// Whether the kernel grants the namespaces is asked in-process (a forked child calls
/// `unshare`), which costs a fraction of a millisecond where running `bwrap -- true` would cost
/// as much as the check's own sandbox. Should bwrap still fail to set up, the check fails with
/// bwrap's message (`check-failed`): it never runs unconfined behind the operator's back.
pub fn probe(network_off: bool) -> Result<PathBuf, String> {
    if !cfg!(target_os = "linux") {
        return Err("the sandbox is implemented on Linux only".into());
    }
    if crate::sys::test_switch(TEST_SWITCH).is_some_and(|v| !v.is_empty() && v != "0") {
        return Err(format!("{TEST_SWITCH} is set"));
    }
    let Some(bwrap) = find_on_path("bwrap") else {
        return Err("bubblewrap (`bwrap`) is not installed".into());
    };
    namespaces(network_off)?;
    Ok(bwrap)
}

/// Whether this process may create the namespaces the sandbox uses.
#[cfg(target_os = "linux")]
fn namespaces(network_off: bool) -> Result<(), String> {
    let mut flags =
        libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC;
    if network_off {
        flags |= libc::CLONE_NEWNET;
    }
    use crate::sys::process::{Unshare, try_unshare};
    match try_unshare(flags) {
        Unshare::Allowed => Ok(()),
        Unshare::Refused(err) => Err(format!("this system refuses new user namespaces: {err}")),
        Unshare::Killed => Err("the namespace test was killed".into()),
        Unshare::CannotFork(err) => Err(format!("cannot fork to test for namespaces: {err}")),
        Unshare::CannotWait(err) => Err(format!("cannot wait for the namespace test: {err}")),
    }
}

#[cfg(not(target_os = "linux"))]
fn namespaces(_network_off: bool) -> Result<(), String> {
    Err("the sandbox is implemented on Linux only".into())
}

/// `bwrap <policy> -- <program> <args>` as a command whose caller sets env, cwd and stdio;
/// everything `shield` names is covered (empty tmpfs, empty file).
pub fn command(
    bwrap: &Path,
    policy: &Policy,
    shield: &Shield,
    program: &OsStr,
    args: &[&OsStr],
) -> Command {
    let mut cmd = Command::new(bwrap);
    cmd.args(base_args(policy.network));
    // The private `/tmp` and `/var/tmp` first: every bind below may lie under them and must
    // stay visible.
    cmd.args(policy.private_tmp.iter().flat_map(PrivateTmp::args));
    for path in &policy.writable {
        cmd.arg("--bind").arg(path).arg(path);
    }
    // A `writable` path never opens what must stay read-only, above or below it: where the two
    // overlap, the inner one is bound read-only again (binding an outer read-only path whole
    // would show what the private `/tmp` hides beside the writable one).
    for path in &policy.read_only {
        for w in &policy.writable {
            let inner = if path.starts_with(w) {
                path
            } else if w.starts_with(path) {
                w
            } else {
                continue;
            };
            cmd.arg("--ro-bind").arg(inner).arg(inner);
        }
    }
    // Secrets after the `writable` paths, so none of those opens one again; the check's own
    // places last, so a covered directory above them (a socket's) does not hide them.
    for dir in &shield.dirs {
        cmd.arg("--tmpfs").arg(dir);
    }
    for file in &shield.files {
        cmd.arg("--ro-bind").arg(&policy.empty).arg(file);
    }
    for path in [&policy.checkout, &policy.tmp] {
        cmd.arg("--bind").arg(path).arg(path);
    }
    cmd.arg("--chdir").arg(&policy.checkout);
    cmd.arg("--").arg(program).args(args);
    cmd
}

/// The flags every sandbox shares: read-only root, own `/dev` and `/proc`, own namespaces.
fn base_args(network: bool) -> Vec<&'static str> {
    let mut args = vec![
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--die-with-parent",
        "--new-session",
    ];
    // As root, bwrap keeps the capabilities unless told otherwise (CAP_SYS_MODULE, CAP_MKNOD…).
    if crate::sys::process::euid() == 0 {
        args.extend(["--cap-drop", "ALL"]);
    }
    if !network {
        args.push("--unshare-net");
    }
    args
}

/// Where the record key may live (SPEC §6), as (files to cover, directories to cover), each
/// existing and canonical: the file `$CLOSEGATE_RECORD_KEY_FILE`, and the directories
/// `$XDG_CONFIG_HOME/closegate` and `~/.config/closegate`, all of which are hidden whichever
/// one is in effect.
pub fn record_key_paths() -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut files = Vec::new();
    let named = std::env::var_os(crate::record::key::ENV).filter(|f| !f.is_empty());
    files.extend(named.and_then(|f| std::fs::canonicalize(f).ok()));
    let mut dirs: Vec<PathBuf> = Vec::new();
    let xdg = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from);
    let home = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config"));
    for config in [xdg, home].into_iter().flatten() {
        if !config.is_absolute() {
            continue;
        }
        if let Ok(dir) = std::fs::canonicalize(config.join("closegate"))
            && dir.is_dir()
            && !dirs.contains(&dir)
        {
            dirs.push(dir);
        }
    }
    files.retain(|f| !dirs.iter().any(|d| f.starts_with(d)) && f.is_file());
    (files, dirs)
}

/// The first secret file the sandbox hides (the record key in any of its places, a signing key)
/// that also has another name, a hard link elsewhere: described with its link count.
fn secret_with_other_names(shield: &Shield) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    shield.keys.iter().find_map(|file| {
        let meta = std::fs::symlink_metadata(file).ok()?;
        (meta.is_file() && meta.nlink() > 1)
            .then(|| format!("{} has {} names (hard links)", file.display(), meta.nlink()))
    })
}

/// Expand a `writable` entry: `~` and `~/…` against `$HOME`; others are absolute already.
pub fn expand_home(path: &str) -> Result<PathBuf, String> {
    let rest = match path.strip_prefix('~') {
        None => return Ok(PathBuf::from(path)),
        Some(rest) => rest.trim_start_matches('/'),
    };
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or_else(|| format!("`{path}` names the home directory but HOME is not set"))?;
    Ok(PathBuf::from(home).join(rest))
}

/// The first executable `name` on `PATH`.
fn find_on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH").unwrap_or_else(|| OsString::from("/usr/bin:/bin"));
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|file| {
            std::fs::metadata(file)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_is_expanded_only_at_the_start() {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        if let Some(home) = home.filter(|h| !h.as_os_str().is_empty()) {
            assert_eq!(expand_home("~").unwrap(), home);
            assert_eq!(expand_home("~/.npm").unwrap(), home.join(".npm"));
        }
        assert_eq!(expand_home("/a/~b").unwrap(), PathBuf::from("/a/~b"));
    }

    #[test]
    fn network_off_adds_a_network_namespace() {
        assert!(!base_args(true).contains(&"--unshare-net"));
        assert!(base_args(false).contains(&"--unshare-net"));
        assert!(base_args(true).contains(&"--unshare-pid"));
    }
}
