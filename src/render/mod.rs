//! Rendering of reports: human, JSON, GitHub workflow commands and SARIF, all from one `Report`.

mod github;
mod human;
mod sarif;

use std::io::Write;

use crate::report::Report;

/// Output format chosen with `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    #[default]
    Human,
    Json,
    Github,
    Sarif,
}

/// Print `report` in `format` to `out`. `color` is decided by the caller (terminal, NO_COLOR).
pub fn render(report: &Report, format: Format, color: bool, out: &mut dyn Write) -> std::io::Result<()> {
    match format {
        Format::Human => human::render(report, color, out),
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, report)?;
            writeln!(out)
        }
        Format::Github => github::render(report, out),
        Format::Sarif => sarif::render(report, out),
    }
}

/// Escape control characters of agent-written text so it cannot drive the terminal.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}
