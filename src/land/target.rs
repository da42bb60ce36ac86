//! What `land` is asked to land (SPEC §22): a branch or a worktree named, or every COMPLETED agent
//! branch, each resolved to its tip, the commit its verdict names, its slug, abstract and the
//! agent's latest word (its state); and the gate of step 1 (SPEC §26.2): the one question of
//! `crate::verdict` — the newest decision for this branch at its tip, under the configuration and
//! contracts of the base tip `land` composes on — must let it merge, and the agent's latest word
//! must be `close-ok` or `stop-2-ready`.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use git2::Oid;

use crate::catalog::Code;
use crate::doc::{self, ParseOptions, State};
use crate::finding::{Finding, Verdict};
use crate::repo::Repo;
use crate::verdict::{Book, Claim, Decision, Under};

/// One branch to land.
#[derive(Debug, Clone)]
pub struct Target {
    pub branch: String,
    /// The branch tip when `land` read it (the compare-and-delete value).
    pub tip: Oid,
    /// The commit that lands: the tip, or its parent when the tip is a single trailing commit
    /// that changes only the status document.
    pub commit: Oid,
    /// The worktree that has the branch checked out, when one does.
    pub worktree: Option<PathBuf>,
    pub slug: String,
    /// The first line of the status document's `abstract`.
    pub abstract_line: Option<String>,
    /// The agent's latest word: the state of the worktree's status document, else the branch's,
    /// else the newest archived one; `None` when none can be read.
    pub state: Option<State>,
}

/// The decision a branch is admitted on (SPEC §22 step 1, §26.2).
#[derive(Debug, Clone)]
pub struct Admitted {
    pub ts: String,
    /// The decision's place in the log: `--all` lands the oldest verdict first, in log order.
    pub seq: usize,
    /// An approval made the verdict: every protected path it covered is admitted.
    pub approved: bool,
    /// The protected paths the verdict covered (let through by the policy or an approval).
    pub covered: Vec<String>,
    /// The contract blob the verdict was made under (the land record carries it).
    pub contract: Option<String>,
}

/// Resolve the words on the command line: an existing directory is a worktree (its branch),
/// anything else a branch name. An unknown branch is an error naming it.
pub fn resolve(repo: &Repo, words: &[String], status_file: &str) -> Result<Vec<Target>> {
    let mut targets: Vec<Target> = Vec::new();
    for word in words {
        let branch = branch_of(repo, word)?;
        if targets.iter().any(|t| t.branch == branch) {
            continue;
        }
        targets.push(target(repo, &branch, status_file)?);
    }
    Ok(targets)
}

fn branch_of(repo: &Repo, word: &str) -> Result<String> {
    let path = Path::new(word);
    if path.is_dir() {
        let canonical = crate::repo::canonical(path);
        let Some(info) = repo.worktree_at(&canonical) else {
            bail!("{word} is a directory but not a worktree of this repository");
        };
        let Some(head) = info.head_ref() else {
            bail!("the worktree {word} has a detached HEAD: there is no branch to land");
        };
        return Ok(head
            .strip_prefix("refs/heads/")
            .unwrap_or(&head)
            .to_string());
    }
    let name = word.strip_prefix("refs/heads/").unwrap_or(word);
    if repo.branch_tip(name).is_none() {
        bail!("{word} is neither a worktree nor a branch of this repository");
    }
    Ok(name.to_string())
}

