//! `closegate guard`: check the first-line verdict token of an agent's report (SPEC §10).

/// check the first-line verdict token of an agent's report (SPEC §10).
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(args: Args, color: bool) -> anyhow::Result<i32> {
    let _ = (args, color);
    anyhow::bail!("closegate guard is not implemented yet")
}
