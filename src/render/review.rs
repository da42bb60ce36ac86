//! What `approve` and `reject` print (SPEC §8, §21, §26.5): the report and the protected changes
//! a reviewer approves (`git diff --stat` style), the outcome, and their `--json` objects.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::{Format, escape, render, shell_word};
use crate::catalog::Code;
use crate::finding::Verdict;
use crate::repo::Repo;
use crate::report::Report;

/// The `--json` object of `approve`.
#[derive(Serialize)]
pub struct Approved<'a> {
    pub schema: u32,
    /// Whether an approval was recorded (false on a refusal, a decline and under --dry-run).
    pub approved: bool,
    pub dry_run: bool,
    /// The verdict the next `check` gives (with the approval recorded, as the gate applies it);
    /// null when approve refused before the gate ran.
    pub verdict: Option<Verdict>,
    pub commit: Option<&'a str>,
    pub by: &'a str,
    pub note: Option<&'a str>,
    /// Why the approval cannot be recorded; null when it can.
    pub refused: Option<&'a str>,
    /// The report the next `check` gives; null when approve refused before the gate ran.
    pub report: Option<&'a Report>,
}

/// The `--json` object of `reject`.
#[derive(Serialize)]
pub struct Rejected<'a> {
    pub schema: u32,
    pub rejected: bool,
    pub commit: Option<&'a str>,
    pub branch: Option<&'a str>,
    pub slug: Option<&'a str>,
    pub by: &'a str,
    pub note: &'a str,
    /// Why nothing was recorded; null when the rejection was recorded.
    pub refused: Option<&'a str>,
}

/// `approval refused: WHY` (refused before anything was shown).
pub fn approval_refused(why: &str, out: &mut dyn Write) -> Result<()> {
    writeln!(out, "approval refused: {}", escape(why))?;
    Ok(())
}

/// `--dry-run`'s last line: what would have happened.
pub fn dry_run(refusal: Option<&str>, out: &mut dyn Write) -> Result<()> {
    writeln!(out)?;
    match refusal {
        Some(why) => writeln!(out, "approval would be refused: {}", escape(why))?,
        None => writeln!(out, "dry run: nothing was approved or recorded")?,
    }
    Ok(())
}

/// The commit approved, with the merge base its protected changes are shown from.
pub struct Approving<'a> {
    pub repo: &'a Repo,
    pub commit: git2::Oid,
    pub merge_base: Option<git2::Oid>,
}

/// Everything a reviewer needs, printed before the approval is recorded: the report (its
/// approval block left out: it is announced once, after it is recorded), then, for an approved
/// commit, the protected changes being approved and the command that shows them in full.
pub fn show(
    report: &Report,
    approving: Option<Approving<'_>>,
    color: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let shown = Report {
        approval: None,
        ..report.clone()
    };
    render(&shown, Format::Human, color, out)?;
    if let Some(a) = approving {
        write_changes(a.repo, report, a.merge_base, a.commit, out)?;
    }
    out.flush()?;
    Ok(())
}

/// The approval (or its refusal) as recorded and the verdict the next `check` gives (SPEC
/// §26.5), and the exit code: 0 approved, 1 refused.
pub fn announce(
    next: &Report,
    by: &str,
    refusal: Option<&str>,
    signed: bool,
    out: &mut dyn Write,
) -> Result<i32> {
    writeln!(out)?;
    if let Some(why) = refusal {
        approval_refused(why, out)?;
        return Ok(1);
    }
    let commit = next.commit.as_deref().unwrap_or_default();
    let at = crate::record::now_rfc3339();
    writeln!(out, "approved {commit} by {} at {at}", escape(by))?;
    if signed {
        let notes = crate::attest::NOTES_REF;
        writeln!(
            out,
            "signed under {notes} (push it: git push <remote> {notes})"
        )?;
    }
    let verdict = next.verdict.as_str();
    match next
        .findings
        .iter()
        .find(|f| f.code == Code::ApprovalUnsigned)
    {
        Some(unsigned) => writeln!(
            out,
            "the approval is recorded but does not count: the next `closegate check` gives \
             {verdict}: {}",
            escape(&unsigned.message)
        )?,
        None => writeln!(out, "the next `closegate check` gives {verdict}")?,
    }
    Ok(0)
}

