//! The stop hook's answer to one input (SPEC §18): judge it (`stop`), keep the loop guard's count
//! of consecutive blocks (`blocks`), record a give-up, a malformed input or an acceptance on a
//! reused verdict, and say whether to block; `render::agent` writes what the harness reads.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::blocks::{self, Counter};
use super::stop::{self, How, Judged};
use super::{StopInput, Target};
use crate::ledger::{self, SignalFields};
use crate::repo::Repo;

/// Most input a hook reads (SPEC §11's bound on input files).
pub const MAX_INPUT: u64 = 16 << 20;

/// What the stop hook answers: block with a reason, or let the stop through; and what it says
/// on stderr about letting it through.
pub struct Answer {
    /// The reason fed back to the agent; `None` lets the stop through.
    pub block: Option<String>,
    pub note: Option<Note>,
}

/// Why a stop was let through without being judged to hold.
pub enum Note {
    /// The input could not be judged (its words: agent text).
    Malformed(String),
    /// The loop guard let a refused stop through; `unkept` says why the block counter could not
    /// be kept.
    GaveUp {
        max_blocks: u32,
        unkept: Option<String>,
        root: PathBuf,
    },
}

/// The answer to the hook input `bytes` (at most [`MAX_INPUT`] + 1 bytes; `read` is how reading
/// them ended): never an error, the stop hook never fails the harness.
pub fn answer(
    bytes: &[u8],
    read: std::io::Result<usize>,
    max_blocks: u32,
    how: &How<'_>,
) -> Answer {
    let input = match read {
        Err(e) => Err(format!("cannot read the hook input: {e}")),
        Ok(_) if bytes.len() as u64 > MAX_INPUT => {
            Err("the hook input is larger than 16 MiB".to_string())
        }
        Ok(_) => super::parse_input(bytes),
    };
    let outcome = input.and_then(|input| stop::judge(&input, how).map(|j| (input, j)));
    match outcome {
        Err(why) => {
            let cwd = (super::parse_input(bytes).ok())
                .map(|i: StopInput| i.cwd)
                .or_else(|| std::env::current_dir().ok());
            record_malformed(cwd.as_deref(), how.target, &why);
            Answer {
                block: None,
                note: Some(Note::Malformed(why)),
            }
        }
        Ok((input, judged)) => decide(&judged, max_blocks, input.stop_hook_active, how),
    }
}

/// Block (the reason) or let the stop through, counting consecutive blocks and recording a
/// give-up or an acceptance on a reused verdict.
fn decide(judged: &Judged, max_blocks: u32, active: bool, how: &How<'_>) -> Answer {
    let target = how.target;
    // An installed hook that is not the committed one is judged under the committed hook's
    // loop guard, never its own (SPEC §27.3).
    let max_blocks = judged.max_blocks.unwrap_or(max_blocks);
    let counter = judged
        .common
        .as_ref()
        .map(|c| Counter::new(c, &judged.root));
    let through = |note| Answer { block: None, note };
    if judged.refused.is_empty() {
        if let Some(counter) = &counter {
            let _ = counter.reset();
        }
        if judged.reused.is_some() {
            record_reused(judged, target);
        }
        return through(None);
    }
    let verdict = match &counter {
        Some(counter) => blocks::decide(counter, max_blocks, active),
        None if active => blocks::Verdict::GiveUp(Some("no repository to keep it in".into())),
        None => blocks::Verdict::Block,
    };
    match verdict {
        blocks::Verdict::Block => Answer {
            block: Some(stop::reason(judged, how.mode)),
            note: None,
        },
        blocks::Verdict::GiveUp(unkept) => {
            record_gave_up(judged, target, max_blocks, unkept.as_deref());
            through(Some(Note::GaveUp {
                max_blocks,
                unkept,
                root: judged.root.clone(),
            }))
        }
    }
}

/// The time the hook gives `signal` and `guard`: its limit less a margin for starting, reading and
/// answering (a tenth, at least 5 s and at most 30 s).
pub fn hook_budget(time_limit: u64) -> Duration {
    let margin = (time_limit / 10).clamp(5, 30);
    Duration::from_secs(time_limit.saturating_sub(margin).max(1))
}

/// The `signal` record of an input that could not be judged: `accepted: null`.
fn record_malformed(cwd: Option<&Path>, target: Target, why: &str) {
    let here = std::env::current_dir().ok();
    let Some(common) = [cwd, here.as_deref()]
        .into_iter()
        .flatten()
        .find_map(|c| Repo::discover(c).ok())
        .map(|r| r.common_dir())
    else {
        return;
    };
    let fields = SignalFields {
        hook: Some(target.as_str().to_string()),
        error: Some(why.to_string()),
        ..SignalFields::default()
    };
    let _ = ledger::stop_hook_record(None, Vec::new(), fields).append(&common);
}

/// The record that the loop guard let a refused stop through; `unkept` says why the block counter
/// could not be kept (the harness's `stop_hook_active` decided then).
fn record_gave_up(judged: &Judged, target: Target, max_blocks: u32, unkept: Option<&str>) {
    let Some(common) = &judged.common else {
        return;
    };
    // SPEC §6 closes the set of events: the stop hook judged a signal, so this is a `signal`
    // record — not accepted, but let through (`gave_up`).
    let fields = SignalFields {
        accepted: Some(false),
        gave_up: Some(true),
        max_blocks: Some(max_blocks),
        hook: Some(target.as_str().to_string()),
        error: unkept
            .map(|w| format!("the block counter cannot be kept ({w}): stop_hook_active decided")),
        checks: Vec::new(),
    };
    let worktree = Some(judged.root.display().to_string());
    let codes = judged.refused.iter().map(|(c, _)| c.to_string()).collect();
    let _ = ledger::stop_hook_record(worktree, codes, fields).append(common);
}

/// The record of a stop accepted on the verdict already recorded for its branch at its commit.
fn record_reused(judged: &Judged, target: Target) {
    let (Some(common), Some(reused)) = (&judged.common, &judged.reused) else {
        return;
    };
    let fields = SignalFields {
        accepted: Some(true),
        hook: Some(target.as_str().to_string()),
        ..SignalFields::default()
    };
    let worktree = Some(judged.root.display().to_string());
    let mut record = ledger::stop_hook_record(worktree, Vec::new(), fields);
    record.commit = Some(reused.commit.to_string());
    record.branch = Some(reused.branch.clone());
    record.slug = Some(reused.slug.clone());
    record.claimed = Some("done".to_string());
    // The claim and what it was decided under (SPEC §26.1): the decision accepted on.
    let on = &reused.on;
    record.claimed_commit = on.claimed_commit.clone();
    record.config = on.config.clone();
    record.config_source = on.config_source.clone();
    record.base = on.base.clone();
    record.base_commit = on.base_commit.clone();
    record.base_source = on.base_source.clone();
    record.contract = Some(on.contract().map(str::to_string));
    let _ = record.append(common);
}

/// The harnesses `agent doctor` looks at: `target`, else each one closegate's hook is installed
/// for in `here`, else every one.
pub fn doctor_targets(target: Option<Target>, here: &Path) -> Vec<Target> {
    if let Some(t) = target {
        return vec![t];
    }
    let installed: Vec<Target> = Target::ALL
        .into_iter()
        .filter(|t| super::doctor::is_installed(*t, here))
        .collect();
    if installed.is_empty() {
        Target::ALL.to_vec()
    } else {
        installed
    }
}
