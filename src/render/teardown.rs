//! What `closegate teardown` prints (SPEC §7, §21): the refusal headline with the next step of
//! each cause, the gate's report, the plan or what was done step by step, and `--json`'s object.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;

use super::{Format, escape, render, write_json};
use crate::catalog::Code;
use crate::finding::Verdict;
use crate::teardown::{self, Done, Ending};

/// The `--json` object.
#[derive(Serialize)]
struct Shown<'a> {
    schema: u32,
    /// `removed`, `planned` (a dry run that would remove), `refused`, `stopped` (midway, exit 2)
    /// or `nothing` (nothing to tear down).
    outcome: &'static str,
    /// Whether the worktree was removed by this run.
    removed: bool,
    /// The gate's verdict on the work itself (the teardown's own refusals left out); null when
    /// no gate ran.
    verdict: Option<Verdict>,
    dry_run: bool,
    /// The codes the teardown was refused for (empty unless refused).
    refused: Vec<String>,
    /// The headline the human output ends with.
    summary: String,
    steps: Vec<ShownStep<'a>>,
    error: Option<&'a str>,
    report: Option<&'a crate::report::Report>,
}

#[derive(Serialize)]
struct ShownStep<'a> {
    verb: &'static str,
    what: &'a str,
}

/// The human lines; the exit code as the teardown decided it.
pub fn human(done: &Done, color: bool) -> Result<i32> {
    let mut out = crate::term::human();
    let refused = done.refused_codes();
    if done.exit == 1 {
        // SPEC §21: headed REFUSED with the reason's codes; the report shows the work's own
        // verdict, never a FAIL that only the teardown's refusals made.
        writeln!(out, "REFUSED  {}", refused.join(", "))?;
    }
    if let Some(report) = &done.report {
        let mut shown = report.clone();
        if done.exit == 1 {
            shown.verdict = teardown::work_verdict(report);
        }
        render(&shown, Format::Human, color, &mut out)?;
        writeln!(out)?;
    }
    writeln!(out, "{}", headline(done))?;
    for step in &done.steps {
        writeln!(out, "  {:<14}{}", step.verb, escape(&step.what))?;
    }
    if let Some(error) = &done.error {
        eprintln!("closegate: {error}");
    }
    Ok(done.exit)
}

/// `--json`: the outcome, the steps and the report (exit code as without it).
pub fn json(done: &Done) -> Result<i32> {
    let ending = done.ending();
    let shown = Shown {
        schema: crate::report::SCHEMA,
        outcome: ending.as_str(),
        removed: ending == Ending::Removed,
        verdict: done.report.as_ref().map(teardown::work_verdict),
        dry_run: done.dry_run,
        refused: if done.exit == 1 {
            done.refused_codes()
        } else {
            Vec::new()
        },
        summary: headline(done),
        steps: done
            .steps
            .iter()
            .map(|s| ShownStep {
                verb: s.verb.as_str(),
                what: &s.what,
            })
            .collect(),
        error: done.error.as_deref(),
        report: done.report.as_ref(),
    };
    let mut out = crate::term::stdout();
    write_json(&shown, &mut out)?;
    Ok(done.exit)
}

fn headline(done: &Done) -> String {
    if done.nothing() {
        return "nothing to tear down".into();
    }
    match (&done.barred, done.exit, done.dry_run) {
        (Some(why), _, _) => format!("teardown refused: {why}"),
        (None, 1, _) => refused(done),
        (None, 2, _) => "teardown stopped midway".into(),
        (None, _, true) => "teardown plan (dry run: nothing was changed or recorded)".into(),
        (None, _, false) => "teardown done".into(),
    }
}

/// The teardown's own refusals, by their real cause, each with the one step that moves it on.
fn refused(done: &Done) -> String {
    let causes: Vec<&str> = done.own_refusals().into_iter().map(next_step).collect();
    if causes.is_empty() {
        return "teardown refused".into();
    }
    format!("teardown refused: {}", causes.join("; "))
}

/// The code's next step in a few words, as the catalog words it (`CodeInfo::next`).
fn next_step(code: Code) -> &'static str {
    code.info().next.unwrap_or("see the findings above")
}
