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
        ledger::record_check(&inputs, &outcome)?;
    }
    let mut stdout = crate::term::report(args.format);
    render::render(&outcome.report, args.format, color, &mut stdout)?;
    let code = outcome.report.verdict.exit_code();
    // The process ends next: the repository handle, its caches and the report are left to the
    // exit instead of being freed one by one (0.08M instructions of a check, scripts/bench.sh).
    std::mem::forget((inputs, outcome));
    Ok(code)
}
