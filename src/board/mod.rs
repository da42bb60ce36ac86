//! The board (SPEC §13): every worktree's lifecycle stage, from git and the audit log alone.
//!
//! A row is computed from three things that survive restarts, model changes and context
//! compaction: the worktree's HEAD, the status document in its directory, and the last verdict
//! the record holds for that HEAD (or, with `--check`, a fresh one from `fresh`).

pub mod fresh;
pub mod radar;
mod recorded;
pub mod tree;

pub use recorded::{Recorded, conflict_pairs, recorded, recorded_under};

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use git2::Oid;
use serde::Serialize;
use serde_json::Value;

use crate::doc::{self, ParseOptions, State};
use crate::finding::Verdict;
use crate::input_file;
use crate::ledger::{Event, Record};
use crate::record;
use crate::repo::{CommitLookup, Repo, WorktreeInfo};

/// A task's lifecycle stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Stage {
    Running,
    Blocked,
    Verifying,
    Failed,
    Review,
    Unverified,
    Completed,
    Stopped,
    /// Merged into the base (SPEC §7) or landed (SPEC §22).
    Merged,
    /// COMPLETED, but no longer merges cleanly into the current base tip (SPEC §22).
    Conflict,
    /// A reviewer's `reject` of this tip stands (SPEC §21).
    Rejected,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Running => "RUNNING",
            Stage::Blocked => "BLOCKED",
            Stage::Verifying => "VERIFYING",
            Stage::Failed => "FAILED",
            Stage::Review => "REVIEW",
            Stage::Unverified => "UNVERIFIED",
            Stage::Completed => "COMPLETED",
            Stage::Stopped => "STOPPED",
            Stage::Merged => "MERGED",
            Stage::Conflict => "CONFLICT",
            Stage::Rejected => "REJECTED",
        }
    }
}

/// What the worktree's status document says, as far as the board needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocState {
    /// No status document (or no worktree directory on this machine).
    Absent,
    /// A document whose state could not be read (no H1, no or an unknown state word, not UTF-8).
    Unreadable,
    Read(State),
}

/// The stage of a task from its document and the verdict for its current tip (SPEC §13).
///
/// The agent's own state decides while it has not returned (`in-progress`, `blocked`) and when it
/// stopped without merging; otherwise the verdict does, and no verdict yet means `VERIFYING`.
/// A document whose state cannot be read is treated like a return: it is for the gate to judge.
pub fn stage(doc: DocState, verdict: Option<Verdict>) -> Stage {
    match doc {
        DocState::Absent | DocState::Read(State::InProgress) => Stage::Running,
        DocState::Read(State::Blocked) => Stage::Blocked,
        DocState::Read(State::ClosedWithoutMerge) => Stage::Stopped,
        DocState::Read(State::CloseOk | State::Stop2Ready) | DocState::Unreadable => {
            match verdict {
                None => Stage::Verifying,
                Some(Verdict::Fail) => Stage::Failed,
                Some(Verdict::PendingReview) => Stage::Review,
                Some(Verdict::Unverified) => Stage::Unverified,
                Some(Verdict::Verified) => Stage::Completed,
            }
        }
    }
}

/// One row of the board (the `--json` object of one worktree).
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub path: String,
    pub branch: Option<String>,
    pub slug: Option<String>,
    pub state: Option<State>,
    pub verdict: Option<Verdict>,
    pub stage: Stage,
    pub main: bool,
    /// Why: the code of the first finding that decided a FAILED, REVIEW, UNVERIFIED or
    /// REJECTED row's verdict (the human `REASON` column; not in `--json`, whose fields are fixed).
    #[serde(skip)]
    pub reason: Option<String>,
    /// A reviewer's rejection of the tip stands.
    #[serde(skip)]
    pub rejected: bool,
    /// The working-tree column (`board --tree`); omitted without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree: Option<tree::TreeState>,
    #[serde(skip)]
    pub doc: DocState,
    /// The worktree's HEAD commit, when it has one.
    #[serde(skip)]
    pub head: Option<Oid>,
    /// The worktree's directory, when it is on this machine.
    #[serde(skip)]
    pub dir: Option<PathBuf>,
    /// Why the status document could not be read as an input file (SPEC §11: a FIFO, a device,
    /// a directory, over 16 MiB), naming it.
    #[serde(skip)]
    pub unreadable: Option<String>,
    /// The branch's work is in the base (SPEC §13's MERGED rule); see `radar`.
    #[serde(skip)]
    pub merged: bool,
    /// The tip no longer merges cleanly into the base tip.
    #[serde(skip)]
    pub conflict: bool,
}