/// A branch as a target: its tip, the commit that lands, its worktree and its status document.
pub fn target(repo: &Repo, branch: &str, status_file: &str) -> Result<Target> {
    let Some(tip) = repo.branch_tip(branch) else {
        bail!("branch {branch} does not exist");
    };
    let commit = crate::verdict::stands_for(repo, tip, status_file).unwrap_or(tip);
    let worktree = crate::verdict::worktree_of(repo, branch);
    let bytes =
        crate::verdict::latest_document(repo, worktree.as_deref(), tip, status_file, branch);
    let parsed = bytes.map(|b| doc::parse(&b, ParseOptions::default()).doc);
    let (slug, abstract_line, state) = match parsed.flatten() {
        Some(d) => {
            let first = d
                .abstract_text
                .as_deref()
                .and_then(|a| a.lines().next())
                .map(|l| l.trim().to_string())
                .filter(|l| !l.is_empty());
            (d.slug, first, d.state)
        }
        None => (
            branch.rsplit('/').next().unwrap_or(branch).to_string(),
            None,
            None,
        ),
    };
    Ok(Target {
        branch: branch.to_string(),
        tip,
        commit,
        worktree,
        slug,
        abstract_line,
        state,
    })
}

/// The command that gives `target` a verdict: `check` of its worktree, else of the branch.
fn check_command(target: &Target) -> String {
    match &target.worktree {
        Some(dir) => format!(
            "closegate check {}",
            crate::shell::shell_word(&dir.display().to_string())
        ),
        None => format!(
            "closegate check --no-worktree --rev {}",
            crate::shell::shell_word(&target.branch)
        ),
    }
}

/// Step 1 (SPEC §22, §26.2): the agent's latest word must allow merging, and the newest decision
/// for this branch at its tip, made under `under` (the configuration and contracts of the base
/// tip `land` composes on), must let the work be merged; otherwise `land-not-verified` naming
/// the state or the verdict and what to run.
pub fn gate(
    repo: &Repo,
    book: &Book,
    under: &Under,
    target: &Target,
    status_file: &str,
) -> Result<Admitted, Finding> {
    let short = &target.commit.to_string()[..12];
    let refuse = |msg: String| Finding::new(Code::LandNotVerified, msg);
    latest_word_merges(target).map_err(refuse)?;
    let check = check_command(target);
    let claim = Claim::on_branch(&target.branch, target.tip)
        .claiming(Some(&target.slug))
        .read_in(target.worktree.as_deref());
    let Some(decision) = book.decision(repo, &claim, status_file, under) else {
        return Err(refuse(no_decision(
            repo,
            book,
            under,
            target,
            claim,
            status_file,
        )));
    };
    if decision.rejected() {
        return Err(refuse(rejected_message(target, &decision)));
    }
    if !decision.merges() {
        let next = match decision.verdict {
            Verdict::PendingReview => format!(
                "a human runs `closegate approve {}`",
                target.worktree.as_ref().map_or(String::new(), |d| {
                    crate::shell::shell_word(&d.display().to_string())
                })
            ),
            _ => format!("fix the work and run `{check}`"),
        };
        return Err(refuse(format!(
            "`{}` ({short}) was last judged {} under the base tip's configuration ({}); {next}",
            target.branch,
            decision.verdict.as_str(),
            decision.record.ts
        )));
    }
    Ok(admitted(&decision))
}

/// The agent's latest word must be a return to merge (`close-ok` or `stop-2-ready`); else why not.
fn latest_word_merges(target: &Target) -> Result<(), String> {
    let short = &target.commit.to_string()[..12];
    match target.state {
        Some(State::CloseOk | State::Stop2Ready) => Ok(()),
        Some(state) => Err(format!(
            "`{}` ({short}): the agent's latest word is `{}`, not a return to merge; \
             nothing lands until its status document says `close-ok`",
            target.branch,
            state.as_str()
        )),
        None => Err(format!(
            "`{}` ({short}): no status document can be read for it (worktree, branch tip or \
             archive), so the agent never said it is done",
            target.branch
        )),
    }
}

