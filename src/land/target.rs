//! What `land` is asked to land (SPEC §22): a branch or a worktree named, or every COMPLETED agent
//! branch, each resolved to its tip, the commit its verdict names, its slug and abstract; and the
//! gate of step 1 — the branch's recorded verdict for its tip under the base tip's configuration.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use git2::Oid;

use crate::catalog::Code;
use crate::doc::{self, ParseOptions};
use crate::finding::{Finding, Verdict};
use crate::ledger::{Event, Record};
use crate::repo::Repo;

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
}

/// The passing record a branch is admitted on (SPEC §22 step 1).
#[derive(Debug, Clone)]
pub struct Admitted {
    pub ts: String,
    /// The base commit the verdict was reached against (its checks are keyed on it).
    pub base_commit: Option<String>,
    pub approved: bool,
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
    let commit = crate::covered::stands_for(repo, tip, status_file).unwrap_or(tip);
    let worktree = repo
        .worktrees()
        .into_iter()
        .find(|w| w.exists && w.head_ref().as_deref() == Some(&format!("refs/heads/{branch}")))
        .map(|w| w.path);
    let bytes = document(repo, worktree.as_deref(), tip, status_file, branch);
    let parsed = bytes.map(|b| doc::parse(&b, ParseOptions::default()).doc);
    let (slug, abstract_line) = match parsed.flatten() {
        Some(d) => {
            let first = d
                .abstract_text
                .as_deref()
                .and_then(|a| a.lines().next())
                .map(|l| l.trim().to_string())
                .filter(|l| !l.is_empty());
            (d.slug, first)
        }
        None => (
            branch.rsplit('/').next().unwrap_or(branch).to_string(),
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
    })
}

/// The status document: the worktree's, else `<branch>:<status file>`, else the newest archived
/// one for the branch (SPEC §22: a branch without a worktree is judged from its records).
fn document(
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
    let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
    for entry in std::fs::read_dir(&dir).ok()?.flatten() {
        let modified = entry.metadata().ok()?.modified().ok()?;
        if newest.as_ref().is_none_or(|(t, _)| modified > *t) {
            newest = Some((modified, entry.path()));
        }
    }
    std::fs::read(newest?.1).ok()
}

/// Step 1: the newest trusted verdict recorded for the tip (or the commit it stands for) under
/// the configuration blob `config` must pass; otherwise `land-not-verified` naming the verdict.
pub fn gate(repo: &Repo, target: &Target, config: Option<&str>) -> Result<Admitted, Finding> {
    let newest = newest_verdict(repo, target, config);
    let short = &target.commit.to_string()[..12];
    let check = match &target.worktree {
        Some(dir) => format!(
            "closegate check {}",
            crate::shell::shell_word(&dir.display().to_string())
        ),
        None => format!(
            "closegate check --no-worktree --rev {}",
            crate::shell::shell_word(&target.branch)
        ),
    };
    let Some(record) = newest else {
        let msg = format!(
            "`{}` ({short}) has no verdict recorded under the base tip's configuration: run `{check}`",
            target.branch
        );
        return Err(Finding::new(Code::LandNotVerified, msg));
    };
    if let Some(rejected) = rejection(repo, target) {
        return Err(rejected);
    }
    match record.verdict {
        Some(Verdict::Verified) => Ok(Admitted {
            approved: matches!(&record.event, Event::Approve(_))
                || matches!(&record.event, Event::Check(c) if c.approval.is_some()),
            ts: record.ts.clone(),
            base_commit: record.base_commit.clone(),
        }),
        Some(verdict) => {
            let next = match verdict {
                Verdict::PendingReview => format!(
                    "a human runs `closegate approve {}`",
                    target.worktree.as_ref().map_or(String::new(), |d| {
                        crate::shell::shell_word(&d.display().to_string())
                    })
                ),
                _ => format!("fix the work and run `{check}`"),
            };
            let msg = format!(
                "`{}` ({short}) was last judged {} under the base tip's configuration ({}); {next}",
                target.branch,
                verdict.as_str(),
                record.ts
            );
            Err(Finding::new(Code::LandNotVerified, msg))
        }
        None => Err(Finding::new(
            Code::LandNotVerified,
            format!(
                "`{}` ({short}) has no verdict: run `{check}`",
                target.branch
            ),
        )),
    }
}

/// SPEC §21: a reviewer's rejection of the commit, newer than any approval of it, refuses it.
fn rejection(repo: &Repo, target: &Target) -> Option<Finding> {
    let common = repo.common_dir();
    for commit in [target.commit, target.tip] {
        let tree = repo.tree_of(commit).map(|t| t.to_string());
        let found = crate::ledger::rejection_for(&common, &commit.to_string(), tree.as_deref());
        if let Ok(Some(r)) = found {
            let msg = format!(
                "`{}` ({}) was rejected by {} at {}: {}; a later commit is judged afresh",
                target.branch,
                &commit.to_string()[..12],
                r.by,
                r.at,
                r.note
            );
            return Some(Finding::new(Code::LandNotVerified, msg));
        }
    }
    None
}

/// The newest trusted record with a verdict for the tip (or the commit it stands for) made with
/// the configuration blob `config`.
fn newest_verdict(repo: &Repo, target: &Target, config: Option<&str>) -> Option<Record> {
    let common = repo.common_dir();
    let mut newest: Option<Record> = None;
    for commit in [target.tip, target.commit] {
        let hex = commit.to_string();
        let values = crate::record::read_mentioning(&common, &hex).unwrap_or_default();
        for record in values.iter().filter_map(Record::read) {
            let counts = record.commit.as_deref() == Some(hex.as_str())
                && record.is_trusted()
                && record.config.as_deref() == config
                && record.verdict.is_some()
                && matches!(
                    record.event,
                    Event::Check(_) | Event::Approve(_) | Event::Teardown(_)
                );
            if counts && newest.as_ref().is_none_or(|n| record.ts >= n.ts) {
                newest = Some(record);
            }
        }
    }
    newest
}

/// `--all`: every agent branch whose tip has a passing verdict (COMPLETED, or CONFLICT), the
/// oldest verdict first. Branches checked out in no worktree count too.
pub fn all(
    repo: &Repo,
    config: &crate::config::Config,
    blob: Option<&str>,
    base: &str,
) -> Vec<Target> {
    let mut found: Vec<(String, Target)> = Vec::new();
    for branch in repo.local_branches() {
        if branch == base || !config.is_agent_branch(&branch) {
            continue;
        }
        let Ok(target) = target(repo, &branch, &config.status_file) else {
            continue;
        };
        if let Ok(admitted) = gate(repo, &target, blob) {
            found.push((admitted.ts, target));
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.branch.cmp(&b.1.branch)));
    found.into_iter().map(|(_, t)| t).collect()
}
