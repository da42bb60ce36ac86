//! The board's working-tree column (`board --tree`): per worktree, whether it is clean, dirty or
//! has untracked files, and how far its HEAD is ahead of and behind the base.
//!
//! The scan is the close gate's own (`repo::status_of`, SPEC §4.3 and §11: the cost of `git
//! status`), with the status document exempt as there. Worktrees are scanned in parallel, one
//! thread per core; the ahead/behind counts are read on the calling thread (a libgit2 handle is
//! not shared across threads). Plain `board` does none of this and stays as fast as before.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use git2::Oid;
use serde::Serialize;

use crate::repo::{self, Repo, WorktreeStatus};

/// The `tree` object of a board row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TreeState {
    /// `clean`, `dirty` (tracked changes, staged or not), `untracked` (only untracked,
    /// not-ignored files), `absent` (no directory on this machine) or `unreadable`.
    pub status: &'static str,
    /// Tracked paths with changes.
    pub dirty: usize,
    /// Untracked, not-ignored files (one by one inside untracked folders).
    pub untracked: usize,
    /// Commits on HEAD that the base lacks; null without a base or a HEAD.
    pub ahead: Option<usize>,
    /// Commits on the base that HEAD lacks; null without a base or a HEAD.
    pub behind: Option<usize>,
}

impl TreeState {
    /// The human column: `clean +2 -0`, `dirty`, `absent`, …
    pub fn cell(&self) -> String {
        let mut text = self.status.to_string();
        if self.dirty > 0 && self.untracked > 0 {
            text.push_str("+untracked");
        }
        if let (Some(ahead), Some(behind)) = (self.ahead, self.behind) {
            text.push_str(&format!(" +{ahead} -{behind}"));
        }
        text
    }
}

/// One worktree to look at: its directory (when on this machine) and its HEAD.
pub struct Target {
    pub dir: Option<PathBuf>,
    pub head: Option<Oid>,
}

/// The tree state of every target, scans in parallel; `Err` text names why a scan failed.
pub fn states(
    repo: &Repo,
    targets: &[Target],
    base: Option<Oid>,
    exempt: &str,
) -> Vec<(TreeState, Option<String>)> {
    let scans = scan_all(targets, exempt);
    targets
        .iter()
        .zip(scans)
        .map(|(target, scan)| {
            let counts = match (target.head, base) {
                (Some(head), Some(base)) => repo.ahead_behind(head, base),
                _ => None,
            };
            state(scan, counts)
        })
        .collect()
}

fn state(
    scan: Option<anyhow::Result<WorktreeStatus>>,
    counts: Option<(usize, usize)>,
) -> (TreeState, Option<String>) {
    let (ahead, behind) = (counts.map(|c| c.0), counts.map(|c| c.1));
    let tree = |status, dirty, untracked| TreeState {
        status,
        dirty,
        untracked,
        ahead,
        behind,
    };
    match scan {
        None => (tree("absent", 0, 0), None),
        Some(Err(e)) => (tree("unreadable", 0, 0), Some(format!("{e:#}"))),
        Some(Ok(status)) => {
            let (dirty, untracked) = (status.dirty.len(), status.untracked.len());
            let word = match (dirty, untracked) {
                (0, 0) => "clean",
                (0, _) => "untracked",
                _ => "dirty",
            };
            (tree(word, dirty, untracked), None)
        }
    }
}

/// Scan every target that has a directory, on up to one thread per core.
fn scan_all(targets: &[Target], exempt: &str) -> Vec<Option<anyhow::Result<WorktreeStatus>>> {
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(targets.len())
        .max(1);
    let next = AtomicUsize::new(0);
    let mut results: Vec<Option<anyhow::Result<WorktreeStatus>>> =
        targets.iter().map(|_| None).collect();
    let done: Vec<Vec<(usize, anyhow::Result<WorktreeStatus>)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(target) = targets.get(i) else {
                            break;
                        };
                        if let Some(dir) = &target.dir {
                            mine.push((i, repo::status_of(dir, exempt)));
                        }
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    for (i, result) in done.into_iter().flatten() {
        results[i] = Some(result);
    }
    // A worker that stopped (it cannot, short of a bug) leaves its rows unreadable, never clean.
    for (target, result) in targets.iter().zip(&mut results) {
        if let (Some(dir), None) = (&target.dir, &result) {
            let why = anyhow::anyhow!("the scan of {} did not finish", dir.display());
            *result = Some(Err(why));
        }
    }
    results
}
