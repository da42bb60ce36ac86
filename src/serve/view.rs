//! What the page shows, read the way every reader reads (SPEC §25): the board rows from the
//! same function as `board --json`, and the records that count (authenticated ones where a
//! record key exists) from one read of the audit log, with no lock held.

use std::collections::HashMap;
use std::path::Path;

use anyhow::Result;
use git2::Oid;
use serde_json::Value;

use crate::board::Row;
use crate::ledger::{Event, FindingEntry, ProtectedEntry, Record};
use crate::repo::Repo;
use crate::report::CheckEntry;
use crate::stats::{self, Return};

/// The most records a worktree's timeline lists (the most recent ones).
pub const TIMELINE: usize = 40;
/// The most bytes of one protected path's diff shown.
const DIFF_BYTES: usize = 64 * 1024;
/// The most check durations the chart plots (the most recent ones).
pub const DURATIONS: usize = 600;

/// Everything the page shows.
pub struct View {
    pub worktrees: Vec<Worktree>,
    /// The returns (SPEC §6), each with its first record's time and verdict.
    pub returns: Vec<Return>,
    /// `(seconds since the epoch, check name, duration in ms)` of checks that ran (not reused).
    pub durations: Vec<(i64, String, u64)>,
    /// Lines whose mac does not verify (ignored) and lines that are no record (skipped).
    pub forged: usize,
    pub skipped: usize,
    /// When the view was read, in seconds since the epoch.
    pub now: i64,
    /// The conflict radar (SPEC §22): live agent branches that conflict with each other.
    pub conflicts: Vec<crate::board::radar::Pair>,
}

/// One worktree's row and what the page shows under it.
pub struct Worktree {
    pub row: Row,
    /// The status document's abstract (agent text).
    pub abstract_text: Option<String>,
    /// When the worktree's HEAD commit was made (seconds since the epoch).
    pub committed_at: Option<i64>,
    /// The worktree's last `check` record.
    pub last_check: Option<LastCheck>,
    /// Its most recent records, oldest first, and how many earlier ones are not listed.
    pub timeline: Vec<Moment>,
    pub earlier: usize,
}

/// What the last `check` of a worktree found.
pub struct LastCheck {
    pub ts: String,
    pub commit: Option<String>,
    pub verdict: Option<String>,
    pub findings: Vec<FindingEntry>,
    /// Each protected change with its diff from the merge base (when git still has both).
    pub protected: Vec<(ProtectedEntry, Option<String>)>,
    pub checks: Vec<CheckEntry>,
    /// The record's `integrity` object (SPEC §23), as written.
    pub integrity: Option<Value>,
}

/// One record on a timeline.
pub struct Moment {
    pub ts: String,
    pub event: String,
    pub verdict: Option<String>,
    pub codes: Vec<String>,
}

/// Read the view of the repository `repo`.
pub fn read(repo: &Repo) -> Result<View> {
    let recorded = crate::board::recorded(repo)?;
    let read = crate::ledger::read(&repo.common_dir())?;
    let forged = read.lines.iter().filter(|(_, a)| !a.counts()).count();
    let counted: Vec<&Value> = read.counted().collect();
    let by_worktree = index(&counted);
    let conflicts = crate::board::conflict_pairs(repo, &recorded.rows, &recorded.config);
    let status_file = recorded.status_file;
    let worktrees = recorded
        .rows
        .into_iter()
        .map(|row| {
            let mine = mine(&row, &by_worktree, &counted);
            worktree(repo, row, &mine, &status_file)
        })
        .collect();
    Ok(View {
        worktrees,
        returns: stats::returns(&counted),
        durations: durations(&counted),
        forged,
        skipped: read.skipped.len(),
        now: now(),
        conflicts,
    })
}

pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Record indexes by the worktree path they name, and by branch for records naming none.
fn index<'a>(records: &[&'a Value]) -> HashMap<(bool, &'a str), Vec<usize>> {
    let mut map: HashMap<(bool, &str), Vec<usize>> = HashMap::new();
    for (i, r) in records.iter().enumerate() {
        if let Some(path) = r["worktree"].as_str() {
            map.entry((true, path)).or_default().push(i);
        } else if let Some(branch) = r["branch"].as_str() {
            map.entry((false, branch)).or_default().push(i);
        }
    }
    map
}

