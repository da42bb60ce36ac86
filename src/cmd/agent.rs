//! `closegate agent`: the stop hook of the harnesses agents run in, and its settings (SPEC §18).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::agent::session::{self, Mode};
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
                deadline: Instant::now() + hook_budget(time_limit),
            };
            Ok(stop_hook(target, max_blocks, &how))
        }
        AgentCommand::Instructions { target } => {
            writeln!(crate::term::stdout(), "{}", agent::instructions(target))?;
            Ok(0)
        }
        AgentCommand::Hooks { target } => {
            let limit = time_limit_from_base();
            let command = target.command_with(Mode::Claims, limit);
            let snippet = settings::snippet(&command, limit);
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
    }
}

/// Most input a hook reads (SPEC §11's bound on input files).
const MAX_INPUT: u64 = 16 << 20;
/// Most characters of the reason fed back to the agent.
const MAX_REASON: usize = 2000;

/// The stop hook never fails the harness: every outcome is exit 0.
fn stop_hook(target: Target, max_blocks: u32, how: &How<'_>) -> i32 {
    let mut bytes = Vec::new();
    let read = std::io::stdin().take(MAX_INPUT + 1).read_to_end(&mut bytes);
    let input = match read {
        Err(e) => Err(format!("cannot read the hook input: {e}")),
        Ok(_) if bytes.len() as u64 > MAX_INPUT => {
            Err("the hook input is larger than 16 MiB".to_string())
        }
        Ok(_) => agent::parse_input(&bytes),
    };
    let outcome = input.and_then(|input| judge(&input, how).map(|j| (input, j)));
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
                let reason = reason(&judged);
                let line = json!({"decision": "block", "reason": reason});
                let _ = writeln!(out, "{line}");
            }
        }
    }
    let _ = out.flush();
    0
}

/// How the hook judges: flags for `signal` and `guard`, the mode, and when it must have answered.
struct How<'a> {
    flags: &'a [&'a str],
    mode: Mode,
    deadline: Instant,
}

/// The hook's time limit when `--time-limit` is not given (SPEC §18).
const DEFAULT_TIME_LIMIT: u64 = 600;

/// The time the hook gives `signal` and `guard`: its limit less a margin for starting, reading and
/// answering (a tenth, at least 5 s and at most 30 s).
fn hook_budget(time_limit: u64) -> Duration {
    let margin = (time_limit / 10).clamp(5, 30);
    Duration::from_secs(time_limit.saturating_sub(margin).max(1))
}

/// What the stop hook found in the worktree.
struct Judged {
    root: PathBuf,
    common: PathBuf,
    /// `(code, message)` of every finding that refused the stop, in order, without repeats.
    refused: Vec<(String, String)>,
    /// The last lines of each failing check's output, by check name.
    outputs: Vec<(String, Vec<String>)>,
}

/// Run `signal` and `guard` (SPEC §10, with their records) on the agent's final message in the
/// worktree the session started in. In `claims` mode a stop that claims nothing (no `@signal
/// done`, no `VERIFIED`, no status document returned since the session began) is accepted without
/// judging. `Err` is a one-line reason the input could not be judged.
fn judge(input: &StopInput, how: &How<'_>) -> Result<Judged, String> {
    let start = input.transcript().map(|t| session::start(t));
    let cwd = start
        .as_ref()
        .and_then(|s| s.cwd.clone())
        .unwrap_or_else(|| input.cwd.clone());
    let repo = Repo::discover(&cwd).map_err(|e| format!("cwd {}: {e:#}", cwd.display()))?;
    let Some(root) = repo.workdir() else {
        return Err(format!("cwd {} is in a bare repository", cwd.display()));
    };
    let common = repo.common_dir();
    let message = final_message(input)?;
    let mut judged = Judged {
        root,
        common,
        refused: Vec::new(),
        outputs: Vec::new(),
    };
    if how.mode == Mode::Claims && !session::message_claims(&message) {
        let began = start.as_ref().and_then(|s| s.began);
        if !doc_claims(&repo, &judged.root, began) {
            return Ok(judged);
        }
    }
    drop(repo);
    for command in ["signal", "guard"] {
        let report = match run_self(command, &judged.root, &message, how)? {
            Ran::Accepted => continue,
            Ran::Refused(report) => report,
            Ran::OutOfTime => {
                let finding = running_finding(how);
                judged
                    .refused
                    .push((finding.code.to_string(), finding.message));
                break;
            }
        };
        collect(&report, &mut judged);
    }
    Ok(judged)
}

