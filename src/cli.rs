//! The command line: one subcommand per module under `cmd/`.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::cmd;

/// Check a coding agent's "done" against the repository itself.
///
/// Exit codes: 0 VERIFIED (or accepted), 1 FAIL (refused), 2 error, 3 PENDING_REVIEW, 4 UNVERIFIED.
#[derive(Debug, Parser)]
#[command(name = "closegate", version, about, long_about = None)]
pub struct Cli {
    /// Run as if closegate was started in DIR (as git's -C; repeatable, each relative to the last)
    #[arg(short = 'C', value_name = "DIR", global = true, action = clap::ArgAction::Append)]
    pub dir: Vec<PathBuf>,
    /// When to colour the output (auto: on a terminal and NO_COLOR unset)
    #[arg(long, value_name = "WHEN", value_enum, global = true, default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
    /// Nothing on stdout but what a script parses (JSON, SARIF, workflow commands); the exit code
    /// still carries the verdict
    #[arg(short, long, global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// `--color auto|always|never` (SPEC §21).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
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
    Completions(cmd::manual::CompletionsArgs),
    Man(cmd::manual::ManArgs),
    Version(cmd::manual::VersionArgs),
    Validate(cmd::validate::Args),
}

/// `--color`: `always` and `never` as said; `auto` colours only on a terminal, and never when
/// `NO_COLOR` is set to a non-empty value.
pub fn color_wanted(when: ColorWhen) -> bool {
    match when {
        ColorWhen::Always => return true,
        ColorWhen::Never => return false,
        ColorWhen::Auto => {}
    }
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && console::Term::stdout().features().is_attended()
}
