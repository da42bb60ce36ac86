//! The human format.

use std::io::Write;

use crate::report::Report;

pub fn render(report: &Report, _color: bool, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "{}", report.verdict.as_str())
}
