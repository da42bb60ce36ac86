//! `closegate board`: one row per worktree with its lifecycle stage (SPEC §13).

/// one row per worktree with its lifecycle stage (SPEC §13).
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(args: Args, color: bool) -> anyhow::Result<i32> {
    let _ = (args, color);
    anyhow::bail!("closegate board is not implemented yet")
}
