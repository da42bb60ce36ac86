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
//!
//! Each event's own fields live in a file of their own (`check`, `teardown`, `review` for
//! `approve`/`reject`, `decision` for `guard`/`signal`, `land`, `hook`); this file holds the
//! common fields, the reading rules and the one lenient field rule: a field that does not hold
//! its type reads as its default (`lenient`, applied to a whole struct with
//! `serde_with::apply`; `nullable` and `lenient_each` where a field says so).

use std::path::Path;

use anyhow::Result;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::finding::Verdict;
use crate::record;
use crate::report::{CheckEntry, Report};

mod check;
mod decision;
mod hook;
mod land;
mod review;
mod teardown;

pub use check::{CheckFields, FindingEntry, ProtectedEntry, record_check};
pub use decision::{GuardFields, SignalFields, record_decision, stop_hook_record};
pub use hook::{HookFields, hook_record};
pub use land::LandFields;
pub use review::{ApproveFields, RejectFields, Rejection, record_approve, record_reject};
pub use teardown::{
    Deleted, ReapedEntry, Steps, TeardownFields, last_removal, record_teardown, record_teardown_at,
    teardown_record,
};

/// One audit line: the fields every event carries, then the event and its own fields.
#[serde_with::apply(_ => #[serde(default, deserialize_with = "lenient")])]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub ts: String,
    pub slug: Option<String>,
    pub commit: Option<String>,
    /// The commit the close line names, exactly as written.
    pub claimed_commit: Option<String>,
    pub branch: Option<String>,
    pub worktree: Option<String>,
    /// Null when no verdict on the work was reached (a guard without its gate, a signal).
    pub verdict: Option<Verdict>,
    /// The agent's state word or, for `guard`, its token.
    pub claimed: Option<String>,
    pub codes: Vec<String>,
    pub tool: Option<String>,
    /// Blob id of the configuration the run used.
    pub config: Option<String>,
    /// `base` or `file`.
    pub config_source: Option<String>,
    pub base: Option<String>,
    pub base_commit: Option<String>,
    /// `configured` or `other`.
    pub base_source: Option<String>,
    /// Blob id of the task contract the decision was made under, or null (SPEC §12, §26.1);
    /// absent (`None`) on lines of events that did not carry it before §26 (they read as null:
    /// [`Record::contract`]), so such a line writes back byte for byte.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    #[serde_with(skip_apply)]
    pub contract: Option<Option<String>>,
    /// The protected policy the decision was made under: each surface whose
    /// `[protected.policy]` is not the default `all`, with its word (SPEC §26.1). Absent on lines
    /// that decide nothing (a hook's, a signal's) and on lines written before this field.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[serde_with(skip_apply)]
    pub policy: Option<std::collections::BTreeMap<String, String>>,
    #[serde(flatten)]
    #[serde_with(skip_apply)]
    pub event: Event,
    /// With a record key: the previous line's `mac` (`record` adds it when it writes the line).
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[serde_with(skip_apply)]
    pub prev: Option<String>,
    /// With a record key: the HMAC of the line without it (`record` adds it; see
    /// `record::authenticate`).
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    #[serde_with(skip_apply)]
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

/// A field that does not hold its type reads as its default: a foreign or damaged line never
/// fails the read, and a decision on a default (no commit, no verdict) never passes.
pub(super) fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(
    d: D,
) -> Result<T, D::Error> {
    let value = Value::deserialize(d)?;
    Ok(serde_json::from_value(value).unwrap_or_default())
}

/// A key that may be written as null: absent reads `None` (with `default`), null `Some(None)`,
/// and a value that does not hold its type `Some(None)` too.
pub(super) fn nullable<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    let value = Value::deserialize(d)?;
    Ok(Some(serde_json::from_value(value).ok()))
}

/// A list whose elements that do not hold their type are left out (and anything but a list reads
/// as empty): one damaged entry does not take the others with it.
pub(super) fn lenient_each<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    d: D,
) -> Result<Vec<T>, D::Error> {
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
pub(super) fn records(values: Vec<Value>) -> Vec<Record> {
    values.iter().filter_map(Record::read).collect()
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
}

/// Read the whole audit log ([`Log`]); a missing file reads as empty.
pub fn read(common_dir: &Path) -> Result<Log> {
    Ok(Log {
        read: record::read(common_dir)?,
    })
}

#[cfg(test)]
mod tests;
