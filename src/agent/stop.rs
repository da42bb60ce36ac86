//! The stop hook's judgement (SPEC §18, §26.3): in the worktree the session started in, the
//! installed hook is compared with the committed one, a stop that claims nothing passes in
//! `claims` mode, a VERIFIED stop whose verdict is already recorded for this branch at this
//! commit is accepted on it, and anything else is judged by `closegate signal` and `closegate
//! guard` (their records included), within the hook's time bound.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::report::Report;
use git2::Oid;

use super::bounded::{self, Ran};
use super::place::{self, Place};
use super::session::{self, Mode};
use super::{StopInput, Target, decided, drift};
use crate::catalog::Code;
use crate::claim::{signal, token};
use crate::doc::{ParseOptions, State};
use crate::finding::{Finding, Severity, Verdict};
use crate::inputs::Trusted;
use crate::repo::Repo;

/// How the hook judges: flags for `signal` and `guard`, the mode, the harness, and when it must
/// have answered.
pub struct How<'a> {
    pub flags: &'a [&'a str],
    pub mode: Mode,
    pub target: Target,
    pub deadline: Instant,
}

/// A stop accepted on the verdict already recorded for its branch at its commit.
pub struct Reused {
    pub commit: Oid,
    pub branch: String,
    pub slug: String,
    /// The record of the decision it was accepted on (what it claimed, under what).
    pub on: crate::ledger::Record,
}

/// What the stop hook found.
pub struct Judged {
    /// The worktree judged (or, when it is gone, the folder the session started in).
    pub root: PathBuf,
    /// The common dir blocks are counted and records written in; `None` without a repository.
    pub common: Option<PathBuf>,
    /// `(code, message)` of every finding that refused the stop, in order, without repeats.
    pub refused: Vec<(String, String)>,
    /// The last lines of each failing check's output, by check name.
    pub outputs: Vec<(String, Vec<String>)>,
    pub reused: Option<Reused>,
    /// The committed hook's `--max-blocks` when the installed hook is not the committed one: the
    /// loop guard obeys it instead of the command line it was started with (SPEC §27.3).
    pub max_blocks: Option<u32>,
}

impl Judged {
    fn new(root: PathBuf, common: Option<PathBuf>) -> Judged {
        Judged {
            root,
            common,
            refused: Vec::new(),
            outputs: Vec::new(),
            reused: None,
            max_blocks: None,
        }
    }

    fn refuse(&mut self, finding: Finding) {
        self.refused
            .push((finding.code.as_str().to_string(), finding.message));
    }
}

/// Judge the stop. `Err` is a one-line reason the input could not be judged at all. The installed
/// hook is compared with the committed one before anything else is decided (SPEC §27.3).
pub fn judge(input: &StopInput, how: &How<'_>) -> Result<Judged, String> {
    let start = input
        .transcript()
        .and_then(|t| session::start_cwd(t))
        .unwrap_or_else(|| input.cwd.clone());
    match place::locate(&start)? {
        Place::Here { repo, root } => judge_here(*repo, root, input, how),
        Place::Gone { start } => {
            let message = final_message(input)?;
            let claims = session::message_claims(&message);
            let common = place::any_repo(&input.cwd, &start).map(|r| r.common_dir());
            let mut judged = Judged::new(start.clone(), common);
            if how.mode == Mode::Always || claims {
                let msg = format!(
                    "the session started in {}, which no longer exists (nor the worktree that \
                     held it): no claim made there can hold",
                    start.display()
                );
                judged.refuse(Finding::new(Code::CloseWorktreeAbsent, msg));
            }
            Ok(judged)
        }
    }
}

