//! Processes: what std's `Command` does not offer. Waiting without reaping and killing a
//! process group go through rustix (safe); `fork` (to test for namespaces, to detach a
//! background removal) and the code a check's child runs between fork and exec are `unsafe`,
//! each block with its SAFETY comment.

use std::io;
use std::process::Command;

use rustix::io::Errno;
use rustix::process::{Pid, Signal, WaitId, WaitIdOptions, WaitOptions};

/// What a child that tried `unshare(flags)` found.
#[derive(Debug)]
pub enum Unshare {
    /// The kernel created the namespaces.
    Allowed,
    /// The kernel refused, with this error.
    Refused(io::Error),
    /// The child did not exit on its own.
    Killed,
    /// No child could be forked.
    CannotFork(io::Error),
    /// The child could not be waited for.
    CannotWait(io::Error),
}

/// Whether this process may create the namespaces `flags` (`CLONE_NEW*`) names, asked of the
/// kernel in a forked child that exits at once: a fraction of a millisecond, no process image.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn try_unshare(flags: libc::c_int) -> Unshare {
    // SAFETY: between fork and _exit the child calls only unshare and reads errno, both
    // async-signal-safe, so forking a multi-threaded process is sound.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: see above; _exit never returns.
        unsafe {
            let code = if libc::unshare(flags) == 0 {
                0
            } else {
                (*libc::__errno_location()).clamp(1, 255)
            };
            libc::_exit(code)
        }
    }
    let Some(pid) = Pid::from_raw(pid).filter(|_| pid > 0) else {
        return Unshare::CannotFork(io::Error::last_os_error());
    };
    let status = loop {
        match rustix::process::waitpid(Some(pid), WaitOptions::empty()) {
            Ok(Some((_, status))) => break status,
            Ok(None) => return Unshare::CannotWait(io::Error::other("no status")),
            Err(Errno::INTR) => continue,
            Err(e) => return Unshare::CannotWait(e.into()),
        }
    };
    match status.exit_status() {
        Some(0) => Unshare::Allowed,
        Some(errno) => Unshare::Refused(io::Error::from_raw_os_error(errno)),
        None => Unshare::Killed,
    }
}

/// Confine the child `cmd` starts, between fork and exec: it dies with SIGKILL when closegate
/// dies (`PR_SET_PDEATHSIG`), and no descriptor above 2 that closegate inherited (an fd 7 its
/// caller left open) reaches it. Linux only; elsewhere nothing is added.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn confine_child(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs between fork and exec and calls only prctl and
    // `close_inherited`, all async-signal-safe system calls that touch no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                return Err(io::Error::last_os_error());
            }
            close_inherited();
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
pub fn confine_child(_cmd: &mut Command) {}

/// Mark every descriptor above 2 close-on-exec in the forked child; std's own error pipe is
/// close-on-exec already. Where `close_range` is missing (Linux before 5.11) each descriptor
/// up to the soft limit is marked one by one.
///
/// # Safety
/// Called between fork and exec: only async-signal-safe calls, no allocation.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
unsafe fn close_inherited() {
    // SAFETY: close_range and fcntl are system calls on integers, async-signal-safe.
    unsafe {
        let flags = libc::CLOSE_RANGE_CLOEXEC as libc::c_long;
        if libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_long,
            !0u32 as libc::c_long,
            flags,
        ) == 0
        {
            return;
        }
        let mut limit: libc::rlimit = std::mem::zeroed();
        let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur.min(1 << 20) as libc::c_int
        } else {
            4096
        };
        for fd in 3..max {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
}

