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
use std::path::Path;
use std::rc::Rc;

use anyhow::{Context, Result};
use git2::Oid;

use super::run::{self, Action, Decision, Setting, Update};
use super::script;
use crate::finding::Verdict;
use crate::gates::Session;
use crate::inputs::GateOptions;
use crate::render::{self, Format};
use crate::repo::{Repo, is_unsupported};
use crate::report::Report;
use crate::{attest, gates, ledger};

/// Run the server gate on the updates on `input`; returns the exit code (0 accept, 1 refuse).
/// `hook_file` is the hook git ran (the installed hook passes it): a kept backup beside it
/// (`pre-receive.closegate-backup`, written by `install --server --force`) runs first, on the
/// same input, and must accept. Never returns an error and never lets a panic escape: both
/// refuse the push.
pub fn main(input: &mut dyn Read, hook_file: Option<&Path>) -> i32 {
    let outcome =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| decide(input, hook_file)));
    // A repository libgit2 cannot open is exit 2 (SPEC §15), still a refusal to git.
    let (err, code) = match outcome {
        Ok(Ok(code)) => return code,
        Ok(Err(err)) => (format!("{err:#}"), 1 + i32::from(is_unsupported(&err))),
        Err(_) => ("the hook panicked".to_string(), 1),
    };
    eprintln!(
        "closegate: refusing the push because the server gate could not decide: {err}\n\
         closegate: an administrator can bypass it deliberately by moving hooks/pre-receive aside"
    );
    code
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

fn decide(input: &mut dyn Read, hook_file: Option<&Path>) -> Result<i32> {
    let mut bytes = Vec::new();
    input
        .read_to_end(&mut bytes)
        .context("cannot read the ref updates on standard input")?;
    if let Some(hook_file) = hook_file
        && !chained_accepts(hook_file, &bytes)?
    {
        return Ok(1);
    }
    let updates = run::parse(&bytes)?;
    let heads: Vec<&Update> = updates
        .iter()
        .filter(|u| u.refname.starts_with("refs/heads/"))
        .collect();
    if heads.is_empty() {
        return Ok(0); // tags, notes and other refs carry no claim of their own
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
    answer(&push, &out)
}

/// What the push's updates came to: one decision each, and the report of every judged commit.
#[derive(Default)]
struct Outcome {
    decisions: Vec<Decision>,
    reports: Vec<Option<Report>>,
}

/// Run the backup kept beside `hook_file`, if there is an executable one, with the push's
/// `updates` on its standard input (a file, as git gives a hook: it may read all, some or none)
/// and no arguments (git passes pre-receive none), in this environment and directory; whether
/// it accepted. What it prints reaches the pusher as git relays any hook's output.
fn chained_accepts(hook_file: &Path, updates: &[u8]) -> Result<bool> {
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
        return Ok(true);
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
        return Ok(true);
    }
    let how = match status.code() {
        Some(code) => format!("exit {code}"),
        None => format!("signal {}", status.signal().unwrap_or(0)),
    };
    eprintln!(
        "closegate hook: the chained hook {} failed with {how}",
        render::escape(&backup.display().to_string())
    );
    Ok(false)
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
            let mut merged = false;
            for b in &base_tips {
                merged = merged
                    || repo.reaches(*b, tip)?
                    || run::holds_changes(repo, *b, tip, &config.status_file);
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
    match crate::covered::stands_for(repo, tip, status_file) {
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
    Decision {
        action,
        branch: branch.to_string(),
        commit,
        accepted: false,
        base: setting.base.clone(),
        reason: None,
        squash: false,
    }
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

/// Tell the pusher: the report of every judged commit that was refused, one line per decision;
/// exit 1 when anything was refused.
fn answer(push: &Push, out: &Outcome) -> Result<i32> {
    let mut err = std::io::stderr().lock();
    for report in out.reports.iter().flatten() {
        if report.verdict != Verdict::Verified {
            render::render(report, Format::Human, false, &mut err)?;
        }
    }
    let base = push.setting.base.as_deref().unwrap_or("the base");
    let mut refused = false;
    for d in &out.decisions {
        let branch = render::escape(&d.branch);
        let short = &d.commit.to_string()[..12];
        let what = match d.action {
            Action::Delete => format!("delete agent branch `{branch}` at {short}"),
            Action::Merge => format!("move `{base}` onto agent branch `{branch}` at {short}"),
            Action::Config if d.reason.as_deref().is_some_and(|r| r.contains("deleted")) => {
                format!("delete `{branch}` at {short}")
            }
            Action::Config => format!("move `{branch}` to {short}"),
        };
        if d.accepted {
            eprintln!("closegate: accepted: {what}");
            continue;
        }
        refused = true;
        let why = match (&d.reason, d.action) {
            (Some(reason), _) => render::escape(reason),
            (None, Action::Delete) => "it is not merged and its tip is not VERIFIED".into(),
            (None, _) => "the newest agent commit it brings in is not VERIFIED".into(),
        };
        eprintln!("closegate: refusing to {what}: {why}");
    }
    if refused {
        eprintln!(
            "closegate: next: run `closegate check --attest` on the commit in CI and push \
             refs/notes/closegate with it (or have an allowed signer run `closegate approve --sign`)"
        );
    }
    Ok(i32::from(refused))
}
