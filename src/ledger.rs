//! What each decision writes to the record (SPEC §6): one JSON line per event.

use std::path::Path;

use anyhow::Result;
use serde_json::{Value, json};

use crate::gates::{Inputs, Outcome};
use crate::record;
use crate::report::{Approval, Report};

/// The fields every audit line carries, from a report.
pub fn line(event: &str, report: &Report, claimed: Option<&str>) -> Value {
    json!({
        "ts": record::now_rfc3339(),
        "event": event,
        "slug": report.slug,
        "commit": report.commit,
        "branch": report.branch,
        "worktree": report.worktree,
        "verdict": report.verdict,
        "claimed": claimed,
        "codes": report.codes(),
        "tool": report.tool,
    })
}

/// Append the `check` line of one evaluation.
pub fn record_check(inputs: &Inputs, outcome: &Outcome) -> Result<()> {
    let report = &outcome.report;
    let claimed = report.state.map(|s| s.as_str());
    let mut value = line("check", report, claimed);
    value["base"] = json!(report.base);
    value["base_commit"] = json!(report.base_commit);
    value["mergeable"] = json!(report.mergeable);
    value["approval"] = json!(report.approval);
    value["contract"] = json!(report.contract);
    record::append(&inputs.repo.common_dir(), &value)
}

/// The latest approval recorded by `approve` for exactly this commit and contract blob
/// (SPEC §8, §12): an approval never carries over to another commit or contract.
pub fn approval_for(
    common_dir: &Path,
    commit: &str,
    contract: Option<&str>,
) -> Result<Option<Approval>> {
    let records = record::read(common_dir)?.records;
    let found = records.iter().rev().find(|r| {
        r["event"] == "approve"
            && r["commit"].as_str() == Some(commit)
            && r["contract"].as_str() == contract
            && r["by"].is_string()
    });
    Ok(found.map(|r| Approval {
        by: r["by"].as_str().unwrap_or_default().to_string(),
        at: r["ts"].as_str().unwrap_or_default().to_string(),
        commit: commit.to_string(),
    }))
}

/// Whether `commit` has a passing record (SPEC §9): a VERIFIED verdict from `check`, `approve`
/// (the verdict with the approval applied) or `teardown`, or a `teardown` that removed a clean
/// `closed-without-merge` return.
pub fn has_passing_record(common_dir: &Path, commit: &str) -> Result<bool> {
    let records = record::read(common_dir)?.records;
    Ok(records.iter().any(|r| is_passing(r, commit)))
}

fn is_passing(r: &Value, commit: &str) -> bool {
    if r["commit"].as_str() != Some(commit) {
        return false;
    }
    let event = r["event"].as_str().unwrap_or_default();
    let verified = r["verdict"] == "VERIFIED" && matches!(event, "check" | "approve" | "teardown");
    let stopped =
        event == "teardown" && r["claimed"] == "closed-without-merge" && r["removed"] == true;
    verified || stopped
}
