//! `closegate approve`: approve a PENDING_REVIEW return, bound to the exact commit, the
//! configuration blob and the contract blob (SPEC §8).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use crate::finding::{Severity, Verdict};
use crate::inputs::{self, GateArgs};
use crate::render::{self, Format, escape};
use crate::repo::CommitLookup;
use crate::report::{Approval, Report};
use crate::{gates, ledger, record};

/// Record a human's approval of a PENDING_REVIEW return, bound to the exact commit
///
/// The approval also binds the base's configuration and the task contract, if any. Runs the
/// gate, refuses on FAIL, when --commit is not that commit, or under --config / another --base;
/// then `check` reports the protected changes as warnings until a new commit, configuration or
/// contract voids it (exit 0 recorded, 1 refused, 2 error)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent's worktree (default: the current directory)
    pub worktree: Option<PathBuf>,
    /// The commit being approved; must be the one the gate checks (full or abbreviated id)
    #[arg(long, value_name = "SHA")]
    pub commit: Option<String>,
    /// Who approves (recorded)
    #[arg(long, value_name = "NAME")]
    pub by: String,
    /// Why (recorded)
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
    #[command(flatten)]
    pub gate: GateArgs,
}

pub fn run(args: Args) -> Result<i32> {
    let by = args.by.trim();
    if by.is_empty() {
        anyhow::bail!("--by needs a name");
    }
    let inputs = inputs::resolve(args.worktree.as_deref(), &args.gate)?;
    let outcome = gates::evaluate(&inputs)?;
    let mut report = outcome.report;
    let common = inputs.repo.common_dir();
    let refusal = refusal(
        &inputs.repo,
        &report,
        outcome.commit,
        args.commit.as_deref(),
    );
    if refusal.is_none() {
        approve(&mut report, by);
    }
    let note = args.note.as_deref();
    ledger::record_approve(&common, &report, by, note, refusal.as_deref())?;
    let mut out = crate::term::human();
    render::render(&report, Format::Human, false, &mut out)?;
    writeln!(out)?;
    match refusal {
        Some(why) => {
            writeln!(out, "approval refused: {}", escape(&why))?;
            Ok(1)
        }
        None => {
            let commit = report.commit.as_deref().unwrap_or_default();
            writeln!(out, "approved {commit} by {}", escape(by))?;
            Ok(0)
        }
    }
}

/// Why this approval cannot be recorded, if it cannot.
fn refusal(
    repo: &crate::repo::Repo,
    report: &Report,
    verified: Option<git2::Oid>,
    asked: Option<&str>,
) -> Option<String> {
    if report.verdict == Verdict::Fail {
        return Some("the verdict is FAIL: a refused return cannot be approved".into());
    }
    if report.provenance.is_some_and(|p| !p.trusted()) {
        return Some(
            "an approval counts only under the base tip's configuration and the configured base: \
             run approve without --config and without a --base naming another branch"
                .into(),
        );
    }
    let Some(verified) = verified else {
        return Some("the gate found no commit to bind the approval to".into());
    };
    let asked = asked?;
    match repo.lookup_commit(asked) {
        CommitLookup::Found(id) if id == verified => None,
        CommitLookup::Found(id) => Some(format!(
            "--commit {id} is not the checked commit {verified}: an approval is bound to the exact commit"
        )),
        _ => Some(format!("--commit {asked} does not name exactly one commit")),
    }
}

/// Apply the approval to the report as `gates::apply_approval` will on every later check.
fn approve(report: &mut Report, by: &str) {
    for finding in &mut report.findings {
        if finding.severity == Severity::Review {
            finding.severity = Severity::Warning;
        }
    }
    report.approval = Some(Approval {
        by: by.to_string(),
        at: record::now_rfc3339(),
        commit: report.commit.clone().unwrap_or_default(),
    });
    report.finish();
}
