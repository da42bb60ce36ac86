//! `closegate teardown`: remove a verified worktree when nothing can be lost (SPEC §7). The plan
//! and its execution are `teardown`; the words `render::teardown`.

use std::path::PathBuf;

use anyhow::Result;

use crate::cmd::gate::GateArgs;
use crate::render;
use crate::teardown::{self, Request};

/// Remove an agent's worktree once its return passed the gate and nothing can be lost
///
/// Runs the whole gate (recorded), refuses on anything uncommitted, untracked, hidden, nested, locked,
/// unfinished or moved, archives the status document, records the teardown, then removes the
/// worktree and, with --delete-branch, its merged branch (exit 0 removed, 1 refused, 2 error or
/// stopped midway)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent's worktree (default: the worktree of the current directory)
    pub worktree: Option<PathBuf>,
    #[command(flatten)]
    pub gate: GateArgs,
    /// Print the plan and change nothing (nothing is recorded either)
    #[arg(long)]
    pub dry_run: bool,
    /// Also delete the branch, when it is merged into the base and still at the verified commit
    #[arg(long)]
    pub delete_branch: bool,
    /// Tear down an UNVERIFIED return too (the record says so)
    #[arg(long)]
    pub allow_unverified: bool,
    /// Write the escrow, then tear down despite untracked files and commits only the worktree's
    /// HEAD reflog holds (the escrow keeps them; nothing else is overridden)
    #[arg(long)]
    pub force: bool,
    /// End the processes working inside the worktree (SIGTERM, then SIGKILL after 5 s; recorded)
    #[arg(long)]
    pub reap: bool,
    /// Print one JSON object (the outcome, its steps and the gate's report) instead of the
    /// human lines
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args, color: bool) -> Result<i32> {
    let request = Request {
        worktree: args.worktree,
        gate: args.gate.options(),
        dry_run: args.dry_run,
        delete_branch: args.delete_branch,
        allow_unverified: args.allow_unverified,
        force: args.force,
        reap: args.reap,
        starters: teardown::busy::Starters::Exempt,
    };
    let done = teardown::run(&request)?;
    if args.json {
        return render::teardown::json(&done);
    }
    render::teardown::human(&done, color)
}
