//! `closegate reject`: a reviewer's rejection of a return, bound to the exact commit (SPEC §21).
//!
//! The rejection is a `reject` record. While it is the newest of that commit's approvals and
//! rejections, every gate run on the commit gives `review-rejected` (a refusal naming the note
//! and who): `check` says FAIL, the board shows REJECTED, the hook refuses the merge and the stop
//! hook feeds the note back to the agent. A new commit is judged afresh.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;

use crate::cmd::gate::GateArgs;
use crate::gates::Session;
use crate::inputs::{self, GateOptions};
use crate::render::escape;
use crate::{gates, ledger};

/// Record a human's rejection of an agent's return, bound to the exact commit
///
/// The commit is the one the gate checks (the close line's, else HEAD). Until the reviewer
/// approves that commit, every check of it gives `review-rejected` (FAIL), the board shows
/// REJECTED, the hook refuses to merge it and the stop hook gives the note to the agent. A new
/// commit is judged afresh. Off a terminal it acts only with --yes: a human runs it (exit 0
/// recorded, 1 refused, 2 error)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent's worktree (default: the current directory)
    pub worktree: Option<PathBuf>,
    /// Who rejects (recorded; default: git's `user.name`, else GIT_COMMITTER_NAME or
    /// GIT_AUTHOR_NAME)
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
    /// What is wrong and what to do instead (recorded; the agent is shown it)
    #[arg(long, value_name = "TEXT", required = true)]
    pub note: String,
    /// Off a terminal, reject only with this (a human who reviewed the work says so)
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Print one JSON object instead of the human lines
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub gate: GateArgs,
}

/// The `--json` object.
#[derive(Serialize)]
struct Rejected<'a> {
    schema: u32,
    rejected: bool,
    commit: Option<&'a str>,
    branch: Option<&'a str>,
    slug: Option<&'a str>,
    by: &'a str,
    note: &'a str,
    /// Why nothing was recorded; null when the rejection was recorded.
    refused: Option<&'a str>,
}

pub fn run(args: Args) -> Result<i32> {
    let (repo, root) = inputs::open(args.worktree.as_deref())?;
    let by = super::approve::reviewer(args.by.as_deref(), &repo, "reject")?;
    let note = args.note.trim();
    if note.is_empty() {
        anyhow::bail!("--note needs the reason for the rejection: the agent is shown it");
    }
    if let Some(why) = super::approve::off_terminal("reject", args.yes) {
        let shown = Rejected {
            schema: crate::report::SCHEMA,
            rejected: false,
            commit: None,
            branch: None,
            slug: None,
            by: &by,
            note,
            refused: Some(&why),
        };
        return show(&shown, args.json);
    }
    // The rejection binds the commit the gate would check; the agent's code need not run for it.
    let opts = GateOptions {
        no_checks: true,
        ..args.gate.options()
    };
    let session = Session::in_repo(repo, root, &opts)?;
    let outcome = gates::evaluate(&session)?;
    let mut report = outcome.report;
    let refused = outcome.commit.is_none().then_some(
        "the gate found no commit to bind the rejection to: `closegate check` says why (no \
             commit yet, or a close line naming none); reject once it names one",
    );
    if let Some(commit) = outcome.commit {
        record(&session, &mut report, commit, &by, note)?;
    }
    let shown = Rejected {
        schema: crate::report::SCHEMA,
        rejected: refused.is_none(),
        commit: report.commit.as_deref(),
        branch: report.branch.as_deref(),
        slug: report.slug.as_deref(),
        by: &by,
        note,
        refused,
    };
    show(&shown, args.json)
}

/// The rejection by `by` applied to `report` and recorded against `commit` (and its tree).
fn record(
    session: &Session,
    report: &mut crate::report::Report,
    commit: git2::Oid,
    by: &str,
    note: &str,
) -> Result<()> {
    let rejection = ledger::Rejection {
        by: by.to_string(),
        note: note.to_string(),
        at: crate::record::now_rfc3339(),
    };
    report.approval = None;
    let code = crate::catalog::Code::ReviewRejected;
    report.findings.retain(|f| f.code != code);
    report.add_gate(
        crate::finding::Gate::Protected,
        [gates::rejected(&rejection)],
    );
    report.finish();
    let tree = session.repo().tree_of(commit).map(|t| t.to_string());
    ledger::record_reject(&session.repo().common_dir(), report, by, note, tree)
}

/// Print the outcome; exit 0 recorded, 1 refused.
fn show(shown: &Rejected<'_>, json: bool) -> Result<i32> {
    if json {
        let mut out = crate::term::stdout();
        crate::render::write_json(shown, &mut out)?;
    } else {
        let mut out = crate::term::human();
        human(shown, &mut out)?;
    }
    Ok(if shown.refused.is_some() { 1 } else { 0 })
}

fn human(shown: &Rejected<'_>, out: &mut dyn Write) -> Result<()> {
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
