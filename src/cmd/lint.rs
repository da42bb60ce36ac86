//! `closegate lint`: run the status-document gate alone (SPEC §2).

/// run the status-document gate alone (SPEC §2).
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(args: Args, color: bool) -> anyhow::Result<i32> {
    let _ = (args, color);
    anyhow::bail!("closegate lint is not implemented yet")
}
