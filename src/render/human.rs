//! The human format: the verdict token first, one line per gate, one block per finding.
//!
//! Every piece of agent-derived text (messages, slug, branch, paths, check output) goes through
//! `escape`, so a status document cannot drive the terminal; colour is applied only around it.

use std::io::Write;
use std::time::Duration;

use console::Style;

use super::escape;
use crate::catalog::Code;
use crate::date::{self, Grain};
use crate::finding::{Finding, Gate, Severity, Verdict};
use crate::report::{CheckRun, IntegrityRun, Report};

const SEVERITIES: [Severity; 4] = [
    Severity::Refusal,
    Severity::Review,
    Severity::Gap,
    Severity::Warning,
];

pub fn render(report: &Report, color: bool, out: &mut dyn Write) -> std::io::Result<()> {
    let paint = Paint(color);
    writeln!(out, "{}", headline(report, paint))?;
    for gate in gates(report) {
        writeln!(
            out,
            "  {:<10} {}",
            gate.as_str(),
            gate_tally(report, gate, paint)
        )?;
    }
    if report.provenance.is_some() {
        writeln!(out, "  config: {}", config_line(report))?;
    }
    for finding in &report.findings {
        writeln!(out)?;
        write_finding(report, finding, paint, out)?;
    }
    write_artifacts(report, paint, out)?;
    write_protected(report, out)?;
    write_checks(&report.checks, paint, out)?;
    write_integrity(report, out)?;
    write_sandbox(report.sandbox.as_deref(), out)?;
    if let Some(approval) = &report.approval {
        writeln!(out)?;
        let (by, at) = (escape(&approval.by), escape(&approval.at));
        writeln!(
            out,
            "approved by {by} at {at} for commit {}",
            short(&approval.commit)
        )?;
    }
    Ok(())
}

/// `FAIL  slug · state close-ok · commit abc1234 · branch agent/x · worktree /path`.
fn headline(report: &Report, paint: Paint) -> String {
    let mut fields = Vec::new();
    if let Some(slug) = &report.slug {
        fields.push(escape(slug));
    }
    if let Some(state) = report.state {
        fields.push(format!("state {}", state.as_str()));
    }
    // The checked commit; lint (the doc gate alone, resolving nothing) shows the one the close
    // line claims, which its JSON leaves out unless it is a full sha.
    let lint = report.gates == [Gate::Doc];
    let claimed = report.claimed_commit.as_ref().filter(|_| lint);
    if let Some(commit) = report.commit.as_ref().or(claimed) {
        fields.push(format!("commit {}", short(commit)));
    }
    if let Some(branch) = &report.branch {
        fields.push(format!("branch {}", escape(branch)));
    }
    if let Some(worktree) = &report.worktree {
        fields.push(format!("worktree {}", escape(worktree)));
    }
    let token = paint.verdict(report.verdict);
    if fields.is_empty() {
        token
    } else {
        format!("{token}  {}", fields.join(" · "))
    }
}

/// Where the configuration came from (SPEC §5): `main:.closegate.toml (blob 1a2b3c4)`, or the
/// built-in defaults.
fn config_line(report: &Report) -> String {
    match (&report.config_origin, &report.config) {
        (Some(origin), Some(blob)) => format!("{} (blob {})", escape(origin), short(blob)),
        (Some(origin), None) => escape(origin),
        (None, _) => "built-in defaults".to_string(),
    }
}

/// The gates that ran, then any gate that reported without being listed (defensive).
fn gates(report: &Report) -> Vec<Gate> {
    let mut gates = report.gates.clone();
    for finding in &report.findings {
        if !gates.contains(&finding.gate) {
            gates.push(finding.gate);
        }
    }
    gates
}

/// `ok`, or the gate's findings counted by severity: `2 refusals, 1 warning`.
fn gate_tally(report: &Report, gate: Gate, paint: Paint) -> String {
    let counts: Vec<String> = SEVERITIES
        .iter()
        .filter_map(|&severity| {
            let n = report
                .findings
                .iter()
                .filter(|f| f.gate == gate && f.severity == severity)
                .count();
            let noun = if n == 1 {
                severity.as_str().to_string()
            } else {
                format!("{}s", severity.as_str())
            };
            (n > 0).then(|| paint.severity(severity, &format!("{n} {noun}")))
        })
        .collect();
    if counts.is_empty() {
        paint.ok("ok")
    } else {
        counts.join(", ")
    }
}

