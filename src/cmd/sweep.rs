//! `closegate sweep`: tear down every MERGED or STOPPED agent worktree; report idle ones (SPEC §24).

use std::io::Write;

use anyhow::Result;

use crate::render::escape;
use crate::sweep::{self, Request};

/// Tear down every agent worktree whose stage is MERGED or STOPPED (a full teardown each; MERGED
/// branches deleted, STOPPED ones kept) and report RUNNING or BLOCKED ones idle too long
///
/// Never removes a RUNNING or BLOCKED worktree. Each worktree is judged alone: one it cannot
/// read is kept with the reason and the others are still swept. Exit 0, or 1 when a teardown it
/// attempted refused or a worktree could not be read
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Report RUNNING or BLOCKED worktrees with no commit and no file modified for this long
    /// (90s, 30m, 12h, 7d, 2w)
    #[arg(long, value_name = "DURATION")]
    pub older_than: Option<String>,
    /// Print what would be removed; change and record nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Print `{"schema": 1, "worktrees": [...]}`
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<i32> {
    let older_than = args
        .older_than
        .as_deref()
        .map(sweep::parse_duration)
        .transpose()?;
    let request = Request {
        older_than,
        dry_run: args.dry_run,
    };
    let swept = sweep::run(&request)?;
    let failed = swept.iter().any(sweep::Swept::failed);
    if args.json {
        let shown = crate::render::sweep::SweepJson::of(args.dry_run, swept);
        crate::render::sweep::json(&shown, &mut crate::term::stdout())?;
        return Ok(i32::from(failed));
    }
    let mut out = crate::term::human();
    for s in &swept {
        writeln!(
            out,
            "{:<13}{}: {}",
            s.action,
            escape(&s.path),
            escape(&s.reason)
        )?;
    }
    if swept.is_empty() {
        writeln!(out, "no agent worktree to sweep")?;
    }
    Ok(i32::from(failed))
}
