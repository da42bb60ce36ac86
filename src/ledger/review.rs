//! The `approve` and `reject` lines (SPEC §17, §26.5): who approved or rejected which exact
//! commit, and why.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::{Event, Record, lenient, lenient_each};
use crate::report::{CheckEntry, Report};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ApproveFields {
    #[serde(default, deserialize_with = "lenient")]
    pub note: Option<String>,
    /// Who approved; null on a refused approval, so it can never be taken for one.
    #[serde(default, deserialize_with = "lenient")]
    pub by: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub requested_by: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub refused: Option<String>,
    /// The checks this run ran or reused, with their reuse keys (SPEC §19: the results of every
    /// command that runs the checks are reused, not only `check`'s); absent when none ran.
    #[serde(
        default,
        deserialize_with = "lenient_each",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub checks: Vec<CheckEntry>,
}

/// A `reject` line: who rejected the commit and why. The line's `commit` is the rejected one.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RejectFields {
    #[serde(default, deserialize_with = "lenient")]
    pub by: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub note: Option<String>,
    /// The rejected commit's tree: a commit with the very same tree (an amend that changes
    /// nothing, a reworded message, an empty commit on top) is the same work, still rejected.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub tree: Option<String>,
}

/// A rejection that stands: the newest of a commit's approvals and rejections is a rejection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub by: String,
    pub note: String,
    /// When it was recorded (RFC 3339, UTC).
    pub at: String,
}

/// Append a `reject` line: the reviewer, the note, the rejected commit (the report's) and its
/// tree.
pub fn record_reject(
    common_dir: &Path,
    report: &Report,
    by: &str,
    note: &str,
    tree: Option<String>,
) -> Result<()> {
    let claimed = report.state.map(|s| s.as_str());
    let fields = RejectFields {
        by: Some(by.to_string()),
        note: Some(note.to_string()),
        tree,
    };
    Record::new(report, claimed, Event::Reject(fields)).append(common_dir)
}

/// Append an `approve` line. An accepted approval carries `by`, `note`, the full `commit`, the
/// `config` and `contract` blob ids (or null) and the verdict with the approval applied, which is
/// what `approval_for` and `has_passing_record` read. A refused one carries `by: null` and
/// `requested_by`, so it can never be taken for an approval.
pub fn record_approve(
    common_dir: &Path,
    report: &Report,
    by: &str,
    note: Option<&str>,
    refused: Option<&str>,
) -> Result<()> {
    let claimed = report.state.map(|s| s.as_str());
    let fields = ApproveFields {
        note: note.map(str::to_string),
        by: refused.is_none().then(|| by.to_string()),
        requested_by: refused.is_some().then(|| by.to_string()),
        refused: refused.map(str::to_string),
        checks: Vec::new(),
    };
    Record::new(report, claimed, Event::Approve(fields)).append(common_dir)
}