/// Judge the stop in the worktree at `root`: first whether the hook as installed is the
/// committed one and would run in later sessions, then the message.
fn judge_here(
    repo: Repo,
    root: PathBuf,
    input: &StopInput,
    how: &How<'_>,
) -> Result<Judged, String> {
    let mut judged = Judged::new(root.clone(), Some(repo.common_dir()));
    let trusted = crate::inputs::trusted_config(&repo, None, None).ok();
    let tip = trusted.as_ref().and_then(|t| t.tip.as_ref());
    if refused_as_installed(&repo, &root, tip, how, &mut judged) {
        return Ok(judged);
    }
    // A client that sends no final message (Cursor, Copilot CLI without a readable transcript)
    // is judged on the status document alone: an empty message claims nothing.
    let message = match final_message(input) {
        Err(_) if !how.target.row().sends_message => String::new(),
        other => other?,
    };
    let claims = session::message_claims(&message);
    if how.mode == Mode::Claims && !claims && !doc_claims(&repo, &root, trusted.as_ref()) {
        return Ok(judged);
    }
    let message = message.as_str();
    let rerun = how.flags.contains(&"--rerun");
    if let Some(t) = trusted.as_ref().filter(|_| !rerun) {
        judged.reused = reused(&repo, &root, message, t);
        if judged.reused.is_some() {
            return Ok(judged);
        }
    }
    drop(repo);
    if let Some(msg) = unreadable_doc(&root, trusted.as_ref()) {
        judged.refuse(Finding::new(Code::StateNotReturned, msg));
        return Ok(judged);
    }
    for command in ["signal", "guard"] {
        match bounded::run_self(command, &root, message, how.flags, how.deadline)? {
            Ran::Accepted => {}
            Ran::Refused(report) => collect(&report, &mut judged),
            Ran::OutOfTime => {
                let msg = "the checks could not finish before the hook's time limit: run \
                           `closegate check` and stop again (its result is recorded and reused)";
                judged.refuse(Finding::new(Code::ChecksRunning, msg));
                break;
            }
        }
    }
    Ok(judged)
}

/// The hook as installed, before anything else (SPEC §27.3): an entry that is not the committed
/// one, or a switch that keeps later sessions from running it, refuses the stop; whether one did.
fn refused_as_installed(
    repo: &Repo,
    root: &Path,
    tip: Option<&(String, Oid)>,
    how: &How<'_>,
    judged: &mut Judged,
) -> bool {
    let found =
        drift::drift(repo, root, how.target, tip).or_else(|| plugin_drift(how.target, root, repo));
    if let Some(found) = found {
        let msg = format!(
            "the stop hook as installed is not {}: {}; {}",
            found.against, found.difference, found.fix
        );
        judged.refuse(Finding::new(Code::AgentHookInactive, msg));
        judged.max_blocks = Some(found.max_blocks);
        return true;
    }
    // A switch set now keeps every later session from running this hook: this session, which
    // still runs it, is held until it is cleared. Trust by closegate's computed hash: asking
    // Codex (a process of its own) costs more than a whole accepted stop.
    let off = super::switches::off_in(how.target, root, Some(repo), true);
    for finding in &off {
        let msg = format!(
            "later sessions will not run the stop hook: {}",
            finding.message
        );
        judged.refuse(Finding::new(finding.code, msg));
    }
    !off.is_empty()
}

/// closegate's Codex plugin, when Codex has it enabled, as Codex keeps it: its drift from the
/// plugin this closegate ships (an agent can edit Codex's copy and have Codex trust the edit).
fn plugin_drift(target: Target, root: &Path, repo: &Repo) -> Option<drift::Drift> {
    if target != Target::Codex {
        return None;
    }
    // No copy in Codex's cache (one directory read): no plugin, and Codex's configuration is
    // not read again on every stop.
    let home = super::codex::home().ok()?;
    let cached = super::codex_plugin::cached(&home);
    if cached.is_empty() {
        return None;
    }
    let enabled = super::switches::plugin_in_repo(target, root, Some(repo));
    if !matches!(enabled, Some(super::switches::Plugin::Enabled(_))) {
        return None;
    }
    drift::plugin_drift(&cached)
}

