//! `closegate notes push|fetch [REMOTE]`: exchange attestations and signed approvals (SPEC §20).
//! The exchange is `notes_sync`; the words `render::notes`.

use anyhow::Result;

use crate::notes_sync;
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
    let remote = &args.remote;
    let outcome = match args.action {
        Action::Push => notes_sync::push(&repo, remote)?,
        Action::Fetch => notes_sync::fetch(&repo, remote)?,
    };
    crate::render::notes::outcome(&outcome, remote, &mut crate::term::human())
}
