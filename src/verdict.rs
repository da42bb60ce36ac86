//! The one verdict (SPEC §26.1): every reader that decides something about a branch asks one
//! question — *the newest decision for this branch at this commit, made under the base tip's
//! configuration and the contract that binds this branch now* — and [`Book::decision`] answers it.
//!
//! A **decision** is an authenticated `check`, `approve`, `reject`, `land` or removing `teardown`
//! record made with the base tip's configuration and the configured base (a `reject` counts under
//! any provenance: it only ever refuses). It decides one claim: its `branch` (the branch that was
//! checked — never the branch a close line names), at its `commit` (for `land`, the landed tip),
//! under its `config`, `contract` and `policy`. A record for another branch at the same commit —
//! `init`'s or `validate --run`'s run on the base tip, another agent's check, a red-on-base run, a
//! composed tree's check — never counts for this branch, for it or against it; a `land` record
//! counts for its `branch` and `tip` only, never for `base_before`. **Newest** is the order of the
//! audit log, never a comparison of timestamps; a line appended again (a replay of an
//! authenticated line) keeps its first place.
//!
//! A commit stands for itself and, when it is one trailing commit that changes only the status
//! document, for its parent (the commit its close line names, SPEC §4.3): [`stands_for`]. A
//! worktree on a detached HEAD has no branch: its claims are matched by the worktree's path.
//!
//! The board's stages, the hook's "covered", teardown's and sweep's admission, `land`'s gate, the
//! stop hook, the exemptions of `close-no-change` and of the inherited-document rule, and the
//! standing of approvals and rejections all ask here.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::Result;
use git2::Oid;
use serde_json::Value;

use crate::finding::Verdict;
use crate::ledger::{Event, Record};
use crate::repo::Repo;
use crate::report::Approval;

/// Whose claim a decision is about: a branch, or a worktree on a detached HEAD (its path, as
/// records write it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Owner {
    Branch(String),
    Detached(String),
}

impl Owner {
    /// The owner of a claim checked on `branch` (its short name, as records write it: nothing
    /// more is stripped, since `refs/heads/agent/x` is itself a branch name git accepts and names
    /// another branch than `agent/x`) in `worktree`: the branch, else the worktree (a detached
    /// HEAD).
    pub fn of(branch: Option<&str>, worktree: Option<&Path>) -> Option<Owner> {
        match (branch, worktree) {
            (Some(b), _) => Some(Owner::Branch(b.to_string())),
            (None, Some(w)) => Some(Owner::Detached(w.display().to_string())),
            (None, None) => None,
        }
    }

    /// The branch, when the owner is one.
    pub fn branch(&self) -> Option<&str> {
        match self {
            Owner::Branch(b) => Some(b),
            Owner::Detached(_) => None,
        }
    }

    fn owns(&self, r: &Record) -> bool {
        match self {
            Owner::Branch(b) => r.branch.as_deref() == Some(b.as_str()),
            Owner::Detached(w) => r.branch.is_none() && r.worktree.as_deref() == Some(w.as_str()),
        }
    }
}

/// One claim asked about: this owner at this commit, for the slug its document claims now
/// when the asker has read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub owner: Owner,
    pub commit: Oid,
    /// The slug the agent's latest word claims (`None`: not read, any slug). A verdict decides
    /// (branch, slug, commit): a document rewritten after the verdict to claim another slug is
    /// another claim, which that verdict never judged (under another contract, perhaps).
    pub slug: Option<String>,
    /// The worktree the asker read the agent's latest word in (`None`: none, or not read there).
    /// A decision whose record names another worktree did not judge that word: git's worktree
    /// list is the common directory's, which any agent can rewrite (SPEC §16), so a branch's
    /// worktree is where its verdict was reached, not where `<common>/worktrees/*/gitdir` says.
    pub worktree: Option<PathBuf>,
}

impl Claim {
    pub fn new(owner: Owner, commit: Oid) -> Claim {
        Claim {
            owner,
            commit,
            slug: None,
            worktree: None,
        }
    }

    /// The same claim, its latest word read in `worktree`.
    pub fn read_in(self, worktree: Option<&Path>) -> Claim {
        Claim {
            worktree: worktree.map(Path::to_path_buf),
            ..self
        }
    }

