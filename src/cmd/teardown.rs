//! `closegate teardown`: remove a verified worktree when nothing can be lost (SPEC §7).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use crate::inputs::GateArgs;
use crate::render::{self, Format, escape};
use crate::teardown::{self, Done, Request};

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
}

pub fn run(args: Args, color: bool) -> Result<i32> {
    let request = Request {
        worktree: args.worktree,
        gate: args.gate,
        dry_run: args.dry_run,
        delete_branch: args.delete_branch,
        allow_unverified: args.allow_unverified,
    };
    let done = teardown::run(&request)?;
    let mut out = std::io::stdout().lock();
    if let Some(report) = &done.report {
        render::render(report, Format::Human, color, &mut out)?;
        writeln!(out)?;
    }
    writeln!(out, "{}", headline(&done))?;
    for step in &done.steps {
        writeln!(out, "  {:<14}{}", step.verb, escape(&step.what))?;
    }
    if let Some(error) = &done.error {
        eprintln!("closegate: {error}");
    }
    Ok(done.exit)
}

fn headline(done: &Done) -> String {
    if !done.steps.is_empty() && done.steps.iter().all(|s| s.verb == "nothing") {
        return "nothing to tear down".into();
    }
    match (&done.barred, done.exit, done.dry_run) {
        (Some(why), _, _) => format!("teardown refused: {why}"),
        (None, 1, _) => "teardown refused: something in the worktree would be lost".into(),
        (None, 2, _) => "teardown stopped midway".into(),
        (None, _, true) => "teardown plan (dry run: nothing was changed or recorded)".into(),
        (None, _, false) => "teardown done".into(),
    }
}
