//! `closegate hook`: install, uninstall or run the reference-transaction hook (SPEC §9).

/// install, uninstall or run the reference-transaction hook (SPEC §9).
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let _ = args;
    anyhow::bail!("closegate hook is not implemented yet")
}