    /// The claim of `branch` (its short name, see [`Owner::of`]) at `commit`.
    pub fn on_branch(branch: &str, commit: Oid) -> Claim {
        Claim::new(Owner::Branch(branch.to_string()), commit)
    }

    /// The same claim, made by a document that claims `slug` now.
    pub fn claiming(self, slug: Option<&str>) -> Claim {
        Claim {
            slug: slug.map(str::to_string),
            ..self
        }
    }

    /// Whether `r` decided this claim's slug: any, when the slug was not read.
    fn slug_of(&self, r: &Record) -> bool {
        self.slug.is_none() || r.slug == self.slug
    }
}

/// Whether `record` judged the word read in `worktree`: it names no worktree, none was read, or
/// both are the same directory. A decision reached in worktree P, asked about a branch whose
/// worktree git now lists at W, is no decision on W's document: the worktree was moved since (a
/// new `check` there decides it), or another agent rewrote `<common>/worktrees/<id>/gitdir` to
/// make its own directory speak for the branch.
/// Only a `check` made in a worktree anchors: the gate checked that its worktree holds the
/// branch (SPEC §4.3); a `--no-worktree` check names the runner's directory, and the other
/// records the directory they were run from.
fn judged_there(record: &Record, worktree: Option<&Path>) -> bool {
    let anchored = matches!(&record.event, Event::Check(c) if !c.no_worktree);
    if !anchored {
        return true;
    }
    match (record.worktree.as_deref(), worktree) {
        (Some(named), Some(read)) => {
            crate::repo::canonical(Path::new(named)) == crate::repo::canonical(read)
        }
        _ => true,
    }
}

/// The agent's latest word on `branch` (SPEC §26.2): the bytes of the status document in the
/// worktree that has the branch checked out (`worktree`, see [`worktree_of`]), else the one
/// committed at `tip`, else the newest archived one of the branch's last recorded slug (SPEC
/// §22: a branch without a worktree is judged from its records). What `land` and the git hook
/// read the claimed state and slug from.
pub fn latest_document(
    repo: &Repo,
    worktree: Option<&Path>,
    tip: Oid,
    status_file: &str,
    branch: &str,
) -> Option<Vec<u8>> {
    if let Some(dir) = worktree
        && let Ok(bytes) = crate::input_file::read(&dir.join(status_file))
    {
        return Some(bytes);
    }
    if let Some(bytes) = repo.read_blob(tip, status_file) {
        return Some(bytes);
    }
    archived(repo, tip, branch)
}

/// The worktree (on this machine) that has `branch` checked out.
pub fn worktree_of(repo: &Repo, branch: &str) -> Option<std::path::PathBuf> {
    let head = format!("refs/heads/{branch}");
    repo.worktrees()
        .into_iter()
        .find(|w| w.exists && w.head_ref().as_deref() == Some(head.as_str()))
        .map(|w| w.path)
}

/// The slug `branch`'s latest word claims ([`latest_document`]); `None` when no document parses.
pub fn claimed_slug(repo: &Repo, branch: &str, tip: Oid, status_file: &str) -> Option<String> {
    let worktree = worktree_of(repo, branch);
    let bytes = latest_document(repo, worktree.as_deref(), tip, status_file, branch)?;
    let parsed = crate::doc::parse(&bytes, crate::doc::ParseOptions::default());
    parsed.doc.map(|d| d.slug)
}

/// The newest archived document of the branch's last recorded slug.
fn archived(repo: &Repo, tip: Oid, branch: &str) -> Option<Vec<u8>> {
    let common = repo.common_dir();
    let values = crate::record::read_mentioning(&common, branch).ok()?;
    let slug = values
        .iter()
        .filter_map(Record::read)
        .rev()
        .filter(|r| r.branch.as_deref() == Some(branch))
        .find_map(|r| r.slug)?;
    let dir = crate::record::dir(&common).join("records").join(&slug);
    let exact = dir.join(format!("{tip}.md"));
    if let Ok(bytes) = std::fs::read(&exact) {
        return Some(bytes);
    }
    let mut newest: Option<(std::time::SystemTime, std::path::PathBuf)> = None;
    for entry in std::fs::read_dir(&dir).ok()?.flatten() {
        let modified = entry.metadata().ok()?.modified().ok()?;
        if newest.as_ref().is_none_or(|(t, _)| modified > *t) {
            newest = Some((modified, entry.path()));
        }
    }
    std::fs::read(newest?.1).ok()
}

