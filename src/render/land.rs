//! `land`'s two formats (SPEC §22): a line per branch and one for the base for people, one JSON
//! object for scripts. The JSON object is a type ([`LandJson`]) that reads back as it was
//! written, under the one `report::SCHEMA`.

use std::io::Write;

use serde::{Deserialize, Serialize};

use super::escape;
use crate::land::{BranchResult, Cleanup, Landing, Outcome};
use crate::report::CheckRun;
use crate::teardown::busy::Proc;

/// `land --json`: every branch's outcome and the base's move.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LandJson {
    pub schema: u32,
    pub dry_run: bool,
    /// `merge`, `squash`, `rebase` or `ff`.
    pub strategy: String,
    pub base: BaseMove,
    /// Check runs that actually ran (not reused).
    pub checks_run: usize,
    pub branches: Vec<BranchJson>,
}

/// The base's move: its name and its tip before and after (equal when nothing moved).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseMove {
    pub name: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// One branch's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BranchJson {
    pub branch: String,
    pub slug: String,
    pub tip: String,
    /// `landed`, `refused` or `skipped`.
    pub outcome: String,
    pub codes: Vec<String>,
    pub findings: Vec<FindingBrief>,
    pub composed: Option<String>,
    pub checks: Vec<CheckRun>,
    pub teardown: Vec<String>,
    pub teardown_codes: Vec<String>,
    /// The processes that kept the worktree (`teardown-busy`).
    #[serde(default)]
    pub teardown_holders: Vec<HolderJson>,
    /// The one command that finishes the teardown once they are gone.
    #[serde(default)]
    pub teardown_finish: Option<String>,
}

/// A process that kept a landed branch's worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HolderJson {
    pub pid: u32,
    pub command: String,
    /// How it is inside: `current directory`, `root`, `open file <path>`, `mapped file <path>`.
    pub why: String,
    /// It started this closegate (the shell `land` was run from).
    pub starter: bool,
}

/// A finding as `land --json` names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindingBrief {
    pub code: String,
    pub message: String,
}

impl LandJson {
    pub fn of(l: &Landing) -> LandJson {
        let branches = l
            .branches
            .iter()
            .map(|b| BranchJson {
                branch: b.branch.clone(),
                slug: b.slug.clone(),
                tip: b.tip.to_string(),
                outcome: outcome_word(b.outcome).to_string(),
                codes: b.findings.iter().map(|f| f.code.as_str().into()).collect(),
                findings: (b.findings.iter())
                    .map(|f| FindingBrief {
                        code: f.code.as_str().into(),
                        message: f.message.clone(),
                    })
                    .collect(),
                composed: b.composed.map(|c| c.to_string()),
                checks: b.checks.clone(),
                teardown: teardown_lines(b),
                teardown_codes: teardown_codes(b),
                teardown_holders: (holders(b).iter())
                    .map(|p| HolderJson {
                        pid: p.pid,
                        command: p.command.clone(),
                        why: p.why.clone(),
                        starter: p.starter,
                    })
                    .collect(),
                teardown_finish: finish(b).map(str::to_string),
            })
            .collect();
        LandJson {
            schema: crate::report::SCHEMA,
            dry_run: l.dry_run,
            strategy: l.strategy.as_str().to_string(),
            base: BaseMove {
                name: l.base.clone(),
                before: l.before.map(|c| c.to_string()),
                after: l.after.map(|c| c.to_string()),
            },
            checks_run: l.checks_run,
            branches,
        }
    }
}

/// What followed a landed branch's move, a line each: the base's worktree left behind, then
/// the teardown's steps (or why it could not run), or what became of a branch with no worktree.
fn teardown_lines(b: &BranchResult) -> Vec<String> {
    let mut lines: Vec<String> = b.after.base_stuck.iter().cloned().collect();
    match &b.after.cleanup {
        Some(Cleanup::TornDown { steps, .. }) => {
            lines.extend(steps.iter().map(|s| format!("{} {}", s.verb, s.what)));
        }
        Some(Cleanup::Failed(error)) => lines.push(format!("teardown error: {error}")),
        Some(Cleanup::BranchDeleted) => {
            lines.push(format!("deleted branch {} (at {})", b.branch, b.tip));
        }
        Some(Cleanup::BranchMoved(now)) => {
            let now = now.map_or("nothing".to_string(), |n| n.to_string());
            let branch = &b.branch;
            lines.push(format!(
                "kept branch {branch}: it moved to {now} after it was landed"
            ));
        }
        None => {}
    }
    lines
}

