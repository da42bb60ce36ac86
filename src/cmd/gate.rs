//! The flags every command that runs the gate shares, and their mapping onto the plain
//! [`GateOptions`] the domain takes: clap types stay in the front layer. Also the arguments
//! `guard` and `signal` share ([`MessageArgs`]).

use std::path::PathBuf;

use crate::inputs::GateOptions;
use crate::render::Format;

/// The flags every command that runs the gate shares.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct GateArgs {
    /// Read the status document from FILE (`-` for stdin) instead of `<WORKTREE>/<status_file>`
    #[arg(long, value_name = "FILE", conflicts_with = "rev")]
    pub status: Option<PathBuf>,
    /// Read the status document from `<REV>:<status_file>` (a trailing status commit)
    #[arg(long, value_name = "REV")]
    pub rev: Option<String>,
    /// The base branch: where the configuration is read and what the branch is diffed against
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,
    /// Read the configuration from FILE instead of the base tip's `.closegate.toml`
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The task contract: FILE instead of `.closegate/contracts/<slug>.toml` on the base tip
    #[arg(long, value_name = "FILE")]
    pub contract: Option<PathBuf>,
    /// The agent's final message: its close line is used when the document has none
    #[arg(long, value_name = "FILE")]
    pub message: Option<PathBuf>,
    /// Do not run the configured checks (the verdict is then at best UNVERIFIED)
    #[arg(long)]
    pub no_checks: bool,
    /// Run every check again even when a recorded result has the same key
    #[arg(long, conflicts_with = "no_checks")]
    pub rerun: bool,
    /// The agent's worktree cannot exist here (CI): skip the worktree checks
    #[arg(long)]
    pub no_worktree: bool,
    /// Read the eight older state spellings with a warning (archived records)
    #[arg(long)]
    pub legacy: bool,
}

impl GateArgs {
    /// The options these flags ask for; what only one command sets is left at its default.
    pub fn options(&self) -> GateOptions {
        GateOptions {
            status: self.status.clone(),
            rev: self.rev.clone(),
            base: self.base.clone(),
            config: self.config.clone(),
            contract: self.contract.clone(),
            message: self.message.clone(),
            no_checks: self.no_checks,
            rerun: self.rerun,
            no_worktree: self.no_worktree,
            legacy: self.legacy,
            ..GateOptions::default()
        }
    }
}

/// The arguments `guard` and `signal` share: the agent's message, its worktree, the gate's flags
/// and the output format. The help texts are guard's; `signal` sets its own three with
/// `mut_arg` (cmd/signal.rs), so each command's `--help` reads as before.
#[derive(Debug, clap::Args)]
pub struct MessageArgs {
    /// The agent's report; `-` (the default) reads standard input
    #[arg(default_value = "-")]
    pub file: PathBuf,
    /// Run the gate on this worktree and compare the claimed token with its verdict
    #[arg(long, value_name = "DIR")]
    pub worktree: Option<PathBuf>,
    #[command(flatten)]
    pub gate: GateArgs,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}