/// The parent `commit` stands in for when it is a single trailing commit that changes nothing but
/// the status document `status_file`; `None` for any other commit (a merge, a root, a commit that
/// changes another path, or one whose trees cannot be read).
pub fn stands_for(repo: &Repo, commit: Oid, status_file: &str) -> Option<Oid> {
    let [parent] = repo.parents(commit)[..] else {
        return None;
    };
    let changes = repo.changes(Some(parent), commit).ok()?;
    let status_only = changes
        .iter()
        .all(|c| c.paths().iter().all(|p| *p == status_file));
    status_only.then_some(parent)
}

/// The commits a decision about `commit` may name: itself, then the parent it stands for.
pub fn candidates(repo: &Repo, commit: Oid, status_file: &str) -> Vec<Oid> {
    std::iter::once(commit)
        .chain(stands_for(repo, commit, status_file))
        .collect()
}

/// What a decision must have been made under to count now.
#[derive(Debug)]
pub struct Under {
    /// The configuration blob at the base tip (`Some(None)`: no file there, the defaults);
    /// `None`: any configuration counts (no base tip at all, or a question about history).
    config: Option<Option<String>>,
    /// Where the contracts that bind a branch now are read: `Some(tip)`, or `Some(None)` when no
    /// contract applies (no base tip); `None`: any contract counts (history).
    contracts: Option<Option<(String, Oid)>>,
    /// The contract blob that applies now, per (slug, branch): read once per question.
    cache: RefCell<HashMap<(String, String), Option<String>>>,
}

impl Under {
    /// The base tip's configuration blob (`None`: the defaults) and the tip the contracts are
    /// read from (`None`: no contract applies).
    pub fn base(config: Option<String>, tip: Option<(String, Oid)>) -> Under {
        Under::new(Some(config), tip)
    }

    /// [`Under::base`] where the configuration may also be "any" (`None`: there is no base tip
    /// to be stale against, as while a base is being created).
    pub fn new(config: Option<Option<String>>, tip: Option<(String, Oid)>) -> Under {
        Under {
            config,
            contracts: Some(tip),
            cache: RefCell::default(),
        }
    }

    /// Any configuration and any contract: a question about history (SPEC §17's exemptions
    /// attest what happened, not today's verdict).
    pub fn history() -> Under {
        Under {
            config: None,
            contracts: None,
            cache: RefCell::default(),
        }
    }

    /// Whether `r` was made under the configuration and the contract that apply now. A
    /// contract that cannot be read now reads as "some other contract": the record then does
    /// not count.
    fn holds(&self, repo: &Repo, r: &Record) -> bool {
        if self.config.as_ref().is_some_and(|now| r.config != *now) {
            return false;
        }
        let Some(tip) = &self.contracts else {
            return true;
        };
        let slug = r.slug.clone().unwrap_or_default();
        let branch = r.branch.clone().unwrap_or_default();
        let mut cache = self.cache.borrow_mut();
        let now = cache
            .entry((slug, branch))
            .or_insert_with_key(|(slug, branch)| contract_now(repo, tip, slug, branch));
        r.contract() == now.as_deref()
    }
}

/// The blob of the contract that binds `slug` on `branch` at `tip` now; `Some("?")` (matching no
/// record) when it cannot be read.
fn contract_now(
    repo: &Repo,
    tip: &Option<(String, Oid)>,
    slug: &str,
    branch: &str,
) -> Option<String> {
    let (name, tip) = tip.as_ref()?;
    let lookup = crate::contract::Lookup::Tip(name.clone(), *tip);
    let branch = (!branch.is_empty()).then_some(branch);
    match lookup.find(repo, slug, branch) {
        Ok(found) => found.and_then(|f| f.source).map(|s| s.blob_id()),
        Err(_) => Some("?".to_string()),
    }
}

/// What kind of record a decision is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Check,
    Approve,
    Reject,
    Teardown,
    Land,
}

