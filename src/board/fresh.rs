//! `board --check`: a fresh verdict for every worktree that has a status document, at most two
//! gates at a time.
//!
//! Each run resolves its own session and so opens its own repository handle (`git2::Repository`
//! is `Send` but not `Sync`); workers take the next worktree from a shared counter. Each verdict
//! is recorded as a `check` event, exactly as `closegate check` would record it, so a later
//! `board` without `--check` shows the same stage.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, Result};

use crate::finding::Verdict;
use crate::gates::{self, Session};
use crate::inputs::GateOptions;
use crate::ledger;

/// How many gates run at once (each may run a test suite).
pub const JOBS: usize = 2;

/// A fresh verdict and the codes of its findings, in the order the gates found them.
pub type Judged = (Verdict, Vec<String>);

/// Run the gate on each worktree in `dirs`; one result per entry, in order. `rerun` runs every
/// check even when a recorded result has the same key (`--rerun`).
pub fn verdicts(dirs: &[PathBuf], record: bool, rerun: bool) -> Vec<Result<Judged>> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Judged>>>> =
        Mutex::new(dirs.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..JOBS.min(dirs.len()) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(dir) = dirs.get(i) else { break };
                    let result = gate(dir, record, rerun);
                    if let Ok(mut all) = results.lock() {
                        all[i] = Some(result);
                    }
                }
            });
        }
    });
    let all = results.into_inner().unwrap_or_else(|e| e.into_inner());
    all.into_iter()
        .map(|r| r.unwrap_or_else(|| Err(anyhow::anyhow!("the gate did not run"))))
        .collect()
}

/// The whole gate on one worktree, with the defaults of `closegate check` (and its `--rerun`).
fn gate(dir: &Path, record: bool, rerun: bool) -> Result<Judged> {
    let run = || -> Result<Judged> {
        let opts = GateOptions {
            rerun,
            // Two agents' checks run at once: each progress line names the agent's branch.
            label_branch: true,
            ..GateOptions::default()
        };
        let session = Session::open(Some(dir), &opts)?;
        let outcome = gates::evaluate(&session)?;
        if record {
            ledger::record_check(&session.repo().common_dir(), &outcome.report)?;
        }
        let codes = outcome.report.codes();
        let codes = codes.iter().map(|c| c.to_string()).collect();
        Ok((outcome.report.verdict, codes))
    };
    run().with_context(|| format!("{}", dir.display()))
}
