//! What each decision writes to the record (SPEC §6): one JSON line per event, and which
//! records count when a later decision reads them.
//!
//! A record counts only when it is authenticated (with a record key: `record::read_mentioning`
//! and `record::read_authentic` return nothing else) and, for a verdict that passes or approves,
//! when it was made with the base tip's configuration and the configured base
//! (`config_source: "base"`, `base_source: "configured"`): a run under `--config FILE` or another
//! `--base` is kept and listed, never trusted.

use std::collections::HashSet;
use std::path::Path;

use anyhow::Result;
use serde_json::{Value, json};

use crate::gates::{Inputs, Outcome};
use crate::record;
use crate::report::{Approval, Report};

/// The fields every audit line carries, from a report: who claimed what, the verdict, and the
/// provenance of the run (configuration blob and how it was chosen, the base and its commit).
pub fn line(event: &str, report: &Report, claimed: Option<&str>) -> Value {
    let provenance = report.provenance;
    json!({
        "ts": record::now_rfc3339(),
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
    })
}

/// Whether a record was made with the base tip's configuration and the configured (or default)
/// base: only such a record passes, approves or is reused (SPEC §6 provenance).
pub fn is_trusted(r: &Value) -> bool {
    r["config_source"] == "base" && r["base_source"] == "configured"
}

/// Append the `check` line of one evaluation.
pub fn record_check(inputs: &Inputs, outcome: &Outcome) -> Result<()> {
    let report = &outcome.report;
    let claimed = report.state.map(|s| s.as_str());
    let mut value = line("check", report, claimed);
    value["mergeable"] = json!(report.mergeable);
    value["approval"] = json!(report.approval);
    value["contract"] = json!(report.contract);
    value["checks"] = json!(report.check_entries);
    record::append(&inputs.repo.common_dir(), &value)
}

/// The latest approval recorded by `approve` for exactly this commit, configuration blob and
/// contract blob (SPEC §8, §12): an approval never carries over to another commit, nor survives a
/// change of the configuration or the contract on the base. Only authenticated, trusted records.
pub fn approval_for(
    common_dir: &Path,
    commit: &str,
    contract: Option<&str>,
    config: Option<&str>,
) -> Result<Option<Approval>> {
    let records = record::read_mentioning(common_dir, commit)?;
    let found = records.iter().rev().find(|r| {
        r["event"] == "approve"
            && r["commit"].as_str() == Some(commit)
            && r["contract"].as_str() == contract
            && r["config"].as_str() == config
            && r["by"].is_string()
            && is_trusted(r)
    });
    Ok(found.map(|r| Approval {
        by: r["by"].as_str().unwrap_or_default().to_string(),
        at: r["ts"].as_str().unwrap_or_default().to_string(),
        commit: commit.to_string(),
    }))
}

/// Whether `commit` has a passing record (SPEC §9): a VERIFIED verdict from `check`, `approve`
/// (the verdict with the approval applied) or `teardown`, or a `teardown` that removed a clean
/// `closed-without-merge` return — authenticated, and made with the base tip's configuration and
/// the configured base.
pub fn has_passing_record(common_dir: &Path, commit: &str) -> Result<bool> {
    let records = record::read_mentioning(common_dir, commit)?;
    Ok(records
        .iter()
        .any(|r| is_passing(r) && r["commit"].as_str() == Some(commit)))
}

/// Every commit with a passing record (as [`has_passing_record`] counts them), from one pass
/// over the audit log (the hook asks about several agent tips in one transaction).
pub fn passing_commits(common_dir: &Path) -> Result<HashSet<String>> {
    let records = record::read_authentic_where(common_dir, is_passing)?;
    Ok(records
        .iter()
        .filter_map(|r| r["commit"].as_str().map(str::to_string))
        .collect())
}

/// A passing verdict from a trusted record.
fn is_passing(r: &Value) -> bool {
    let event = r["event"].as_str().unwrap_or_default();
    let verified = r["verdict"] == "VERIFIED" && matches!(event, "check" | "approve" | "teardown");
    let stopped =
        event == "teardown" && r["claimed"] == "closed-without-merge" && r["removed"] == true;
    (verified || stopped) && is_trusted(r)
}

/// Append a `teardown` line: the common fields plus `removed` and the event's own `fields`.
pub fn record_teardown(
    common_dir: &Path,
    report: &Report,
    claimed: Option<&str>,
    removed: bool,
    fields: Value,
) -> Result<()> {
    let mut value = line("teardown", report, claimed);
    value["removed"] = json!(removed);
    merge(&mut value, fields);
    record::append(common_dir, &value)
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
    let mut value = line("approve", report, claimed);
    value["note"] = json!(note);
    value["contract"] = json!(report.contract);
    match refused {
        None => value["by"] = json!(by),
        Some(reason) => {
            value["by"] = Value::Null;
            value["requested_by"] = json!(by);
            value["refused"] = json!(reason);
        }
    }
    record::append(common_dir, &value)
}

/// The latest `teardown` record for the worktree at `worktree` that removed (or began removing)
/// it: how a second teardown of the same path knows the first one passed.
pub fn last_removal(common_dir: &Path, worktree: &str) -> Result<Option<Value>> {
    let records = record::read_authentic(common_dir)?;
    Ok(records
        .into_iter()
        .rev()
        .find(|r| r["event"] == "teardown" && r["worktree"] == worktree && r["removed"] == true))
}

/// Copy the members of the object `extra` into the object `value`.
fn merge(value: &mut Value, extra: Value) {
    if let (Some(target), Value::Object(extra)) = (value.as_object_mut(), extra) {
        target.extend(extra);
    }
}
