//! What `guard` and `signal` print (SPEC §10): guard's one-line decision and its findings, the
//! message relayed without its signal line, control characters escaped.

use std::io::Write;

use anyhow::Result;

use super::escape;
use crate::catalog::Code;
use crate::claim::token::gate_verdict;
use crate::report::Report;

/// `accepted|refused · claimed TOKEN · gate VERDICT`, then one line per finding; a missing token
/// prints the one line that tells the agent to re-emit.
pub fn guard(
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
    findings(report, out)
}

/// One line per finding: `  severity code: message`.
pub fn findings(report: &Report, out: &mut dyn Write) -> Result<()> {
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

/// The message without the signal line, control characters escaped (tabs kept).
pub fn body(body: &str, out: &mut dyn Write) -> std::io::Result<()> {
    for line in body.lines() {
        let safe: Vec<String> = line.split('\t').map(escape).collect();
        writeln!(out, "{}", safe.join("\t"))?;
    }
    Ok(())
}