/// The codes the teardown of a landed branch's worktree did not remove it for.
fn teardown_codes(b: &BranchResult) -> Vec<String> {
    match &b.after.cleanup {
        Some(Cleanup::TornDown { refused, .. }) => {
            refused.iter().map(|c| c.as_str().to_string()).collect()
        }
        _ => Vec::new(),
    }
}

/// The processes that kept a landed branch's worktree.
fn holders(b: &BranchResult) -> &[Proc] {
    match &b.after.cleanup {
        Some(Cleanup::TornDown { holders, .. }) => holders,
        _ => &[],
    }
}

/// The command that finishes a teardown processes kept from removing the worktree.
fn finish(b: &BranchResult) -> Option<&str> {
    match &b.after.cleanup {
        Some(Cleanup::TornDown { finish, .. }) => finish.as_deref(),
        _ => None,
    }
}

/// When and where to run the finishing command: a starter (the shell `land` was run from)
/// leaves the worktree by the command's own `cd`; any other process must end first.
fn finish_when(holders: &[Proc]) -> &'static str {
    let starters = holders.iter().filter(|p| p.starter).count();
    match (starters, holders.len() - starters) {
        (0, 1) => "once that process has ended, finish the teardown",
        (0, _) => "once those processes have ended, finish the teardown",
        (_, 0) => "finish the teardown from that shell (its `cd` leaves the worktree)",
        _ => {
            "once the other processes have ended, finish the teardown from that shell (its `cd` \
               leaves the worktree)"
        }
    }
}

/// The teardown's refusal, the processes that kept the worktree and the command that finishes.
fn teardown_refusal(b: &BranchResult, out: &mut dyn Write) -> std::io::Result<()> {
    let codes = teardown_codes(b);
    let holders = holders(b);
    if !codes.is_empty() {
        let left = if holders.is_empty() {
            "the worktree is left for `closegate sweep`"
        } else {
            "the worktree is kept"
        };
        writeln!(out, "  teardown refused ({}): {left}", codes.join(", "))?;
    }
    for p in holders {
        writeln!(out, "  teardown-busy: {}", escape(&p.holds()))?;
    }
    if let Some(command) = finish(b) {
        writeln!(out, "  {}: {}", finish_when(holders), escape(command))?;
    }
    Ok(())
}

fn outcome_word(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Landed => "landed",
        Outcome::Refused => "refused",
        Outcome::Skipped => "skipped",
    }
}

/// The JSON object, pretty-printed with its keys in order (as every version wrote it).
pub fn json(l: &Landing, out: &mut dyn Write) -> anyhow::Result<()> {
    let value = serde_json::to_value(LandJson::of(l))?;
    writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
    Ok(())
}

/// A line per branch (what became of it, its findings, its teardown), then the base's move.
pub fn human(l: &Landing, out: &mut dyn Write) -> std::io::Result<()> {
    for b in &l.branches {
        let word = match (b.outcome, l.dry_run) {
            (Outcome::Landed, true) => "would land",
            (Outcome::Landed, false) => "landed",
            (Outcome::Refused, _) => "refused",
            (Outcome::Skipped, _) => "skipped",
        };
        let composed = b.composed.map_or(String::new(), |c| format!(" as {c}"));
        writeln!(
            out,
            "{word} {} ({}){composed}",
            escape(&b.branch),
            escape(&b.slug)
        )?;
        for f in &b.findings {
            writeln!(out, "  {}: {}", f.code, escape(&f.message))?;
        }
        for step in teardown_lines(b) {
            writeln!(out, "  teardown: {}", escape(&step))?;
        }
        teardown_refusal(b, out)?;
    }
    let show = |c: Option<git2::Oid>| c.map_or("none".to_string(), |c| c.to_string());
    let moved = if l.before == l.after {
        "unchanged"
    } else {
        "moved"
    };
    let dry = if l.dry_run {
        " (dry run: nothing was moved, recorded or removed)"
    } else {
        ""
    };
    writeln!(
        out,
        "base {} {moved}: {} -> {} ({} check run(s)){dry}",
        escape(&l.base),
        show(l.before),
        show(l.after),
        l.checks_run
    )
}
