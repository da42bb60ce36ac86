//! `closegate guard`: the agent's report must begin with a verdict token, an UNVERIFIED claim
//! must name its gap, and with `--worktree` the claim is compared with the gate's own verdict
//! (SPEC §10).
//!
//! The claim and the rules judging it are `claim::token`; this reads the arguments, records
//! the decision and prints it (`render::claim`).

use std::path::PathBuf;

use anyhow::Result;

use crate::claim::token::{accepted, compare, gate_verdict, judge, read_claim};
use crate::claim::{read_message, record_decision};
use crate::cmd::gate::MessageArgs;
use crate::finding::{Gate, Verdict};
use crate::inputs;
use crate::ledger::{Event, GuardFields};
use crate::render::{self, Format};
use crate::repo::Repo;
use crate::report::Report;

/// Check the verdict token that begins an agent's report
///
/// With --worktree, the gate runs and the claim is compared with closegate's verdict.
/// Exit 0 accepted, 1 refused, 2 error.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub message: MessageArgs,
}

pub fn run(args: Args, color: bool) -> Result<i32> {
    let args = args.message;
    let text = read_message(&args.file)?;
    let mut claim = read_claim(&text);
    let mut report = Report::default();
    let mut common = None;
    let mut gate_ran = false;
    if let (Some(dir), Some(token)) = (&args.worktree, claim.token) {
        let (judged, repo_common) = judge(dir, &args.gate.options())?;
        report = judged;
        claim.findings.extend(compare(token, report.verdict));
        common = Some(repo_common);
        gate_ran = true;
    } else if let Some(dir) = &args.worktree {
        common = Some(inputs::open(Some(dir))?.0.common_dir());
    }
    report.add_gate(Gate::Claim, claim.findings);
    report.finish();
    let accepted = accepted(&report);
    let common = common.or_else(cwd_common_dir);
    let claimed = claim.token.map(Verdict::as_str);
    let verdict = gate_ran.then(|| gate_verdict(&report));
    record_decision(
        common.as_deref(),
        Event::Guard(GuardFields {
            accepted,
            ..GuardFields::default()
        }),
        &report,
        claimed,
        verdict,
    )?;
    let mut out = render::out(args.format);
    if args.format == Format::Human {
        render::claim::guard(&report, claimed, gate_ran, accepted, &mut out)?;
    } else {
        render::render(&report, args.format, color, &mut out)?;
    }
    Ok(if accepted { 0 } else { 1 })
}

/// The git common dir of the repository around the current directory, if there is one.
fn cwd_common_dir() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    Repo::discover(&cwd).ok().map(|r| r.common_dir())
}
