//! SIGINT, SIGTERM and SIGHUP while checks run: a check's own process group does not receive a
//! terminal's signal, so closegate notes the signal, kills the group, removes the checkout and
//! exits 2 instead of leaving the check running orphaned. The previous handlers come back when
//! the guard is dropped. `sigaction` is `unsafe` (rustix does not offer it outside its runtime).

use std::sync::atomic::{AtomicBool, Ordering};

const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
static REQUESTED: AtomicBool = AtomicBool::new(false);

extern "C" fn note(_: libc::c_int) {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Whether one of the signals arrived since the guard was installed.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// The installed handlers; dropping it restores the previous ones.
pub struct Guard {
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

impl Guard {
    #[allow(unsafe_code)]
    pub fn install() -> Guard {
        REQUESTED.store(false, Ordering::SeqCst);
        let mut previous = Vec::new();
        for signal in SIGNALS {
            // SAFETY: zeroed sigaction structs are valid; the handler only stores an atomic,
            // which is async-signal-safe; sigaction writes only into `old`.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = note as extern "C" fn(libc::c_int) as libc::sighandler_t;
                libc::sigemptyset(&mut action.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, &action, &mut old) == 0 {
                    previous.push((signal, old));
                }
            }
        }
        Guard { previous }
    }
}

impl Drop for Guard {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        for (signal, old) in &self.previous {
            // SAFETY: restores a handler sigaction itself returned.
            unsafe {
                libc::sigaction(*signal, old, std::ptr::null_mut());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The handler in place for `signal` now.
    #[allow(unsafe_code)]
    fn handler(signal: libc::c_int) -> libc::sighandler_t {
        // SAFETY: a zeroed sigaction is valid; a null new action only reads the current one.
        unsafe {
            let mut now: libc::sigaction = std::mem::zeroed();
            assert_eq!(libc::sigaction(signal, std::ptr::null(), &mut now), 0);
            now.sa_sigaction
        }
    }

    /// The guard puts its handler on the three signals, a signal is noted rather than ending
    /// the process, and dropping the guard brings the previous handlers back. (No other unit
    /// test installs a guard or sends these signals.)
    #[test]
    fn the_guard_notes_a_signal_and_restores_the_handlers() {
        let before = SIGNALS.map(handler);
        let guard = Guard::install();
        let ours = note as extern "C" fn(libc::c_int) as libc::sighandler_t;
        assert_eq!(SIGNALS.map(handler), [ours; 3]);
        assert!(!requested());
        let me = rustix::process::getpid();
        rustix::process::kill_process(me, rustix::process::Signal::HUP).unwrap();
        let start = std::time::Instant::now();
        while !requested() && start.elapsed() < std::time::Duration::from_secs(10) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(requested());
        drop(guard);
        assert_eq!(SIGNALS.map(handler), before);
    }
}
