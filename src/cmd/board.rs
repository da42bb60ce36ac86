//! `closegate board`: one row per worktree with its lifecycle stage (SPEC §13).

use std::io::Write;

use crate::board::{self, Recorded, Row};
use crate::inputs;
use crate::render;
use crate::repo::Repo;
use anyhow::{Context, Result};

/// Show every worktree with its agent state, verdict and lifecycle stage
///
/// Stages: RUNNING, BLOCKED, VERIFYING, FAILED, REVIEW, UNVERIFIED, COMPLETED, STOPPED, MERGED,
/// CONFLICT, REJECTED, computed from git and the audit log alone; REASON is the code of the first
/// finding behind a FAILED, REVIEW, UNVERIFIED or REJECTED row.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run the gate now on every worktree that has a status document (two at a time) instead of
    /// showing the last recorded verdict; each verdict is recorded as a `check`
    #[arg(long)]
    pub check: bool,
    /// With --check: do not append the fresh verdicts to the audit log
    #[arg(long, requires = "check")]
    pub no_record: bool,
    /// With --check: run every check again even when a recorded result has the same key, as
    /// `check --rerun` does
    #[arg(long, requires = "check")]
    pub rerun: bool,
    /// Print `{"schema": 1, "worktrees": [...]}` instead of aligned columns
    #[arg(long)]
    pub json: bool,
    /// Add the working-tree column: clean / dirty / untracked (the close gate's scan, all
    /// worktrees in parallel) and commits ahead/behind the base
    #[arg(long)]
    pub tree: bool,
    /// List the pairs of live agent branches that conflict with each other, with the paths
    /// (in-memory merges), instead of the rows
    #[arg(long)]
    pub conflicts: bool,
}

/// Exit 0 when the board was printed; 2 when the repository could not be read, a `--check`
/// gate reached no verdict (its row then shows no verdict and the reason goes to stderr) or a
/// `--tree` scan failed (its row then shows `unreadable`).
pub fn run(args: Args, color: bool) -> Result<i32> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let repo = Repo::discover(&cwd)?;
    let trusted = inputs::trusted_config(&repo, None, None)?;
    let Recorded {
        mut rows,
        base,
        status_file,
        ..
    } = board::recorded_under(&repo, &trusted)?;
    for why in rows.iter().filter_map(|r| r.unreadable.as_deref()) {
        eprintln!("closegate: board: {}", render::escape(why));
    }
    if args.conflicts {
        return conflicts(&repo, &rows, &trusted.config, args.json);
    }
    let mut code = 0;
    if args.tree {
        code = code.max(said(board::add_tree_states(
            &repo,
            &mut rows,
            base,
            &status_file,
        )));
    }
    if args.check {
        code = code.max(said(board::add_fresh_verdicts(
            &mut rows,
            !args.no_record,
            args.rerun,
        )));
    }
    let mut stdout = if args.json {
        crate::term::stdout()
    } else {
        crate::term::human()
    };
    if args.json {
        stdout.write_all(&render::board::json_text(&rows)?)?;
    } else {
        render::board::human(&rows, color, &mut stdout)?;
    }
    Ok(code)
}

/// `--conflicts` (SPEC §22): the pairs of live agent branches that conflict with each other.
fn conflicts(repo: &Repo, rows: &[Row], config: &crate::config::Config, json: bool) -> Result<i32> {
    let pairs = board::conflict_pairs(repo, rows, config);
    if json {
        render::board::conflicts_json(&pairs, &mut crate::term::stdout())?;
    } else {
        render::board::conflicts_human(&pairs, &mut crate::term::human())?;
    }
    Ok(0)
}

/// Each reason a row could not be filled in, on stderr; 2 when there is one.
fn said(failed: Vec<String>) -> i32 {
    for why in &failed {
        eprintln!("closegate: board: {}", render::escape(why));
    }
    if failed.is_empty() { 0 } else { 2 }
}
