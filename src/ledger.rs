//! The record as a type (SPEC §6): every audit line closegate writes is a [`Record`], built here,
//! written by [`Record::append`] and read back by [`Record::read`]; and which records count when a
//! later decision reads them.
//!
//! A record counts only when it is authenticated (with a record key: `record::read_mentioning`
//! and `record::read_authentic` return nothing else) and, for a verdict that passes or approves,
//! when it was made with the base tip's configuration and the configured base
//! (`config_source: "base"`, `base_source: "configured"`): a run under `--config FILE` or another
//! `--base` is kept and listed, never trusted.
//!
//! The bytes of a line are the record serialized to a JSON object (serde_json's map keeps its keys
//! sorted), so a line written through this type is byte for byte the line the ad-hoc objects wrote
//! before it, and the `mac` covers it as SPEC §6 says.

use std::path::Path;

use anyhow::Result;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::finding::Verdict;
use crate::record;
use crate::report::{Approval, ArtifactStatus, CheckEntry, Report};

/// One audit line: the fields every event carries, then the event and its own fields.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    #[serde(default, deserialize_with = "lenient")]
    pub ts: String,
    #[serde(default, deserialize_with = "lenient")]
    pub slug: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub commit: Option<String>,
    /// The commit the close line names, exactly as written.
    #[serde(default, deserialize_with = "lenient")]
    pub claimed_commit: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub branch: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub worktree: Option<String>,
    /// Null when no verdict on the work was reached (a guard without its gate, a signal).
    #[serde(default, deserialize_with = "lenient")]
    pub verdict: Option<Verdict>,
    /// The agent's state word or, for `guard`, its token.
    #[serde(default, deserialize_with = "lenient")]
    pub claimed: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub codes: Vec<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub tool: Option<String>,
    /// Blob id of the configuration the run used.
    #[serde(default, deserialize_with = "lenient")]
    pub config: Option<String>,
    /// `base` or `file`.
    #[serde(default, deserialize_with = "lenient")]
    pub config_source: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub base: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub base_commit: Option<String>,
    /// `configured` or `other`.
    #[serde(default, deserialize_with = "lenient")]
    pub base_source: Option<String>,
    /// Blob id of the task contract the decision was made under, or null (SPEC §12, §26.1);
    /// absent (`None`) on lines of events that did not carry it before §26 (they read as null:
    /// [`Record::contract`]), so such a line writes back byte for byte.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub contract: Option<Option<String>>,
    /// The protected policy the decision was made under: each surface whose
    /// `[protected.policy]` is not the default `all`, with its word (SPEC §26.1). Absent on lines
    /// that decide nothing (a hook's, a signal's) and on lines written before this field.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub policy: Option<std::collections::BTreeMap<String, String>>,
    #[serde(flatten)]
    pub event: Event,
    /// With a record key: the previous line's `mac` (`record` adds it when it writes the line).
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub prev: Option<String>,
    /// With a record key: the HMAC of the line without it (`record` adds it; see
    /// `record::authenticate`).
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub mac: Option<String>,
}

/// The event (`"event"` in the line) and the fields only it carries.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "lowercase")]
pub enum Event {
    Check(CheckFields),
    Teardown(TeardownFields),
    Approve(ApproveFields),
    /// A reviewer's rejection of the exact commit (`closegate reject`).
    Reject(RejectFields),
    Guard(GuardFields),
    Signal(SignalFields),
    Hook(HookFields),
    Land(LandFields),
    /// Read only: an event this version does not write (a foreign or later line). Never passes,
    /// approves or is reused.
    #[serde(other, skip_serializing)]
    Unknown,
}

impl Event {
    /// The check entries an event carries (every event that runs the gate: not `hook`).
    fn checks_mut(&mut self) -> Option<&mut Vec<CheckEntry>> {
        match self {
            Event::Check(f) => Some(&mut f.checks),
            Event::Teardown(f) => Some(&mut f.checks),
            Event::Approve(f) => Some(&mut f.checks),
            Event::Guard(f) => Some(&mut f.checks),
            Event::Signal(f) => Some(&mut f.checks),
            Event::Land(f) => Some(&mut f.checks),
            Event::Hook(_) | Event::Reject(_) | Event::Unknown => None,
        }
    }

    fn checks(&self) -> Option<&[CheckEntry]> {
        match self {
            Event::Check(f) => Some(&f.checks),
            Event::Teardown(f) => Some(&f.checks),
            Event::Approve(f) => Some(&f.checks),
            Event::Guard(f) => Some(&f.checks),
            Event::Signal(f) => Some(&f.checks),
            Event::Land(f) => Some(&f.checks),
            Event::Hook(_) | Event::Reject(_) | Event::Unknown => None,
        }
    }
}

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

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TeardownFields {
    /// Whether this teardown removed (or began removing) the worktree.
    #[serde(default, deserialize_with = "lenient")]
    pub removed: bool,
    /// The checks this run ran or reused, with their reuse keys (SPEC §19: the results of every
    /// command that runs the checks are reused, not only `check`'s); absent when none ran.
    #[serde(
        default,
        deserialize_with = "lenient_each",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub checks: Vec<CheckEntry>,
    /// The step's own fields (`deleted`, `aside`, `pruned`, `incomplete`, …); boxed, as they
    /// outweigh every other event's fields.
    #[serde(flatten)]
    pub steps: Box<Steps>,
}

