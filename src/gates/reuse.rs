//! Reuse of recorded check results (SPEC §19): a check's result is keyed by (the commit's tree
//! id, the check's name, `run` and `timeout_s`, the configuration's blob id, `CLOSEGATE_BASE`'s
//! commit, the `CLOSEGATE_SLUG` and `CLOSEGATE_BRANCH` values the check is given, and with
//! `reuse = "commit"` the commit id), plus the sandbox word the check ran under (a result obtained unconfined is not
//! reused by a confined run, nor the other way round). Each `check` record stores its checks
//! with that key; a later run with the same key takes the recorded result instead of running
//! the check again, a failed or timed-out one like a passing one.
//!
//! Only records that count are read: through `record::read_mentioning` (with a record key only
//! authenticated lines, the reader the approval lookup uses), of the `check` event, and made
//! with the base tip's configuration and the configured base (`ledger::is_trusted`).

use std::path::Path;

use anyhow::Result;

use crate::catalog::Code;
use crate::config::CheckSpec;
use crate::finding::Finding;
use crate::ledger::Record;
use crate::report::{CheckEntry, CheckRun};

/// The parts of a check's key shared by every check of one run.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    /// The commit's tree id.
    pub tree: String,
    /// The configuration's blob id (null for the built-in defaults).
    pub config: Option<String>,
    /// `CLOSEGATE_BASE`'s commit (null when the base did not resolve).
    pub base_commit: Option<String>,
    /// The `CLOSEGATE_SLUG` value the checks are given: a check may read it, so a result under
    /// one slug says nothing about another.
    pub slug: String,
    /// The `CLOSEGATE_BRANCH` value the checks are given.
    pub branch: String,
    /// The commit id (`CLOSEGATE_COMMIT`): in the key of a check with `reuse = "commit"`.
    pub commit: String,
}

/// The trusted `check` records whose line mentions the tree, newest first.
#[derive(Debug, Default)]
pub struct Recorded {
    records: Vec<Record>,
    /// Entries of runs made earlier in this same command (the base runs that built base
    /// snapshots): they stand for a run of the same key, as the run it is.
    now: Vec<CheckEntry>,
}

impl Recorded {
    /// The records that may be reused for `key`; none with `--rerun`.
    pub fn load(common_dir: &Path, key: &Key, rerun: bool) -> Result<Recorded> {
        if rerun {
            return Ok(Recorded::default());
        }
        let records = crate::record::read_mentioning(common_dir, &key.tree)?;
        let mut records: Vec<Record> = records
            .iter()
            .filter_map(Record::read)
            .filter(|r| r.checks().is_some() && r.is_trusted())
            .collect();
        records.reverse();
        Ok(Recorded {
            records,
            now: Vec::new(),
        })
    }

    /// These records, and `entries` of runs this command made itself.
    pub fn with_runs_made_now(mut self, entries: Vec<CheckEntry>) -> Recorded {
        self.now = entries;
        self
    }

    /// The newest recorded result of `spec` under exactly this key and sandbox word, as the run
    /// and finding it recorded; `reused` names the record it first came from.
    pub fn find(
        &self,
        key: &Key,
        spec: &CheckSpec,
        sandbox: &str,
    ) -> Option<(CheckRun, Option<Finding>)> {
        if let Some(e) = self.now.iter().find(|e| matches(e, key, spec, sandbox)) {
            return result(e, spec, None);
        }
        self.records.iter().find_map(|r| {
            let checks = r.checks()?;
            let entry = checks.iter().find(|e| matches(e, key, spec, sandbox))?;
            let ts = entry.reused.as_deref().unwrap_or(&r.ts).to_string();
            result(entry, spec, Some(ts))
        })
    }
}

/// Whether the recorded entry `e` stands for a run of `spec` under `key` and the sandbox word
/// `sandbox`: the one rule of what a reuse key holds (SPEC §19).
pub fn matches(e: &CheckEntry, key: &Key, spec: &CheckSpec, sandbox: &str) -> bool {
    e.name == spec.name
        && e.run == spec.run
        && e.timeout_s == spec.timeout_s
        && e.tree == key.tree
        && e.config == key.config
        && e.base_commit == key.base_commit
        && e.slug.as_deref() == Some(key.slug.as_str())
        && e.branch.as_deref() == Some(key.branch.as_str())
        && (!spec.reuse_commit || e.commit.as_deref() == Some(key.commit.as_str()))
        && e.sandbox == sandbox
        // A result recorded without the census a check now takes (SPEC §26.4) stands for no run.
        && (!spec.census.is_on() || e.census.is_some())
}

/// The recorded run and finding, when the entry is consistent: a passing exit has no finding,
/// anything else has `check-failed` or `check-timeout`. `ts`: the record it was reused from;
/// `None` for a run this command made itself (its words as they were).
fn result(
    e: &CheckEntry,
    spec: &CheckSpec,
    ts: Option<String>,
) -> Option<(CheckRun, Option<Finding>)> {
    let passed = !e.timed_out && e.exit_code == Some(0);
    let message = e.message.as_deref();
    let finding = match (e.finding.as_deref().and_then(Code::parse), passed) {
        (None, true) => None,
        (Some(Code::CheckTimeout), false) if e.timed_out => Some(Finding::new(
            Code::CheckTimeout,
            reused_message(message?, ts.as_deref()),
        )),
        (Some(Code::CheckFailed), false) if !e.timed_out => Some(Finding::new(
            Code::CheckFailed,
            reused_message(message?, ts.as_deref()),
        )),
        _ => return None,
    };
    let run = CheckRun {
        name: spec.name.clone(),
        command: spec.run.clone(),
        exit_code: if e.timed_out { None } else { e.exit_code },
        timed_out: e.timed_out,
        duration_ms: e.duration_ms,
        output: e.output.clone(),
        reused: ts,
        red_on_base: None,
        census: None,
        tally: e.census.as_ref().map(crate::runners::census::Stored::tally),
        census_note: None,
        snapshot: None,
        parallel: false,
        retries: 0,
        flaky: Vec::new(),
        rerun_passed: false,
    };
    Some((run, finding))
}

fn reused_message(message: &str, ts: Option<&str>) -> String {
    match ts {
        Some(ts) => format!("{message} (result recorded at {ts}, reused; --rerun runs it again)"),
        None => message.to_string(),
    }
}

/// The record's entry for one check: its key, the sandbox word, and its result.
pub fn entry(
    key: &Key,
    spec: &CheckSpec,
    sandbox: &str,
    run: &CheckRun,
    finding: Option<&Finding>,
) -> CheckEntry {
    let message = finding.map(|f| {
        // A reused finding carries the note about reuse; the record keeps the original words.
        let m = f.message.as_str();
        m.find(" (result recorded at ")
            .map_or(m, |i| &m[..i])
            .to_string()
    });
    CheckEntry {
        name: spec.name.clone(),
        run: spec.run.clone(),
        timeout_s: spec.timeout_s,
        tree: key.tree.clone(),
        config: key.config.clone(),
        base_commit: key.base_commit.clone(),
        slug: Some(key.slug.clone()),
        branch: Some(key.branch.clone()),
        commit: spec.reuse_commit.then(|| key.commit.clone()),
        sandbox: sandbox.to_string(),
        exit_code: run.exit_code,
        timed_out: run.timed_out,
        duration_ms: run.duration_ms,
        output: run.output.clone(),
        finding: finding.map(|f| f.code.to_string()),
        message,
        reused: run.reused.clone(),
        census: run.tally.as_ref().map(crate::runners::census::Stored::of),
    }
}
