//! A teardown of a path that is no live worktree: finish a removal that stopped midway, prune a
//! registration whose directory is gone (as `git worktree prune` would), or say that the worktree
//! was torn down already. Which one is decided from the registration and the record.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::{Done, Request, finish_left, remove};
use crate::finding::{Finding, Gate, Verdict};
use crate::ledger;
use crate::repo::{Repo, WorktreeInfo};
use crate::report::Report;

/// The path is no live worktree: prune a registration whose directory is gone, finish a removal
/// that stopped midway, or say that it was torn down already.
pub fn leftover(req: &Request, target: &Path) -> Result<Done> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let repo = Repo::discover(&cwd)?;
    let common = repo.common_dir();
    let prior = ledger::last_removal(&common, &target.display().to_string())?;
    if let Some(info) = repo.worktree_at(target) {
        return prune(req, &repo, &info, prior);
    }
    if target.is_dir()
        && let Some(root) = Repo::discover(target).ok().and_then(|r| r.workdir())
    {
        bail!(
            "{} is inside the worktree {}; pass the worktree's root",
            target.display(),
            root.display()
        );
    }
    let Some(prior) = prior else {
        bail!("{} is not a worktree of this repository", target.display());
    };
    let mut done = Done {
        dry_run: req.dry_run,
        ..Done::default()
    };
    let aside = remove::removing_path(target);
    let at = prior["ts"].as_str().unwrap_or("an unknown time");
    if aside.symlink_metadata().is_err() {
        done.step(
            "nothing",
            format!("{} was torn down at {at}", target.display()),
        );
        return Ok(done);
    }
    if req.dry_run {
        done.step(
            "would remove",
            format!("{} (left by the teardown at {at})", aside.display()),
        );
        return Ok(done);
    }
    let report = report_from(&prior, target);
    let mut left = remove::Left::new();
    remove::remove_tree(&aside, &mut left);
    if left.is_empty() {
        ledger::record_teardown(
            &common,
            &report,
            prior["claimed"].as_str(),
            true,
            json!({"resumed": true}),
        )?;
        done.step(
            "removed",
            format!("{} (left by the teardown at {at})", aside.display()),
        );
    }
    finish_left(&common, &report, left, target, done)
}

/// A registered worktree whose directory is gone: remove its administrative data, as prune would.
fn prune(req: &Request, repo: &Repo, info: &WorktreeInfo, prior: Option<Value>) -> Result<Done> {
    let common = repo.common_dir();
    let path = &info.path;
    let mut report = prior.as_ref().map_or_else(
        || {
            let branch = info
                .head_ref()
                .and_then(|r| r.strip_prefix("refs/heads/").map(str::to_string));
            let commit = branch
                .as_ref()
                .and_then(|b| repo.branch_tip(b))
                .map(|c| c.to_string());
            Report {
                worktree: Some(path.display().to_string()),
                branch,
                commit,
                ..Report::default()
            }
        },
        |p| report_from(p, path),
    );
    let mut done = Done {
        dry_run: req.dry_run,
        ..Done::default()
    };
    if path.exists() && std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_some()) {
        bail!(
            "{} is registered as a worktree but holds files and no .git; closegate cannot judge \
             them: inspect it and remove it by hand, then run the teardown again",
            path.display()
        );
    }
    if let Some(reason) = &info.locked {
        let msg = format!(
            "the worktree is locked: {}",
            crate::render::escape(reason.trim())
        );
        report.add_gate(Gate::Teardown, [Finding::new("teardown-locked", msg)]);
        report.finish();
        if !req.dry_run {
            ledger::record_teardown(&common, &report, None, false, json!({"pruned": false}))?;
        }
        done.step("kept", format!("the registration of {}", path.display()));
        done.report = Some(report);
        done.exit = 1;
        return Ok(done);
    }
    let what = format!(
        "administrative data {} (its directory is gone)",
        info.admin_dir.display()
    );
    if req.delete_branch {
        done.step(
            "kept",
            "the branch: closegate deletes a branch only in the teardown that verified it",
        );
    }
    if req.dry_run {
        done.step("would remove", what);
        return Ok(done);
    }
    let fields =
        json!({"pruned": true, "deleted": {"admin": info.admin_dir.display().to_string()}});
    let claimed = prior.as_ref().and_then(|p| p["claimed"].as_str());
    ledger::record_teardown(&common, &report, claimed, true, fields)?;
    let mut left = remove::Left::new();
    if path.exists() {
        remove::remove_tree(path, &mut left);
    }
    remove::remove_admin(&info.admin_dir, &mut left);
    if prior.is_some() {
        remove::remove_tree(&remove::removing_path(path), &mut left);
    }
    if left.is_empty() {
        done.step("removed", what);
    }
    finish_left(&common, &report, left, path, done)
}

/// The report fields of an earlier teardown record, for the lines that finish its work.
fn report_from(prior: &Value, worktree: &Path) -> Report {
    let text = |key: &str| prior[key].as_str().map(str::to_string);
    Report {
        slug: text("slug"),
        commit: text("commit"),
        branch: text("branch"),
        worktree: Some(worktree.display().to_string()),
        verdict: prior["verdict"]
            .as_str()
            .and_then(Verdict::parse)
            .unwrap_or(Verdict::Unverified),
        ..Report::default()
    }
}
