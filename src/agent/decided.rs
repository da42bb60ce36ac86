//! The newest decision recorded for a branch (SPEC §26.1), as the stop hook asks it: whether the
//! status document is a claim no verdict has seen yet, and whether a VERIFIED stop can reuse the
//! verdict already recorded for this branch at this commit instead of running the gate again.
//!
//! verdict(#36): the lead's one query ("the newest decision for this branch at this commit")
//! replaces [`newest_for_branch`]; everything else here only compares what it returns.

use std::path::Path;

use git2::Oid;
use serde_json::Value;

use crate::doc::StatusDoc;
use crate::finding::Verdict;
use crate::inputs::Trusted;
use crate::ledger::Record;
use crate::repo::Repo;

/// verdict(#36): the newest record that carries a verdict for `branch`, in log order (only the
/// records that count: authenticated where a record key exists).
pub fn newest_for_branch(common: &Path, branch: &str) -> Option<Record> {
    let needle = format!("\"branch\":{}", Value::from(branch));
    let lines = crate::record::read_mentioning(common, &needle).ok()?;
    lines
        .iter()
        .rev()
        .filter_map(Record::read)
        .find(|r| r.branch.as_deref() == Some(branch) && r.verdict.is_some())
}

/// Whether `record` judged the claim `doc` makes: the same slug and claimed commit, and the same
/// state when the record names one (a `guard` record names the token instead).
pub fn judged(record: &Record, doc: &StatusDoc) -> bool {
    let claimed_commit = doc.close.as_ref().map(|c| c.commit.as_str());
    let state = doc.state.map(|s| s.as_str());
    let states = [
        "close-ok",
        "stop-2-ready",
        "closed-without-merge",
        "in-progress",
        "blocked",
    ];
    let same_state = match record.claimed.as_deref() {
        Some(word) if states.contains(&word) => Some(word) == state,
        _ => true,
    };
    record.slug.as_deref() == Some(doc.slug.as_str())
        && record.claimed_commit.as_deref() == claimed_commit
        && same_state
}

/// Whether `record` is a VERIFIED decision that can stand for the gate now: made under the base
/// tip's configuration and the contract that binds the branch now, on `head` (or the commit a
/// trailing status-only `head` stands for), not a rejection.
pub fn reusable(repo: &Repo, record: &Record, head: Oid, trusted: &Trusted) -> bool {
    let config = trusted.config_blob.as_deref();
    if record.verdict != Some(Verdict::Verified) || !record.is_trusted() || record.is_rejection() {
        return false;
    }
    let candidates = crate::covered::candidates(repo, head, &trusted.config.status_file);
    let at_head = record
        .commit
        .as_deref()
        .is_some_and(|c| candidates.iter().any(|id| id.to_string() == c));
    if !at_head || record.config.as_deref() != config {
        return false;
    }
    // The contract that binds the branch now must be the one the verdict was made under.
    let binding = crate::covered::Binding {
        config: Some(config.map(str::to_string)),
        tip: trusted.tip.clone(),
    };
    let pass = crate::ledger::Pass {
        commit: record.commit.clone().unwrap_or_default(),
        config: record.config.clone(),
        contract: contract_of(record),
        slug: record.slug.clone(),
        branch: record.branch.clone(),
        merge: true,
    };
    binding.holds(repo, &pass)
}

/// The contract blob a record was made under (`None` inside: none applied), when its event says.
fn contract_of(record: &Record) -> Option<Option<String>> {
    match &record.event {
        crate::ledger::Event::Check(c) => Some(c.contract.clone()),
        crate::ledger::Event::Approve(a) => Some(a.contract.clone()),
        _ => None,
    }
}
