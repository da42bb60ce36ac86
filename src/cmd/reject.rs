//! `closegate reject`: a reviewer's rejection of a return, bound to the exact commit (SPEC §21).
//!
//! The rejection is a `reject` record. While it is the newest of that commit's approvals and
//! rejections, every gate run on the commit gives `review-rejected` (a refusal naming the note
//! and who): `check` says FAIL, the board shows REJECTED, the hook refuses the merge and the stop
//! hook feeds the note back to the agent. A new commit is judged afresh. The rule is
//! `review::reject`; the words `render::review`.

use std::path::PathBuf;

use anyhow::Result;

use crate::cmd::gate::GateArgs;
use crate::gates::{self, Session};
use crate::inputs::{self, GateOptions};
use crate::render::review::Rejected;
use crate::review;

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

pub fn run(args: Args) -> Result<i32> {
    let (repo, root) = inputs::open(args.worktree.as_deref())?;
    let by = review::reviewer(args.by.as_deref(), &repo, "reject")?;
    let note = args.note.trim();
    if note.is_empty() {
        anyhow::bail!("--note needs the reason for the rejection: the agent is shown it");
    }
    if let Some(why) = review::off_terminal("reject", args.yes) {
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
    let refused = outcome
        .commit
        .is_none()
        .then_some(review::reject::NO_COMMIT);
    if let Some(commit) = outcome.commit {
        review::reject::record(&session, &mut report, commit, &by, note)?;
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

/// Print the outcome; exit 0 recorded, 1 refused.
fn show(shown: &Rejected<'_>, json: bool) -> Result<i32> {
    if json {
        crate::render::write_json(shown, &mut crate::term::stdout())?;
    } else {
        crate::render::review::rejected(shown, &mut crate::term::human())?;
    }
    Ok(if shown.refused.is_some() { 1 } else { 0 })
}