/// Why no decision lets `target` merge: its verdict was reached in another worktree than the one
/// git lists now (moved, or its `gitdir` rewritten), or there is none for this branch at this tip.
fn no_decision(
    repo: &Repo,
    book: &Book,
    under: &Under,
    target: &Target,
    claim: Claim,
    status_file: &str,
) -> String {
    let short = &target.commit.to_string()[..12];
    let check = check_command(target);
    let elsewhere = Claim {
        worktree: None,
        ..claim
    };
    if let Some(there) = book.decision(repo, &elsewhere, status_file, under)
        && let (Some(named), Some(here)) = (&there.record.worktree, &target.worktree)
    {
        return format!(
            "`{}` ({short}) was judged in the worktree {named}, but git now lists its worktree \
             at {} (moved since, or its gitdir rewritten): that document is not the one judged; \
             run `{check}`",
            target.branch,
            here.display()
        );
    }
    format!(
        "`{}` ({short}) has no verdict for this branch at this tip under the base tip's \
         configuration and contract: run `{check}`",
        target.branch
    )
}

/// What a passing decision admits: the protected paths it covered are those it judged — the
/// changes it kept for review (an approval let them through) and the `protected-surface` findings
/// a policy made warnings of (`integrity`, `modify`), which leave `protected`.
fn admitted(decision: &Decision) -> Admitted {
    let covered = match &decision.record.event {
        crate::ledger::Event::Check(c) => {
            let judged = c.findings.iter().filter(|f| f.code == "protected-surface");
            let paths = c.protected.iter().map(|p| p.path.clone());
            paths.chain(judged.filter_map(|f| f.path.clone())).collect()
        }
        _ => Vec::new(),
    };
    Admitted {
        ts: decision.record.ts.clone(),
        seq: decision.seq,
        approved: decision.approved(),
        covered,
        contract: decision.record.contract().map(str::to_string),
    }
}

/// `land-not-verified` for a reviewer's rejection that stands (SPEC §21).
fn rejected_message(target: &Target, decision: &Decision) -> String {
    let short = &target.commit.to_string()[..12];
    match &decision.record.event {
        crate::ledger::Event::Reject(r) => format!(
            "`{}` ({short}) was rejected by {} at {}: {}; a later commit is judged afresh",
            target.branch,
            r.by.as_deref().unwrap_or_default(),
            decision.record.ts,
            r.note.as_deref().unwrap_or_default()
        ),
        _ => format!(
            "`{}` ({short}) was rejected by a reviewer (its check at {} found `review-rejected`); \
             a later commit is judged afresh",
            target.branch, decision.record.ts
        ),
    }
}

/// `--all` (SPEC §26.2): every agent branch whose stage is COMPLETED (or CONFLICT) under `under`
/// — its agent returned (`close-ok`, `stop-2-ready`), its newest decision lets it merge and its
/// work is not in the base yet — the oldest verdict first, in the log's order (SPEC §26.1: never
/// a comparison of timestamps). Branches checked out in no worktree count too.
pub fn all(
    repo: &Repo,
    config: &crate::config::Config,
    book: &Book,
    under: &Under,
    (base, onto): (&str, Option<Oid>),
) -> Vec<Target> {
    let mut found: Vec<(usize, Target)> = Vec::new();
    for branch in repo.local_branches() {
        if branch == base || !config.is_agent_branch(&branch) {
            continue;
        }
        let Ok(target) = target(repo, &branch, &config.status_file) else {
            continue;
        };
        if onto.is_some_and(|onto| is_merged(repo, book, &target, onto, &config.status_file)) {
            continue;
        }
        if let Ok(admitted) = gate(repo, book, under, &target, &config.status_file) {
            found.push((admitted.seq, target));
        }
    }
    found.sort_by_key(|(seq, _)| *seq);
    found.into_iter().map(|(_, t)| t).collect()
}

/// Whether the base tip `onto` already holds the branch's work (SPEC §7 "merged": reachable, the
/// same changes by squash or rebase, or a landing of this branch's tip): `skipped`, never
/// composed again.
pub fn is_merged(repo: &Repo, book: &Book, target: &Target, onto: Oid, status_file: &str) -> bool {
    let merged = repo
        .merged_into(onto, target.commit, status_file)
        .is_ok_and(|m| m.is_merged());
    merged || book.landed(repo, &target.branch, target.tip, onto)
}