/// What one `teardown` line says about its steps (SPEC §7, §24): each key is written only by the
/// steps that have it, so every field is absent unless set, and a field that may be written as
/// null is an `Option<Option<_>>` (`Some(None)` is the null). The line's keys are sorted when it
/// is written (serde_json's map), so the order here is free.
///
/// The resume handshake is two of these: the removal's line names its `aside` directory for its
/// `worktree` before anything is moved, and the run that finishes it writes
/// [`Steps::resumed`] naming the same aside (`teardown::resume` trusts only such a pair).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Steps {
    /// How the worktree was admitted (`verified`, `approved`, …); null on a refused teardown.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub admission: Option<Option<String>>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub allow_unverified: Option<bool>,
    /// Where the status document was archived; null when there was none to archive.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub archive: Option<Option<String>>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub artifacts: Option<Vec<ArtifactStatus>>,
    /// The directory the worktree is renamed to before removal (the resume handshake's half).
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub aside: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub status_file: Option<String>,
    /// What was (to be) removed; null when nothing was.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub deleted: Option<Option<Deleted>>,
    /// The escrow ref (SPEC §24), its commit and how long the snapshot took.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub escrow: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub escrow_commit: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub escrow_ms: Option<u64>,
    /// The codes `--force` let through.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub forced: Option<Vec<String>>,
    /// What `--reap` did to each process.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub reaped: Option<Vec<ReapedEntry>>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub resumed: Option<bool>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub pruned: Option<bool>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub incomplete: Option<bool>,
    /// The paths a removal left in place.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub left: Option<Vec<String>>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub error: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub moved_back: Option<bool>,
    /// Why the branch was kept after a compare-and-delete found it moved.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub branch_kept: Option<String>,
    /// Keys this version does not write (a later or foreign line), kept as read.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl Steps {
    /// The line of a resumed teardown that finished (or was refused finishing) `aside`.
    pub fn resumed(aside: String) -> Steps {
        Steps {
            resumed: Some(true),
            aside: Some(aside),
            ..Steps::default()
        }
    }

    /// The line of a removal that stopped midway, leaving `left` in place.
    pub fn left(left: Vec<String>) -> Steps {
        Steps {
            incomplete: Some(true),
            left: Some(left),
            ..Steps::default()
        }
    }

    /// The line of a removal that failed before anything was removed: `error` says why, and
    /// `moved_back` whether the worktree was put back (absent when it was never moved).
    pub fn failed(error: String, moved_back: Option<bool>) -> Steps {
        Steps {
            incomplete: Some(true),
            moved_back,
            error: Some(error),
            ..Steps::default()
        }
    }

    /// The line of a registration whose directory is gone: `admin` removed (pruned), or, when
    /// `None`, kept because a probe refused it.
    pub fn pruned(admin: Option<String>) -> Steps {
        Steps {
            pruned: Some(admin.is_some()),
            deleted: admin.map(|admin| {
                Some(Deleted {
                    admin,
                    ..Deleted::default()
                })
            }),
            ..Steps::default()
        }
    }

    /// Whether the teardown ran under `--force` with any code let through.
    pub fn was_forced(&self) -> bool {
        self.forced.as_ref().is_some_and(|f| !f.is_empty())
    }
}

/// A `teardown` line's `deleted`: the worktree, its administrative directory and the branch (and
/// the tip it was deleted at, null when kept); a pruned registration names only `admin`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deleted {
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub worktree: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub admin: String,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub branch: Option<Option<String>>,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub branch_tip: Option<Option<String>>,
}

/// One process `--reap` ended (SPEC §24), as the line keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReapedEntry {
    pub pid: u32,
    pub command: String,
    /// `SIGTERM`, or `SIGKILL` when it outlived the grace period.
    pub signal: String,
    pub ended: bool,
}

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
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SignalFields {
    /// Null when the hook could not judge the signal at all.
    #[serde(default, deserialize_with = "lenient")]
    pub accepted: Option<bool>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub gave_up: Option<bool>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_blocks: Option<u32>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub hook: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub error: Option<String>,
    /// The checks this run ran or reused, with their reuse keys (SPEC §19: the results of every
    /// command that runs the checks are reused, not only `check`'s); absent when none ran.
    #[serde(
        default,
        deserialize_with = "lenient_each",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub checks: Vec<CheckEntry>,
}

