//! `closegate check`: run the gate sequence against the repository (SPEC §4).

/// run the gate sequence against the repository (SPEC §4).
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(args: Args, color: bool) -> anyhow::Result<i32> {
    let _ = (args, color);
    anyhow::bail!("closegate check is not implemented yet")
}
