//! `hook run pre-receive`: the server gate (SPEC §20), run by git in the repository agents push
//! to, where no agent can write.
//!
//! In `pre-receive` the pushed objects sit in a quarantine directory (`GIT_QUARANTINE_PATH`;
//! git names it in `GIT_OBJECT_DIRECTORY`, with the repository's own objects in
//! `GIT_ALTERNATE_OBJECT_DIRECTORIES`) and no ref has moved yet; `Repo::from_env` reads both.
//! Each update is judged as the reference-transaction hook judges it (SPEC §9): a push that moves
//! the base onto agent commits is decided by running the gate on the newest such commit with
//! `--no-worktree --rev` semantics, the base tip's configuration and, for the checks, a valid
//! attestation (or, with `server_checks = "run"`, the checks run here). Anything short of VERIFIED
//! refuses the whole push, with the report on stderr (the pusher sees it as `remote:` lines);
//! git then drops the quarantine, so a refused push leaves no ref and no object. Creating or
//! moving an agent branch is accepted (and with `server_checks = "run"` checked and recorded);
//! deleting one is accepted only when its tip is merged into the base or passes the gate.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use anyhow::{Context, Result};
use git2::Oid;

use super::run::{self, Action, Decision, Setting, Update};
use super::script;
use crate::finding::Verdict;
use crate::gates::Session;
use crate::inputs::GateOptions;
use crate::repo::Repo;
use crate::report::Report;
use crate::{attest, gates, ledger};

/// What the server gate answers the pusher, as data: `render::hook::push` words it,
/// [`Answer::code`] is the exit code (0 accept, 1 refuse).
#[derive(Debug)]
pub enum Answer {
    /// No branch is pushed: tags, notes and other refs carry no claim of their own.
    NoBranches,
    /// The kept backup hook ran first and refused (its exit code, or the signal that ended it).
    ChainedRefused { backup: PathBuf, how: String },
    /// Every branch update decided, with the report of every judged commit.
    Judged(Judged),
    /// No decision was reached (an error, a panic): the push is refused all the same, exit 1,
    /// or 2 for a repository libgit2 cannot open (SPEC §15). `error` is raw text.
    Undecided { error: String, code: i32 },
}

/// The decisions on a push's branch updates.
#[derive(Debug)]
pub struct Judged {
    /// The base's name for messages.
    pub base: Option<String>,
    pub decisions: Vec<Decision>,
    /// The report of every commit the gate judged, in the order judged.
    pub reports: Vec<Report>,
}

impl Judged {
    /// Whether any decision refused.
    pub fn refused(&self) -> bool {
        self.decisions.iter().any(|d| !d.accepted)
    }
}

impl Answer {
    /// The hook's exit code: 0 lets the push in.
    pub fn code(&self) -> i32 {
        match self {
            Answer::NoBranches => 0,
            Answer::ChainedRefused { .. } => 1,
            Answer::Judged(judged) => i32::from(judged.refused()),
            Answer::Undecided { code, .. } => *code,
        }
    }
}

/// Run the server gate on the updates on `input`; returns its answer. `hook_file` is the hook
/// git ran (the installed hook passes it): a kept backup beside it
/// (`pre-receive.closegate-backup`, written by `install --server --force`) runs first, on the
/// same input, and must accept. Never returns an error and never lets a panic escape: both
/// refuse the push ([`Answer::Undecided`]).
pub fn main(input: &mut dyn Read, hook_file: Option<&Path>) -> Answer {
    super::settle(|| decide(input, hook_file))
        .unwrap_or_else(|(error, code)| Answer::Undecided { error, code })
}

/// What the server knows about one push: the trusted setting and the notes to read.
struct Push {
    /// The repository, opened once from git's environment and shared by every judgement.
    repo: Rc<Repo>,
    setting: Setting,
    /// Notes commits to read attestations and approvals from: the pushed value of
    /// `refs/notes/closegate` (in quarantine) and the current one.
    notes: Vec<Oid>,
    /// The branch tips being pushed (short name, new value).
    pushed: Vec<(String, Oid)>,
}

