//! `closegate gc`: drop escrows older than `escrow_days` (SPEC §24), the checks' warm workspaces
//! (SPEC §19) and stale temporary checkouts.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use crate::gates::workspace;
use crate::repo::Repo;

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
    drop_escrows(&repo, args.dry_run, &mut out)?;
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

/// Drop every escrow older than the base's `escrow_days` (compare-and-delete: an escrow ref that
/// moved meanwhile is kept).
fn drop_escrows(repo: &Repo, dry_run: bool, out: &mut impl Write) -> Result<()> {
    let days = match crate::inputs::config_tip(repo, None) {
        Some((name, id)) => crate::inputs::base_config(repo, &name, id)?
            .map_or(crate::config::DEFAULT_ESCROW_DAYS, |c| c.escrow_days),
        None => crate::config::DEFAULT_ESCROW_DAYS,
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let limit = now - i64::from(days) * 86_400;
    for escrow in repo.escrows() {
        let age = (now - escrow.time).max(0) / 86_400;
        if escrow.time >= limit && days > 0 {
            continue;
        }
        let what = format!(
            "escrow {} ({age} day(s) old; escrow_days = {days})",
            escrow.refname
        );
        if dry_run {
            writeln!(out, "would drop: {what}")?;
        } else if repo.delete_ref_if_at(&escrow.refname, escrow.commit)? {
            writeln!(out, "dropped: {what}")?;
        } else {
            writeln!(out, "kept (it moved meanwhile): {}", escrow.refname)?;
        }
    }
    Ok(())
}
