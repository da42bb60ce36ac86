//! `closegate notes push|fetch [REMOTE]`: exchange attestations and signed approvals (SPEC §20).

use std::io::Write;

use anyhow::Result;

use crate::attest::NOTES_REF;
use crate::notes_sync::{self, Outcome};
use crate::repo::Repo;

/// Exchange refs/notes/closegate (attestations, signed approvals) with a remote
///
/// `fetch` merges the remote's notes into the local ones; `push` fetches and merges first, then
/// pushes, and when the push is rejected because another job pushed meanwhile, fetches, merges
/// and pushes again (up to 20 times). Notes are merged as `git notes merge -s cat_sort_uniq`
/// does: every attestation and approval is one line, so none is lost. Exit 0 done, 1 when every
/// push was rejected, 2 on error
#[derive(Debug, clap::Args)]
pub struct Args {
    /// push or fetch
    #[arg(value_enum)]
    pub action: Action,
    /// The remote (default: origin)
    #[arg(default_value = "origin")]
    pub remote: String,
}

/// What `notes` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Action {
    Push,
    Fetch,
}

pub fn run(args: Args) -> Result<i32> {
    let repo = Repo::discover(&std::env::current_dir()?)?;
    let mut out = crate::term::human();
    let remote = &args.remote;
    let outcome = match args.action {
        Action::Push => notes_sync::push(&repo, remote)?,
        Action::Fetch => notes_sync::fetch(&repo, remote)?,
    };
    match outcome {
        Outcome::Pushed { attempts } => {
            writeln!(
                out,
                "pushed {NOTES_REF} to {remote} ({attempts} attempt(s))"
            )?;
            Ok(0)
        }
        Outcome::Fetched(None) => {
            writeln!(out, "{remote} has no {NOTES_REF}: nothing fetched")?;
            Ok(0)
        }
        Outcome::Fetched(Some(id)) => {
            writeln!(
                out,
                "fetched {NOTES_REF} from {remote}; local notes now at {id}"
            )?;
            Ok(0)
        }
        Outcome::Rejected { attempts } => {
            writeln!(
                out,
                "not pushed: {remote} rejected all {attempts} attempts (others kept pushing); \
                 run `closegate notes push {remote}` again"
            )?;
            Ok(1)
        }
    }
}