/// `reject`'s human lines.
pub fn rejected(shown: &Rejected<'_>, out: &mut dyn Write) -> Result<()> {
    if let Some(why) = shown.refused {
        writeln!(out, "REFUSED rejection not recorded: {why}")?;
        return Ok(());
    }
    let commit = shown.commit.unwrap_or_default();
    let branch = shown.branch.map(|b| format!(" on {}", escape(b)));
    writeln!(
        out,
        "REJECTED {commit}{} by {}",
        branch.unwrap_or_default(),
        escape(shown.by)
    )?;
    writeln!(out, "note: {}", escape(shown.note))?;
    writeln!(
        out,
        "until this commit is approved, check gives review-rejected (FAIL), the hook refuses to \
         merge it and the stop hook shows the agent the note; a new commit is judged afresh"
    )?;
    Ok(())
}

/// The protected changes being approved, `git diff --stat` style, and the exact `git diff`
/// command that shows them in full. Display only: the gate has already judged these paths.
fn write_changes(
    repo: &Repo,
    report: &Report,
    merge_base: Option<git2::Oid>,
    commit: git2::Oid,
    out: &mut dyn Write,
) -> Result<()> {
    let mut paths: Vec<&str> = report.protected.iter().map(|p| p.path.as_str()).collect();
    paths.dedup();
    if paths.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "protected changes approved:")?;
    let Some(merge_base) = merge_base else {
        for change in &report.protected {
            writeln!(out, " {} ({})", escape(&change.path), change.change)?;
        }
        writeln!(
            out,
            "no merge base with the base branch: the changes cannot be shown as a diff"
        )?;
        return Ok(());
    };
    let stats = repo
        .diff_stat(merge_base, commit, &paths)
        .unwrap_or_default();
    let stats: Vec<_> = (stats.into_iter())
        .map(|(path, plus, minus, binary)| (escape(&path), plus, minus, binary))
        .collect();
    let (added, deleted) = write_stat_lines(&stats, out)?;
    let summary = stat_summary(stats.len(), added, deleted);
    writeln!(out, "{summary}")?;
    let quoted: Vec<String> = paths.iter().map(|p| shell_word(p)).collect();
    writeln!(
        out,
        "see them in full: git diff {merge_base} {commit} -- {}",
        escape(&quoted.join(" "))
    )?;
    Ok(())
}

/// One `git diff --stat` line per path, the bars scaled to 40 columns; the total insertions and
/// deletions.
fn write_stat_lines(
    stats: &[(String, usize, usize, bool)],
    out: &mut dyn Write,
) -> Result<(usize, usize)> {
    let width = stats.iter().map(|s| s.0.chars().count()).max().unwrap_or(0);
    let most = stats.iter().map(|s| s.1 + s.2).max().unwrap_or(0);
    let digits = most.max(1).to_string().len();
    let (mut added, mut deleted) = (0, 0);
    for (path, plus, minus, binary) in stats {
        added += plus;
        deleted += minus;
        let pad = width - path.chars().count();
        if *binary {
            writeln!(out, " {path}{} | Bin", " ".repeat(pad))?;
            continue;
        }
        // Scale the bar to at most 40 columns, keeping at least one mark for any change.
        let scale = |n: usize| {
            if most <= 40 || n == 0 {
                n
            } else {
                (n * 40 / most).max(1)
            }
        };
        writeln!(
            out,
            " {path}{} | {:>digits$} {}{}",
            " ".repeat(pad),
            plus + minus,
            "+".repeat(scale(*plus)),
            "-".repeat(scale(*minus))
        )?;
    }
    Ok((added, deleted))
}

/// `git diff --stat`'s last line, as git words it: a zero count is left out unless both are zero.
fn stat_summary(n: usize, added: usize, deleted: usize) -> String {
    let plural = |k: usize| if k == 1 { "" } else { "s" };
    let mut summary = format!(" {n} file{} changed", plural(n));
    if added > 0 || deleted == 0 {
        summary.push_str(&format!(", {added} insertion{}(+)", plural(added)));
    }
    if deleted > 0 || added == 0 {
        summary.push_str(&format!(", {deleted} deletion{}(-)", plural(deleted)));
    }
    summary
}
