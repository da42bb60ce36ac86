//! `closegate guard`: the agent's report must begin with a verdict token, an UNVERIFIED claim
//! must name its gap, and with `--worktree` the claim is compared with the gate's own verdict
//! (SPEC §10).
//!
//! The claim and the rules judging it are `claim::token`; this reads the arguments, records
//! the decision and prints it.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::catalog::Code;
use crate::claim::token::{accepted, compare, gate_verdict, judge, read_claim};
use crate::cmd::gate::GateArgs;
use crate::finding::{Gate, Verdict};
use crate::inputs;
use crate::ledger::{self, Event, GuardFields};
use crate::render::{self, Format, escape};
use crate::repo::Repo;
use crate::report::Report;

/// Check the verdict token that begins an agent's report
///
/// With --worktree, the gate runs and the claim is compared with closegate's verdict.
/// Exit 0 accepted, 1 refused, 2 error.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent's report; `-` (the default) reads standard input
    #[arg(default_value = "-")]
    pub file: PathBuf,
    /// Run the gate on this worktree and compare the claimed token with its verdict
    #[arg(long, value_name = "DIR")]
    pub worktree: Option<PathBuf>,
    #[command(flatten)]
    pub gate: GateArgs,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

pub fn run(args: Args, color: bool) -> Result<i32> {
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
    let mut out = crate::render::out(args.format);
    if args.format == Format::Human {
        print_human(&report, claimed, gate_ran, accepted, &mut out)?;
    } else {
        render::render(&report, args.format, color, &mut out)?;
    }
    Ok(if accepted { 0 } else { 1 })
}

/// The agent's message as text, each byte of an invalid UTF-8 sequence written `\xNN` (as
/// paths are, SPEC §11: no byte is lost to a replacement character); `-` reads standard input.
pub(crate) fn read_message(path: &Path) -> Result<String> {
    let bytes = inputs::read_bytes(path)
        .with_context(|| format!("cannot read the agent's message {}", path.display()))?;
    Ok(crate::repo::path_text(&bytes))
}

/// The git common dir of the repository around the current directory, if there is one.
pub(crate) fn cwd_common_dir() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    Repo::discover(&cwd).ok().map(|r| r.common_dir())
}

/// Append the decision to the audit log when inside a repository (`ledger::record_decision`).
pub(crate) fn record_decision(
    common: Option<&Path>,
    event: Event,
    report: &Report,
    claimed: Option<&str>,
    verdict: Option<Verdict>,
) -> Result<()> {
    match common {
        Some(common) => ledger::record_decision(common, event, report, claimed, verdict),
        None => Ok(()),
    }
}

/// `accepted|refused · claimed TOKEN · gate VERDICT`, then one line per finding; a missing token
/// prints the one line that tells the agent to re-emit.
fn print_human(
    report: &Report,
    claimed: Option<&str>,
    gate_ran: bool,
    accepted: bool,
    out: &mut dyn Write,
) -> Result<()> {
    if let Some(f) = report
        .findings
        .iter()
        .find(|f| f.code == Code::ClaimTokenMissing)
    {
        writeln!(out, "{}", escape(&f.message))?;
        return Ok(());
    }
    let mut head = format!(
        "{} · claimed {}",
        if accepted { "accepted" } else { "refused" },
        claimed.unwrap_or("nothing")
    );
    if gate_ran {
        head.push_str(&format!(" · closegate {}", gate_verdict(report).as_str()));
    }
    writeln!(out, "{head}")?;
    print_findings(report, out)
}

/// One line per finding: `  severity code: message`.
pub(crate) fn print_findings(report: &Report, out: &mut dyn Write) -> Result<()> {
    for f in &report.findings {
        writeln!(
            out,
            "  {} {}: {}",
            f.severity.as_str(),
            f.code,
            escape(&f.message)
        )?;
    }
    Ok(())
}
