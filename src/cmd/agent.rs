//! `closegate agent`: the stop hook of the harnesses agents run in, and its settings (SPEC §18).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::agent::{self, StopInput, Target, settings};
use crate::finding::Severity;
use crate::ledger::{self, SignalFields};
use crate::repo::Repo;

/// Plug closegate into the stop hooks of Claude Code and Codex
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: AgentCommand,
}

/// Where `install` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// The project's shared settings (`.claude/settings.json`, `.codex/hooks.json`)
    Project,
    /// The project's uncommitted settings (`.claude/settings.local.json`; Claude Code only)
    Local,
    /// The user's settings (`~/.claude/settings.json`, `~/.codex/hooks.json`)
    User,
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
        /// Run every check afresh even when a recorded result has the same key (SPEC §19)
        #[arg(long)]
        rerun: bool,
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
    },
    /// Remove closegate's entries (and only those) from the harness's settings file (without
    /// --target: from both harnesses' files at the scope)
    Uninstall {
        #[arg(long, value_enum)]
        target: Option<Target>,
        #[arg(long, value_enum, default_value_t = Scope::Project)]
        scope: Scope,
    },
}

pub fn run(args: Args, _color: bool) -> Result<i32> {
    match args.command {
        AgentCommand::StopHook {
            target,
            max_blocks,
            no_checks,
            rerun,
        } => {
            // Handed to the `signal` and `guard` runs that judge the message.
            let gate = [(no_checks, "--no-checks"), (rerun, "--rerun")];
            let flags: Vec<&str> = gate.iter().filter(|(on, _)| *on).map(|(_, f)| *f).collect();
            Ok(stop_hook(target, max_blocks, &flags))
        }
        AgentCommand::Hooks { target } => {
            let snippet = settings::snippet(&target.command());
            let text = serde_json::to_string_pretty(&snippet)?;
            writeln!(crate::term::stdout(), "{text}")?;
            Ok(0)
        }
        AgentCommand::Install { target, scope } => install(target, scope, true),
        AgentCommand::Uninstall {
            target: Some(target),
            scope,
        } => install(target, scope, false),
        AgentCommand::Uninstall {
            target: None,
            scope,
        } => {
            for target in [Target::ClaudeCode, Target::Codex] {
                if target == Target::Codex && scope == Scope::Local {
                    continue;
                }
                install(target, scope, false)?;
            }
            Ok(0)
        }
    }
}

/// Most input a hook reads (SPEC §11's bound on input files).
const MAX_INPUT: u64 = 16 << 20;
/// Most characters of the reason fed back to the agent.
const MAX_REASON: usize = 2000;

/// The stop hook never fails the harness: every outcome is exit 0.
fn stop_hook(target: Target, max_blocks: u32, flags: &[&str]) -> i32 {
    let mut bytes = Vec::new();
    let read = std::io::stdin().take(MAX_INPUT + 1).read_to_end(&mut bytes);
    let input = match read {
        Err(e) => Err(format!("cannot read the hook input: {e}")),
        Ok(_) if bytes.len() as u64 > MAX_INPUT => {
            Err("the hook input is larger than 16 MiB".to_string())
        }
        Ok(_) => agent::parse_input(&bytes),
    };
    let outcome = input.and_then(|input| judge(&input, flags).map(|j| (input, j)));
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
        Ok((_input, judged)) => {
            let blocks = Blocks::new(&judged.common, &judged.root);
            if judged.refused.is_empty() {
                blocks.reset();
                let _ = out.write_all(target.accept_output().as_bytes());
            } else if blocks.count() >= max_blocks {
                blocks.reset();
                record_gave_up(&judged, target, max_blocks);
                eprintln!(
                    "closegate agent stop-hook: {max_blocks} consecutive blocks for {}; \
                     the stop is let through (recorded)",
                    judged.root.display()
                );
                let _ = out.write_all(target.accept_output().as_bytes());
            } else {
                blocks.increment();
                let reason = reason(&judged.refused);
                let line = json!({"decision": "block", "reason": reason});
                let _ = writeln!(out, "{line}");
            }
        }
    }
    let _ = out.flush();
    0
}

