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

use std::path::{Path, PathBuf};

use anyhow::Result;
use git2::Oid;
use serde::Serialize;

use crate::doc::{self, ParseOptions, State};
use crate::finding::Verdict;
use crate::input_file;
use crate::repo::{CommitLookup, Repo, WorktreeInfo};
use crate::verdict::{Book, Claim, Decision, Owner, Under};

/// A task's lifecycle stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
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

/// The record as the board reads it: the decisions of the audit log, read once, and what a
/// decision must have been made under to count (the base tip's configuration and contracts).
/// Every row asks the one question of `crate::verdict`.
pub struct Ledger {
    book: Book,
    under: Under,
}

impl Ledger {
    /// Read the decisions of the repository whose common dir is `common` (authenticated only,
    /// where a record key exists), counted under the base tip's configuration blob `config`
    /// (`None`: the defaults) and the contracts of `tip` (SPEC §26.1).
    pub fn read_under(
        common: &Path,
        config: Option<String>,
        tip: Option<(String, Oid)>,
    ) -> Result<Ledger> {
        Ok(Ledger {
            book: Book::read(common)?,
            under: Under::base(config, tip),
        })
    }

    /// The decisions read.
    pub fn book(&self) -> &Book {
        &self.book
    }

    /// The newest decision on `owner`'s claim at `commit`, for the slug its document claims now
    /// (`None`: any), read in `worktree` (the one question).
    fn decision(
        &self,
        repo: &Repo,
        owner: &Owner,
        (commit, slug): (Oid, Option<&str>),
        worktree: Option<&Path>,
        status_file: &str,
    ) -> Option<Decision> {
        let claim = Claim::new(owner.clone(), commit)
            .claiming(slug)
            .read_in(worktree);
        self.book.decision(repo, &claim, status_file, &self.under)
    }
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
    let branch = head_ref.map(|r| r.strip_prefix("refs/heads/").unwrap_or(&r).to_string());
    let owner = Owner::of(branch.as_deref(), Some(&wt.path));
    let at = Tip {
        owner: owner.as_ref(),
        head,
        base,
        worktree: wt.exists.then_some(wt.path.as_path()),
    };
    let (doc, slug, claimed, unreadable) = at.read(repo, ledger, wt, status_file);
    let said = (slug.as_deref(), claimed.as_deref());
    let judged = at.decision(repo, ledger, said, status_file);
    let verdict = judged.as_ref().map(|d| d.verdict);
    let codes = judged
        .as_ref()
        .map_or(&[][..], |d| d.record.codes.as_slice());
    let rejected = judged.as_ref().is_some_and(Decision::rejected);
    let state = match doc {
        DocState::Read(state) => Some(state),
        _ => None,
    };
    let of_row = (wt.main, slug.as_deref());
    let (merged, conflict) = at.radar(repo, ledger, of_row, verdict, status_file);
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

/// Whose claim a row is about, at which HEAD, against which base tip.
struct Tip<'a> {
    owner: Option<&'a Owner>,
    head: Option<Oid>,
    base: Option<Oid>,
    /// The worktree the row's document is read in (`None`: not on this machine).
    worktree: Option<&'a Path>,
}