/// The worktree's status document, as the gate would read it: its bytes and parse.
fn read_doc(root: &Path, trusted: Option<&Trusted>) -> Option<(Vec<u8>, crate::doc::StatusDoc)> {
    let status_file = trusted.map_or(crate::config::DEFAULT_STATUS_FILE, |t| {
        &t.config.status_file
    });
    let bytes = crate::input_file::read(&root.join(status_file)).ok()?;
    let doc = crate::doc::parse(&bytes, ParseOptions::default()).doc?;
    Some((bytes, doc))
}

/// A status document that is there but cannot be read as the gate reads it (a FIFO, a device, a
/// directory, a dangling link, over 16 MiB): no claim can be read from it, and `signal` and `guard` would reach no decision on it (exit 2),
/// which must not let the claim through as "malformed input" (SPEC §26.3).
fn unreadable_doc(root: &Path, trusted: Option<&Trusted>) -> Option<String> {
    let status_file = trusted.map_or(crate::config::DEFAULT_STATUS_FILE, |t| {
        &t.config.status_file
    });
    let path = root.join(status_file);
    std::fs::symlink_metadata(&path).ok()?;
    let err = crate::input_file::read(&path).err()?;
    Some(format!(
        "{err:#}: no claim can be read from it; write it with `closegate close`"
    ))
}

/// Whether the status document is a claim no verdict has seen (SPEC §26.3): in a returned state,
/// this agent's (not inherited from the base), and not the claim the newest verdict recorded for
/// this branch judged. A document that is not a regular file is read as no claim, never waited on.
fn doc_claims(repo: &Repo, root: &Path, trusted: Option<&Trusted>) -> bool {
    let Some((bytes, doc)) = read_doc(root, trusted) else {
        return false;
    };
    if !doc.state.is_some_and(State::is_returned) {
        return false;
    }
    let status_file = trusted.map_or(crate::config::DEFAULT_STATUS_FILE, |t| {
        &t.config.status_file
    });
    if decided::seen(repo, root, &doc, status_file) {
        return false;
    }
    let inherited = trusted.is_some_and(|t| {
        let base = t.base.as_ref().map(|(_, id)| *id);
        let head = repo.worktree_head(root);
        let attested = || {
            decided::claim(repo, root)
                .is_some_and(|claim| crate::verdict::attested(repo, &claim, status_file))
        };
        crate::inherited::is_inherited(repo, base, head, status_file, &bytes, attested)
    });
    !inherited
}

/// A VERIFIED `@signal done` stop that needs no gate run: the message's shape holds, the
/// document claims what the newest decision for this branch judged, that decision is VERIFIED
/// at HEAD under the base tip's configuration and contract, and no tracked file has changed.
fn reused(repo: &Repo, root: &Path, message: &str, trusted: &Trusted) -> Option<Reused> {
    let claim = token::read_claim(message);
    let parsed = signal::parse(message);
    let shaped = claim.token == Some(Verdict::Verified)
        && claim.findings.is_empty()
        && parsed.signal == Some(signal::Signal::Done);
    if !shaped {
        return None;
    }
    let (_, doc) = read_doc(root, Some(trusted))?;
    if !matches!(doc.state, Some(State::CloseOk | State::Stop2Ready)) {
        return None;
    }
    // The one verdict query (SPEC §26.1): the newest decision for this branch at this commit,
    // under the base tip's configuration and contract.
    let claim = decided::claim(repo, root)?;
    let branch = claim.owner.branch()?.to_string();
    let head = claim.commit;
    let decision = decided::reusable(repo, &claim, &doc, trusted)?;
    // Uncommitted changes refuse the return (`close-worktree-dirty`); untracked files are only a
    // warning, as in the gate.
    let status = repo.status_of(root, &trusted.config.status_file).ok()?;
    if !status.dirty.is_empty() {
        return None;
    }
    Some(Reused {
        commit: head,
        branch,
        slug: doc.slug,
        on: decision.record,
    })
}

