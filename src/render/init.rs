//! What `init` prints (SPEC §17): how the try of the guessed check went, the offer of signed
//! approvals and how to commit what was written.

use std::io::Write;

use anyhow::Result;

use super::escape;
use crate::config::{self, CheckSpec};
use crate::gates::checks::Checked;
use crate::report::CheckRun;

/// The line before the try runs.
pub fn trying(name: &str, short: &str, out: &mut impl Write) -> Result<()> {
    writeln!(out, "try: running `{name}` on {short} in the sandbox …")?;
    out.flush()?;
    Ok(())
}

/// How the try of `spec` on the base tip (`short`, on `base`) went; 0 passed, 1 failed. `built`
/// names what makes the project build compiled extensions (SPEC §26.4).
pub fn tried(
    spec: &CheckSpec,
    checked: &Checked,
    (short, base): (&str, &str),
    built: Option<String>,
    out: &mut impl Write,
) -> Result<i32> {
    for finding in &checked.findings {
        if finding.severity == crate::finding::Severity::Warning {
            writeln!(out, "  warning {}: {}", finding.code, finding.message)?;
        }
    }
    let Some(ran) = checked.runs.first() else {
        writeln!(out, "try: the check did not run")?;
        return Ok(1);
    };
    let secs = ran.duration_ms as f64 / 1000.0;
    if ran.exit_code == Some(0) && !ran.timed_out {
        writeln!(out, "try: `{}` passed on {short} in {secs:.1} s", spec.name)?;
        // SPEC §26.4: a pass that skipped the tests of a compiled part tests less than it says.
        let skipped = built.and_then(|b| crate::readiness::skipped_compiled(ran, base, short, &b));
        if let Some(line) = skipped {
            writeln!(out, "  {}", escape(&line))?;
        }
        return Ok(0);
    }
    failed(spec, ran, short, secs, out)?;
    Ok(1)
}

/// Say how the try failed, its last lines and what to change.
fn failed(
    spec: &CheckSpec,
    ran: &CheckRun,
    short: &str,
    secs: f64,
    out: &mut impl Write,
) -> Result<()> {
    let how = match (ran.timed_out, ran.exit_code) {
        (true, _) => format!("ran past its timeout of {} s", spec.timeout_s),
        (false, Some(code)) => format!("exited {code}"),
        (false, None) => "was killed".to_string(),
    };
    writeln!(
        out,
        "try: `{}` {how} on {short} after {secs:.1} s; its last lines:",
        spec.name
    )?;
    let tail = ran.output.len().saturating_sub(TRY_TAIL);
    for line in &ran.output[tail..] {
        writeln!(out, "  | {}", escape(line))?;
    }
    writeln!(
        out,
        "every agent's check would FAIL on this: edit `run` in {} (install what the tests need \
         inside the checkout, keep tool caches in the check's workspace) or fix the base, then \
         commit it and run `closegate validate --run`; --no-try skips this try",
        config::FILE_NAME
    )?;
    Ok(())
}

/// Lines of a failing try's output shown.
const TRY_TAIL: usize = 20;

/// How to commit what was written to the base branch.
pub fn commit_hint(
    branch: Option<&str>,
    rel: &str,
    contract: bool,
    out: &mut impl Write,
) -> Result<()> {
    let base = branch.unwrap_or("the base branch");
    let what = if contract {
        "task contract"
    } else {
        "configuration"
    };
    writeln!(
        out,
        "commit it to {base}: closegate reads it from the base tip, never from an agent's branch\n  \
         git add {rel} && git commit -m \"closegate: {what}\""
    )?;
    Ok(())
}

/// The offer of signed approvals (SPEC §26.5, docs/review.md): on one machine they alone keep an
/// agent from approving its own work. Printed only; the configuration written is unchanged.
pub fn offer_signed_approvals(out: &mut impl Write) -> Result<()> {
    writeln!(
        out,
        "approvals: on one machine only signed approvals stop an agent from approving its own \
         work (it runs as you, so it can run `closegate approve --yes`). To require them:\n  \
         1. give the reviewer an SSH key the agent's harness cannot read, and list its public key \
         in .closegate/allowed_signers (git's allowed-signers format: `<name> <key type> <key>`)\n  \
         2. add at the top of {} (before its first [section]): allowed_signers = \
         \".closegate/allowed_signers\" and require_signed_approvals = true\n  \
         3. approve with `closegate approve --sign --key FILE` on a terminal (docs/review.md)",
        config::FILE_NAME
    )?;
    Ok(())
}