/// A row's records, in log order: those naming its path, and those naming no worktree but its
/// branch.
fn mine<'a>(
    row: &Row,
    index: &HashMap<(bool, &str), Vec<usize>>,
    records: &[&'a Value],
) -> Vec<&'a Value> {
    let mut at: Vec<usize> = index
        .get(&(true, row.path.as_str()))
        .cloned()
        .unwrap_or_default();
    if let Some(branch) = &row.branch {
        at.extend(index.get(&(false, branch.as_str())).into_iter().flatten());
    }
    at.sort_unstable();
    at.into_iter().map(|i| records[i]).collect()
}

fn worktree(repo: &Repo, row: Row, mine: &[&Value], status_file: &str) -> Worktree {
    let committed_at = row.head.and_then(|head| repo.commit_time(head));
    let last_check = mine
        .iter()
        .rev()
        .find(|r| r["event"] == "check")
        .and_then(|r| last_check(repo, r));
    let from = mine.len().saturating_sub(TIMELINE);
    let timeline = mine[from..].iter().map(|r| moment(r)).collect();
    Worktree {
        abstract_text: abstract_of(&row, status_file),
        row,
        committed_at,
        last_check,
        timeline,
        earlier: from,
    }
}

/// The abstract of the row's status document, when the board read it as this agent's own (a
/// document inherited from the base has no slug on the board and shows none).
fn abstract_of(row: &Row, status_file: &str) -> Option<String> {
    row.slug.as_ref()?;
    let bytes = crate::input_file::read(&row.dir.as_ref()?.join(status_file)).ok()?;
    let parsed = crate::doc::parse(&bytes, crate::doc::ParseOptions::default());
    parsed.doc?.abstract_text
}

fn last_check(repo: &Repo, raw: &Value) -> Option<LastCheck> {
    let record = Record::read(raw)?;
    let Event::Check(fields) = record.event else {
        return None;
    };
    let commit = record.commit.as_deref().and_then(|c| Oid::from_str(c).ok());
    let base = record
        .base_commit
        .as_deref()
        .and_then(|c| Oid::from_str(c).ok());
    let from = match (base, commit) {
        (Some(base), Some(commit)) => repo.merge_base(base, commit),
        _ => None,
    };
    let protected = fields
        .protected
        .into_iter()
        .map(|p| {
            let diff = commit.and_then(|c| repo.path_patch(from, c, &p.path, DIFF_BYTES));
            (p, diff)
        })
        .collect();
    Some(LastCheck {
        ts: record.ts,
        commit: record.commit,
        verdict: record.verdict.map(|v| v.as_str().to_string()),
        findings: fields.findings,
        protected,
        checks: fields.checks,
        integrity: raw.get("integrity").filter(|v| !v.is_null()).cloned(),
    })
}

fn moment(r: &Value) -> Moment {
    let text = |key: &str| r[key].as_str().map(str::to_string);
    Moment {
        ts: text("ts").unwrap_or_default(),
        event: text("event").unwrap_or_default(),
        verdict: text("verdict"),
        codes: r["codes"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// The durations of the checks that ran (a reused result ran earlier), the most recent
/// [`DURATIONS`].
fn durations(records: &[&Value]) -> Vec<(i64, String, u64)> {
    let mut all = Vec::new();
    for r in records.iter().filter(|r| r["event"] == "check") {
        let Some(ts) = r["ts"].as_str().and_then(stats::instant) else {
            continue;
        };
        for entry in r["checks"].as_array().into_iter().flatten() {
            let name = entry["name"].as_str();
            let ms = entry["duration_ms"].as_u64();
            if let (Some(name), Some(ms), true) = (name, ms, entry["reused"].is_null()) {
                all.push((ts, name.to_string(), ms));
            }
        }
    }
    let from = all.len().saturating_sub(DURATIONS);
    all.split_off(from)
}

/// Whether `path` is still there: the page names a repository that went away.
pub fn gone(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_err()
}