/// The newest decision on a claim: the record, and what it decided.
#[derive(Debug, Clone)]
pub struct Decision {
    pub kind: Kind,
    /// The verdict recorded (a `reject` is FAIL).
    pub verdict: Verdict,
    pub record: Record,
    /// Where the record stands in the log, among the decisions read: what "older" means when
    /// decisions of several claims are ordered (`land --all`, oldest verdict first), never their
    /// timestamps.
    pub seq: usize,
}

impl Decision {
    /// Whether the decision lets the work be merged: VERIFIED (an approval applied) and not a
    /// `closed-without-merge` return.
    pub fn merges(&self) -> bool {
        self.verdict == Verdict::Verified && !self.closed_without_merge()
    }

    /// Whether the decision lets the branch be deleted: VERIFIED, or a clean
    /// `closed-without-merge` teardown.
    pub fn retires(&self) -> bool {
        self.verdict == Verdict::Verified
            || (self.kind == Kind::Teardown && self.closed_without_merge())
    }

    fn closed_without_merge(&self) -> bool {
        closed_without_merge(&self.record)
    }

    /// Whether a reviewer's rejection is what stands: a `reject`, or a gate run that found one.
    pub fn rejected(&self) -> bool {
        self.kind == Kind::Reject || self.record.codes.iter().any(|c| c == "review-rejected")
    }

    /// Whether an approval made the verdict (an `approve`, or a check that applied one).
    pub fn approved(&self) -> bool {
        match &self.record.event {
            Event::Approve(_) => self.verdict == Verdict::Verified,
            Event::Check(c) => c.approval.is_some(),
            _ => false,
        }
    }
}

/// The standing word of a human on one claim (SPEC §8, §21): the newer of its approvals and
/// rejections, in log order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Review {
    None,
    Approved(Approval),
    Rejected(crate::ledger::Rejection),
}

/// The decisions of the audit log, in log order: read once, asked many times.
#[derive(Debug, Default)]
pub struct Book {
    records: Vec<Record>,
    /// The gate runs the stop hook made (`guard`/`signal` records that carry a verdict): never a
    /// decision, kept only by [`Book::about`] for [`Book::gate_run`].
    runs: Vec<Record>,
    /// The claim commit and status file a book read [`Book::about`] was read for, and the
    /// commits that claim's decisions may name: worked out once (a diff), asked three times.
    about: Option<(Oid, String, Vec<Oid>)>,
}

impl Book {
    /// Every decision of the log (authenticated ones only, where a record key exists).
    pub fn read(common: &Path) -> Result<Book> {
        let wanted = |v: &Value| Record::read(v).is_some_and(|r| is_decision(&r));
        let values = crate::record::read_authentic_where(common, wanted)?;
        Ok(Book::from_values(values))
    }

    /// The decisions that may be about `claim`: the lines that mention one of the commits it
    /// stands for, or (for a rejection by tree) its tree. One scan of the log, for a command that
    /// asks about one claim.
    pub fn about(repo: &Repo, claim: &Claim, status_file: &str) -> Result<Book> {
        let commits = candidates(repo, claim.commit, status_file);
        let mut needles: Vec<String> = commits.iter().map(Oid::to_string).collect();
        needles.extend(repo.tree_of(claim.commit).map(|t| t.to_string()));
        let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
        let values = crate::record::read_mentioning_where(&repo.common_dir(), &needles, may_keep)?;
        let mut book = Book::from_values(values);
        book.about = Some((claim.commit, status_file.to_string(), commits));
        Ok(book)
    }

    /// [`candidates`] of `commit`, from what [`Book::about`] worked out when it is that claim's.
    fn candidates(&self, repo: &Repo, commit: Oid, status_file: &str) -> Vec<String> {
        let known = match &self.about {
            Some((c, file, commits)) if *c == commit && file == status_file => commits.clone(),
            _ => candidates(repo, commit, status_file),
        };
        known.iter().map(Oid::to_string).collect()
    }

    fn from_values(values: Vec<Value>) -> Book {
        let mut macs = HashSet::new();
        let (records, runs) = values
            .iter()
            .filter(|v| first_written(v, &mut macs))
            .filter_map(Record::read)
            .filter(|r| is_decision(r) || is_gate_run(r))
            .partition(is_decision);
        Book {
            records,
            runs,
            about: None,
        }
    }

