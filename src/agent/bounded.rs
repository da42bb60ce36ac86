//! The stop hook's runs of `closegate signal` and `closegate guard` (SPEC §18): each judges the
//! final message in the worktree with its own record, and is killed at the hook's deadline (its
//! checks die with it) so the hook always answers before the harness gives up on it.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::report::Report;

/// How a `signal` or `guard` run ended.
pub enum Ran {
    Accepted,
    /// The run's report, read back as the type it was written from.
    Refused(Box<Report>),
    /// The hook's time bound passed first; the run was killed.
    OutOfTime,
}

/// Run `closegate COMMAND - --worktree ROOT --format json FLAGS` on `message` until `deadline`.
/// `Err` when it reached no decision.
pub fn run_self(
    command: &str,
    root: &Path,
    message: &str,
    flags: &[&str],
    deadline: Instant,
) -> Result<Ran, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find closegate itself: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.arg(command)
        .arg("-")
        .arg("--worktree")
        .arg(root)
        .args(["--format", "json"])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .args(flags);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run closegate {command}: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(message.as_bytes());
    }
    let Some(out) = wait_until(child, deadline)? else {
        return Ok(Ran::OutOfTime);
    };
    match out.status.code() {
        Some(0) => Ok(Ran::Accepted),
        Some(1) => serde_json::from_slice::<Report>(&out.stdout)
            .map(|report| Ran::Refused(Box::new(report)))
            .map_err(|e| format!("closegate {command} printed no report: {e}")),
        _ => {
            let err = String::from_utf8_lossy(&out.stderr);
            let first = err.lines().next().unwrap_or("no message");
            Err(format!("closegate {command} reached no decision: {first}"))
        }
    }
}

/// Wait for `child` (reading its output meanwhile) until `deadline`; `None` when the deadline
/// passed first and the child was killed (its checks die with it).
fn wait_until(
    mut child: std::process::Child,
    deadline: Instant,
) -> Result<Option<std::process::Output>, String> {
    let readers = [
        child.stdout.take().map(spawn_reader),
        child.stderr.take().map(spawn_reader),
    ];
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let [stdout, stderr] =
                    readers.map(|r| r.and_then(|h| h.join().ok()).unwrap_or_default());
                return Ok(Some(std::process::Output {
                    status,
                    stdout,
                    stderr,
                }));
            }
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Ok(None);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("cannot wait for closegate: {e}")),
        }
    }
}

fn spawn_reader(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}