fn decide(input: &mut dyn Read, hook_file: Option<&Path>) -> Result<Answer> {
    let mut bytes = Vec::new();
    input
        .read_to_end(&mut bytes)
        .context("cannot read the ref updates on standard input")?;
    if let Some(hook_file) = hook_file
        && let Some((backup, how)) = chained_refusal(hook_file, &bytes)?
    {
        return Ok(Answer::ChainedRefused { backup, how });
    }
    let updates = run::parse(&bytes)?;
    let heads: Vec<&Update> = updates
        .iter()
        .filter(|u| u.refname.starts_with("refs/heads/"))
        .collect();
    if heads.is_empty() {
        return Ok(Answer::NoBranches);
    }
    let repo = Rc::new(Repo::from_env()?);
    let mut notes = Vec::new();
    for u in updates.iter().filter(|u| u.refname == attest::NOTES_REF) {
        notes.extend(run::value(&u.new, &u.refname)?);
    }
    notes.extend(repo.ref_target(attest::NOTES_REF));
    let mut pushed = Vec::new();
    for u in &heads {
        if let Some(new) = run::value(&u.new, &u.refname)? {
            pushed.push((u.refname["refs/heads/".len()..].to_string(), new));
        }
    }
    let push = Push {
        repo: Rc::clone(&repo),
        setting: Setting::read(&repo),
        notes,
        pushed,
    };
    let mut out = Outcome::default();
    agent_updates(&push, &heads, &mut out)?;
    base_updates(&push, &heads, &mut out)?;
    let common = repo.common_dir();
    for d in &out.decisions {
        run::audit_line(d)
            .append(&common)
            .context("cannot record the decision")?;
    }
    Ok(Answer::Judged(Judged {
        base: push.setting.base.clone(),
        decisions: out.decisions,
        reports: out.reports.into_iter().flatten().collect(),
    }))
}

/// What the push's updates came to: one decision each, and the report of every judged commit.
#[derive(Default)]
struct Outcome {
    decisions: Vec<Decision>,
    reports: Vec<Option<Report>>,
}

/// Run the backup kept beside `hook_file`, if there is an executable one, with the push's
/// `updates` on its standard input (a file, as git gives a hook: it may read all, some or none)
/// and no arguments (git passes pre-receive none), in this environment and directory; `None`
/// when it accepted, else the backup and how it failed. What it prints reaches the pusher as git
/// relays any hook's output.
fn chained_refusal(hook_file: &Path, updates: &[u8]) -> Result<Option<(PathBuf, String)>> {
    use std::io::{Seek, Write};
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::ExitStatusExt;
    // `./pre-receive.closegate-backup` for a bare `pre-receive`: a name without a slash would be
    // looked up on PATH.
    let dir = match hook_file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let backup = dir.join(script::SERVER_BACKUP_NAME);
    let runnable = std::fs::metadata(&backup)
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if !runnable {
        return Ok(None);
    }
    let mut input =
        tempfile::tempfile().context("cannot keep the ref updates for the chained hook")?;
    input
        .write_all(updates)
        .and_then(|()| input.rewind())
        .context("cannot keep the ref updates for the chained hook")?;
    let status = std::process::Command::new(&backup)
        .stdin(input)
        .status()
        .with_context(|| format!("cannot run the chained hook {}", backup.display()))?;
    if status.success() {
        return Ok(None);
    }
    let how = match status.code() {
        Some(code) => format!("exit {code}"),
        None => format!("signal {}", status.signal().unwrap_or(0)),
    };
    Ok(Some((backup, how)))
}

/// Agent branches created, moved or deleted by the push.
fn agent_updates(push: &Push, heads: &[&Update], out: &mut Outcome) -> Result<()> {
    let (repo, setting) = (&*push.repo, &push.setting);
    let config = setting.config();
    let base_tips = base_tips(repo, setting, heads)?;
    for u in heads {
        let short = &u.refname["refs/heads/".len()..];
        if !u.is_agent(config) {
            continue;
        }
        if let Some(new) = run::value(&u.new, &u.refname)? {
            // The agent's own work: accepted; with server_checks = "run", checked on arrival.
            if config.server_checks_run && setting.broken().is_none() {
                let _ = judge(push, new, true);
            }
            continue;
        }
        let Some(tip) = u.old_value(repo)? else {
            continue;
        };
        let mut decision = decision(setting, Action::Delete, short, tip);
        if let Some(broken) = setting.broken() {
            decision.reason = Some(broken.clone());
        } else {
            let book = crate::verdict::Book::read(&repo.common_dir())?;
            let mut merged = false;
            for b in &base_tips {
                merged = merged
                    || repo.reaches(*b, tip)?
                    || run::holds_changes(repo, &book, short, *b, tip, &config.status_file);
            }
            if merged {
                decision.accepted = true;
            } else {
                judge_into(push, tip, &mut decision, out);
            }
        }
        out.decisions.push(decision);
    }
    Ok(())
}

/// The base's tips now and after this push.
fn base_tips(repo: &Repo, setting: &Setting, heads: &[&Update]) -> Result<Vec<Oid>> {
    let mut tips: Vec<Oid> = setting
        .bases
        .iter()
        .filter_map(|b| repo.branch_tip(b))
        .collect();
    for u in heads.iter().filter(|u| is_base(setting, u)) {
        tips.extend(run::value(&u.new, &u.refname)?);
    }
    Ok(tips)
}