    /// The newest gate run the stop hook made on `claim` (SPEC §26.3): a `guard` or `signal`
    /// record with a verdict, this owner's, naming the claim's commit or the commit it stands
    /// for. Not a decision: nothing is admitted or landed on it; it only tells the hook that a
    /// verdict has seen the document. Only a book read [`Book::about`] a claim holds them.
    pub fn gate_run(&self, repo: &Repo, claim: &Claim, status_file: &str) -> Option<&Record> {
        let commits = self.candidates(repo, claim.commit, status_file);
        self.runs.iter().rfind(|r| {
            claim.owner.owns(r)
                && r.commit
                    .as_deref()
                    .is_some_and(|c| commits.iter().any(|x| x == c))
        })
    }

    /// The records about `claim`, in log order: this owner's, naming the claim's commit or the
    /// commit it stands for; a `reject` also when it names the same tree (an amend that changes
    /// nothing is the same work).
    fn about_claim<'a>(
        &'a self,
        repo: &Repo,
        claim: &'a Claim,
        status_file: &str,
    ) -> impl Iterator<Item = (usize, &'a Record)> + 'a {
        let commits = self.candidates(repo, claim.commit, status_file);
        let tree = repo.tree_of(claim.commit).map(|t| t.to_string());
        self.records.iter().enumerate().filter(move |(_, r)| {
            if !claim.owner.owns(r) {
                return false;
            }
            let named = r
                .commit
                .as_deref()
                .is_some_and(|c| commits.iter().any(|x| x == c));
            named || matches!(&r.event, Event::Reject(f) if tree.is_some() && f.tree == tree)
        })
    }

    /// **The question** (SPEC §26.1): the newest decision for this branch at this commit, made
    /// under `under`, for the slug the claim names when it names one (a rejection stands
    /// whatever slug: it only ever refuses).
    pub fn decision(
        &self,
        repo: &Repo,
        claim: &Claim,
        status_file: &str,
        under: &Under,
    ) -> Option<Decision> {
        self.newest(repo, claim, status_file, under, |_| true)
    }

    /// The decision a teardown is admitted on (SPEC §7 step 1): the newest decision on `claim`
    /// under `under` that is not a `land` (a landing's checks ran on the composed tree, not on
    /// the tip: the verdict it was admitted on stands for the tip's).
    pub fn admission(
        &self,
        repo: &Repo,
        claim: &Claim,
        status_file: &str,
        under: &Under,
    ) -> Option<Decision> {
        self.newest(repo, claim, status_file, under, |r| r.landing().is_none())
    }

    /// The newest record about `claim` that counts under `under` and that `keep` keeps, as a
    /// decision: the one implementation behind [`Book::decision`] and [`Book::admission`].
    fn newest(
        &self,
        repo: &Repo,
        claim: &Claim,
        status_file: &str,
        under: &Under,
        keep: impl Fn(&Record) -> bool,
    ) -> Option<Decision> {
        let (seq, newest) = self
            .about_claim(repo, claim, status_file)
            .filter(|(_, r)| {
                keep(r) && (r.is_rejection() || (claim.slug_of(r) && under.holds(repo, r)))
            })
            .last()?;
        if !judged_there(newest, claim.worktree.as_deref()) {
            return None;
        }
        Some(Decision {
            kind: kind(newest)?,
            verdict: if newest.is_rejection() {
                Verdict::Fail
            } else {
                newest.verdict?
            },
            record: newest.clone(),
            seq,
        })
    }

    /// Whether history attests this claim as this owner's work (SPEC §17, §26.1): a passing or
    /// `land` record for this branch names the commit (or the one it stands for), whatever
    /// configuration it was made under. What exempts a verified-then-merged return from
    /// `close-no-change` and its committed document from the inherited-document rule. A clean
    /// `closed-without-merge` teardown passes only for deleting the branch (SPEC §9): it attests
    /// no work, so a retry on the same branch starts from nothing of its own. When the claim
    /// names a slug, only a record for that slug attests: a branch name reused for another task
    /// inherits nothing of the first task's history.
    pub fn attests(&self, repo: &Repo, claim: &Claim, status_file: &str) -> bool {
        self.about_claim(repo, claim, status_file)
            .filter(|(_, r)| !r.is_rejection() && claim.slug_of(r))
            .any(|(_, r)| r.is_passing() && !closed_without_merge(r))
    }

    /// Whether a `land` record of `branch` names `tip` and its composed commit is in `base`
    /// (SPEC §7 "merged", §22): a landing counts for its branch and tip only.
    pub fn landed(&self, repo: &Repo, branch: &str, tip: Oid, base: Oid) -> bool {
        let owner = Owner::Branch(branch.to_string());
        let hex = tip.to_string();
        self.records.iter().any(|r| {
            let Some(land) = r.landing() else {
                return false;
            };
            let composed = Oid::from_str(&land.composed).ok();
            owner.owns(r)
                && land.tip == hex
                && r.is_trusted()
                && composed.is_some_and(|c| c == base || repo.is_ancestor(c, base))
        })
    }

    /// The standing word of a human on `claim`'s exact commit (SPEC §8, §21): the newest, in log
    /// order, of this owner's approvals of that commit made under `config` and `contract`, and
    /// its rejections of that commit or of another with the same tree (under any
    /// configuration: a rejection only makes the verdict stricter).
    pub fn review(
        &self,
        repo: &Repo,
        claim: &Claim,
        config: Option<&str>,
        contract: Option<&str>,
    ) -> Review {
        let hex = claim.commit.to_string();
        let tree = repo.tree_of(claim.commit).map(|t| t.to_string());
        let mut standing = Review::None;
        for r in self.records.iter().filter(|r| claim.owner.owns(r)) {
            let this = r.commit.as_deref() == Some(hex.as_str());
            match &r.event {
                Event::Reject(f) if this || (tree.is_some() && f.tree == tree) => {
                    standing = Review::Rejected(crate::ledger::Rejection {
                        by: f.by.clone().unwrap_or_default(),
                        note: f.note.clone().unwrap_or_default(),
                        at: r.ts.clone(),
                    });
                }
                _ if this
                    && r.is_trusted()
                    && r.config.as_deref() == config
                    && r.contract() == contract =>
                {
                    if let Some(a) = r.approval() {
                        standing = Review::Approved(Approval {
                            by: a.by.clone().unwrap_or_default(),
                            at: r.ts.clone(),
                            commit: hex.clone(),
                        });
                    }
                }
                _ => {}
            }
        }
        standing
    }
}

