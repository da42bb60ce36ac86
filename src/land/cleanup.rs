//! What follows a landed branch's move (SPEC §22 step 5): its worktree torn down with no check
//! run again, or, with no worktree, its branch deleted (compare-and-delete).
//!
//! The teardown never removes a directory a process stands in — the shell `land` was run from
//! included, unlike a `teardown` run there (SPEC §27.4): the worktree is kept, the processes are
//! named, and so is the one command that finishes the teardown once they are gone.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::{Cleanup, Ctx, Landing, Outcome};
use crate::catalog::Code;
use crate::repo::safety::BranchDeletion;
use crate::shell::shell_word;
use crate::teardown::{Ending, busy};

/// Tear down every landed branch's worktree (no check run again: it is admitted on its records)
/// and delete its branch (compare-and-delete), unless `--no-teardown` / `--keep-branch`.
pub(super) fn teardowns(ctx: &Ctx, landing: &mut Landing) -> Result<()> {
    if ctx.req.no_teardown {
        return Ok(());
    }
    for b in landing.branches.iter_mut() {
        if b.outcome != Outcome::Landed {
            continue;
        }
        let worktree = ctx
            .repo
            .worktrees()
            .into_iter()
            .find(|w| {
                w.exists
                    && !w.main
                    && w.head_ref().as_deref() == Some(&format!("refs/heads/{}", b.branch))
            })
            .map(|w| w.path);
        b.after.cleanup = match worktree {
            Some(dir) => Some(teardown_one(ctx, dir)),
            None if !ctx.req.keep_branch => {
                Some(match ctx.repo.delete_branch_if_at(&b.branch, b.tip)? {
                    BranchDeletion::Deleted => Cleanup::BranchDeleted,
                    BranchDeletion::Moved(now) => Cleanup::BranchMoved(now),
                })
            }
            None => None,
        };
    }
    Ok(())
}

/// The teardown of a landed branch's worktree `dir`, admitted on the branch's records.
fn teardown_one(ctx: &Ctx, dir: PathBuf) -> Cleanup {
    let request = crate::teardown::Request {
        worktree: Some(dir.clone()),
        gate: crate::inputs::GateOptions {
            base: ctx.req.base.clone(),
            ..Default::default()
        },
        dry_run: false,
        delete_branch: !ctx.req.keep_branch,
        allow_unverified: false,
        // Never overrides a refusal: the escrow is written, but what it names stays.
        force: false,
        reap: false,
        // The shell `land` was run from inside the worktree keeps it (SPEC §27.4).
        starters: busy::Starters::Hold,
    };
    match crate::teardown::run(&request) {
        Ok(done) => {
            let refused = match done.ending() {
                Ending::Refused | Ending::Stopped => done
                    .refused_codes()
                    .iter()
                    .filter_map(|c| Code::parse(c))
                    .collect(),
                _ => Vec::new(),
            };
            let finish = (!done.holders.is_empty()).then(|| finish(ctx, &dir));
            Cleanup::TornDown {
                steps: done.steps,
                refused,
                holders: done.holders,
                finish,
            }
        }
        Err(e) => Cleanup::Failed(format!("{e:#}")),
    }
}

/// The command that finishes the teardown `land` began, from a directory outside the worktree
/// (the main worktree, else the worktree's parent), so that a shell that runs it leaves first:
/// `cd /repo && closegate teardown /wt/x --delete-branch`.
fn finish(ctx: &Ctx, dir: &Path) -> String {
    let main = ctx
        .repo
        .worktrees()
        .into_iter()
        .find(|w| w.main && w.exists);
    let outside = match &main {
        Some(w) => w.path.as_path(),
        None => dir.parent().unwrap_or(Path::new("/")),
    };
    let mut command = format!(
        "cd {} && closegate teardown {}",
        shell_word(&outside.display().to_string()),
        shell_word(&dir.display().to_string())
    );
    if !ctx.req.keep_branch {
        command.push_str(" --delete-branch");
    }
    if let Some(base) = &ctx.req.base {
        command.push_str(&format!(" --base {}", shell_word(base)));
    }
    command
}
