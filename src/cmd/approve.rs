//! `closegate approve`: approve a PENDING_REVIEW return, bound to the exact commit, the
//! configuration blob and the contract blob (SPEC §8).
//!
//! The rules (who reviews, the refusals, the report the next check gives) are `review`; what
//! is printed is `render::review`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use crate::cmd::gate::GateArgs;
use crate::gates::Session;
use crate::inputs::{self, GateOptions, Signing, Signs};
use crate::ledger;
use crate::render::review::{self as shown, Approved, Approving};
use crate::review::approve::{Judged, approval, sign};
use crate::review::{self, on_terminal};

/// Record a human's approval of a PENDING_REVIEW return, bound to the exact commit
///
/// The approval also binds the base's configuration and the task contract, if any. Runs the
/// gate, refuses on FAIL, when --commit is not that commit, or under --config / another --base;
/// prints the protected changes it approves with the `git diff` command that shows them, and on
/// a terminal asks `approve? [y/N]`; then `check` reports the protected changes as warnings until
/// a new commit, configuration or contract voids it. Off a terminal it acts only with --yes: a
/// human runs it. It prints the verdict the next `check` gives (exit 0 recorded, 1 refused or
/// declined, 2 error)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent's worktree (default: the current directory)
    pub worktree: Option<PathBuf>,
    /// The commit being approved; must be the one the gate checks (full or abbreviated id)
    #[arg(long, value_name = "SHA")]
    pub commit: Option<String>,
    /// Who approves (recorded; default: git's `user.name`, else GIT_COMMITTER_NAME or
    /// GIT_AUTHOR_NAME)
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
    /// Why (recorded)
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
    /// Sign the approval with an SSH key and store it as a note under refs/notes/closegate
    #[arg(long)]
    pub sign: bool,
    /// The SSH key that signs (default: git's user.signingKey when gpg.format = ssh)
    #[arg(long, value_name = "FILE", requires = "sign")]
    pub key: Option<PathBuf>,
    /// Do not ask `approve? [y/N]` on a terminal: approve what is shown. Off a terminal approve
    /// acts only with it
    #[arg(long, short = 'y', conflicts_with = "dry_run")]
    pub yes: bool,
    /// Show what would be approved and record nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Print one JSON object instead of the human report (never asks: pass --yes or --dry-run
    /// on a terminal)
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub gate: GateArgs,
}

pub fn run(args: Args, color: bool) -> Result<i32> {
    let (repo, root) = inputs::open(args.worktree.as_deref())?;
    let by = review::reviewer(args.by.as_deref(), &repo, "approve")?;
    // The key is found before anything is judged or recorded (no key is an error, exit 2), and
    // the session hides it from the checks, which run the agent's code.
    let signing = args.sign.then(|| Signing {
        key: args.key.clone(),
        signs: Signs::Approval,
    });
    let opts = GateOptions {
        signing,
        ..args.gate.options()
    };
    let session = Session::in_repo(repo, root, &opts)?;
    // Before the gate runs anything: off a terminal, only with --yes (SPEC §26.5).
    if let Some(why) = review::off_terminal("approve", args.yes || args.dry_run) {
        return refused_off_terminal(&args, &by, &why);
    }
    let judged = Judged::judge(session, args.commit.as_deref())?;
    if args.json {
        return json(&args, &judged, &by);
    }
    human(&args, &judged, &by, color)
}

/// The human run: the report and the changes approved, the question on a terminal, then the
/// approval recorded and the verdict the next check gives.
fn human(args: &Args, judged: &Judged, by: &str, color: bool) -> Result<i32> {
    let (session, refusal) = (&judged.session, judged.refusal.as_deref());
    let mut out = crate::term::human();
    let approving = judged.approved.map(|commit| Approving {
        repo: session.repo(),
        commit,
        merge_base: judged.merge_base(),
    });
    shown::show(&judged.report, approving, color, &mut out)?;
    if args.dry_run {
        shown::dry_run(refusal, &mut out)?;
        return Ok(if refusal.is_some() { 1 } else { 0 });
    }
    if refusal.is_none() && !args.yes && on_terminal() && !confirmed(&mut out)? {
        writeln!(out, "not approved: nothing was recorded")?;
        return Ok(1);
    }
    let note = args.note.as_deref();
    let key = session.signing_key();
    let given = approval(&judged.report, by);
    if let (Some(key), Some(commit)) = (key, judged.approved) {
        sign(session, key, commit, (&judged.report, &given), note)?;
    }
    // What is recorded, and printed, is the verdict the next check gives (SPEC §26.5).
    let next = judged.next(given)?;
    let common = session.repo().common_dir();
    ledger::record_approve(&common, &next, by, note, refusal)?;
    shown::announce(&next, by, refusal, key.is_some(), &mut out)
}

/// Off a terminal without `--yes`: refused before the gate runs, nothing recorded (exit 1).
fn refused_off_terminal(args: &Args, by: &str, why: &str) -> Result<i32> {
    if args.json {
        let shown = Approved {
            schema: crate::report::SCHEMA,
            approved: false,
            dry_run: false,
            verdict: None,
            commit: None,
            by,
            note: args.note.as_deref(),
            refused: Some(why),
            report: None,
        };
        crate::render::write_json(&shown, &mut crate::term::stdout())?;
    } else {
        shown::approval_refused(why, &mut crate::term::human())?;
    }
    Ok(1)
}

/// `--json`: the object, and the approval recorded unless refused or `--dry-run` (a terminal is
/// never asked: `--yes` says yes; on a terminal without it, --json is an error).
fn json(args: &Args, judged: &Judged, by: &str) -> Result<i32> {
    let refusal = judged.refusal.as_deref();
    if args.sign {
        anyhow::bail!("--json does not sign: run approve --sign without --json");
    }
    if refusal.is_none() && !args.yes && !args.dry_run && on_terminal() {
        anyhow::bail!("approve --json on a terminal needs --yes (or --dry-run): it cannot ask");
    }
    let record = !args.dry_run;
    // The verdict shown is the one the next check gives: with the approval when it is recorded,
    // as it stands when nothing is (a refusal, a dry run).
    let next = if record {
        judged.next(approval(&judged.report, by))?
    } else {
        judged.report.clone()
    };
    if record {
        let common = judged.session.repo().common_dir();
        ledger::record_approve(&common, &next, by, args.note.as_deref(), refusal)?;
    }
    let shown = Approved {
        schema: crate::report::SCHEMA,
        approved: record && refusal.is_none(),
        dry_run: args.dry_run,
        verdict: Some(next.verdict),
        commit: next.commit.as_deref(),
        by,
        note: args.note.as_deref(),
        refused: refusal,
        report: Some(&next),
    };
    crate::render::write_json(&shown, &mut crate::term::stdout())?;
    Ok(if refusal.is_some() { 1 } else { 0 })
}

/// Ask `approve? [y/N]` and read one line: `y` or `yes` (any case) approves; anything else,
/// an empty line or the end of input declines.
fn confirmed(out: &mut dyn Write) -> Result<bool> {
    writeln!(out)?;
    write!(out, "approve? [y/N] ")?;
    out.flush()?;
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    let answer = answer.trim().to_ascii_lowercase();
    Ok(answer == "y" || answer == "yes")
}