impl Row {
    /// Set the verdict and the codes of the findings behind it, and derive the stage again.
    pub fn set_verdict(&mut self, verdict: Option<Verdict>, codes: &[String]) {
        self.verdict = verdict;
        self.rejected = codes.iter().any(|c| c == "review-rejected");
        self.stage = stage_of(self.doc, verdict, self.rejected, self.merged, self.conflict);
        self.reason = reason(self.stage, verdict, codes);
    }
}

/// [`stage`], refined by the radar (MERGED, CONFLICT), unless a reviewer's rejection of the tip
/// stands: then REJECTED, which MERGED does not outrank (SPEC §13).
fn stage_of(
    doc: DocState,
    verdict: Option<Verdict>,
    rejected: bool,
    merged: bool,
    conflict: bool,
) -> Stage {
    if rejected {
        return Stage::Rejected;
    }
    radar::refine(stage(doc, verdict), merged, conflict)
}

/// The board's reason for a FAILED, REVIEW, UNVERIFIED or REJECTED row: the first of `codes`
/// (a report's or record's, in the order the gates found them) whose severity is the one that
/// decided `verdict` (a refusal for FAIL, …); the first code at all when none has it.
pub fn reason(stage: Stage, verdict: Option<Verdict>, codes: &[String]) -> Option<String> {
    use crate::finding::Severity;
    if stage == Stage::Rejected {
        return Some("review-rejected".to_string());
    }
    let wanted = match (stage, verdict?) {
        (Stage::Failed, Verdict::Fail) => Severity::Refusal,
        (Stage::Review, Verdict::PendingReview) => Severity::Review,
        (Stage::Unverified, Verdict::Unverified) => Severity::Gap,
        _ => return None,
    };
    let severity = |c: &String| crate::catalog::lookup(c).map(|i| i.severity);
    codes
        .iter()
        .find(|c| severity(c) == Some(wanted))
        .or(codes.first())
        .cloned()
}

/// The last recorded verdict per commit (with its record's codes), and the commits whose
/// reviewer's rejection stands, from one pass over the audit log.
pub struct Ledger {
    last: HashMap<String, (Verdict, Vec<String>)>,
    rejected: std::collections::HashSet<String>,
}

impl Ledger {
    /// Read the audit log of the repository whose common dir is `common`: only the records that
    /// count (authenticated when a record key exists) and that were made with the base tip's
    /// configuration and the configured base (SPEC §6).
    pub fn read(common: &Path) -> Result<Ledger> {
        Ledger::read_all(common, None)
    }

    /// [`Ledger::read`], counting only verdicts made under the configuration blob `config` (the
    /// base tip's now; `None` for the defaults): once the base's configuration changes, older
    /// verdicts say nothing until checked again (SPEC §9).
    pub fn read_under(common: &Path, config: Option<&str>) -> Result<Ledger> {
        Ledger::read_all(common, Some(config))
    }

    fn read_all(common: &Path, config: Option<Option<&str>>) -> Result<Ledger> {
        let wanted = |v: &Value| {
            Record::read(v).is_some_and(|r| verdict_of(&r).is_some() || r.is_rejection())
        };
        let records: Vec<Record> = record::read_authentic_where(common, wanted)?
            .iter()
            .filter_map(Record::read)
            .collect();
        // A rejection stands whatever configuration it was recorded under (it only makes the
        // verdict stricter); verdicts count only under the configuration asked for.
        let rejected = crate::ledger::rejected_commits(&records);
        let current = |r: &&Record| config.is_none_or(|c| r.config.as_deref() == c);
        let mut last = HashMap::new();
        for r in records.iter().filter(current) {
            if let Some((commit, verdict)) = verdict_of(r) {
                last.insert(commit.to_string(), (verdict, r.codes.clone()));
            }
        }
        Ok(Ledger { last, rejected })
    }

