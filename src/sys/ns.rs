//! Namespaces for the checks' overlay file system (SPEC §27.2): a user and mount namespace of
//! the calling process's own, in which a mount is seen by it and its children alone.
//!
//! Called only by the mount helper (`sandbox::mount`), a fresh single-threaded process (the
//! kernel refuses `unshare(CLONE_NEWUSER)` to a process with more than one thread), before it
//! runs the check. Every call goes through rustix, safely.

use std::io;
use std::path::Path;

use rustix::mount::{MountFlags, MountPropagationFlags};
use rustix::thread::UnshareFlags;

/// Enter a new user and mount namespace, this process's uid and gid mapped to themselves, with
/// every mount private: nothing mounted after this is seen outside the namespace, and nothing
/// mounted outside after this is seen inside.
#[allow(unsafe_code)]
pub fn enter_private_mounts() -> io::Result<()> {
    let (uid, gid) = (rustix::process::getuid(), rustix::process::getgid());
    // SAFETY: only new user and mount namespaces are asked for, never `CLONE_FILES`, `CLONE_FS`
    // or `CLONE_SIGHAND`, so no state Rust or libc assume shared stops being shared; the
    // caller is the helper, single-threaded (the kernel refuses `CLONE_NEWUSER` otherwise).
    unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWUSER | UnshareFlags::NEWNS)? };
    std::fs::write("/proc/self/setgroups", "deny")?;
    std::fs::write("/proc/self/uid_map", format!("{0} {0} 1\n", uid.as_raw()))?;
    std::fs::write("/proc/self/gid_map", format!("{0} {0} 1\n", gid.as_raw()))?;
    rustix::mount::mount_change(
        "/",
        MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
    )?;
    Ok(())
}

/// Mount an overlay at `target`: `lower` read-only below, writes going to `upper` (`work` is
/// the kernel's scratch directory, on `upper`'s file system). A path holding `,`, `:` or `\`
/// (the option string's separators) is refused rather than escaped.
pub fn mount_overlay(lower: &Path, upper: &Path, work: &Path, target: &Path) -> io::Result<()> {
    // `userxattr`: an unprivileged mount keeps whiteouts and opaque directories in `user.`
    // extended attributes (without it removing a lower directory fails with EIO).
    let mut opts = String::from("userxattr");
    for (key, path) in [("lowerdir", lower), ("upperdir", upper), ("workdir", work)] {
        let text = path.to_str().filter(|t| !t.contains([',', ':', '\\']));
        let text = text.ok_or_else(|| {
            io::Error::other(format!("`{}` cannot name an overlay layer", path.display()))
        })?;
        opts.push(',');
        opts.push_str(&format!("{key}={text}"));
    }
    let data = std::ffi::CString::new(opts).map_err(io::Error::other)?;
    rustix::mount::mount(
        "overlay",
        target,
        "overlay",
        MountFlags::empty(),
        data.as_c_str(),
    )?;
    Ok(())
}

/// Bind `source` at `target`.
pub fn mount_bind(source: &Path, target: &Path) -> io::Result<()> {
    rustix::mount::mount_bind(source, target)?;
    Ok(())
}
