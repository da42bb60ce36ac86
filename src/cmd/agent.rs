//! `closegate agent`: the stop hook of the harnesses agents run in, its settings, and whether the
//! hook as installed would run (SPEC §18, §26.3).

use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::json;

use crate::agent::blocks::{self, Counter};
use crate::agent::install::{self, DEFAULT_TIME_LIMIT, Scope};
use crate::agent::session::Mode;
use crate::agent::stop::{self, How, Judged};
use crate::agent::{self, Target, settings};
use crate::ledger::{self, SignalFields};
use crate::repo::Repo;

/// Plug closegate into the stop hooks of Claude Code and Codex
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
        /// The harness (decides the output on acceptance: nothing, or `{}` for codex)
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
    },
    /// Remove closegate's entries (and only those) from the harness's settings file (without
    /// --target: from both harnesses' files at the scope)
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
            let snippet = settings::snippet(&command, install::harness_timeout(limit));
            let text = serde_json::to_string_pretty(&snippet)?;
            writeln!(crate::term::stdout(), "{text}")?;
            Ok(0)
        }
        AgentCommand::Install {
            target,
            scope,
            mode,
        } => install(target, scope, Some(mode)),
        AgentCommand::Uninstall {
            target: Some(target),
            scope,
        } => install(target, scope, None),
        AgentCommand::Uninstall {
            target: None,
            scope,
        } => {
            for target in [Target::ClaudeCode, Target::Codex] {
                if target == Target::Codex && scope == Scope::Local {
                    continue;
                }
                install(target, scope, None)?;
            }
            Ok(0)
        }
        AgentCommand::Doctor { target, json } => doctor(target, json),
    }
}

fn cwd() -> Result<std::path::PathBuf> {
    std::env::current_dir().context("cannot read the current directory")
}

/// Most input a hook reads (SPEC §11's bound on input files).
const MAX_INPUT: u64 = 16 << 20;

/// The stop hook never fails the harness: every outcome is exit 0.
fn stop_hook(max_blocks: u32, how: &How<'_>) -> i32 {
    let target = how.target;
    let mut bytes = Vec::new();
    let read = std::io::stdin().take(MAX_INPUT + 1).read_to_end(&mut bytes);
    let input = match read {
        Err(e) => Err(format!("cannot read the hook input: {e}")),
        Ok(_) if bytes.len() as u64 > MAX_INPUT => {
            Err("the hook input is larger than 16 MiB".to_string())
        }
        Ok(_) => agent::parse_input(&bytes),
    };
    let outcome = input.and_then(|input| stop::judge(&input, how).map(|j| (input, j)));
    // What the harness parses: written under -q too.
    let mut out = crate::term::stdout();
    match outcome {
        Err(why) => {
            let cwd = agent::parse_input(&bytes)
                .ok()
                .map(|i| i.cwd)
                .or_else(|| std::env::current_dir().ok());
            record_malformed(cwd.as_deref(), target, &why);
            eprintln!(
                "closegate agent stop-hook: {}; the stop is let through",
                crate::render::escape(&why)
            );
            let _ = out.write_all(target.accept_output().as_bytes());
        }
        Ok((input, judged)) => {
            let block = decide(&judged, max_blocks, input.stop_hook_active, how);
            match block {
                None => {
                    let _ = out.write_all(target.accept_output().as_bytes());
                }
                Some(reason) => {
                    let line = json!({"decision": "block", "reason": reason});
                    let _ = writeln!(out, "{line}");
                }
            }
        }
    }
    let _ = out.flush();
    0
}