/// What the stop hook found in the worktree.
struct Judged {
    root: PathBuf,
    common: PathBuf,
    /// `(code, message)` of every finding that refused the stop, in order, without repeats.
    refused: Vec<(String, String)>,
}

/// Run `signal` and `guard` (SPEC §10, with their records) on the agent's final message in the
/// worktree around `cwd`. `Err` is a one-line reason the input could not be judged.
fn judge(input: &StopInput, flags: &[&str]) -> Result<Judged, String> {
    let repo =
        Repo::discover(&input.cwd).map_err(|e| format!("cwd {}: {e:#}", input.cwd.display()))?;
    let Some(root) = repo.workdir() else {
        return Err(format!(
            "cwd {} is in a bare repository",
            input.cwd.display()
        ));
    };
    let common = repo.common_dir();
    drop(repo);
    let message = match &input.last_assistant_message {
        Some(message) => message.clone(),
        None => {
            let Some(path) = input.transcript() else {
                return Err(
                    "the hook input has neither `last_assistant_message` nor a transcript path"
                        .into(),
                );
            };
            let bytes = crate::input_file::read(path)
                .map_err(|e| format!("cannot read the transcript {}: {e:#}", path.display()))?;
            agent::last_assistant_text(&bytes).ok_or_else(|| {
                format!(
                    "the transcript {} holds no assistant message",
                    path.display()
                )
            })?
        }
    };
    let mut refused: Vec<(String, String)> = Vec::new();
    for command in ["signal", "guard"] {
        let report = run_self(command, &root, &message, flags)?;
        if let Some(report) = report {
            for f in report["findings"].as_array().into_iter().flatten() {
                let severity = f["severity"].as_str().unwrap_or_default();
                if severity == Severity::Warning.as_str() {
                    continue;
                }
                let code = f["code"].as_str().unwrap_or_default().to_string();
                let msg = f["message"].as_str().unwrap_or_default().to_string();
                if !refused.iter().any(|(c, m)| *c == code && *m == msg) {
                    refused.push((code, msg));
                }
            }
        }
    }
    Ok(Judged {
        root,
        common,
        refused,
    })
}

/// Run `closegate COMMAND - --worktree ROOT --format json` on `message`: `Some(report)` when it
/// refused, `None` when it accepted; `Err` when it reached no decision.
fn run_self(
    command: &str,
    root: &Path,
    message: &str,
    flags: &[&str],
) -> Result<Option<Value>, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find closegate itself: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.arg(command)
        .arg("-")
        .arg("--worktree")
        .arg(root)
        .args(["--format", "json"])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .args(flags);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run closegate {command}: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(message.as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("closegate {command} failed: {e}"))?;
    match out.status.code() {
        Some(0) => Ok(None),
        Some(1) => serde_json::from_slice(&out.stdout)
            .map(Some)
            .map_err(|e| format!("closegate {command} printed no report: {e}")),
        _ => {
            let err = String::from_utf8_lossy(&out.stderr);
            let first = err.lines().next().unwrap_or("no message");
            Err(format!("closegate {command} reached no decision: {first}"))
        }
    }
}

/// The reason fed back to the agent: each finding's code and message, then what to do, at most
/// 2,000 characters.
fn reason(refused: &[(String, String)]) -> String {
    let what_to_do = "\nWhat to do: fix what is named above and commit; run `closegate close` \
                      (it writes the status document from git), then `closegate check`; end with \
                      a final message whose first line starts with the verdict token `closegate \
                      check` printed (VERIFIED, UNVERIFIED, PENDING_REVIEW or FAIL) and whose last \
                      line is `@signal done` (or `@signal blocked` / `@signal no_op`).";
    let mut text = String::from("closegate refused this stop:");
    for (code, msg) in refused {
        text.push_str(&format!("\n- {code}: {msg}"));
    }
    let room = MAX_REASON.saturating_sub(what_to_do.chars().count());
    if text.chars().count() > room {
        text = text.chars().take(room.saturating_sub(1)).collect();
        text.push('…');
    }
    text.push_str(what_to_do);
    text
}

/// The consecutive-blocks counter of one worktree, in the common dir.
struct Blocks {
    path: Option<PathBuf>,
}

