//! The `guard` and `signal` lines (SPEC §17, §18): the agent's claim and whether it was accepted,
//! and the stop hook's own `signal` line, which judged no work.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::{Event, Record, lenient, lenient_each};
use crate::finding::Verdict;
use crate::report::{CheckEntry, Report};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GuardFields {
    /// Whether the agent's claim was accepted.
    #[serde(default, deserialize_with = "lenient")]
    pub accepted: bool,
    /// The checks this run ran or reused, with their reuse keys (SPEC §19: the results of every
    /// command that runs the checks are reused, not only `check`'s); absent when none ran.
    #[serde(
        default,
        deserialize_with = "lenient_each",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub checks: Vec<CheckEntry>,
}

/// A `signal` decision; the agent harness's stop hook writes the optional fields.
#[serde_with::apply(_ => #[serde(default, deserialize_with = "lenient", skip_serializing_if = "Option::is_none")])]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SignalFields {
    /// Null when the hook could not judge the signal at all.
    #[serde(default, deserialize_with = "lenient")]
    #[serde_with(skip_apply)]
    pub accepted: Option<bool>,
    pub gave_up: Option<bool>,
    pub max_blocks: Option<u32>,
    pub hook: Option<String>,
    pub error: Option<String>,
    /// The checks this run ran or reused, with their reuse keys (SPEC §19: the results of every
    /// command that runs the checks are reused, not only `check`'s); absent when none ran.
    #[serde(
        default,
        deserialize_with = "lenient_each",
        skip_serializing_if = "Vec::is_empty"
    )]
    #[serde_with(skip_apply)]
    pub checks: Vec<CheckEntry>,
}

/// Append a `guard` or `signal` decision. `verdict` is closegate's verdict on the work when the
/// gate ran, else `None`, recorded as null (no verdict on the work was reached; the claim's own
/// acceptance is in `accepted`).
pub fn record_decision(
    common_dir: &Path,
    event: Event,
    report: &Report,
    claimed: Option<&str>,
    verdict: Option<Verdict>,
) -> Result<()> {
    let mut record = Record::new(report, claimed, event);
    record.verdict = verdict;
    record.append(common_dir)
}

/// A `signal` line from the agent harness's stop hook, which judged no work (`verdict` null).
pub fn stop_hook_record(
    worktree: Option<String>,
    codes: Vec<String>,
    fields: SignalFields,
) -> Record {
    let mut record = Record::new(&Report::default(), None, Event::Signal(fields));
    record.verdict = None;
    if worktree.is_some() {
        record.worktree = worktree;
    }
    if !codes.is_empty() {
        record.codes = codes;
    }
    record
}
