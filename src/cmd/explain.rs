//! `closegate explain`: explain a finding code (SPEC §14).

/// explain a finding code (SPEC §14).
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let _ = args;
    anyhow::bail!("closegate explain is not implemented yet")
}