/// Whether the child `pid` has exited, without reaping it (`waitid` with `WNOWAIT`), so its
/// id cannot be reused while the caller still names it.
pub fn has_exited(pid: u32) -> io::Result<bool> {
    let pid = pid_of(pid)?;
    let flags = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    loop {
        match rustix::process::waitid(WaitId::Pid(pid), flags) {
            Ok(status) => return Ok(status.is_some()),
            Err(Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// SIGKILL every process in the group led by `pid`; a group already gone is not an error.
pub fn kill_group(pid: u32) {
    if let Ok(pid) = pid_of(pid) {
        let _ = rustix::process::kill_process_group(pid, Signal::KILL);
    }
}

/// SIGKILL this process (the teardown's crash failpoints).
pub fn kill_self() {
    let _ = rustix::process::kill_process(rustix::process::getpid(), Signal::KILL);
}

/// The effective user id of this process.
pub fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

fn pid_of(pid: u32) -> io::Result<Pid> {
    i32::try_from(pid)
        .ok()
        .and_then(Pid::from_raw)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a process id"))
}

/// Run `work` in a detached child (its own session, standard streams on `/dev/null`, no other
/// inherited descriptor) and return its process id; the child exits (status 0) when `work`
/// returns, without running the parent's destructors or atexit handlers.
#[allow(unsafe_code)]
pub fn spawn_detached(work: impl FnOnce()) -> io::Result<i32> {
    use std::os::fd::AsRawFd;
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    // SAFETY: fork has no memory-safety preconditions. The child below only makes system calls
    // and runs `work`, which allocates (glibc's malloc is fork-safe) and opens its own files.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid > 0 {
        return Ok(pid);
    }
    // The child.
    let fd = null.as_raw_fd();
    // SAFETY: plain system calls on descriptors this process owns; `_exit` skips the parent's
    // destructors and atexit handlers, which are not the child's to run.
    unsafe {
        libc::setsid();
        for target in 0..3 {
            libc::dup2(fd, target);
        }
        libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
    }
    work();
    // SAFETY: see above.
    unsafe { libc::_exit(0) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::time::{Duration, Instant};

    /// Poll `f` for up to ten seconds.
    fn eventually(f: impl Fn() -> bool) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if f() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        false
    }

    /// No namespace asked for is always allowed; flags the kernel does not know are refused
    /// with its error, reported by the child.
    #[cfg(target_os = "linux")]
    #[test]
    fn try_unshare_reports_the_childs_answer() {
        assert!(matches!(try_unshare(0), Unshare::Allowed));
        match try_unshare(-1) {
            Unshare::Refused(e) => assert_eq!(e.raw_os_error(), Some(libc::EINVAL)),
            other => panic!("expected EINVAL, got {other:?}"),
        }
    }

    /// A descriptor closegate inherited without close-on-exec does not reach the child.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_confined_child_sees_only_its_standard_streams() {
        let dir = tempfile::tempdir().unwrap();
        let file = std::fs::File::create(dir.path().join("f")).unwrap();
        let leaked = rustix::io::dup(&file).unwrap(); // dup(2): not close-on-exec
        use std::os::fd::AsRawFd;
        let n = leaked.as_raw_fd();
        let probe = format!("test -e /proc/self/fd/{n} && echo open || echo closed");
        let run = |confine: bool| {
            let mut cmd = Command::new("/bin/sh");
            cmd.args(["-c", &probe]);
            if confine {
                confine_child(&mut cmd);
            }
            String::from_utf8(cmd.output().unwrap().stdout).unwrap()
        };
        assert_eq!(run(false), "open\n");
        assert_eq!(run(true), "closed\n");
    }

    /// `has_exited` sees a running child as running and a killed group as exited, without
    /// reaping it: `wait` still gets the status afterwards.
    #[test]
    fn has_exited_does_not_reap_and_kill_group_kills() {
        let mut child = Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = child.id();
        assert!(!has_exited(pid).unwrap());
        kill_group(pid);
        assert!(eventually(|| has_exited(pid).unwrap()));
        assert!(has_exited(pid).unwrap(), "still unreaped");
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
        assert!(has_exited(pid).is_err(), "reaped: no such child");
        assert!(has_exited(0).is_err());
        kill_group(0); // not a process id: nothing happens
    }

    #[test]
    fn euid_is_the_owner_of_files_this_process_creates() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(std::fs::metadata(dir.path()).unwrap().uid(), euid());
    }

    /// The detached child runs `work` in a session of its own with `/dev/null` as stdin, and
    /// exits 0.
    #[test]
    fn a_detached_child_runs_in_its_own_session() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let written = out.clone();
        let pid = spawn_detached(move || {
            let sid = rustix::process::getsid(None).map(|p| p.as_raw_nonzero().get());
            let me = rustix::process::getpid().as_raw_nonzero().get();
            let stdin = std::fs::read_link("/proc/self/fd/0").unwrap_or_default();
            let text = format!("{} {}", sid == Ok(me), stdin.display());
            let _ = std::fs::write(&written, text);
        })
        .unwrap();
        let pid = Pid::from_raw(pid).unwrap();
        let (_, status) = rustix::process::waitpid(Some(pid), WaitOptions::empty())
            .unwrap()
            .unwrap();
        assert_eq!(status.exit_status(), Some(0));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "true /dev/null");
    }
}
