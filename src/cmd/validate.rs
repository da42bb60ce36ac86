//! `closegate validate` (SPEC §17): before any agent is dispatched, check what a later `check`
//! will read from the base tip, with the same parsers `check` uses. The rules are
//! `setup::validate`; the words `render::validate`.

use std::path::PathBuf;

use anyhow::Result;

use crate::inputs;
use crate::setup::validate::{Asked, validate};

/// Check the configuration and every task contract on the base tip before dispatching agents
///
/// The configuration parses and its globs compile; every contract under .closegate/contracts/
/// parses, its required_checks name configured checks, its globs compile, and no two contracts
/// bind the same branch. Prints each problem with file, key and reason. Exit 0 when all is well,
/// 1 with problems, 2 when the repository cannot be read
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The base branch to read from (default: as `check` chooses it)
    #[arg(long, value_name = "NAME")]
    pub base: Option<String>,
    /// Validate this configuration file instead of the base tip's .closegate.toml
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Validate this contract file instead of the base tip's contracts
    #[arg(long, value_name = "FILE")]
    pub contract: Option<PathBuf>,
    /// Also run every configured check on the base tip in the sandbox (reusing by key); a check
    /// that fails there is check-red-on-base
    #[arg(long)]
    pub run: bool,
    /// Print one JSON object (`ok`, the configuration's origin, counts and every problem)
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<i32> {
    let (repo, _) = inputs::open(None)?;
    let asked = Asked {
        base: args.base,
        config: args.config,
        contract: args.contract,
        run: args.run,
    };
    let found = validate(repo, &asked, &mut |warning| eprintln!("{warning}"))?;
    crate::render::validate::show(&found, args.json)
}
