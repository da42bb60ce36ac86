//! `closegate gc`: drop escrows older than `escrow_days` (SPEC §24), the checks' warm workspaces
//! (SPEC §19) and stale temporary checkouts.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use crate::gates::workspace::{self, Swept};
use crate::repo::Repo;
use crate::restore::expire::{Expired, Fate, drop_expired};

/// Drop old escrows, base snapshots no branch is near and stale temporary checkouts
///
/// Escrows (refs/closegate/escrow/<slug>/<n>, written by every teardown) older than
/// `escrow_days` (configuration, default 30) are dropped. Base snapshots (the warm state of
/// checks with `keep = [...]`, in $XDG_CACHE_HOME/closegate/<repository id>/) are removed
/// unless their base commit is a branch's tip or the merge base of two branches, or they are the
/// newest of their check, or a running check uses them; so are the layers and temporary
/// checkouts a killed closegate left behind. Exit 0, or 2 on error
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only list what would be removed
    #[arg(long)]
    pub dry_run: bool,
    /// The repository (default: the current directory)
    // Not named `dir`: an argument of that id would shadow the global `-C DIR` (SPEC §21).
    #[arg(value_name = "DIR")]
    pub repo: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<i32> {
    let dir = match args.repo {
        Some(dir) => dir,
        None => std::env::current_dir()?,
    };
    let repo = Repo::discover(&dir)?;
    let mut out = crate::term::human();
    drop_expired(&repo, args.dry_run, &mut |e| say_escrow(e, &mut out))?;
    sweep_warm_state(&repo, args.dry_run, &mut out)?;
    if !args.dry_run {
        let swept = crate::sandbox::scratch::sweep_stale(&std::env::temp_dir());
        if swept > 0 {
            writeln!(out, "removed {swept} stale temporary checkout(s)")?;
        }
    }
    Ok(0)
}

/// Drop the base snapshots of bases no branch is near (SPEC §27.2: a base snapshot is kept while
/// its commit is a branch's tip or the merge base of two branches; the newest of each check
/// stays), the layers runs left, and the warm workspaces of older closegates.
fn sweep_warm_state(repo: &Repo, dry_run: bool, out: &mut impl Write) -> Result<()> {
    let common = repo.common_dir();
    for path in workspace::legacy(&common) {
        if dry_run {
            writeln!(out, "would remove: {}", path.display())?;
        } else {
            workspace::remove_legacy(&path)?;
            writeln!(out, "removed: {}", path.display())?;
        }
    }
    let tips: Vec<git2::Oid> = repo
        .branches_matching(|_| true)?
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    let mut near: std::collections::HashSet<git2::Oid> = tips.iter().copied().collect();
    for (i, one) in tips.iter().enumerate() {
        near.extend(
            tips[i + 1..]
                .iter()
                .filter_map(|two| repo.merge_base(*one, *two)),
        );
    }
    let cache = workspace::Cache::of(&common)?;
    for swept in cache.sweep(&|id| near.contains(&id), dry_run)? {
        match swept {
            Swept::Removed(p) => writeln!(out, "removed: {}", p.display())?,
            Swept::Would(p) => writeln!(out, "would remove: {}", p.display())?,
            Swept::Busy(p) => writeln!(out, "in use, kept: {}", p.display())?,
        }
    }
    Ok(())
}

/// The line of an expired escrow: would drop, dropped, or kept because it moved.
fn say_escrow(e: &Expired, out: &mut impl Write) -> Result<()> {
    let (refname, age, days) = (&e.refname, e.age, e.days);
    let what = format!("escrow {refname} ({age} day(s) old; escrow_days = {days})");
    match e.fate {
        Fate::Would => writeln!(out, "would drop: {what}")?,
        Fate::Dropped => writeln!(out, "dropped: {what}")?,
        Fate::Moved => writeln!(out, "kept (it moved meanwhile): {refname}")?,
    }
    Ok(())
}