/// Block (the reason) or let the stop through (`None`), counting consecutive blocks and recording
/// a give-up or an acceptance on a reused verdict.
fn decide(judged: &Judged, max_blocks: u32, active: bool, how: &How<'_>) -> Option<String> {
    let target = how.target;
    let counter = judged
        .common
        .as_ref()
        .map(|c| Counter::new(c, &judged.root));
    if judged.refused.is_empty() {
        if let Some(counter) = &counter {
            let _ = counter.reset();
        }
        if judged.reused.is_some() {
            record_reused(judged, target);
        }
        return None;
    }
    let verdict = match &counter {
        Some(counter) => blocks::decide(counter, max_blocks, active),
        None if active => blocks::Verdict::GiveUp(Some("no repository to keep it in".into())),
        None => blocks::Verdict::Block,
    };
    match verdict {
        blocks::Verdict::Block => Some(stop::reason(judged, how.mode)),
        blocks::Verdict::GiveUp(unkept) => {
            record_gave_up(judged, target, max_blocks, unkept.as_deref());
            let why = match &unkept {
                None => format!("{max_blocks} consecutive blocks"),
                Some(w) => format!(
                    "a second consecutive block (the block counter cannot be kept: {})",
                    crate::render::escape(w)
                ),
            };
            eprintln!(
                "closegate agent stop-hook: {why} for {}; the stop is let through (recorded)",
                judged.root.display()
            );
            None
        }
    }
}
/// The time the hook gives `signal` and `guard`: its limit less a margin for starting, reading and
/// answering (a tenth, at least 5 s and at most 30 s).
fn hook_budget(time_limit: u64) -> Duration {
    let margin = (time_limit / 10).clamp(5, 30);
    Duration::from_secs(time_limit.saturating_sub(margin).max(1))
}

/// The `signal` record of an input that could not be judged: `accepted: null`.
fn record_malformed(cwd: Option<&Path>, target: Target, why: &str) {
    let here = std::env::current_dir().ok();
    let Some(common) = [cwd, here.as_deref()]
        .into_iter()
        .flatten()
        .find_map(|c| Repo::discover(c).ok())
        .map(|r| r.common_dir())
    else {
        return;
    };
    let fields = SignalFields {
        hook: Some(target.as_str().to_string()),
        error: Some(why.to_string()),
        ..SignalFields::default()
    };
    let _ = ledger::stop_hook_record(None, Vec::new(), fields).append(&common);
}

/// The record that the loop guard let a refused stop through; `unkept` says why the block counter
/// could not be kept (the harness's `stop_hook_active` decided then).
fn record_gave_up(judged: &Judged, target: Target, max_blocks: u32, unkept: Option<&str>) {
    let Some(common) = &judged.common else {
        return;
    };
    // SPEC §6 closes the set of events: the stop hook judged a signal, so this is a `signal`
    // record — not accepted, but let through (`gave_up`).
    let fields = SignalFields {
        accepted: Some(false),
        gave_up: Some(true),
        max_blocks: Some(max_blocks),
        hook: Some(target.as_str().to_string()),
        error: unkept
            .map(|w| format!("the block counter cannot be kept ({w}): stop_hook_active decided")),
        checks: Vec::new(),
    };
    let worktree = Some(judged.root.display().to_string());
    let codes = judged.refused.iter().map(|(c, _)| c.to_string()).collect();
    let _ = ledger::stop_hook_record(worktree, codes, fields).append(common);
}

/// The record of a stop accepted on the verdict already recorded for its branch at its commit.
fn record_reused(judged: &Judged, target: Target) {
    let (Some(common), Some(reused)) = (&judged.common, &judged.reused) else {
        return;
    };
    let fields = SignalFields {
        accepted: Some(true),
        hook: Some(target.as_str().to_string()),
        ..SignalFields::default()
    };
    let worktree = Some(judged.root.display().to_string());
    let mut record = ledger::stop_hook_record(worktree, Vec::new(), fields);
    record.commit = Some(reused.commit.to_string());
    record.branch = Some(reused.branch.clone());
    record.slug = Some(reused.slug.clone());
    record.claimed = Some("done".to_string());
    // The claim and what it was decided under (SPEC §26.1): the decision accepted on.
    let on = &reused.on;
    record.claimed_commit = on.claimed_commit.clone();
    record.config = on.config.clone();
    record.config_source = on.config_source.clone();
    record.base = on.base.clone();
    record.base_commit = on.base_commit.clone();
    record.base_source = on.base_source.clone();
    record.contract = Some(on.contract().map(str::to_string));
    let _ = record.append(common);
}

