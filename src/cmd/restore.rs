//! `closegate restore`: a torn-down worktree back from its escrow (SPEC §24).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use crate::render::escape;
use crate::repo::Repo;

/// Re-create a torn-down worktree from its escrow
///
/// Adds the worktree (`git worktree add`) at the path the escrow's teardown record names, or PATH,
/// on the recorded branch (re-created at the recorded tip when it was deleted; when it moved since
/// or is checked out elsewhere, the recorded HEAD is checked out detached and restore says so),
/// then writes the snapshot's files back: changed files changed, untracked files untracked again.
/// All or nothing: it never writes over an existing path, refuses an escrow it could not write
/// whole before adding anything, and removes what it added when it stops midway. Without PATH
/// only an escrow a teardown record names is restored (`restore-unrecorded`) (exit 0 restored,
/// 1 refused, 2 error)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The escrow: a slug (its newest escrow) or a ref `refs/closegate/escrow/<slug>/<n>`
    #[arg(value_name = "SLUG|REF")]
    pub escrow: String,
    /// Where to re-create the worktree (default: the path the teardown record names; needed for
    /// an escrow no teardown record names)
    #[arg(value_name = "PATH")]
    pub path: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<i32> {
    let repo = Repo::discover(&std::env::current_dir()?)?;
    let mut out = crate::term::human();
    match crate::restore::run(&repo, &args.escrow, args.path.as_deref())? {
        Err(refused) => {
            match &refused.finding {
                Some(finding) => writeln!(
                    out,
                    "restore refused: {} {}\n  hint: {}",
                    finding.code,
                    escape(&refused.message),
                    finding.code.info().fix
                )?,
                None => writeln!(out, "restore refused: {}", escape(&refused.message))?,
            }
            Ok(1)
        }
        Ok(done) => {
            writeln!(
                out,
                "restored {} from {} (commit {})",
                escape(&done.path.display().to_string()),
                done.refname,
                done.commit
            )?;
            match (&done.branch, &done.detached) {
                (Some(branch), _) if done.recreated => writeln!(
                    out,
                    "  branch {} re-created at {} (it had been deleted)",
                    escape(branch),
                    done.head
                )?,
                (Some(branch), _) => writeln!(out, "  branch {} at {}", escape(branch), done.head)?,
                (None, Some(why)) => {
                    writeln!(out, "  HEAD detached at {}: {}", done.head, escape(why))?
                }
                (None, None) => writeln!(out, "  HEAD detached at {}", done.head)?,
            }
            writeln!(
                out,
                "  {} file(s) written back from the snapshot",
                done.files
            )?;
            Ok(0)
        }
    }
}
