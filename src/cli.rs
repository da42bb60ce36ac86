//! The command line: one subcommand per module under `cmd/`.

use clap::{Parser, Subcommand};

use crate::cmd;

/// Check a coding agent's "done" against the repository itself.
///
/// Exit codes: 0 VERIFIED (or accepted), 1 FAIL (refused), 2 error, 3 PENDING_REVIEW, 4 UNVERIFIED.
#[derive(Debug, Parser)]
#[command(name = "closegate", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Lint(cmd::lint::Args),
    Explain(cmd::explain::Args),
    Check(cmd::check::Args),
    Log(cmd::log::Args),
    Teardown(cmd::teardown::Args),
    Approve(cmd::approve::Args),
    Hook(cmd::hook::Args),
    Guard(cmd::guard::Args),
    Signal(cmd::signal::Args),
    Board(cmd::board::Args),
    Key(cmd::key::Args),
    Close(cmd::close::Args),
    Init(cmd::init::Args),
    Agent(cmd::agent::Args),
    Gc(cmd::gc::Args),
}

/// Colour only on a terminal, and never when `NO_COLOR` is set to a non-empty value.
pub fn color_wanted() -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && console::Term::stdout().features().is_attended()
}
