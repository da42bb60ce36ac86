//! The `check` line (SPEC §6): mergeable, approval, the checks with their reuse keys, and the
//! report's findings and protected changes as the report has them.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::{Event, Record, lenient, lenient_each};
use crate::report::{Approval, CheckEntry, Report};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckFields {
    #[serde(default, deserialize_with = "lenient")]
    pub mergeable: bool,
    #[serde(default, deserialize_with = "lenient")]
    pub approval: Option<Approval>,
    /// One entry per check, with its reuse key; an entry of another shape is left out.
    #[serde(default, deserialize_with = "lenient_each")]
    pub checks: Vec<CheckEntry>,
    /// The report's findings, as in the report (SPEC §25: what `serve` shows of a check);
    /// absent when there were none, and in records written before this field.
    #[serde(
        default,
        deserialize_with = "lenient_each",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub findings: Vec<FindingEntry>,
    /// The report's `protected` changes, as in the report; absent when there were none.
    #[serde(
        default,
        deserialize_with = "lenient_each",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub protected: Vec<ProtectedEntry>,
    /// Made with `--no-worktree`: the record's `worktree` is the runner's directory, never
    /// checked to hold the branch; absent otherwise.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub no_worktree: bool,
}

/// A finding as a `check` record keeps it: the report's `{code, severity, gate, message, line?,
/// path?}`, read back as plain strings (a code this version does not know is still shown).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindingEntry {
    pub code: String,
    pub severity: String,
    pub gate: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// A protected change as a `check` record keeps it: the report's `{path, surface, change}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProtectedEntry {
    pub path: String,
    pub surface: String,
    pub change: String,
}

impl FindingEntry {
    fn of(finding: &crate::finding::Finding) -> FindingEntry {
        FindingEntry {
            code: finding.code.as_str().to_string(),
            severity: finding.severity.as_str().to_string(),
            gate: finding.gate.as_str().to_string(),
            message: finding.message.clone(),
            line: finding.line,
            path: finding.path.clone(),
        }
    }
}

impl ProtectedEntry {
    fn of(change: &crate::report::ProtectedChange) -> ProtectedEntry {
        ProtectedEntry {
            path: change.path.clone(),
            surface: change.surface.clone(),
            change: change.change.to_string(),
        }
    }
}

/// Append the `check` line of one evaluation.
pub fn record_check(common_dir: &Path, report: &Report) -> Result<()> {
    let claimed = report.state.map(|s| s.as_str());
    let fields = CheckFields {
        mergeable: report.mergeable,
        approval: report.approval.clone(),
        checks: report.check_entries.clone(),
        findings: report.findings.iter().map(FindingEntry::of).collect(),
        protected: report.protected.iter().map(ProtectedEntry::of).collect(),
        no_worktree: report.no_worktree,
    };
    Record::new(report, claimed, Event::Check(fields)).append(common_dir)
}