/// `checks-running`: the checks could not finish within the hook's time bound.
fn running_finding(how: &How<'_>) -> crate::finding::Finding {
    let _ = how;
    crate::finding::Finding::new(
        crate::catalog::Code::ChecksRunning,
        "the checks could not finish before the hook's time limit: run `closegate check` and \
         stop again (its result is recorded and reused)",
    )
}

/// The refusing findings of a `signal` or `guard` report, and its failing checks' output.
fn collect(report: &Value, judged: &mut Judged) {
    for f in report["findings"].as_array().into_iter().flatten() {
        let severity = f["severity"].as_str().unwrap_or_default();
        if severity == Severity::Warning.as_str() {
            continue;
        }
        let code = f["code"].as_str().unwrap_or_default().to_string();
        let msg = f["message"].as_str().unwrap_or_default().to_string();
        if !judged.refused.iter().any(|(c, m)| *c == code && *m == msg) {
            judged.refused.push((code, msg));
        }
    }
    let mut runs: Vec<&Value> = Vec::new();
    for checks in [&report["checks"], &report["report"]["checks"]] {
        runs.extend(checks.as_array().into_iter().flatten());
    }
    for run in runs {
        let failed = run["exit_code"] != 0 || run["timed_out"] == true;
        let name = run["name"].as_str().unwrap_or_default().to_string();
        if !failed || judged.outputs.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let lines: Vec<String> = (run["output"].as_array().into_iter().flatten())
            .filter_map(|l| l.as_str().map(str::to_string))
            .collect();
        let tail = lines.len().saturating_sub(BLOCK_TAIL);
        judged.outputs.push((name, lines[tail..].to_vec()));
    }
}

/// Lines of each failing check's output in a block's reason.
const BLOCK_TAIL: usize = 20;

/// Whether the worktree's status document is in a returned state and changed since the session
/// began (SPEC §18): a claim made in the document rather than the message.
fn doc_claims(repo: &Repo, root: &Path, began: Option<std::time::SystemTime>) -> bool {
    let status_file = crate::inputs::trusted_config(repo, None, None)
        .map(|t| t.config.status_file)
        .unwrap_or_else(|_| crate::config::DEFAULT_STATUS_FILE.to_string());
    let path = root.join(&status_file);
    let Ok(bytes) = crate::input_file::read(&path) else {
        return false;
    };
    if !session::doc_returned(&bytes) {
        return false;
    }
    let head = repo
        .worktree_head(root)
        .and_then(|h| repo.read_blob(h, &status_file));
    session::doc_changed(&path, began, head.as_deref())
}

/// The agent's final message: `last_assistant_message`, else the transcript's last assistant
/// message (read from its last 16 MiB).
fn final_message(input: &StopInput) -> Result<String, String> {
    if let Some(message) = &input.last_assistant_message {
        return Ok(message.clone());
    }
    let Some(path) = input.transcript() else {
        return Err(
            "the hook input has neither `last_assistant_message` nor a transcript path".into(),
        );
    };
    let bytes = read_tail(path, session::TRANSCRIPT_TAIL)
        .map_err(|e| format!("cannot read the transcript {}: {e}", path.display()))?;
    agent::last_assistant_text(&bytes).ok_or_else(|| {
        format!(
            "the transcript {} holds no assistant message",
            path.display()
        )
    })
}

/// The last `max` bytes of a file.
fn read_tail(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::{Seek, SeekFrom};
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(max)))?;
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// How a `signal` or `guard` run ended.
enum Ran {
    Accepted,
    Refused(Value),
    /// The hook's time bound passed first; the run was killed.
    OutOfTime,
}

/// Run `closegate COMMAND - --worktree ROOT --format json` on `message` until `how.deadline`.
/// `Err` when it reached no decision.
fn run_self(command: &str, root: &Path, message: &str, how: &How<'_>) -> Result<Ran, String> {
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
        .args(how.flags);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run closegate {command}: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(message.as_bytes());
    }
    let Some(out) = wait_until(child, how.deadline)? else {
        return Ok(Ran::OutOfTime);
    };
    match out.status.code() {
        Some(0) => Ok(Ran::Accepted),
        Some(1) => serde_json::from_slice(&out.stdout)
            .map(Ran::Refused)
            .map_err(|e| format!("closegate {command} printed no report: {e}")),
        _ => {
            let err = String::from_utf8_lossy(&out.stderr);
            let first = err.lines().next().unwrap_or("no message");
            Err(format!("closegate {command} reached no decision: {first}"))
        }
    }
}