/// [`Book::attests`] for one claim, reading only the lines of the log about it: what a command
/// that judges one worktree asks (`check`, `close`). A log that cannot be read attests nothing.
pub fn attested(repo: &Repo, claim: &Claim, status_file: &str) -> bool {
    Book::about(repo, claim, status_file).is_ok_and(|book| book.attests(repo, claim, status_file))
}

/// Whether the record's claim is a `closed-without-merge` return: the agent retired the work.
fn closed_without_merge(r: &Record) -> bool {
    r.claimed.as_deref() == Some("closed-without-merge")
}

/// Whether `line` is the first in the log to carry its `mac`; remembered in `macs`. Under a record
/// key a line's mac covers its `prev`, so two lines written by closegate never share one: a later
/// line with an earlier line's mac is that line appended again (a replay, which `log --verify`
/// names). It counts once, where it was first written — an agent that can only append to the
/// log cannot make an old approval or verdict the newest word. Lines without a mac (no key)
/// are plain and all read.
fn first_written(line: &Value, macs: &mut HashSet<String>) -> bool {
    match line.get("mac").and_then(Value::as_str) {
        Some(mac) if !mac.is_empty() => macs.insert(mac.to_string()),
        _ => true,
    }
}

/// Whether [`Book::about`] parses a log line whole: every line but a `guard` or `signal` without
/// a verdict, read from its `event` and `verdict` alone (the rest of the line is skipped, not
/// built). Such a line is never a decision ([`is_decision`]) and never a gate run
/// ([`is_gate_run`]): it is the line each stop the hook accepts adds about its claim. Every other
/// line is left to those two, so a decision event added there needs nothing here
/// (`may_keep_every_line_the_book_keeps`).
fn may_keep(line: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        event: Option<std::borrow::Cow<'a, str>>,
        verdict: Option<serde::de::IgnoredAny>,
    }
    let Ok(head) = serde_json::from_slice::<Head<'_>>(line) else {
        // Not read here: the whole parse decides (and leaves out what is not a record).
        return true;
    };
    let gate_event = matches!(head.event.as_deref(), Some("guard" | "signal"));
    !gate_event || head.verdict.is_some()
}