/// `install` (`mode` given) or `uninstall` our entries, and say what was done.
fn install(target: Target, scope: Scope, mode: Option<agent::session::Mode>) -> Result<i32> {
    let outcome = install::run(target, scope, mode, &cwd()?)?;
    let name = outcome.file.display().to_string();
    let add = mode.is_some();
    let mut out = crate::term::human();
    match (outcome.changed, add) {
        (false, true) => writeln!(out, "already installed in {name}")?,
        (false, false) => writeln!(out, "no closegate entries in {name}")?,
        (true, true) => writeln!(out, "installed the Stop and SubagentStop hooks in {name}")?,
        (true, false) => writeln!(out, "removed closegate's hooks from {name}")?,
    }
    if let Some((config, done)) = &outcome.trust {
        let shown = config.display();
        if done.changed {
            let what = if add {
                "trusted closegate's hooks"
            } else {
                "dropped the trust of closegate's hooks"
            };
            writeln!(
                out,
                "{what} in {shown} (Codex skips an untrusted or changed hook without a word)"
            )?;
        }
        if done.trusted_project {
            let root = outcome
                .file
                .parent()
                .and_then(Path::parent)
                .unwrap_or(Path::new("."));
            writeln!(
                out,
                "trusted the project {} in {shown}: Codex loads no hook of an untrusted project",
                root.display()
            )?;
        }
        if done.untrusted_project {
            writeln!(
                out,
                "warning agent-hook-inactive: the project is marked untrusted in {shown}, so Codex \
                 loads none of its hooks: set its trust_level to \"trusted\""
            )?;
        }
    }
    if add {
        install_notes(&mut out, target, scope, &outcome.file, outcome.limit)?;
    }
    Ok(0)
}

/// SPEC §18, §26.3: what `install` tells the user besides what it wrote.
fn install_notes(
    out: &mut impl Write,
    target: Target,
    scope: Scope,
    path: &Path,
    limit: u64,
) -> Result<()> {
    writeln!(
        out,
        "time limit {limit} s (the configured checks' longest chain plus 60 s; a claim whose \
         checks cannot finish in time is blocked with checks-running), harness timeout {} s",
        install::harness_timeout(limit)
    )?;
    if scope == Scope::Project {
        let shown = path.display();
        let also = if target == Target::Codex {
            " (Codex reads it from the main checkout for every worktree that has a .codex/ folder)"
        } else {
            ""
        };
        writeln!(
            out,
            "commit {shown} to the base branch: worktrees made from it get the hook, worktrees made \
             before do not (`closegate validate` warns while the base lacks it){also}"
        )?;
    }
    writeln!(
        out,
        "tell the agent the protocol: `closegate agent instructions --target {}` prints the \
         paragraph for {}; `closegate agent doctor` says whether the hook would run",
        target.as_str(),
        if target == Target::Codex {
            "AGENTS.md"
        } else {
            "CLAUDE.md"
        }
    )?;
    Ok(())
}

/// `agent doctor`: every reason the installed hook would not run; 1 when there is one.
fn doctor(target: Option<Target>, json: bool) -> Result<i32> {
    let here = cwd()?;
    let targets: Vec<Target> = match target {
        Some(t) => vec![t],
        None => {
            let both = [Target::ClaudeCode, Target::Codex];
            let installed: Vec<Target> = both
                .into_iter()
                .filter(|t| agent::doctor::is_installed(*t, &here))
                .collect();
            if installed.is_empty() {
                both.to_vec()
            } else {
                installed
            }
        }
    };
    let mut findings = Vec::new();
    for t in &targets {
        for f in agent::doctor::check(*t, &here)? {
            findings.push((*t, f));
        }
    }
    let doctor = crate::render::doctor::Doctor::of(&targets, &findings);
    let ok = doctor.ok;
    if json {
        crate::render::doctor::json(&doctor, &mut crate::term::stdout())?;
    } else {
        crate::render::doctor::human(&doctor, &mut crate::term::stdout())?;
    }
    Ok(if ok { 0 } else { 1 })
}
