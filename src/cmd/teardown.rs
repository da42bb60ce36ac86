//! `closegate teardown`: remove a verified worktree when nothing can be lost (SPEC §7).

/// remove a verified worktree when nothing can be lost (SPEC §7).
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(args: Args, color: bool) -> anyhow::Result<i32> {
    let _ = (args, color);
    anyhow::bail!("closegate teardown is not implemented yet")
}