/// A `land` line (SPEC §22), written only once the base has moved: the common `branch` and
/// `commit` (the branch tip) plus these.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LandFields {
    #[serde(default, deserialize_with = "lenient")]
    pub tip: String,
    /// The commit the branch was composed into (reachable from `base_after`).
    #[serde(default, deserialize_with = "lenient")]
    pub composed: String,
    #[serde(default, deserialize_with = "lenient")]
    pub base_before: String,
    #[serde(default, deserialize_with = "lenient")]
    pub base_after: String,
    #[serde(default, deserialize_with = "lenient")]
    pub strategy: String,
    /// The checks run (or reused) on the tree the base moved to, keyed on that tree.
    #[serde(default, deserialize_with = "lenient_each")]
    pub checks: Vec<CheckEntry>,
    /// The record `ts` of the passing verdict the branch was admitted on.
    #[serde(default, deserialize_with = "lenient")]
    pub admitted_on: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HookFields {
    #[serde(default, deserialize_with = "lenient")]
    pub action: String,
    #[serde(default, deserialize_with = "lenient")]
    pub accepted: bool,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub reason: Option<String>,
}

/// A field that does not hold its type reads as its default: a foreign or damaged line never
/// fails the read, and a decision on a default (no commit, no verdict) never passes.
fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(d: D) -> Result<T, D::Error> {
    let value = Value::deserialize(d)?;
    Ok(serde_json::from_value(value).unwrap_or_default())
}

/// A key that may be written as null: absent reads `None` (with `default`), null `Some(None)`,
/// and a value that does not hold its type `Some(None)` too.
fn nullable<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    let value = Value::deserialize(d)?;
    Ok(Some(serde_json::from_value(value).ok()))
}

/// A list whose elements that do not hold their type are left out (and anything but a list reads
/// as empty): one damaged entry does not take the others with it.
fn lenient_each<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Vec<T>, D::Error> {
    let Value::Array(items) = Value::deserialize(d)? else {
        return Ok(Vec::new());
    };
    Ok(items
        .into_iter()
        .filter_map(|item| serde_json::from_value(item).ok())
        .collect())
}

impl Record {
    /// The fields every line carries, from a report: who claimed what, the verdict, and the
    /// provenance of the run (configuration blob and how it was chosen, the base and its commit).
    pub fn new(report: &Report, claimed: Option<&str>, mut event: Event) -> Record {
        let provenance = report.provenance;
        if let Some(checks) = event.checks_mut()
            && checks.is_empty()
        {
            checks.clone_from(&report.check_entries);
        }
        Record {
            ts: record::now_rfc3339(),
            slug: report.slug.clone(),
            commit: report.commit.clone(),
            claimed_commit: report.claimed_commit.clone(),
            branch: report.branch.clone(),
            worktree: report.worktree.clone(),
            verdict: Some(report.verdict),
            claimed: claimed.map(str::to_string),
            codes: report
                .codes()
                .iter()
                .map(|c| c.as_str().to_string())
                .collect(),
            tool: Some(report.tool.clone()),
            config: report.config.clone(),
            config_source: provenance.map(|p| p.config_source.as_str().to_string()),
            base: report.base.clone(),
            base_commit: report.base_commit.clone(),
            base_source: provenance.map(|p| {
                if p.base_configured {
                    "configured"
                } else {
                    "other"
                }
                .to_string()
            }),
            contract: Some(report.contract.clone()),
            policy: report.policy.clone(),
            event,
            prev: None,
            mac: None,
        }
    }

    /// The line as written: a JSON object (before `prev` and `mac`, which `record` adds). A
    /// record read from a line of an event this version does not write ([`Event::Unknown`]) is an
    /// error: its fields were not kept.
    pub fn to_value(&self) -> Result<Value> {
        serde_json::to_value(self).map_err(|e| anyhow::anyhow!("cannot write the record: {e}"))
    }

    /// Append this record to the audit log (SPEC §6): one whole line, under the log's lock.
    pub fn append(&self, common_dir: &Path) -> Result<()> {
        record::append(common_dir, &self.to_value()?)
    }

    /// One stored line as a record; `None` for a line that is not one (not an object, or no
    /// `event`).
    pub fn read(value: &Value) -> Option<Record> {
        Record::parse(value).ok()
    }

    /// One stored line as a record, or why it is not one (not an object, no `event`).
    pub fn parse(value: &Value) -> Result<Record, String> {
        if !value.is_object() {
            return Err("not a json object".to_string());
        }
        if value.get("event").is_none() {
            return Err("no event".to_string());
        }
        Record::deserialize(value).map_err(|e| format!("not a record: {e}"))
    }

    /// The contract blob the record's claim was judged under (`None`: no contract).
    pub fn contract(&self) -> Option<&str> {
        self.contract.as_ref().and_then(Option::as_deref)
    }

