//! `closegate check`: run the gate sequence against the repository (SPEC §4).

use std::path::PathBuf;

use anyhow::Result;

use crate::inputs::{self, GateArgs};
use crate::render::{self, Format};
use crate::{gates, ledger};

/// Check an agent's return against the repository and answer with one verdict
///
/// Gates: doc, state, close, manifest, protected, checks and (with a task contract) contract.
/// Exit 0 VERIFIED, 1 FAIL, 2 error, 3 PENDING_REVIEW, 4 UNVERIFIED.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent's worktree (default: the current directory)
    pub worktree: Option<PathBuf>,
    #[command(flatten)]
    pub gate: GateArgs,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Do not append this verdict to the audit log
    #[arg(long)]
    pub no_record: bool,
}

pub fn run(args: Args, color: bool) -> Result<i32> {
    let inputs = inputs::resolve(args.worktree.as_deref(), &args.gate)?;
    let outcome = gates::evaluate(&inputs)?;
    if !args.no_record {
        ledger::record_check(&inputs.repo.common_dir(), &outcome.report)?;
    }
    let mut stdout = crate::term::report(args.format);
    render::render(&outcome.report, args.format, color, &mut stdout)?;
    Ok(outcome.report.verdict.exit_code())
}
