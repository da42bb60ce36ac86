//! The github format: one workflow command per finding, then `closegate: VERDICT`.
//!
//! Level mapping: a refusal is `::error` (it fails the verdict), review and gap are `::warning`
//! (a human must act, but nothing was refused), a warning is `::notice` (informational). With more
//! than ten findings, and `GITHUB_STEP_SUMMARY` set, a markdown table of all of them is appended
//! to the job summary, since GitHub shows only the first ten annotations of each level per step.

use std::io::Write;
use std::path::Path;

use super::escape;
use crate::finding::{Finding, Severity};
use crate::report::Report;

/// Findings beyond which the step summary gets the full table.
const ANNOTATION_LIMIT: usize = 10;

pub fn render(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    for finding in &report.findings {
        writeln!(out, "{}", command(report, finding))?;
    }
    writeln!(out, "closegate: {}", report.verdict.as_str())?;
    let summary = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty());
    if let Some(path) = summary.filter(|_| report.findings.len() > ANNOTATION_LIMIT) {
        append_summary(report, Path::new(&path))?;
    }
    Ok(())
}

/// `::error file=F,line=N,title=CODE::message` for one finding: `F` is the status document when
/// the finding names a line of it, else the finding's path (SPEC §4.7).
pub fn command(report: &Report, finding: &Finding) -> String {
    let at = super::annotation(report, finding);
    let mut props = Vec::new();
    if let Some(file) = at.file {
        props.push(format!("file={}", property(file)));
    }
    if let Some(line) = at.line {
        props.push(format!("line={line}"));
    }
    props.push(format!("title={}", property(finding.code.as_str())));
    format!(
        "::{} {}::{}",
        level(finding.severity),
        props.join(","),
        data(&at.message)
    )
}

/// The workflow command for a severity (see the module doc for why).
pub fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Refusal => "error",
        Severity::Review | Severity::Gap => "warning",
        Severity::Warning => "notice",
    }
}

/// Escape a command's message: `%`, CR and LF per GitHub's rules, then any other control char.
pub fn data(text: &str) -> String {
    escape(
        &text
            .replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A"),
    )
}

/// Escape a property value: as `data`, plus `:` and `,`, which delimit properties.
pub fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

/// Append a markdown table of every finding to the job summary file (never truncating it).
pub fn append_summary(report: &Report, path: &Path) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    file.write_all(summary_table(report).as_bytes())
}

/// `### closegate: VERDICT` and a `| severity | code | gate | location | message |` table.
pub fn summary_table(report: &Report) -> String {
    let mut out = format!(
        "\n### closegate: {} ({} findings)\n\n| severity | code | gate | location | message |\n|---|---|---|---|---|\n",
        report.verdict.as_str(),
        report.findings.len()
    );
    for f in &report.findings {
        let at = super::annotation(report, f);
        let mut location = at.file.map(cell).unwrap_or_default();
        if let Some(line) = at.line {
            location.push_str(&format!(":{line}"));
        }
        let row = [f.severity.as_str(), f.code.as_str(), f.gate.as_str()];
        out.push_str(&format!(
            "| {} | `{}` | {} | {location} | {} |\n",
            row[0],
            row[1],
            row[2],
            cell(&at.message)
        ));
    }
    out
}

/// A markdown table cell: control characters escaped, no line breaks, no live HTML or pipes.
fn cell(text: &str) -> String {
    let flat = text.replace("\r\n", "\n").replace('\n', " ");
    escape(&flat)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
        .replace('`', "&#96;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Code;

    fn report(n: usize) -> Report {
        let mut report = Report::default();
        let findings = (0..n)
            .map(|i| Finding::new(Code::DocStrayLine, format!("stray {i} a|b <x>")).at_line(i + 1));
        report.add_gate(crate::finding::Gate::Doc, findings);
        report.source = Some("_EXEC_STATUS.md".into());
        report
    }

    #[test]
    fn summary_appends_a_table_of_all_findings() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.md");
        std::fs::write(&path, "earlier step\n").unwrap();
        append_summary(&report(12), &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("earlier step\n"), "the file was truncated");
        assert_eq!(
            text.lines()
                .filter(|l| l.starts_with("| warning |"))
                .count(),
            12
        );
        assert!(text.contains(
            "| `doc-stray-line` | doc | _EXEC_STATUS.md:12 | stray 11 a\\|b &lt;x&gt; |"
        ));
    }

    #[test]
    fn levels_follow_severity() {
        assert_eq!(level(Severity::Refusal), "error");
        assert_eq!(level(Severity::Review), "warning");
        assert_eq!(level(Severity::Gap), "warning");
        assert_eq!(level(Severity::Warning), "notice");
    }
}