    /// The event's name as written in the line.
    pub fn event_name(&self) -> &'static str {
        match self.event {
            Event::Check(_) => "check",
            Event::Teardown(_) => "teardown",
            Event::Approve(_) => "approve",
            Event::Reject(_) => "reject",
            Event::Guard(_) => "guard",
            Event::Signal(_) => "signal",
            Event::Hook(_) => "hook",
            Event::Land(_) => "land",
            Event::Unknown => "unknown",
        }
    }

    /// Whether the record was made with the base tip's configuration and the configured (or
    /// default) base: only such a record passes, approves or is reused (SPEC §6 provenance).
    pub fn is_trusted(&self) -> bool {
        self.config_source.as_deref() == Some("base")
            && self.base_source.as_deref() == Some("configured")
    }

    /// A passing verdict from a trusted record (SPEC §9): VERIFIED from `check`, `approve` (the
    /// verdict with the approval applied) or `teardown`, or a `teardown` that removed a clean
    /// `closed-without-merge` return.
    pub fn is_passing(&self) -> bool {
        let verified = self.verdict == Some(Verdict::Verified)
            && matches!(
                self.event,
                Event::Check(_) | Event::Approve(_) | Event::Teardown(_) | Event::Land(_)
            );
        let stopped = matches!(&self.event, Event::Teardown(t) if t.removed)
            && self.claimed.as_deref() == Some("closed-without-merge");
        (verified || stopped) && self.is_trusted()
    }

    /// The approval this record grants: an `approve` line with a named approver.
    pub fn approval(&self) -> Option<&ApproveFields> {
        match &self.event {
            Event::Approve(a) if a.by.is_some() => Some(a),
            _ => None,
        }
    }

    /// Whether this is a reviewer's `reject` line (any provenance: a rejection only ever refuses).
    pub fn is_rejection(&self) -> bool {
        matches!(self.event, Event::Reject(_))
    }

    /// The check entries of a record of an event that runs the gate (empty when no check ran).
    pub fn checks(&self) -> Option<&[CheckEntry]> {
        self.event.checks()
    }

    /// The steps of a `teardown` record.
    pub fn steps(&self) -> Option<&Steps> {
        match &self.event {
            Event::Teardown(t) => Some(&*t.steps),
            _ => None,
        }
    }

    /// The fields of a `land` record (SPEC §22).
    pub fn landing(&self) -> Option<&LandFields> {
        match &self.event {
            Event::Land(l) => Some(l),
            _ => None,
        }
    }

    /// The fields of a `teardown` record that removed (or began removing) its worktree.
    pub fn removal(&self) -> Option<&TeardownFields> {
        match &self.event {
            Event::Teardown(t) if t.removed => Some(t),
            _ => None,
        }
    }
}

/// Parse stored lines into the records they are, dropping any that are not.
fn records(values: Vec<Value>) -> Vec<Record> {
    values.iter().filter_map(Record::read).collect()
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
    };
    Record::new(report, claimed, Event::Check(fields)).append(common_dir)
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

/// Append a `teardown` line: the common fields plus `removed` and the step's own fields.
pub fn record_teardown(
    common_dir: &Path,
    report: &Report,
    claimed: Option<&str>,
    removed: bool,
    steps: Steps,
) -> Result<()> {
    teardown_record(report, claimed, removed, steps).append(common_dir)
}

/// [`record_teardown`] with the record's `ts` given: the escrow commit names it (SPEC §24).
pub fn record_teardown_at(
    common_dir: &Path,
    report: &Report,
    claimed: Option<&str>,
    removed: bool,
    steps: Steps,
    ts: String,
) -> Result<()> {
    let mut record = teardown_record(report, claimed, removed, steps);
    record.ts = ts;
    record.append(common_dir)
}

