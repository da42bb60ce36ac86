//! `closegate log`: list audit records, or print verdict statistics (SPEC §6).

/// list audit records, or print verdict statistics (SPEC §6).
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let _ = args;
    anyhow::bail!("closegate log is not implemented yet")
}