    fn verdict(&self, commit: Oid) -> Option<Verdict> {
        self.last.get(&commit.to_string()).map(|(v, _)| *v)
    }

    /// The codes of the record that gave `commit` its last verdict.
    fn codes(&self, commit: Oid) -> &[String] {
        self.last
            .get(&commit.to_string())
            .map_or(&[], |(_, codes)| codes.as_slice())
    }

    fn is_rejected(&self, commit: Oid) -> bool {
        self.rejected.contains(&commit.to_string())
    }
}

/// The commit and verdict of a trusted `check`, `approve`, `reject` (always `FAIL`: the gate with
/// the rejection applied) or `teardown` record.
fn verdict_of(r: &Record) -> Option<(&str, Verdict)> {
    let event = matches!(
        r.event,
        Event::Check(_)
            | Event::Approve(_)
            | Event::Reject(_)
            | Event::Teardown(_)
            | Event::Land(_)
    );
    if !event || !r.is_trusted() {
        return None;
    }
    Some((r.commit.as_deref()?, r.verdict?))
}

/// One row per worktree: the main one first, then the linked ones by path.
///
/// `base` is the base tip: a document byte-identical to the one at the merge base of the base and
/// the worktree's HEAD is inherited, not this agent's claim, and read as absent (SPEC §17).
pub fn rows(repo: &Repo, status_file: &str, ledger: &Ledger, base: Option<Oid>) -> Vec<Row> {
    let mut worktrees = repo.worktrees();
    worktrees.sort_by(|a, b| (!a.main, &a.path).cmp(&(!b.main, &b.path)));
    worktrees
        .iter()
        .map(|wt| row(repo, wt, status_file, ledger, base))
        .collect()
}

fn row(
    repo: &Repo,
    wt: &WorktreeInfo,
    status_file: &str,
    ledger: &Ledger,
    base: Option<Oid>,
) -> Row {
    let head_ref = wt.head_ref();
    let head = if wt.exists {
        repo.worktree_head(&wt.path)
    } else {
        head_ref.as_deref().and_then(|r| repo.ref_target(r))
    };
    let (doc, slug, claimed, unreadable) = match read_input(wt, status_file) {
        Ok(bytes) => {
            let inherited =
                |bytes: &[u8]| crate::inherited::is_inherited(repo, base, head, status_file, bytes);
            let (doc, slug, claimed) = read_doc(bytes, inherited);
            (doc, slug, claimed, None)
        }
        Err(why) => (DocState::Unreadable, None, None, Some(format!("{why:#}"))),
    };
    let judged = head.and_then(|head| {
        let tip = tip_verdict(repo, ledger, head, status_file);
        tip.or_else(|| stale_claim_failed(repo, ledger, claimed.as_deref()))
    });
    let verdict = judged.map(|(_, v)| v);
    let codes = judged.map_or(&[][..], |(commit, _)| ledger.codes(commit));
    let rejected = rejected(repo, ledger, head, status_file, codes);
    let state = match doc {
        DocState::Read(state) => Some(state),
        _ => None,
    };
    let branch = head_ref.map(|r| r.strip_prefix("refs/heads/").unwrap_or(&r).to_string());
    let (merged, conflict) = radar::judge_row(repo, wt.main, head, base, verdict, status_file);
    let stage = stage_of(doc, verdict, rejected, merged, conflict);
    Row {
        path: wt.path.display().to_string(),
        branch,
        slug,
        state,
        verdict,
        stage,
        main: wt.main,
        reason: reason(stage, verdict, codes),
        rejected,
        tree: None,
        doc,
        head,
        dir: wt.exists.then(|| wt.path.clone()),
        unreadable,
        merged,
        conflict,
    }
}

/// Whether a reviewer's rejection stands for the tip: a rejection of this commit (or of the one
/// a trailing status-only commit stands for), or one the gate found for its tree (the record of
/// a check of a reworded or emptily amended rejected commit names `review-rejected`).
fn rejected(
    repo: &Repo,
    ledger: &Ledger,
    head: Option<Oid>,
    status_file: &str,
    codes: &[String],
) -> bool {
    head.is_some_and(|head| {
        crate::covered::candidates(repo, head, status_file)
            .into_iter()
            .any(|c| ledger.is_rejected(c))
    }) || codes.iter().any(|c| c == "review-rejected")
}

