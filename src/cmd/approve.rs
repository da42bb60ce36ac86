//! `closegate approve`: approve a PENDING_REVIEW return, bound to the exact commit (SPEC §8).

/// approve a PENDING_REVIEW return, bound to the exact commit (SPEC §8).
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let _ = args;
    anyhow::bail!("closegate approve is not implemented yet")
}