/// The `teardown` line of one step, before it is written.
pub fn teardown_record(
    report: &Report,
    claimed: Option<&str>,
    removed: bool,
    steps: Steps,
) -> Record {
    let event = Event::Teardown(TeardownFields {
        removed,
        checks: Vec::new(),
        steps: Box::new(steps),
    });
    Record::new(report, claimed, event)
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

/// The `hook` line of one decision on a ref update.
pub fn hook_record(report: &Report, fields: HookFields) -> Record {
    Record::new(report, None, Event::Hook(fields))
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

/// The latest `teardown` record for the worktree at `worktree` that removed (or began removing)
/// it: how a second teardown of the same path knows the first one passed.
pub fn last_removal(common_dir: &Path, worktree: &str) -> Result<Option<Record>> {
    let records = records(record::read_authentic(common_dir)?);
    Ok(records
        .into_iter()
        .rev()
        .find(|r| r.removal().is_some() && r.worktree.as_deref() == Some(worktree)))
}

/// The audit log as `log`, `board` and `serve` read it: every line as stored (what `log --json`
/// prints and the `mac` covers) with its number and authentication, each readable as a
/// [`Record`]. Lines are typed when asked for, so a reader that only lists them pays nothing.
#[derive(Debug, Default)]
pub struct Log {
    /// The lines as stored, their numbers and authentication, and the lines skipped.
    pub read: record::ReadResult,
}

/// A `Log` is read where a `record::ReadResult` was: the stored lines stay the source of truth.
impl std::ops::Deref for Log {
    type Target = record::ReadResult;

    fn deref(&self) -> &record::ReadResult {
        &self.read
    }
}

impl Log {
    /// Every stored record, in log order, with its line number and authentication: the record
    /// it is, or why it is not one (a JSON object without `event`). An event this version does
    /// not write reads as [`Event::Unknown`].
    pub fn typed(&self) -> impl Iterator<Item = (&(usize, record::Auth), Result<Record, String>)> {
        let lines = self.read.records.iter().zip(&self.read.lines);
        lines.map(|(value, line)| (line, Record::parse(value)))
    }

    /// The typed records that count (every one without a key; the authenticated ones with a
    /// key), in log order; lines that are no record are left out.
    pub fn counted_records(&self) -> impl Iterator<Item = Record> + '_ {
        self.typed()
            .filter(|((_, auth), _)| auth.counts())
            .filter_map(|(_, record)| record.ok())
    }
}

/// Read the whole audit log ([`Log`]); a missing file reads as empty.
pub fn read(common_dir: &Path) -> Result<Log> {
    Ok(Log {
        read: record::read(common_dir)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{ConfigSource, Provenance};

    fn report() -> Report {
        Report {
            slug: Some("t-1".into()),
            commit: Some("c".repeat(40)),
            claimed_commit: Some("cccc".into()),
            branch: Some("agent/t".into()),
            worktree: Some("/w".into()),
            tool: "closegate 0.1.0".into(),
            config: Some("f".repeat(40)),
            provenance: Some(Provenance {
                config_source: ConfigSource::Base,
                base_configured: true,
            }),
            base: Some("main".into()),
            base_commit: Some("b".repeat(40)),
            ..Report::default()
        }
    }

    fn line(record: &Record) -> String {
        let mut record = record.clone();
        record.ts = "2026-01-01T00:00:00Z".into();
        serde_json::to_string(&record.to_value().unwrap()).unwrap()
    }

    /// The bytes SPEC §6 fixes: the field names the ad-hoc objects wrote, in the order written
    /// (serde_json's sorted map), nulls kept; the mac is computed over exactly this text.
    #[test]
    fn a_check_line_is_byte_for_byte_the_line_written_before() {
        let fields = CheckFields {
            mergeable: false,
            approval: None,
            checks: vec![],
            findings: vec![],
            protected: vec![],
        };
        let got = line(&Record::new(
            &report(),
            Some("close-ok"),
            Event::Check(fields),
        ));
        let want = format!(
            "{{\"approval\":null,\"base\":\"main\",\"base_commit\":\"{b}\",\
             \"base_source\":\"configured\",\"branch\":\"agent/t\",\"checks\":[],\
             \"claimed\":\"close-ok\",\"claimed_commit\":\"cccc\",\"codes\":[],\
             \"commit\":\"{c}\",\"config\":\"{f}\",\"config_source\":\"base\",\
             \"contract\":null,\"event\":\"check\",\"mergeable\":false,\"slug\":\"t-1\",\
             \"tool\":\"closegate 0.1.0\",\"ts\":\"2026-01-01T00:00:00Z\",\
             \"verdict\":\"UNVERIFIED\",\"worktree\":\"/w\"}}",
            b = "b".repeat(40),
            c = "c".repeat(40),
            f = "f".repeat(40),
        );
        assert_eq!(got, want);
    }

    /// The ad-hoc object the writers built before `Record` (ledger.rs before this type), verbatim.
    fn before(event: &str, report: &Report, claimed: Option<&str>) -> Value {
        let provenance = report.provenance;
        serde_json::json!({
            "ts": "2026-01-01T00:00:00Z",
            "event": event,
            "slug": report.slug,
            "commit": report.commit,
            "claimed_commit": report.claimed_commit,
            "branch": report.branch,
            "worktree": report.worktree,
            "verdict": report.verdict,
            "claimed": claimed,
            "codes": report.codes(),
            "tool": report.tool,
            "config": report.config,
            "config_source": provenance.map(|p| p.config_source.as_str()),
            "base": report.base,
            "base_commit": report.base_commit,
            "base_source": provenance.map(|p| if p.base_configured { "configured" } else { "other" }),
            // New since the ad hoc objects (SPEC §26.1): every line names the contract blob of the
            // claim it is about (null for none), not only `check` and `approve` lines.
            "contract": report.contract,
        })
    }

    fn sample_entry() -> CheckEntry {
        CheckEntry {
            name: "test".into(),
            run: "cargo test".into(),
            timeout_s: 600,
            tree: "t".repeat(40),
            config: None,
            base_commit: Some("b".repeat(40)),
            slug: None,
            branch: None,
            commit: None,
            sandbox: "bwrap".into(),
            exit_code: Some(101),
            timed_out: false,
            duration_ms: 12,
            output: vec!["failed".into()],
            finding: Some("check-failed".into()),
            message: Some("`test` failed".into()),
            reused: None,
        }
    }

    /// [`sample_entry`] as gates::reuse::entry wrote it with json! before CheckEntry existed.
    fn sample_entry_json() -> Value {
        serde_json::json!({
            "name": "test",
            "run": "cargo test",
            "timeout_s": 600,
            "tree": "t".repeat(40),
            "config": null,
            "base_commit": "b".repeat(40),
            "sandbox": "bwrap",
            "exit_code": 101,
            "timed_out": false,
            "duration_ms": 12,
            "output": ["failed"],
            "finding": "check-failed",
            "message": "`test` failed",
            "reused": null,
        })
    }

    #[test]
    fn check_and_teardown_write_the_bytes_the_ad_hoc_objects_wrote() {
        use serde_json::json;
        let mut r = report();
        r.add_gate(
            crate::finding::Gate::Checks,
            [crate::finding::Finding::new(
                crate::catalog::Code::ChecksNone,
                "none",
            )],
        );
        r.approval = Some(Approval {
            by: "ann".into(),
            at: "t".into(),
            commit: "c".into(),
        });
        r.contract = Some("d".repeat(40));
        r.check_entries = vec![sample_entry()];
        let mut check = before("check", &r, Some("close-ok"));
        check["mergeable"] = json!(r.mergeable);
        check["approval"] = json!(r.approval);
        check["contract"] = json!(r.contract);
        check["checks"] = json!([sample_entry_json()]);
        let fields = CheckFields {
            mergeable: r.mergeable,
            approval: r.approval.clone(),
            checks: r.check_entries.clone(),
            findings: vec![],
            protected: vec![],
        };
        assert_eq!(
            line(&Record::new(&r, Some("close-ok"), Event::Check(fields))),
            check.to_string()
        );

        let mut teardown = before("teardown", &r, None);
        teardown["removed"] = json!(true);
        teardown["deleted"] = json!({"admin": "/a"});
        teardown["pruned"] = json!(true);
        // New since the ad hoc objects: the checks the teardown's gate ran, for reuse (SPEC §19).
        teardown["checks"] = json!([sample_entry_json()]);
        let steps = Steps {
            deleted: Some(Some(Deleted {
                admin: "/a".into(),
                ..Deleted::default()
            })),
            pruned: Some(true),
            ..Steps::default()
        };
        let fields = TeardownFields {
            removed: true,
            checks: Vec::new(),
            steps: Box::new(steps),
        };
        assert_eq!(
            line(&Record::new(&r, None, Event::Teardown(fields))),
            teardown.to_string()
        );
    }

    const ODD: &str = "/w/a \"b\"\n\u{7f}é";

    fn reaped_entry() -> ReapedEntry {
        ReapedEntry {
            pid: 42,
            command: ODD.into(),
            signal: "SIGKILL".into(),
            ended: true,
        }
    }

    fn artifacts() -> Vec<ArtifactStatus> {
        vec![ArtifactStatus {
            path: ODD.into(),
            present: true,
        }]
    }

    /// The removal's line (execute.rs `removal_fields` + `escrow_fields`), as `json!` wrote it,
    /// and as typed steps.
    fn removal_case() -> (Value, Steps) {
        let before = serde_json::json!({
            "admission": "verified", "allow_unverified": false, "archive": null,
            "artifacts": artifacts(), "aside": ODD, "status_file": "_EXEC_STATUS.md",
            "deleted": {"worktree": "/w", "admin": "/r/.git/worktrees/w",
                        "branch": "agent/w", "branch_tip": null},
            "escrow": "refs/closegate/escrow/w/1", "escrow_commit": "e".repeat(40),
            "escrow_ms": 17_u64, "forced": ["teardown-untracked"],
            "reaped": [{"pid": 42, "command": ODD, "signal": "SIGKILL", "ended": true}],
        });
        let deleted = Deleted {
            worktree: Some("/w".into()),
            admin: "/r/.git/worktrees/w".into(),
            branch: Some(Some("agent/w".into())),
            branch_tip: Some(None),
        };
        let steps = Steps {
            admission: Some(Some("verified".into())),
            allow_unverified: Some(false),
            archive: Some(None),
            artifacts: Some(artifacts()),
            aside: Some(ODD.into()),
            status_file: Some("_EXEC_STATUS.md".into()),
            deleted: Some(Some(deleted)),
            escrow: Some("refs/closegate/escrow/w/1".into()),
            escrow_commit: Some("e".repeat(40)),
            escrow_ms: Some(17),
            forced: Some(vec!["teardown-untracked".into()]),
            reaped: Some(vec![reaped_entry()]),
            ..Steps::default()
        };
        (before, steps)
    }

    /// Every other step's line, as its call site (teardown/mod.rs, execute.rs, resume.rs) wrote
    /// it with `json!`, and as typed steps.
    fn step_cases() -> Vec<(Value, Steps)> {
        use serde_json::json;
        let mut cases = vec![
            removal_case(),
            (
                json!({"incomplete": true, "error": ODD}),
                Steps::failed(ODD.into(), None),
            ),
            (
                json!({"incomplete": true, "moved_back": false, "error": ODD}),
                Steps::failed(ODD.into(), Some(false)),
            ),
            (
                json!({"branch_kept": ODD}),
                Steps {
                    branch_kept: Some(ODD.into()),
                    ..Steps::default()
                },
            ),
            (
                json!({"deleted": null}),
                Steps {
                    deleted: Some(None),
                    ..Steps::default()
                },
            ),
            (
                json!({"incomplete": true, "left": [ODD, "/w/b"]}),
                Steps::left(vec![ODD.into(), "/w/b".into()]),
            ),
            (
                json!({"resumed": true, "aside": ODD}),
                Steps::resumed(ODD.into()),
            ),
            (json!({"pruned": false}), Steps::pruned(None)),
            (
                json!({"pruned": true, "deleted": {"admin": ODD}}),
                Steps::pruned(Some(ODD.into())),
            ),
        ];
        cases.extend(refused_cases());
        cases
    }

    /// The lines of refused teardowns: `admission` and `deleted` null.
    fn refused_cases() -> Vec<(Value, Steps)> {
        use serde_json::json;
        let refused = |s: Steps| Steps {
            admission: Some(None),
            deleted: Some(None),
            ..s
        };
        vec![
            (
                json!({"admission": null, "aside": ODD, "moved_back": true, "deleted": null}),
                refused(Steps {
                    aside: Some(ODD.into()),
                    moved_back: Some(true),
                    ..Steps::default()
                }),
            ),
            (
                json!({"admission": null, "reaped": [reaped_entry()], "deleted": null}),
                refused(Steps {
                    reaped: Some(vec![reaped_entry()]),
                    ..Steps::default()
                }),
            ),
            (
                json!({"admission": null, "allow_unverified": true, "artifacts": artifacts(),
                       "deleted": null}),
                refused(Steps {
                    allow_unverified: Some(true),
                    artifacts: Some(artifacts()),
                    ..Steps::default()
                }),
            ),
        ]
    }

    /// Every teardown step, as its call site wrote it with `json!` before [`Steps`], against the
    /// typed steps that replace it: the same bytes, and the line reads back as those steps.
    #[test]
    fn every_teardown_step_writes_the_bytes_its_json_object_wrote() {
        for (fields, steps) in step_cases() {
            let mut want = before("teardown", &report(), None);
            want["removed"] = serde_json::json!(true);
            for (k, v) in fields.as_object().unwrap() {
                want[k] = v.clone();
            }
            let got = teardown_record(&report(), None, true, steps.clone());
            assert_eq!(line(&got), want.to_string());
            let read = Record::read(&want).unwrap();
            assert_eq!(read.steps(), Some(&steps), "{fields}");
        }
    }

    #[test]
    fn decisions_write_the_bytes_the_ad_hoc_objects_wrote() {
        use serde_json::json;
        let r = report();
        let mut guard = before("guard", &r, Some("VERIFIED"));
        guard["verdict"] = json!(null);
        guard["accepted"] = json!(false);
        let mut got = Record::new(
            &r,
            Some("VERIFIED"),
            Event::Guard(GuardFields {
                accepted: false,
                ..GuardFields::default()
            }),
        );
        got.verdict = None;
        assert_eq!(line(&got), guard.to_string());

        let mut hook = before("hook", &r, None);
        hook["action"] = json!("delete");
        hook["accepted"] = json!(true);
        hook["base"] = json!(r.base);
        let fields = HookFields {
            action: "delete".into(),
            accepted: true,
            reason: None,
        };
        assert_eq!(line(&hook_record(&r, fields)), hook.to_string());

        let mut stop = before("signal", &Report::default(), None);
        stop["verdict"] = json!(null);
        stop["accepted"] = json!(null);
        stop["hook"] = json!("stop");
        stop["error"] = json!("bad json");
        let fields = SignalFields {
            hook: Some("stop".into()),
            error: Some("bad json".into()),
            ..SignalFields::default()
        };
        assert_eq!(
            line(&stop_hook_record(None, vec![], fields)),
            stop.to_string()
        );
    }

    #[test]
    fn an_approval_and_a_refused_one_differ_only_where_spec_says() {
        let approve = |refused: Option<&str>| ApproveFields {
            note: None,
            by: refused.is_none().then(|| "ann".to_string()),
            requested_by: refused.is_some().then(|| "ann".to_string()),
            refused: refused.map(str::to_string),
            checks: Vec::new(),
        };
        let ok = Record::new(&report(), None, Event::Approve(approve(None)))
            .to_value()
            .unwrap();
        assert_eq!(ok["by"], "ann");
        assert!(ok["note"].is_null() && ok.get("note").is_some());
        assert!(ok.get("requested_by").is_none() && ok.get("refused").is_none());
        let no = Record::new(&report(), None, Event::Approve(approve(Some("failing"))));
        let no = no.to_value().unwrap();
        assert!(no["by"].is_null() && no.get("by").is_some());
        assert_eq!(
            (no["requested_by"].as_str(), no["refused"].as_str()),
            (Some("ann"), Some("failing"))
        );
        let read = Record::read(&no).unwrap();
        assert!(
            read.approval().is_none(),
            "a refused approval is never an approval"
        );
    }

    /// A line written before the type existed, as stored (with `prev` and `mac`), reads back.
    #[test]
    fn a_stored_teardown_line_reads_back_with_its_step_fields() {
        let stored = r#"{"aside":"/w.closegate-aside","base":"main","base_commit":null,"base_source":"configured","branch":"agent/t","claimed":"closed-without-merge","claimed_commit":null,"codes":[],"commit":"abc","config":null,"config_source":"base","deleted":null,"event":"teardown","mac":"00","prev":"","removed":true,"slug":"t","tool":"closegate 0.1.0","ts":"2026-01-01T00:00:00Z","verdict":"VERIFIED","worktree":"/w"}"#;
        let r = Record::read(&serde_json::from_str(stored).unwrap()).unwrap();
        assert_eq!(r.event_name(), "teardown");
        assert_eq!(
            r.steps().and_then(|s| s.aside.as_deref()),
            Some("/w.closegate-aside")
        );
        assert!(r.removal().is_some() && r.is_trusted() && r.is_passing());
    }

    /// Foreign or damaged lines never fail the read and never pass.
    #[test]
    fn foreign_lines_read_leniently_and_never_pass() {
        let read = |s: &str| Record::read(&serde_json::from_str(s).unwrap());
        assert!(read(r#"[1, 2]"#).is_none());
        assert!(read(r#"{"commit": "abc"}"#).is_none(), "no event");
        let odd = read(r#"{"event":"merge","verdict":"VERIFIED","commit":"abc","config_source":"base","base_source":"configured"}"#).unwrap();
        assert!(matches!(odd.event, Event::Unknown) && !odd.is_passing());
        let bad = read(r#"{"event":"check","verdict":"GREEN","commit":7,"codes":"x","config_source":"base","base_source":"configured"}"#).unwrap();
        assert_eq!(
            (bad.verdict, bad.commit.as_deref(), bad.codes.len()),
            (None, None, 0)
        );
        assert!(!bad.is_passing());
    }

    /// A damaged check entry is left out; the sound one beside it still reads (and is reused).
    #[test]
    fn a_damaged_check_entry_does_not_take_its_neighbours_with_it() {
        let good = r#"{"name":"test","run":"true","timeout_s":600,"tree":"t","config":null,"base_commit":null,"sandbox":"bwrap","exit_code":0,"timed_out":false,"duration_ms":3,"output":[],"finding":null,"message":null,"reused":null}"#;
        let damaged = r#"{"name":"lint","run":"true","timeout_s":"600"}"#;
        let line = format!(
            r#"{{"event":"check","verdict":"VERIFIED","commit":"abc","config_source":"base","base_source":"configured","checks":[{damaged},{good},7]}}"#
        );
        let r = Record::read(&serde_json::from_str(&line).unwrap()).unwrap();
        let checks = r.checks().unwrap();
        assert_eq!(checks.len(), 1);
        assert_eq!(
            (checks[0].name.as_str(), checks[0].exit_code),
            ("test", Some(0))
        );
        let not_a_list = line.replace(&format!("[{damaged},{good},7]"), r#""x""#);
        let r = Record::read(&serde_json::from_str(&not_a_list).unwrap()).unwrap();
        assert_eq!(r.checks().map(<[_]>::len), Some(0));
    }

    #[test]
    fn only_trusted_verified_or_removed_stops_pass() {
        let check = |verdict, source: ConfigSource| {
            let mut report = report();
            report.verdict = verdict;
            report.provenance = Some(Provenance {
                config_source: source,
                base_configured: true,
            });
            let fields = CheckFields {
                mergeable: true,
                approval: None,
                checks: vec![],
                findings: vec![],
                protected: vec![],
            };
            Record::read(
                &Record::new(&report, None, Event::Check(fields))
                    .to_value()
                    .unwrap(),
            )
            .unwrap()
        };
        assert!(check(Verdict::Verified, ConfigSource::Base).is_passing());
        assert!(!check(Verdict::Verified, ConfigSource::File).is_passing());
        assert!(!check(Verdict::PendingReview, ConfigSource::Base).is_passing());
        let mut verified = report();
        verified.verdict = Verdict::Verified;
        let guard = Record::new(
            &verified,
            None,
            Event::Guard(GuardFields {
                accepted: true,
                ..GuardFields::default()
            }),
        );
        let guard = Record::read(&guard.to_value().unwrap()).unwrap();
        assert!(guard.verdict == Some(Verdict::Verified) && !guard.is_passing());
    }
}
