//! Processes working inside a worktree (SPEC §24): read from `/proc` — each process's current
//! directory, root, open files and memory-mapped files — and, with `--reap`, ended (SIGTERM, then
//! SIGKILL after 5 s). closegate itself is exempt; its ancestors (the shell that started it from
//! inside the worktree) are exempt and named apart for `teardown`, and hold the worktree like any
//! other process for `land`, whose teardown is a side effect (SPEC §27.4). An ancestor is never
//! reaped.
//!
//! Processes of other users whose `/proc` entries cannot be read are not seen; a teardown run by
//! the agent's own user sees the agent's processes, which is what matters.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::catalog::Code;
use crate::finding::Finding;

/// A process found inside the worktree, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proc {
    pub pid: u32,
    pub command: String,
    /// What lies inside: `current directory`, `root`, `open file <path>`, `mapped file <path>`.
    pub why: String,
    /// An ancestor of closegate: the shell (or harness) that started it.
    pub starter: bool,
}

impl Proc {
    /// What holds the worktree, as every message names it: pid, command and how.
    pub fn holds(&self) -> String {
        let starter = if self.starter {
            ", which started this closegate"
        } else {
            ""
        };
        format!(
            "process {} (`{}`{starter}) has its {} inside the worktree",
            self.pid, self.command, self.why
        )
    }
}

/// What closegate's ancestors inside the worktree are to a teardown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Starters {
    /// Exempt, named in a warning: `teardown` run from inside the worktree it removes (SPEC §24).
    #[default]
    Exempt,
    /// They hold the worktree: `land` never removes the directory the shell that ran it stands
    /// in (SPEC §27.4); it names that shell and the command that finishes the teardown.
    Hold,
}

/// What the scan found: processes that bar the teardown, and exempt ones.
#[derive(Debug, Default)]
pub struct Busy {
    pub busy: Vec<Proc>,
    pub exempt: Vec<Proc>,
}

/// Every process with something inside `dir`: closegate itself is exempt, and so are its
/// ancestors unless `starters` is [`Starters::Hold`].
pub fn scan(dir: &Path, starters: Starters) -> Busy {
    let dir = crate::repo::canonical(dir);
    let me = std::process::id();
    let exempt = ancestors();
    let mut found = Busy::default();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Some(why) = inside(pid, &dir) else {
            continue;
        };
        let starter = pid != me && exempt.contains(&pid);
        let proc = Proc {
            pid,
            command: command(pid),
            why,
            starter,
        };
        if pid == me || (starter && starters == Starters::Exempt) {
            found.exempt.push(proc);
        } else {
            found.busy.push(proc);
        }
    }
    found.busy.sort_by_key(|p| p.pid);
    found.exempt.sort_by_key(|p| p.pid);
    found
}

/// The findings: `teardown-busy` per busy process, and per exempt one (closegate or an ancestor)
/// the same code as a warning, naming it (SPEC §24: "named in a warning instead").
pub fn findings(busy: &Busy) -> Vec<Finding> {
    let bar = busy.busy.iter().map(|p| {
        let fix = if p.starter {
            "leave the worktree (`cd` out) first"
        } else {
            "end it, or pass --reap"
        };
        Finding::new(Code::TeardownBusy, format!("{}; {fix}", p.holds()))
    });
    let exempt = busy.exempt.iter().map(|p| {
        let msg = format!(
            "process {} (`{}`, closegate or a process that started it) has its {} inside the \
             worktree; it is exempt",
            p.pid, p.command, p.why
        );
        Finding::new(Code::TeardownBusy, msg).with_severity(crate::catalog::Severity::Warning)
    });
    bar.chain(exempt).collect()
}

/// What `--reap` did to one process.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Reaped {
    pub pid: u32,
    pub command: String,
    /// The last signal sent: `SIGTERM`, or `SIGKILL` when it outlived the grace period.
    pub signal: &'static str,
    /// Whether it is gone now.
    pub ended: bool,
}

