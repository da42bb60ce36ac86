//! What each decision writes to the record (SPEC §6): one JSON line per event.

use anyhow::Result;
use serde_json::{Value, json};

use crate::gates::{Inputs, Outcome};
use crate::record;
use crate::report::Report;

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