/// The refusing findings of a `signal` or `guard` report, and its failing checks' output.
fn collect(report: &Report, judged: &mut Judged) {
    for f in &report.findings {
        if f.severity == Severity::Warning {
            continue;
        }
        let (code, msg) = (f.code.as_str().to_string(), f.message.clone());
        if !judged.refused.iter().any(|(c, m)| *c == code && *m == msg) {
            judged.refused.push((code, msg));
        }
    }
    for run in &report.checks {
        let failed = run.exit_code != Some(0) || run.timed_out;
        if !failed || judged.outputs.iter().any(|(n, _)| *n == run.name) {
            continue;
        }
        let tail = run.output.len().saturating_sub(BLOCK_TAIL);
        judged
            .outputs
            .push((run.name.clone(), run.output[tail..].to_vec()));
    }
}

/// Lines of each failing check's output in a block's reason.
const BLOCK_TAIL: usize = 20;

/// The agent's final message: `last_assistant_message`, else the transcript's last assistant
/// message (read from its last 16 MiB, never with a blocking open).
fn final_message(input: &StopInput) -> Result<String, String> {
    if let Some(message) = &input.last_assistant_message {
        return Ok(message.clone());
    }
    if let Some(cumulative) = &input.prompt_response {
        return Ok(last_turn(input, cumulative));
    }
    let Some(path) = input.transcript() else {
        return Err(
            "the hook input has neither `last_assistant_message` nor a transcript path".into(),
        );
    };
    let bytes = session::read_tail(path, session::TRANSCRIPT_TAIL)
        .map_err(|e| format!("cannot read the transcript: {e:#}"))?;
    super::last_assistant_text(&bytes).ok_or_else(|| {
        format!(
            "the transcript {} holds no assistant message",
            path.display()
        )
    })
}

/// Gemini CLI's final message: its `prompt_response` joins the text of every model turn since
/// the prompt (a blocked "done" and the turns after it), so the last turn is read from the
/// transcript — and taken only when `prompt_response` ends with it on a line of its own: a
/// record the agent wrote there can only cut the text the model really sent, at a line, and the
/// cut keeps its last line. Otherwise the whole `prompt_response` is the message.
fn last_turn(input: &StopInput, cumulative: &str) -> String {
    let last = input
        .transcript()
        .and_then(|path| session::read_tail(path, session::TRANSCRIPT_TAIL).ok())
        .and_then(|bytes| super::last_assistant_text(&bytes));
    match last {
        Some(last) if cumulative == last || cumulative.ends_with(&format!("\n{last}")) => last,
        _ => cumulative.to_string(),
    }
}

/// Most characters of the reason fed back to the agent.
const MAX_REASON: usize = 2000;

/// The reason fed back to the agent (SPEC §18, §26.3): each finding's code and message (each code
/// once), the last 20 lines of each failing check's output, then what this stop needs — for a
/// false claim the command to run; for a stop with no signal in `always` mode also how to stop
/// honestly without finishing. At most 2,000 characters.
pub fn reason(judged: &Judged, mode: Mode) -> String {
    let mut what_to_do = String::from(
        "\nWhat to do: fix what is named above and commit; run `closegate close` (it writes the \
         status document from git), then `closegate check`; end with a final message whose first \
         line starts with the verdict token `closegate check` printed (VERIFIED, UNVERIFIED, \
         PENDING_REVIEW or FAIL) and whose last line is `@signal done`.",
    );
    let unsignalled = judged
        .refused
        .iter()
        .any(|(c, _)| c == Code::SignalMissing.as_str());
    if mode == Mode::Always && unsignalled {
        what_to_do.push_str(
            "\nTo stop without finishing: run `closegate close --state blocked --blocked-on \
             \"<what you wait for, or your question>\"`, then end with a message whose first \
             line is `UNVERIFIED: <why>` (your question to the user goes here too) and whose \
             last line is `@signal blocked`.",
        );
    }
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
    text.push_str(&what_to_do);
    text
}
