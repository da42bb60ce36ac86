//! `closegate signal`: validate an agent's @signal line (SPEC §10).

/// validate an agent's @signal line (SPEC §10).
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(args: Args, color: bool) -> anyhow::Result<i32> {
    let _ = (args, color);
    anyhow::bail!("closegate signal is not implemented yet")
}