/// Wait for `child` (reading its output meanwhile) until `deadline`; `None` when the deadline
/// passed first and the child was killed (its checks die with it).
fn wait_until(
    mut child: std::process::Child,
    deadline: Instant,
) -> Result<Option<std::process::Output>, String> {
    let readers = [
        child.stdout.take().map(spawn_reader),
        child.stderr.take().map(spawn_reader),
    ];
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let [stdout, stderr] =
                    readers.map(|r| r.and_then(|h| h.join().ok()).unwrap_or_default());
                return Ok(Some(std::process::Output {
                    status,
                    stdout,
                    stderr,
                }));
            }
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Ok(None);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("cannot wait for closegate: {e}")),
        }
    }
}

fn spawn_reader(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// The reason fed back to the agent: each finding's code and message (each code once), the last
/// 20 lines of each failing check's output, then what to do, at most 2,000 characters.
fn reason(judged: &Judged) -> String {
    let what_to_do = "\nWhat to do: fix what is named above and commit; run `closegate close` \
                      (it writes the status document from git), then `closegate check`; end with \
                      a final message whose first line starts with the verdict token `closegate \
                      check` printed (VERIFIED, UNVERIFIED, PENDING_REVIEW or FAIL) and whose last \
                      line is `@signal done` (or `@signal blocked` / `@signal no_op`).";
    let mut text = String::from("closegate refused this stop:");
    let mut seen: Vec<&str> = Vec::new();
    for (code, msg) in &judged.refused {
        if seen.contains(&code.as_str()) {
            continue;
        }
        seen.push(code);
        text.push_str(&format!("\n- {code}: {msg}"));
    }
    for (name, lines) in &judged.outputs {
        text.push_str(&format!("\nlast lines of check `{name}`:"));
        for line in lines {
            text.push_str(&format!("\n  | {line}"));
        }
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
fn install(target: Target, scope: Scope, mode: Option<Mode>) -> Result<i32> {
    let add = mode.is_some();
    let limit = time_limit_from_base();
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
        (true, text) => {
            let command = target.command_with(mode.unwrap_or(Mode::Claims), limit);
            settings::install(text.as_deref().unwrap_or(""), &name, &command, limit)?
        }
        (false, Some(text)) => settings::uninstall(text, &name)?,
        (false, None) => None,
    };
    let mut out = crate::term::human();
    match changed {
        None if add => writeln!(out, "already installed in {name}")?,
        None => writeln!(out, "no closegate entries in {name}")?,
        Some(text) => {
            crate::fsutil::write_atomic(&path, text.as_bytes())?;
            let verb = if add {
                "installed the Stop and SubagentStop hooks in"
            } else {
                "removed closegate's hooks from"
            };
            writeln!(out, "{verb} {name}")?;
        }
    }
    if add {
        install_notes(&mut out, target, scope, &path, limit)?;
    }
    Ok(0)
}

/// SPEC §18: what `install` tells the user besides what it wrote.
fn install_notes(
    out: &mut impl Write,
    target: Target,
    scope: Scope,
    path: &Path,
    limit: u64,
) -> Result<()> {
    writeln!(
        out,
        "hook timeout {limit} s: the configured checks' longest chain plus 60 s (a claim whose \
         checks cannot finish in time is blocked with checks-running)"
    )?;
    if scope == Scope::Project {
        let shown = path.display();
        writeln!(
            out,
            "commit {shown} to the base branch: worktrees made from it get the hook, worktrees made \
             before do not (`closegate validate` warns while the base lacks it)"
        )?;
    }
    writeln!(
        out,
        "tell the agent the protocol: `closegate agent instructions --target {}` prints the \
         paragraph for {}",
        target.as_str(),
        if target == Target::Codex {
            "AGENTS.md"
        } else {
            "CLAUDE.md"
        }
    )?;
    Ok(())
}

/// The hook's time limit: the base configuration's longest chain of checks (their timeouts
/// summed, divided among `jobs`) plus 60 s, and never below the default 600 s.
fn time_limit_from_base() -> u64 {
    let config = std::env::current_dir()
        .ok()
        .and_then(|cwd| Repo::discover(&cwd).ok())
        .and_then(|repo| crate::inputs::trusted_config(&repo, None, None).ok())
        .map(|t| t.config);
    let Some(config) = config else {
        return DEFAULT_TIME_LIMIT;
    };
    let total: u64 = config.checks.iter().map(|c| c.timeout_s).sum();
    let longest = config.checks.iter().map(|c| c.timeout_s).max().unwrap_or(0);
    let chain = (total / config.jobs.max(1) as u64).max(longest);
    (chain + 60).max(DEFAULT_TIME_LIMIT)
}