impl Tip<'_> {
    /// The row's status document: its state, slug, the commit its close line names, and why it
    /// could not be read (an inherited document reads as absent).
    fn read(
        &self,
        repo: &Repo,
        ledger: &Ledger,
        wt: &WorktreeInfo,
        status_file: &str,
    ) -> (DocState, Option<String>, Option<String>, Option<String>) {
        match read_input(wt, status_file) {
            Ok(bytes) => {
                let inherited = |b: &[u8]| self.inherited(repo, ledger, b, status_file);
                let (doc, slug, claimed) = read_doc(bytes, inherited);
                (doc, slug, claimed, None)
            }
            Err(why) => (DocState::Unreadable, None, None, Some(format!("{why:#}"))),
        }
    }

    /// Whether `bytes` are inherited (SPEC §17), unless this branch's own record names its tip
    /// (SPEC §26.1).
    fn inherited(&self, repo: &Repo, ledger: &Ledger, bytes: &[u8], status_file: &str) -> bool {
        let attested = || {
            let (Some(owner), Some(head)) = (self.owner, self.head) else {
                return false;
            };
            let claim = Claim::new(owner.clone(), head);
            ledger.book.attests(repo, &claim, status_file)
        };
        crate::inherited::is_inherited(repo, self.base, self.head, status_file, bytes, attested)
    }

    /// MERGED and CONFLICT (`radar`): never for the main worktree (the base itself).
    fn radar(
        &self,
        repo: &Repo,
        ledger: &Ledger,
        (main, slug): (bool, Option<&str>),
        verdict: Option<Verdict>,
        status_file: &str,
    ) -> (bool, bool) {
        match (self.owner, main) {
            (Some(owner), false) => radar::judge_row(
                repo,
                ledger,
                (owner, slug),
                self.head,
                self.base,
                verdict,
                status_file,
            ),
            _ => (false, false),
        }
    }

    /// The newest decision on the tip for the slug the document claims, else the refusal of a
    /// stale claim (the one question).
    fn decision(
        &self,
        repo: &Repo,
        ledger: &Ledger,
        (slug, claimed): (Option<&str>, Option<&str>),
        status_file: &str,
    ) -> Option<Decision> {
        let (owner, head) = (self.owner?, self.head?);
        ledger
            .decision(repo, owner, (head, slug), self.worktree, status_file)
            .or_else(|| {
                let said = (slug, claimed);
                stale_claim_failed(repo, ledger, owner, said, self.worktree, status_file)
            })
    }
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

/// `FAIL` when the close line names a commit other than the tip and the newest decision on this
/// owner's claim of that commit refused it: the claim still names a commit that is not the tip,
/// so the gate can only refuse it again. Any other verdict on an older commit says nothing about
/// the tip, and another branch's decisions never count here (SPEC §26.1).
fn stale_claim_failed(
    repo: &Repo,
    ledger: &Ledger,
    owner: &Owner,
    (slug, claimed): (Option<&str>, Option<&str>),
    worktree: Option<&Path>,
    status_file: &str,
) -> Option<Decision> {
    let CommitLookup::Found(commit) = repo.lookup_commit(claimed?) else {
        return None;
    };
    ledger
        .decision(repo, owner, (commit, slug), worktree, status_file)
        .filter(|d| d.verdict == Verdict::Fail)
}

/// `board --tree`: each row's working-tree state, from all worktrees scanned in parallel; the
/// reason of each scan that failed (its row then shows `unreadable`).
pub fn add_tree_states(
    repo: &Repo,
    rows: &mut [Row],
    base: Option<Oid>,
    status_file: &str,
) -> Vec<String> {
    let targets: Vec<_> = rows
        .iter()
        .map(|r| tree::Target {
            dir: r.dir.clone(),
            head: r.head,
        })
        .collect();
    let states = tree::states(repo, &targets, base, status_file);
    let mut failed = Vec::new();
    for (row, (state, why)) in rows.iter_mut().zip(states) {
        failed.extend(why);
        row.tree = Some(state);
    }
    failed
}

/// `board --check`: a fresh verdict for each worktree with a status document (recorded unless
/// `record` is false); the reason of each gate that reached none (its row then shows no verdict).
pub fn add_fresh_verdicts(rows: &mut [Row], record: bool, rerun: bool) -> Vec<String> {
    let targets: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].dir.is_some() && rows[i].doc != DocState::Absent)
        .collect();
    let dirs: Vec<_> = targets
        .iter()
        .filter_map(|&i| rows[i].dir.clone())
        .collect();
    let mut failed = Vec::new();
    for (&i, result) in targets.iter().zip(fresh::verdicts(&dirs, record, rerun)) {
        match result {
            Ok((verdict, codes)) => rows[i].set_verdict(Some(verdict), &codes),
            Err(err) => {
                failed.push(format!("{err:#}"));
                rows[i].set_verdict(None, &[]);
            }
        }
    }
    failed
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