impl Reaped {
    /// How a `teardown` line keeps it (`reaped`).
    pub fn entry(&self) -> crate::ledger::ReapedEntry {
        crate::ledger::ReapedEntry {
            pid: self.pid,
            command: self.command.clone(),
            signal: self.signal.to_string(),
            ended: self.ended,
        }
    }
}

/// End `procs`: SIGTERM to each, SIGKILL after `grace` to those still there. An ancestor of
/// closegate (the shell that started it) is never signalled: the rescan names it.
pub fn reap(procs: &[Proc], grace: Duration) -> Vec<Reaped> {
    let mut out: Vec<Reaped> = procs
        .iter()
        .filter(|p| !p.starter)
        .map(|p| {
            signal(p.pid, rustix::process::Signal::TERM);
            Reaped {
                pid: p.pid,
                command: p.command.clone(),
                signal: "SIGTERM",
                ended: false,
            }
        })
        .collect();
    let until = Instant::now() + grace;
    while Instant::now() < until && out.iter().any(|r| alive(r.pid)) {
        std::thread::sleep(Duration::from_millis(20));
    }
    for r in &mut out {
        if alive(r.pid) {
            signal(r.pid, rustix::process::Signal::KILL);
            r.signal = "SIGKILL";
        }
    }
    let until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < until && out.iter().any(|r| alive(r.pid)) {
        std::thread::sleep(Duration::from_millis(10));
    }
    for r in &mut out {
        r.ended = !alive(r.pid);
    }
    out
}

fn signal(pid: u32, sig: rustix::process::Signal) {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    // A process that already ended, or one of another user, is reported by the rescan.
    let _ = rustix::process::kill_process(pid, sig);
}

/// Whether the process exists and is not a zombie (a zombie holds nothing open).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat_fields(&stat).first().is_some_and(|s| *s != "Z"),
        Err(_) => false,
    }
}

/// The fields of `/proc/<pid>/stat` after the command name (which may hold spaces and parens).
fn stat_fields(stat: &str) -> Vec<&str> {
    stat.rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect())
}

/// This process and every ancestor.
fn ancestors() -> Vec<u32> {
    let mut pid = std::process::id();
    let mut out = vec![pid];
    while pid > 1 && out.len() < 4096 {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            break;
        };
        let Some(parent) = stat_fields(&stat)
            .get(1)
            .and_then(|p| p.parse::<u32>().ok())
        else {
            break;
        };
        if parent == 0 || out.contains(&parent) {
            break;
        }
        out.push(parent);
        pid = parent;
    }
    out
}

/// How the process `pid` reaches inside `dir`, if it does.
fn inside(pid: u32, dir: &Path) -> Option<String> {
    let base = PathBuf::from(format!("/proc/{pid}"));
    let within = |p: &Path| p.starts_with(dir);
    if std::fs::read_link(base.join("cwd")).is_ok_and(|p| within(&p)) {
        return Some("current directory".into());
    }
    if std::fs::read_link(base.join("root")).is_ok_and(|p| within(&p)) {
        return Some("root".into());
    }
    if let Ok(fds) = std::fs::read_dir(base.join("fd")) {
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path())
                && within(&target)
            {
                return Some(format!("open file {}", target.display()));
            }
        }
    }
    let maps = std::fs::read_to_string(base.join("maps")).unwrap_or_default();
    for line in maps.lines() {
        // address perms offset dev inode pathname: the path is what follows the fifth field.
        let path = line
            .splitn(6, char::is_whitespace)
            .nth(5)
            .map(str::trim_start);
        if let Some(path) = path.filter(|p| p.starts_with('/'))
            && within(Path::new(path))
        {
            return Some(format!("mapped file {path}"));
        }
    }
    None
}

/// The command line of `pid` (arguments joined by spaces, at most 120 characters), else its
/// `comm`.
fn command(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let mut text: String = raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    if text.is_empty() {
        text = std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .unwrap_or_default()
            .trim()
            .to_string();
    }
    if text.chars().count() > 120 {
        text = text.chars().take(117).collect::<String>() + "...";
    }
    text
}
