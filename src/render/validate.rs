//! What `validate` prints (SPEC §17): the warnings and `ok: …`, or one line per problem; with
//! `--json` one object under the one `report::SCHEMA`.

use std::io::Write;

use anyhow::Result;

use super::escape;
use crate::setup::validate::Validated;
use crate::term;

/// The `--json` object.
#[derive(serde::Serialize)]
struct Shown<'a> {
    schema: u32,
    ok: bool,
    /// Where the configuration was read (`main:.closegate.toml`, a file, `built-in defaults`).
    config: &'a str,
    checks: usize,
    contracts: usize,
    /// Each problem, worded as the human output prints it.
    problems: &'a [String],
    /// Each warning (`validate-unprotected-tests`, a stop hook missing from the base tip, …),
    /// worded as the human output prints it; warnings never change the exit code.
    warnings: &'a [String],
}

/// Print what `validate` found (one JSON object with `json`); 0 when all is well, else 1.
pub fn show(found: &Validated, json: bool) -> Result<i32> {
    let shown = Shown {
        schema: crate::report::SCHEMA,
        ok: found.problems.is_empty(),
        config: &found.config,
        checks: found.checks,
        contracts: found.contracts,
        problems: &found.problems,
        warnings: &found.warnings,
    };
    let code = if shown.ok { 0 } else { 1 };
    if json {
        super::write_json(&shown, &mut term::stdout())?;
        return Ok(code);
    }
    if !shown.warnings.is_empty() {
        let mut out = term::human();
        for note in shown.warnings {
            writeln!(out, "{note}")?;
        }
        out.flush()?;
    }
    let (checks, contracts) = (shown.checks, shown.contracts);
    if shown.ok {
        writeln!(
            term::human(),
            "ok: configuration {} ({checks} check{}), {contracts} contract{}",
            escape(shown.config),
            if checks == 1 { "" } else { "s" },
            if contracts == 1 { "" } else { "s" }
        )?;
        return Ok(0);
    }
    let mut out = term::stdout();
    for problem in shown.problems {
        writeln!(out, "{problem}")?;
    }
    out.flush()?;
    Ok(1)
}
