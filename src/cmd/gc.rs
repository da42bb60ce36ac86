//! `closegate gc`: drop escrows older than `escrow_days` (SPEC §24), the checks' warm workspaces
//! (SPEC §19) and stale temporary checkouts.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use crate::gates::workspace;
use crate::repo::Repo;
use crate::restore::expire::{Expired, Fate, drop_expired};

/// Drop old escrows, the checks' warm workspaces and stale temporary checkouts
///
/// Escrows (refs/closegate/escrow/<slug>/<n>, written by every teardown) older than
/// `escrow_days` (configuration, default 30) are dropped. Warm workspaces (`keep = [...]` in a
/// check) live in <git common dir>/closegate/work/ and belong to the repository: teardown leaves
/// them. `gc` removes every one not in use by a running check, and the temporary checkouts a
/// killed closegate left behind. Exit 0, or 2 on error
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
    let common = repo.common_dir();
    let mut out = crate::term::human();
    drop_expired(&repo, args.dry_run, &mut |e| say_escrow(e, &mut out))?;
    for (name, busy) in workspace::list(&common)? {
        let path = workspace::base(&common).join(&name);
        if busy {
            writeln!(out, "in use, kept: {}", path.display())?;
        } else if args.dry_run {
            writeln!(out, "would remove: {}", path.display())?;
        } else if workspace::drop_workspace(&common, &name)? {
            writeln!(out, "removed: {}", path.display())?;
        } else {
            writeln!(out, "in use, kept: {}", path.display())?;
        }
    }
    if !args.dry_run {
        let swept = crate::sandbox::scratch::sweep_stale(&std::env::temp_dir());
        if swept > 0 {
            writeln!(out, "removed {swept} stale temporary checkout(s)")?;
        }
    }
    Ok(0)
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
