//! `closegate demo [--keep]` (SPEC §21): the walkthrough `scripts/demo.sh` gives, from the
//! installed binary alone, so a user who ran `cargo install` sees the protocol without a clone.
//!
//! The walkthrough is a bash script compiled into the binary (`demo/walkthrough.sh`): it drives
//! this very binary the way a coordinator, a reviewer and a harness would, on a scratch
//! repository in a temporary directory. It is given to `bash -c` as an argument, never on
//! stdin, so the commands it runs cannot read the rest of it.

use anyhow::{Context, Result};

/// The walkthrough, word for word what `scripts/demo.sh` runs.
pub const WALKTHROUGH: &str = include_str!("demo/walkthrough.sh");

/// Run the protocol end to end on a scratch repository: four agents and the four verdicts,
/// teardown, a task contract and the board, the hook, and an agent behind a stop hook
///
/// Needs bash and git; no network. Everything lives in one temporary directory, removed at the
/// end unless --keep (exit 0 when the walkthrough ran to its end, 2 otherwise)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Keep the scratch repository, its worktrees and the record, and print where they are
    #[arg(long)]
    pub keep: bool,
}

pub fn run(args: Args) -> Result<i32> {
    let exe = std::env::current_exe().context("cannot find the closegate binary itself")?;
    let mut cmd = std::process::Command::new("bash");
    cmd.arg("-c")
        .arg(WALKTHROUGH)
        .arg("closegate-demo")
        .env("CLOSEGATE", &exe)
        .env_remove("KEEP");
    if args.keep {
        cmd.env("KEEP", "1");
    }
    let status = cmd
        .status()
        .context("closegate demo needs bash: it could not be started")?;
    match status.code() {
        Some(0) => Ok(0),
        code => anyhow::bail!(
            "the walkthrough stopped before its end (bash exited {}); run `closegate demo --keep` \
             to keep its scratch repository",
            code.map_or_else(|| "on a signal".to_string(), |c| c.to_string())
        ),
    }
}
