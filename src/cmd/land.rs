//! `closegate land`: land verified branches so the base only ever moves to a tree that passed
//! (SPEC §22).

use anyhow::Result;

use crate::land::{self, Request, Strategy};
use crate::render::{self, escape};

/// Land verified branches onto the base: compose in memory, check the composed tree, move the base
/// by compare-and-swap, record, tear down
///
/// Each branch's recorded verdict must pass under the base tip's configuration; the status
/// document never reaches the base; the base only ever moves to a tree whose checks passed (exit
/// 0 every branch landed, 1 any refused, 2 error)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Branches or worktrees to land, in landing order (none: the current worktree's branch)
    pub targets: Vec<String>,
    /// Every COMPLETED (or CONFLICT) agent branch, oldest verdict first
    #[arg(long)]
    pub all: bool,
    /// How the branch is composed onto the base
    #[arg(long, value_enum, default_value_t = Strategy::Merge)]
    pub strategy: Strategy,
    /// The base branch to land on (default: the configured base)
    #[arg(long, value_name = "NAME")]
    pub base: Option<String>,
    /// Compose up to N branches and check their combined tree once (bisected when it fails)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub batch: u32,
    /// Keep the worktrees (and so the branches) of landed branches
    #[arg(long)]
    pub no_teardown: bool,
    /// Tear the worktree down but keep the branch
    #[arg(long)]
    pub keep_branch: bool,
    /// Compose on REMOTE's base and push there with a lease (never a force), then the notes
    #[arg(long, value_name = "REMOTE")]
    pub push: Option<String>,
    /// Compose and check, print the plan; move, record and remove nothing
    #[arg(long)]
    pub dry_run: bool,
    /// How long to wait for another `land` of the same base before `land-base-busy` (90s, 10m, 1h)
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub wait: String,
    /// One JSON object: every branch's outcome and the base's move
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<i32> {
    let wait = crate::sweep::parse_duration(&args.wait).map_err(|_| {
        anyhow::anyhow!(
            "--wait {}: expected a number and a unit (90s, 10m, 1h)",
            args.wait
        )
    })?;
    let request = Request {
        wait,
        targets: args.targets,
        all: args.all,
        strategy: args.strategy,
        base: args.base,
        batch: args.batch as usize,
        no_teardown: args.no_teardown,
        keep_branch: args.keep_branch,
        dry_run: args.dry_run,
        push: args.push,
    };
    let landing = land::run(&request)?;
    if let Some(why) = &landing.notes_error {
        eprintln!(
            "closegate: landed, but the notes could not be pushed: {}",
            escape(why)
        );
    }
    if args.json {
        render::land::json(&landing, &mut std::io::stdout().lock())?;
    } else {
        render::land::human(&landing, &mut crate::term::human())?;
    }
    Ok(landing.exit())
}
