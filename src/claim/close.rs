//! Closing a worktree's work (SPEC §17): what `close` reads from the repository before it writes
//! the status document — HEAD and its branch, the existing document unless it is inherited —
//! and the trailing status-only commit it makes. The text itself is `doc::compose`.

use std::path::Path;

use anyhow::{Context, Result, bail};
use git2::Oid;

use crate::doc::{ParseOptions, State};
use crate::finding::Severity;
use crate::inputs;
use crate::repo::Repo;
use crate::report::Report;

/// HEAD's commit and branch; a returned state needs both.
pub fn head_and_branch(
    repo: &crate::repo::Repo,
    root: &std::path::Path,
    state: State,
) -> Result<(git2::Oid, Option<String>)> {
    let Some(head) = repo.worktree_head(root) else {
        bail!(
            "HEAD of {} names no commit: commit your work first",
            root.display()
        );
    };
    let branch = repo.head_branch();
    if state.is_returned() && branch.is_none() {
        bail!(
            "HEAD of {} is detached: a returned state needs the branch the work is on",
            root.display()
        );
    }
    Ok((head, branch))
}

/// The existing document's text, or `None` when there is none or it is inherited from the base
/// (SPEC §17: then it is not this agent's claim and is overwritten).
pub fn existing_text(
    repo: &Repo,
    trusted: &inputs::Trusted,
    head: Oid,
    path: &Path,
    status_file: &str,
) -> Result<Option<String>> {
    let bytes = match crate::input_file::read(path) {
        Ok(bytes) => bytes,
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::NotFound) =>
        {
            return Ok(None);
        }
        Err(e) => {
            return Err(e).with_context(|| format!("cannot read {}", path.display()));
        }
    };
    let base = trusted.base.as_ref().map(|(_, id)| *id);
    let attested = || {
        let root = repo.workdir();
        let owner = crate::verdict::Owner::of(repo.head_branch().as_deref(), root.as_deref());
        owner.is_some_and(|owner| {
            let claim = crate::verdict::Claim::new(owner, head);
            crate::verdict::attested(repo, &claim, status_file)
        })
    };
    if crate::inherited::is_inherited(repo, base, Some(head), status_file, &bytes, attested) {
        return Ok(None);
    }
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    match String::from_utf8(body.to_vec()) {
        Ok(text) => Ok(Some(text)),
        Err(_) => bail!(
            "{} is not UTF-8: fix or remove it (close never overwrites bytes it cannot read)",
            path.display()
        ),
    }
}

/// Commit the status document alone on top of the work commit (`restack`: HEAD is already a
/// status-only commit, which is replaced so there stays exactly one).
pub fn commit_status(
    root: &Path,
    status_file: &str,
    slug: &str,
    state: State,
    restack: bool,
) -> Result<()> {
    let git = |args: &[&str]| -> Result<()> {
        let out = crate::repo::git_cli::Git::worktree(root).run(args)?;
        if !out.status.success() {
            bail!(
                "git {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(())
    };
    git(&["add", "-f", "--", status_file])?;
    let message = format!("status: {slug} {}", state.as_str());
    let mut args = vec!["commit", "-q", "-m", &message];
    if restack {
        args.push("--amend");
    }
    args.extend(["--only", "--", status_file]);
    git(&args)
}

/// The work commit a close line names from `head`, and whether `head` is a trailing status-only
/// commit: such a commit is the record of an earlier `close --commit`, and the work commit is its
/// parent (it is then replaced, so there stays exactly one).
pub fn work_commit(repo: &Repo, head: Oid, status_file: &str) -> (Oid, bool) {
    match crate::verdict::stands_for(repo, head, status_file) {
        Some(parent) => (parent, true),
        None => (head, false),
    }
}

/// `--slug`, else the existing document's, else the branch's last component.
pub fn slug(given: Option<&str>, existing: Option<&str>, branch: Option<&str>) -> String {
    given
        .map(str::to_string)
        .or_else(|| existing.and_then(crate::doc::compose::existing_slug))
        .or_else(|| branch.map(|b| b.rsplit('/').next().unwrap_or(b).to_string()))
        .unwrap_or_default()
}

/// The composed document's lint report and the codes of its `doc-*` refusals: SPEC §17, the
/// document is never written with one.
pub fn lint(text: &str, status_file: &str) -> (Report, Vec<String>) {
    let report = crate::report::lint(
        text.as_bytes(),
        status_file.to_string(),
        ParseOptions::default(),
    );
    let codes: Vec<String> = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Refusal && f.code.as_str().starts_with("doc-"))
        .map(|f| f.code.to_string())
        .collect();
    (report, codes)
}

/// SPEC §17: a `--state` word that is no writable state is refused with the finding the status
/// document's parser gives the line `- state: WORD` (`doc-state-legacy` for an older spelling,
/// `doc-state-unknown` …), before anything else is read; `None` when the parser finds none.
pub fn state_refusal(word: &str) -> Option<Report> {
    let text = format!("# STATUS \u{2014} x\n\n- state: {word}\n");
    let mut report = crate::report::lint(text.as_bytes(), "--state".into(), Default::default());
    report
        .findings
        .retain(|f| f.code.as_str().starts_with("doc-state"));
    if report.findings.is_empty() {
        return None;
    }
    for finding in &mut report.findings {
        finding.line = None;
    }
    report.slug = None;
    report.state = None;
    Some(report)
}