fn is_base(setting: &Setting, u: &Update) -> bool {
    setting.bases.iter().any(|b| u.refname[11..] == **b)
}

/// Updates of the base: a configuration that parses, and every agent commit newly merged passes.
fn base_updates(push: &Push, heads: &[&Update], out: &mut Outcome) -> Result<()> {
    let (repo, setting) = (&*push.repo, &push.setting);
    for u in heads.iter().filter(|u| is_base(setting, u)) {
        let short = &u.refname["refs/heads/".len()..];
        let Some(new_base) = run::value(&u.new, &u.refname)? else {
            // Without the base there is no trusted configuration: the next push could create it
            // anywhere, unjudged. A base is deleted on the server by its administrator only.
            if let Some(old) = run::value(&u.old, &u.refname)? {
                let mut d = decision(setting, Action::Config, short, old);
                d.reason = Some("the base branch cannot be deleted through the server gate".into());
                d.deletes_base = true;
                out.decisions.push(d);
            }
            continue;
        };
        let parsed = setting.parsed_blob();
        if let Some(error) = run::unparsable_config(repo, short, new_base, parsed) {
            let mut d = decision(setting, Action::Config, short, new_base);
            d.reason = Some(error);
            out.decisions.push(d);
        }
        let merged = run::newly_merged(repo, setting, heads, u, new_base)?;
        let squashed = run::squash_merged(repo, setting, heads, u, new_base, &merged)?;
        let all = merged.into_iter().map(|m| (m, false));
        for ((branch, newest), squash) in all.chain(squashed.into_iter().map(|m| (m, true))) {
            let mut d = decision(setting, Action::Merge, &branch, newest);
            d.squash = squash;
            match setting.broken() {
                Some(broken) => d.reason = Some(broken.clone()),
                None => {
                    let judged = with_status_commit(repo, setting, &branch, newest);
                    judge_into(push, judged, &mut d, out);
                }
            }
            out.decisions.push(d);
        }
    }
    Ok(())
}

/// SPEC §22: `land` leaves an agent branch's trailing status-only commit out of the base, so the
/// newest agent commit merged is the one that status commit names. The gate then reads the
/// status document where the agent committed it: the branch's tip, when the tip is that
/// status-only child (the close line names `newest`, as for a plain merge of the whole branch).
fn with_status_commit(repo: &Repo, setting: &Setting, branch: &str, newest: Oid) -> Oid {
    let Some(tip) = repo.branch_tip(branch) else {
        return newest;
    };
    let status_file = &setting.config().status_file;
    match crate::verdict::stands_for(repo, tip, status_file) {
        Some(parent) if parent == newest => tip,
        _ => newest,
    }
}

/// Decide `d` by the gate's verdict on `commit`, keeping the report for the answer.
fn judge_into(push: &Push, commit: Oid, d: &mut Decision, out: &mut Outcome) {
    let (accepted, report, reason) = verdict_of(push, commit);
    d.accepted = accepted;
    d.reason = reason;
    out.reports.push(report);
}

fn decision(setting: &Setting, action: Action, branch: &str, commit: Oid) -> Decision {
    Decision::new(action, branch, commit, setting.base.clone())
}

/// Judge `commit`: accepted on VERIFIED (approval applied); the report, or why no verdict.
fn verdict_of(push: &Push, commit: Oid) -> (bool, Option<Report>, Option<String>) {
    let run = push.setting.config().server_checks_run;
    match judge(push, commit, run) {
        Ok(report) => (report.verdict == Verdict::Verified, Some(report), None),
        Err(err) => (
            false,
            None,
            Some(format!("no verdict for {commit}: {err:#}")),
        ),
    }
}

/// The gate on `rev` with `--no-worktree --rev` semantics against the quarantined objects: an
/// attestation stands for the checks unless `run_checks` (then they run here and are recorded).
fn judge(push: &Push, rev: Oid, run_checks: bool) -> Result<Report> {
    let repo = Rc::clone(&push.repo);
    let root = repo.git_dir();
    let opts = GateOptions {
        rev: Some(rev.to_string()),
        no_worktree: true,
        require_attestation: !run_checks,
        notes: Some(push.notes.clone()),
        pushed: push.pushed.clone(),
        ..GateOptions::default()
    };
    // The trusted configuration of this push, read once (Setting::read, the same call).
    let session = match push.setting.trusted() {
        Some(trusted) => Session::with_trusted(repo, root, &opts, trusted.clone())?,
        None => Session::in_repo(repo, root, &opts)?,
    };
    let outcome = gates::evaluate(&session)?;
    if run_checks {
        ledger::record_check(&session.repo().common_dir(), &outcome.report)?;
    }
    Ok(outcome.report)
}