/// The bytes of the status document in the worktree's directory (`None`: no document, or no
/// directory on this machine). A FIFO, a device, a folder or a file past 16 MiB (SPEC §11) is an
/// error naming it: that row is unreadable, the rest of the board is not held up by it.
fn read_input(wt: &WorktreeInfo, status_file: &str) -> Result<Option<Vec<u8>>> {
    if !wt.exists {
        return Ok(None);
    }
    match input_file::read(&wt.path.join(status_file)) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if is_not_found(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The status document's state, slug and the commit its close line names. An inherited
/// document (`inherited` says so of its bytes) is read as absent.
fn read_doc(
    bytes: Option<Vec<u8>>,
    inherited: impl FnOnce(&[u8]) -> bool,
) -> (DocState, Option<String>, Option<String>) {
    let Some(bytes) = bytes else {
        return (DocState::Absent, None, None);
    };
    if inherited(&bytes) {
        return (DocState::Absent, None, None);
    }
    let parsed = doc::parse(&bytes, ParseOptions::default());
    match parsed.doc {
        Some(d) => {
            let state = d.state.map_or(DocState::Unreadable, DocState::Read);
            (state, Some(d.slug), d.close.map(|c| c.commit))
        }
        None => (DocState::Unreadable, None, None),
    }
}

/// Whether reading an input failed because the file does not exist.
fn is_not_found(err: &anyhow::Error) -> bool {
    err.downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::NotFound)
}

/// `FAIL` when the close line names a commit other than the tip and the record refused that
/// claim: the claim still names a commit that is not the tip, so the gate can only refuse it
/// again. Any other verdict recorded for an older commit says nothing about the tip.
fn stale_claim_failed(
    repo: &Repo,
    ledger: &Ledger,
    claimed: Option<&str>,
) -> Option<(Oid, Verdict)> {
    let CommitLookup::Found(commit) = repo.lookup_commit(claimed?) else {
        return None;
    };
    (ledger.verdict(commit) == Some(Verdict::Fail)).then_some((commit, Verdict::Fail))
}

/// The last verdict recorded for `head`; else for its parent when `head` is one trailing commit
/// that changes only the status document (the close line names the commit before it, SPEC §4.3;
/// the rule of `crate::covered`).
fn tip_verdict(
    repo: &Repo,
    ledger: &Ledger,
    head: Oid,
    status_file: &str,
) -> Option<(Oid, Verdict)> {
    crate::covered::candidates(repo, head, status_file)
        .into_iter()
        .find_map(|commit| ledger.verdict(commit).map(|v| (commit, v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_follows_the_state_until_the_agent_returns() {
        let any = [None, Some(Verdict::Verified), Some(Verdict::Fail)];
        for verdict in any {
            assert_eq!(stage(DocState::Absent, verdict), Stage::Running);
            assert_eq!(
                stage(DocState::Read(State::InProgress), verdict),
                Stage::Running
            );
            assert_eq!(
                stage(DocState::Read(State::Blocked), verdict),
                Stage::Blocked
            );
            let stopped = DocState::Read(State::ClosedWithoutMerge);
            assert_eq!(stage(stopped, verdict), Stage::Stopped);
        }
    }

    #[test]
    fn stage_of_a_return_follows_the_verdict() {
        for doc in [
            DocState::Read(State::CloseOk),
            DocState::Read(State::Stop2Ready),
            DocState::Unreadable,
        ] {
            assert_eq!(stage(doc, None), Stage::Verifying);
            assert_eq!(stage(doc, Some(Verdict::Fail)), Stage::Failed);
            assert_eq!(stage(doc, Some(Verdict::PendingReview)), Stage::Review);
            assert_eq!(stage(doc, Some(Verdict::Unverified)), Stage::Unverified);
            assert_eq!(stage(doc, Some(Verdict::Verified)), Stage::Completed);
        }
    }
}
