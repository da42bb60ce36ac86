//! The github format.

use std::io::Write;

use crate::report::Report;

pub fn render(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "{}", report.verdict.as_str())
}
