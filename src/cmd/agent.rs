//! `closegate agent`: the stop hook of the harnesses agents run in, its settings, and whether the
//! hook as installed would run (SPEC §18, §26.3).
//!
//! The stop hook's answer and its loop guard are `agent::answer`; the words `render::agent`.

use std::io::{Read, Write};
use std::time::Instant;

use anyhow::{Context, Result};

use crate::agent::answer::{self, MAX_INPUT, hook_budget};
use crate::agent::install::{self, DEFAULT_TIME_LIMIT, Scope};
use crate::agent::session::Mode;
use crate::agent::stop::How;
use crate::agent::{self, Target, settings};

/// Plug closegate into the stop hooks of Claude Code, Codex, Gemini CLI, Cursor and Copilot CLI
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: AgentCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum AgentCommand {
    /// Judge the agent's final message as the harness's Stop / SubagentStop hook (JSON on stdin):
    /// block a stop whose claim does not hold, with the reason fed back to the agent
    StopHook {
        /// The harness (decides the output: its own block shape, and nothing or `{}` on
        /// acceptance)
        #[arg(long, value_enum, default_value_t = Target::ClaudeCode)]
        target: Target,
        /// Consecutive blocks for one worktree after which the stop is let through
        #[arg(long, value_name = "N", default_value_t = 3)]
        max_blocks: u32,
        /// Do not run the configured checks (the verdict is then at best UNVERIFIED)
        #[arg(long)]
        no_checks: bool,
        /// Run every check afresh even when a recorded result has the same key
        #[arg(long)]
        rerun: bool,
        /// `claims`: judge only a stop that claims completion; `always`: every stop
        #[arg(long, value_enum, default_value_t = Mode::Claims)]
        mode: Mode,
        /// The harness's timeout for this hook in seconds (written by `install`): a claim whose
        /// checks cannot finish before it is blocked with checks-running
        #[arg(long, value_name = "S", default_value_t = DEFAULT_TIME_LIMIT)]
        time_limit: u64,
    },
    /// Print the paragraph to put in AGENTS.md / CLAUDE.md that tells the agent the protocol
    Instructions {
        #[arg(long, value_enum, default_value_t = Target::ClaudeCode)]
        target: Target,
    },
    /// Print the settings snippet that wires the stop hook in (read-only)
    Hooks {
        #[arg(long, value_enum)]
        target: Target,
    },
    /// Merge the Stop and SubagentStop entries into the harness's settings file, keeping every
    /// other byte of it; idempotent
    Install {
        #[arg(long, value_enum)]
        target: Target,
        #[arg(long, value_enum, default_value_t = Scope::Project)]
        scope: Scope,
        /// The hook's mode: `claims` (default) or `always`
        #[arg(long, value_enum, default_value_t = Mode::Claims)]
        mode: Mode,
        /// Print the commands that add closegate's plugin marketplace and install its plugin
        /// instead (Claude Code, Codex); nothing is written
        #[arg(long)]
        plugin: bool,
    },
    /// Remove closegate's entries (and only those) from the harness's settings file (without
    /// --target: from every harness's file at the scope)
    Uninstall {
        #[arg(long, value_enum)]
        target: Option<Target>,
        #[arg(long, value_enum, default_value_t = Scope::Project)]
        scope: Scope,
    },
    /// Say whether the stop hook as installed would run for this worktree: each reason it would
    /// not is an agent-hook-inactive warning naming the fix. Exit 0 when it would run, 1 when not
    Doctor {
        /// The harness (default: each one closegate's hook is installed for)
        #[arg(long, value_enum)]
        target: Option<Target>,
        /// Print one JSON object (`ok` and every finding)
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: Args, _color: bool) -> Result<i32> {
    match args.command {
        AgentCommand::StopHook {
            target,
            max_blocks,
            no_checks,
            rerun,
            mode,
            time_limit,
        } => {
            // Handed to the `signal` and `guard` runs that judge the message.
            let gate = [(no_checks, "--no-checks"), (rerun, "--rerun")];
            let flags: Vec<&str> = gate.iter().filter(|(on, _)| *on).map(|(_, f)| *f).collect();
            let how = How {
                flags: &flags,
                mode,
                target,
                deadline: Instant::now() + hook_budget(time_limit),
            };
            Ok(stop_hook(max_blocks, &how))
        }
        AgentCommand::Instructions { target } => {
            writeln!(crate::term::stdout(), "{}", agent::instructions(target))?;
            Ok(0)
        }
        AgentCommand::Hooks { target } => {
            let limit = install::time_limit(&cwd()?);
            let command = target.command_with(Mode::Claims, limit);
            let shape = &target.row().shape;
            let snippet = settings::snippet(shape, &command, install::harness_timeout(limit));
            let text = serde_json::to_string_pretty(&snippet)?;
            writeln!(crate::term::stdout(), "{text}")?;
            Ok(0)
        }
        AgentCommand::Install {
            target,
            plugin: true,
            ..
        } => {
            crate::render::agent::plugin_commands(target, &mut crate::term::stdout())?;
            Ok(0)
        }
        AgentCommand::Install {
            target,
            scope,
            mode,
            plugin: false,
        } => install(target, scope, Some(mode)),
        AgentCommand::Uninstall {
            target: Some(target),
            scope,
        } => install(target, scope, None),
        AgentCommand::Uninstall {
            target: None,
            scope,
        } => uninstall_all(scope),
        AgentCommand::Doctor { target, json } => doctor(target, json),
    }
}

/// `uninstall` without `--target`: from every client's file at the scope (one it has).
fn uninstall_all(scope: Scope) -> Result<i32> {
    for target in Target::ALL {
        if scope == Scope::Local && target.row().files.local.is_none() {
            continue;
        }
        install(target, scope, None)?;
    }
    Ok(0)
}

fn cwd() -> Result<std::path::PathBuf> {
    std::env::current_dir().context("cannot read the current directory")
}

/// The stop hook never fails the harness: every outcome is exit 0.
fn stop_hook(max_blocks: u32, how: &How<'_>) -> i32 {
    let mut bytes = Vec::new();
    let read = (std::io::stdin().take(MAX_INPUT + 1)).read_to_end(&mut bytes);
    let answer = answer::answer(&bytes, read, max_blocks, how);
    // What the harness parses: written under -q too.
    let mut err = std::io::stderr().lock();
    crate::render::agent::stop_answer(&answer, how.target, &mut crate::term::stdout(), &mut err);
    0
}

/// `install` (`mode` given) or `uninstall` our entries, and say what was done.
fn install(target: Target, scope: Scope, mode: Option<Mode>) -> Result<i32> {
    let outcome = install::run(target, scope, mode, &cwd()?)?;
    let what = (target, scope, mode.is_some());
    crate::render::agent::installed(&outcome, what, &mut crate::term::human())?;
    Ok(0)
}

/// `agent doctor`: every reason the installed hook would not run; 1 when there is one.
fn doctor(target: Option<Target>, json: bool) -> Result<i32> {
    let here = cwd()?;
    let targets = answer::doctor_targets(target, &here);
    let mut findings = Vec::new();
    for t in &targets {
        for f in agent::doctor::check(*t, &here)? {
            findings.push((*t, f));
        }
    }
    let notes = (targets.iter())
        .flat_map(|t| {
            let plugin = agent::doctor::plugin_note(*t, &here);
            plugin.into_iter().chain(agent::doctor::trust_source(*t))
        })
        .collect();
    let doctor = crate::render::doctor::Doctor::of(&targets, &findings, notes);
    let ok = doctor.ok;
    if json {
        crate::render::doctor::json(&doctor, &mut crate::term::stdout())?;
    } else {
        crate::render::doctor::human(&doctor, &mut crate::term::stdout())?;
    }
    Ok(if ok { 0 } else { 1 })
}