/// A gate run the stop hook made: a `guard` or `signal` line that carries a verdict.
fn is_gate_run(r: &Record) -> bool {
    matches!(r.event, Event::Guard(_) | Event::Signal(_)) && r.verdict.is_some()
}

/// Whether a record is a decision (module doc): a trusted `check`, `approve`, `land` or removing
/// `teardown`, or a `reject` of any provenance.
fn is_decision(r: &Record) -> bool {
    match &r.event {
        Event::Reject(_) => true,
        Event::Check(_) | Event::Approve(_) | Event::Land(_) => r.is_trusted(),
        Event::Teardown(t) => t.removed && r.is_trusted(),
        _ => false,
    }
}

fn kind(r: &Record) -> Option<Kind> {
    Some(match &r.event {
        Event::Check(_) => Kind::Check,
        Event::Approve(_) => Kind::Approve,
        Event::Reject(_) => Kind::Reject,
        Event::Teardown(_) => Kind::Teardown,
        Event::Land(_) => Kind::Land,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One line of `event` four ways: keys in the order written, keys in another order, the
    /// event's name escaped, and every key written twice (the whole parse takes the last).
    fn spellings(event: &str, verdict: &str, provenance: &str, removed: &str) -> [String; 4] {
        let escaped = event.replace('c', "\\u0063");
        [
            format!(
                r#"{{"event":"{event}","verdict":{verdict},{provenance},"removed":{removed},"commit":"c","branch":"b"}}"#
            ),
            format!(
                r#"{{"commit":"c","verdict":{verdict},"removed":{removed},{provenance},"branch":"b","event":"{event}"}}"#
            ),
            format!(
                r#"{{"event":"{escaped}","verdict":{verdict},{provenance},"removed":{removed}}}"#
            ),
            format!(
                r#"{{"event":"hook","verdict":null,{provenance},"removed":{removed},"event":"{event}","verdict":{verdict}}}"#
            ),
        ]
    }

    /// [`may_keep`] is asked before a line is parsed whole: it must never leave out a line
    /// [`is_decision`] or [`is_gate_run`] keeps, whatever its event, verdict, provenance, key
    /// order or spelling (escapes), and it leaves out the hook's accepted signals.
    #[test]
    fn may_keep_every_line_the_book_keeps() {
        let events = [
            "check", "approve", "land", "teardown", "reject", "guard", "signal", "hook", "later",
        ];
        let verdicts = ["null", r#""VERIFIED""#, r#""FAIL""#];
        let trust = [
            r#""config_source":"base","base_source":"configured""#,
            r#""config_source":"flag","base_source":"flag""#,
        ];
        let mut kept = 0;
        for (event, verdict) in events.iter().flat_map(|e| verdicts.map(|v| (*e, v))) {
            for provenance in trust {
                for removed in ["true", "false"] {
                    for line in spellings(event, verdict, provenance, removed) {
                        let value: Value = serde_json::from_str(&line).unwrap();
                        let Some(record) = Record::read(&value) else {
                            continue;
                        };
                        if is_decision(&record) || is_gate_run(&record) {
                            kept += 1;
                            assert!(may_keep(line.as_bytes()), "left out: {line}");
                        }
                    }
                }
            }
        }
        assert!(
            kept > 20,
            "the lines tried include decisions and gate runs ({kept})"
        );
        let accepted = r#"{"accepted":true,"event":"signal","hook":"claude-code","verdict":null}"#;
        assert!(!may_keep(accepted.as_bytes()));
        assert!(
            !may_keep(br#"{"event":"guard","commit":"c"}"#),
            "no verdict at all"
        );
        assert!(
            may_keep(br#"{"event":"later","verdict":null}"#),
            "left to the whole parse"
        );
        assert!(
            may_keep(b"not json"),
            "the whole parse decides what it cannot read"
        );
        assert!(may_keep(br#"{"event":7,"verdict":null}"#));
    }
}