/// `severity code (gate) line N · path`, the message indented, then the catalog's fix as a hint.
fn write_finding(
    report: &Report,
    finding: &Finding,
    paint: Paint,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut head = format!(
        "{} {} ({})",
        paint.severity(finding.severity, finding.severity.as_str()),
        paint.bold(finding.code.as_str()),
        finding.gate.as_str()
    );
    if let Some(line) = finding.line {
        head.push_str(&format!(" line {line}"));
    }
    if let Some(path) = super::location(report, finding) {
        let sep = if finding.line.is_some() { " · " } else { " " };
        head.push_str(&format!("{sep}{}", escape(path)));
    }
    writeln!(out, "{head}")?;
    for line in finding.message.lines() {
        writeln!(out, "    {}", escape(line))?;
    }
    // A protected change that is a warning has been approved: asking for a review is stale.
    let approved = finding.code == Code::ProtectedSurface && finding.severity == Severity::Warning;
    if !approved {
        writeln!(
            out,
            "    {} {}",
            paint.dim("hint:"),
            finding.code.info().fix
        )?;
    }
    Ok(())
}

fn write_artifacts(report: &Report, paint: Paint, out: &mut dyn Write) -> std::io::Result<()> {
    if report.artifacts.is_empty() {
        return Ok(());
    }
    writeln!(out, "\nartifacts")?;
    for artifact in &report.artifacts {
        let mark = if artifact.present {
            paint.ok("present")
        } else {
            paint.severity(Severity::Refusal, "missing")
        };
        writeln!(out, "  {mark}  {}", escape(&artifact.path))?;
    }
    Ok(())
}

fn write_protected(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    if report.protected.is_empty() {
        return Ok(());
    }
    writeln!(out, "\nprotected")?;
    for change in &report.protected {
        let surface = escape(&change.surface);
        writeln!(
            out,
            "  {surface:<12} {:<12} {}",
            change.change,
            escape(&change.path)
        )?;
    }
    Ok(())
}

/// Name, outcome and duration of each check (and the record a reused result came from); a
/// failed check's kept output lines, indented.
fn write_checks(checks: &[CheckRun], paint: Paint, out: &mut dyn Write) -> std::io::Result<()> {
    if checks.is_empty() {
        return Ok(());
    }
    writeln!(out, "\nchecks")?;
    let width = checks
        .iter()
        .map(|c| escape(&c.name).chars().count())
        .max()
        .unwrap_or(0);
    for check in checks {
        let passed = check.exit_code == Some(0) && !check.timed_out;
        let outcome = match (check.timed_out, check.exit_code) {
            (true, _) => "timed out".to_string(),
            (false, Some(code)) => format!("exit {code}"),
            (false, None) => "killed".to_string(),
        };
        let outcome = if passed {
            paint.ok(&outcome)
        } else {
            paint.severity(Severity::Refusal, &outcome)
        };
        let name = escape(&check.name);
        // A reused result says so, with the record it came from (SPEC §19).
        let reused = match &check.reused {
            Some(ts) => format!("  (reused from {})", escape(ts)),
            None => String::new(),
        };
        writeln!(
            out,
            "  {name:<width$}  {outcome}  {}{reused}",
            date::duration(Duration::from_millis(check.duration_ms), Grain::Tenths)
        )?;
        if let Some(line) = census_line(check) {
            writeln!(out, "  {:width$}  {line}", "")?;
        }
        if !passed {
            for line in &check.output {
                writeln!(out, "      | {}", escape(line))?;
            }
        }
    }
    Ok(())
}

/// `census: pytest, 297 passed on the base, 296 on the commit, 1 missing` (SPEC §26.4), or why
/// there is none; nothing for a run no census was asked of.
fn census_line(check: &CheckRun) -> Option<String> {
    if let Some(c) = &check.census {
        let missing = match c.missing.len() {
            0 if c.commit < c.base => format!(", {} fewer", c.base - c.commit),
            0 => String::new(),
            n => format!(", {n} missing"),
        };
        return Some(format!(
            "census: {}, {} passed on the base, {} on the commit{missing}",
            escape(&c.runner),
            c.base,
            c.commit
        ));
    }
    check.census_note.map(|why| format!("census: none ({why})"))
}