impl Blocks {
    fn new(common: &Path, root: &Path) -> Blocks {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(root.as_os_str().as_encoded_bytes());
        let name: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
        let dir = crate::record::dir(common).join("stop-hook");
        Blocks {
            path: std::fs::create_dir_all(&dir).ok().map(|_| dir.join(name)),
        }
    }

    fn count(&self) -> u32 {
        let Some(path) = &self.path else { return 0 };
        std::fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0)
    }

    fn increment(&self) {
        if let Some(path) = &self.path {
            let _ = std::fs::write(path, format!("{}\n", self.count().saturating_add(1)));
        }
    }

    fn reset(&self) {
        if let Some(path) = &self.path {
            let _ = std::fs::remove_file(path);
        }
    }
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

/// The record that the loop guard let a refused stop through.
fn record_gave_up(judged: &Judged, target: Target, max_blocks: u32) {
    // SPEC §6 closes the set of events: the stop hook judged a signal, so this is a `signal`
    // record — not accepted, but let through (`gave_up`).
    let fields = SignalFields {
        accepted: Some(false),
        gave_up: Some(true),
        max_blocks: Some(max_blocks),
        hook: Some(target.as_str().to_string()),
        error: None,
        checks: Vec::new(),
    };
    let worktree = Some(judged.root.display().to_string());
    let codes = judged.refused.iter().map(|(c, _)| c.to_string()).collect();
    let _ = ledger::stop_hook_record(worktree, codes, fields).append(&judged.common);
}

/// The settings file of a harness at a scope.
pub fn settings_path(target: Target, scope: Scope) -> Result<PathBuf> {
    let home = || -> Result<PathBuf> {
        std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .context("HOME is not set: cannot find the user's settings")
    };
    let project = || -> Result<PathBuf> {
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        Ok(Repo::discover(&cwd)
            .ok()
            .and_then(|r| r.workdir())
            .unwrap_or(cwd))
    };
    Ok(match (target, scope) {
        (Target::ClaudeCode, Scope::Project) => project()?.join(".claude/settings.json"),
        (Target::ClaudeCode, Scope::Local) => project()?.join(".claude/settings.local.json"),
        (Target::ClaudeCode, Scope::User) => home()?.join(".claude/settings.json"),
        (Target::Codex, Scope::Project) => project()?.join(".codex/hooks.json"),
        (Target::Codex, Scope::User) => match std::env::var_os("CODEX_HOME") {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir).join("hooks.json"),
            _ => home()?.join(".codex/hooks.json"),
        },
        (Target::Codex, Scope::Local) => {
            bail!("--scope local: Codex has no local settings file; use project or user")
        }
    })
}

/// `install` (`add`) or `uninstall` our entries in the settings file.
fn install(target: Target, scope: Scope, add: bool) -> Result<i32> {
    let path = settings_path(target, scope)?;
    // A settings file that is a symlink (dotfiles) is edited where it points.
    let path = match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.file_type().is_symlink() => std::fs::canonicalize(&path)
            .with_context(|| format!("{} is a dangling symlink", path.display()))?,
        _ => path,
    };
    let existing = match std::fs::symlink_metadata(&path) {
        Ok(_) => {
            let bytes = crate::input_file::read(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            Some(
                String::from_utf8(bytes)
                    .map_err(|_| anyhow::anyhow!("{} is not UTF-8", path.display()))?,
            )
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let name = path.display().to_string();
    let changed = match (add, &existing) {
        (true, text) => settings::install(text.as_deref().unwrap_or(""), &name, &target.command())?,
        (false, Some(text)) => settings::uninstall(text, &name)?,
        (false, None) => None,
    };
    let mut out = crate::term::human();
    match changed {
        None if add => writeln!(out, "already installed in {name}")?,
        None => writeln!(out, "no closegate entries in {name}")?,
        Some(text) => {
            crate::cmd::close::write_atomic(&path, text.as_bytes())?;
            let verb = if add {
                "installed the Stop and SubagentStop hooks in"
            } else {
                "removed closegate's hooks from"
            };
            writeln!(out, "{verb} {name}")?;
        }
    }
    Ok(0)
}