/// One line per test integrity run (SPEC §23): the overlay, the reverse overlay and the merge
/// base's own tree, each with its checks' outcomes.
fn write_integrity(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let runs = &report.integrity.checks;
    if runs.is_empty() && report.integrity.edits.is_empty() {
        return Ok(());
    }
    writeln!(out, "\nintegrity")?;
    write_edits(report, out)?;
    let i = &report.integrity;
    let kinds = [
        ("overlay", "base_tests", i.base_tests),
        ("reverse-overlay", "new_tests_on_base", i.new_tests_on_base),
        ("base", "red_on_base", None),
    ];
    for (on, field, result) in kinds {
        let mine: Vec<&IntegrityRun> = runs.iter().filter(|r| r.on == on).collect();
        let Some(first) = mine.first() else {
            continue;
        };
        let outcomes: Vec<String> = mine.iter().map(|r| integrity_outcome(r)).collect();
        let red = mine
            .iter()
            .any(|r| r.run.exit_code != Some(0) || r.run.timed_out);
        let result = match on {
            "base" => Some(if red { "true" } else { "false" }),
            _ => result,
        };
        // A base run made only as the census's baseline (no check failed on the commit) says so.
        let red_asked = report.checks.iter().any(|c| c.red_on_base.is_some());
        let inconclusive = i
            .base_tests_inconclusive
            .as_deref()
            .filter(|_| on == "overlay");
        let summary = match (result, inconclusive) {
            _ if on == "base" && !red_asked => "census baseline".to_string(),
            (Some(word), _) => format!("{field}: {word}"),
            (None, Some(why)) => format!("{field}: inconclusive ({})", escape(why)),
            (None, None) => field.to_string(),
        };
        writeln!(
            out,
            "  {on:<16} {summary} (tree {}, {}): {}",
            short(&first.tree),
            integrity_what(on),
            outcomes.join("; ")
        )?;
    }
    Ok(())
}

/// One line per edited test (SPEC §27.1): its kind, file and name, and what the reader saw; then
/// the base tests the contract expected to change.
fn write_edits(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    for edit in &report.integrity.edits {
        let detail = match edit.detail.as_str() {
            "" => String::new(),
            d => format!(": {}", escape(d)),
        };
        writeln!(
            out,
            "  {:<16} {} {}{detail}",
            edit.kind,
            escape(&edit.path),
            escape(&edit.test)
        )?;
    }
    if !report.integrity.expect_changed.is_empty() {
        let ids: Vec<String> = report
            .integrity
            .expect_changed
            .iter()
            .map(|i| escape(i))
            .collect();
        writeln!(out, "  expect_changed   {}", ids.join(", "))?;
    }
    Ok(())
}

/// What an integrity run's tree is, in words.
fn integrity_what(on: &str) -> &'static str {
    match on {
        "overlay" => "the commit's code with the base's own tests",
        "reverse-overlay" => "the base's code with the branch's tests",
        _ => "the merge base's own tree",
    }
}

/// `name exit 1`, `name timed out, reused`.
fn integrity_outcome(r: &IntegrityRun) -> String {
    let c = &r.run;
    let ended = match (c.timed_out, c.exit_code) {
        (true, _) => "timed out".to_string(),
        (false, Some(code)) => format!("exit {code}"),
        (false, None) => "killed".to_string(),
    };
    let reused = if c.reused.is_some() { ", reused" } else { "" };
    format!("{} {ended}{reused}", escape(&c.name))
}

/// How the checks were confined, when they were configured (SPEC §4.6).
fn write_sandbox(sandbox: Option<&str>, out: &mut dyn Write) -> std::io::Result<()> {
    let line = match sandbox {
        None => return Ok(()),
        Some("bwrap") => "sandbox: bwrap",
        Some("off") => {
            "sandbox: off (`sandbox = \"off\"` in the configuration: checks ran unconfined)"
        }
        Some(_) => "sandbox: none (no sandbox could be set up)",
    };
    writeln!(out, "{line}")
}

/// The first seven characters of a commit id (escaped: the id may come from the agent).
fn short(commit: &str) -> String {
    escape(&commit.chars().take(7).collect::<String>())
}

/// Colour when asked for, plain text otherwise; the caller decides (terminal, `NO_COLOR`).
#[derive(Clone, Copy)]
struct Paint(bool);

impl Paint {
    fn apply(self, style: Style, text: &str) -> String {
        if self.0 {
            style.force_styling(true).apply_to(text).to_string()
        } else {
            text.to_string()
        }
    }

    fn verdict(self, verdict: Verdict) -> String {
        let style = match verdict {
            Verdict::Verified => Style::new().green(),
            Verdict::Fail => Style::new().red(),
            Verdict::PendingReview => Style::new().yellow(),
            Verdict::Unverified => Style::new().magenta(),
        };
        self.apply(style.bold(), verdict.as_str())
    }

    fn severity(self, severity: Severity, text: &str) -> String {
        let style = match severity {
            Severity::Refusal => Style::new().red().bold(),
            Severity::Review => Style::new().yellow(),
            Severity::Gap => Style::new().magenta(),
            Severity::Warning => Style::new().cyan(),
        };
        self.apply(style, text)
    }

    fn ok(self, text: &str) -> String {
        self.apply(Style::new().green(), text)
    }

    fn bold(self, text: &str) -> String {
        self.apply(Style::new().bold(), text)
    }

    fn dim(self, text: &str) -> String {
        self.apply(Style::new().dim(), text)
    }
}
