//! `hook run reference-transaction <state>`: refuse closing or merging an agent branch that has
//! not passed the gate (SPEC §9).
//!
//! Git runs this for every ref update, so the order of work matters: read the input, and when no
//! line touches `refs/heads/` (tags, remotes, notes, HEAD alone) answer at once without opening the
//! repository. Only then open the repository from git's environment (objects may be quarantined),
//! read the trusted configuration from the base tip and decide. Every error and every panic fails
//! closed: exit 1 with a message naming the deliberate bypass.

use std::io::Read;

use anyhow::{Context, Result, bail};
use git2::Oid;

use crate::config::Config;
use crate::finding::Verdict;
use crate::repo::Repo;
use crate::report::Report;
use crate::{inputs, ledger, record};

/// How to get past the hook on purpose, named in every fail-closed message.
pub const BYPASS: &str = "git -c core.hooksPath=/dev/null <command>";

/// One line of the hook's input: `<old-value> SP <new-value> SP <ref-name>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    pub old: String,
    pub new: String,
    pub refname: String,
}

/// Run the hook for `hook` in `state` with the ref updates on `input`; returns the exit code.
/// Never returns an error and never lets a panic escape: both refuse (exit 1).
pub fn main(hook: &str, state: Option<&str>, input: &mut dyn Read) -> i32 {
    let outcome =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(hook, state, input)));
    let err = match outcome {
        Ok(Ok(code)) => return code,
        Ok(Err(err)) => format!("{err:#}"),
        Err(_) => "the hook panicked".to_string(),
    };
    eprintln!(
        "closegate hook: refusing the ref update because the hook could not decide: {err}\n\
         closegate hook: to bypass it deliberately, run {BYPASS}"
    );
    1
}

fn run(hook: &str, state: Option<&str>, input: &mut dyn Read) -> Result<i32> {
    if hook != "reference-transaction" {
        bail!(
            "unknown hook `{}`: only reference-transaction is handled",
            crate::render::escape(hook)
        );
    }
    let mut bytes = Vec::new();
    input
        .read_to_end(&mut bytes)
        .context("cannot read the ref updates on standard input")?;
    if state != Some("prepared") {
        return Ok(0);
    }
    let updates = parse(&bytes)?;
    if !updates.iter().any(|u| u.refname.starts_with("refs/heads/")) {
        return Ok(0);
    }
    decide(&updates)
}

/// Parse the hook's input; a line that is not three fields is an error (fail closed).
pub fn parse(bytes: &[u8]) -> Result<Vec<Update>> {
    let text = std::str::from_utf8(bytes).context("the ref updates are not valid UTF-8")?;
    let mut updates = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        let mut fields = line.splitn(3, ' ');
        let (Some(old), Some(new), Some(refname)) = (fields.next(), fields.next(), fields.next())
        else {
            bail!(
                "line {} of the ref updates is not `<old> <new> <ref>`",
                i + 1
            );
        };
        updates.push(Update {
            old: old.to_string(),
            new: new.to_string(),
            refname: refname.to_string(),
        });
    }
    Ok(updates)
}

/// A ref value from the input: `None` for the all-zero id (absent), an error for anything that is
/// not an object id (a symbolic value under `refs/heads/` is refused rather than guessed at).
fn value(raw: &str, refname: &str) -> Result<Option<Oid>> {
    let id = Oid::from_str(raw)
        .ok()
        .filter(|_| matches!(raw.len(), 40 | 64) && raw.bytes().all(|b| b.is_ascii_hexdigit()))
        .with_context(|| {
            format!(
                "`{}` for {refname} is not an object id",
                crate::render::escape(raw)
            )
        })?;
    Ok((!id.is_zero()).then_some(id))
}

/// One decision about an agent branch.
#[derive(Debug, Clone)]
struct Decision {
    action: &'static str,
    branch: String,
    commit: Oid,
    accepted: bool,
    base: Option<String>,
}

/// The slow path: open the repository from git's environment and judge the branch updates.
fn decide(updates: &[Update]) -> Result<i32> {
    let repo = Repo::from_env()?;
    let trusted = inputs::trusted_config(&repo, None, None)
        .context("cannot read the trusted configuration")?;
    let config = &trusted.config;
    let base = trusted
        .base
        .as_ref()
        .and_then(|(name, _)| base_branch(&repo, name));
    let heads: Vec<&Update> = updates
        .iter()
        .filter(|u| u.refname.starts_with("refs/heads/"))
        .collect();
    let common = repo.common_dir();
    // The audit log is read at most once per transaction, and only when a decision needs it.
    let passed = std::cell::OnceCell::new();
    let passing = |id: Oid| -> Result<bool> {
        if passed.get().is_none() {
            let _ = passed.set(ledger::passing_commits(&common)?);
        }
        Ok(passed
            .get()
            .is_some_and(|set| set.contains(&id.to_string())))
    };

    let base_update = base.as_ref().and_then(|b| {
        let full = format!("refs/heads/{b}");
        heads.iter().find(|u| u.refname == full).copied()
    });
    // The base's tips: now, and after this transaction when it moves the base too.
    let mut base_tips: Vec<Oid> = base
        .as_ref()
        .and_then(|b| repo.branch_tip(b))
        .into_iter()
        .collect();
    if let Some(u) = base_update {
        base_tips.extend(value(&u.new, &u.refname)?);
    }

    let mut decisions = Vec::new();
    for u in &heads {
        let short = &u.refname["refs/heads/".len()..];
        if !config.is_agent_branch(short) || value(&u.new, &u.refname)?.is_some() {
            continue;
        }
        let Some(tip) = value(&u.old, &u.refname)?.or_else(|| repo.ref_target(&u.refname)) else {
            continue;
        };
        let mut merged = false;
        for b in &base_tips {
            merged = merged || repo.reaches(*b, tip)? || holds_changes(&repo, *b, tip);
        }
        decisions.push(Decision {
            action: "delete",
            branch: short.to_string(),
            commit: tip,
            accepted: merged || passing(tip)?,
            base: base.clone(),
        });
    }
    if let Some(u) = base_update {
        for (branch, tip) in newly_merged(&repo, config, &heads, u)? {
            decisions.push(Decision {
                action: "merge",
                accepted: passing(tip)?,
                branch,
                commit: tip,
                base: base.clone(),
            });
        }
    }
    for d in &decisions {
        record::append(&common, &audit_line(d)).context("cannot record the hook's decision")?;
    }
    report_refusals(&decisions)
}

/// The agent branch tips the base newly contains after `update` (before it, they were not
/// reachable from the base). Tips are taken before and after this transaction.
fn newly_merged(
    repo: &Repo,
    config: &Config,
    heads: &[&Update],
    update: &Update,
) -> Result<Vec<(String, Oid)>> {
    let Some(new_base) = value(&update.new, &update.refname)? else {
        return Ok(Vec::new());
    };
    let old_base =
        value(&update.old, &update.refname)?.or_else(|| repo.ref_target(&update.refname));
    let mut tips = repo.branches_matching(|short| config.is_agent_branch(short))?;
    for u in heads {
        let short = &u.refname["refs/heads/".len()..];
        if !config.is_agent_branch(short) {
            continue;
        }
        if let Some(id) = value(&u.new, &u.refname)? {
            tips.push((short.to_string(), id));
        }
    }
    tips.sort();
    tips.dedup();
    let mut newly = Vec::new();
    for (branch, tip) in tips {
        let before = match old_base {
            Some(old) => repo.reaches(old, tip)?,
            None => false,
        };
        if !before && repo.reaches(new_base, tip)? {
            newly.push((branch, tip));
        }
    }
    Ok(newly)
}

/// The local branch the hook guards as the base: the configured or discovered base name, or the
/// branch part of a remote-tracking base (`origin/main` → `main`).
fn base_branch(repo: &Repo, name: &str) -> Option<String> {
    if repo.branch_tip(name).is_some() {
        return Some(name.to_string());
    }
    let (_, branch) = name.split_once('/')?;
    repo.ref_target(&format!("refs/remotes/{name}"))
        .map(|_| branch.to_string())
}

/// The audit line of one decision: event `hook`, verdict VERIFIED when accepted, FAIL when refused.
fn audit_line(d: &Decision) -> serde_json::Value {
    let report = Report {
        commit: Some(d.commit.to_string()),
        branch: Some(d.branch.clone()),
        base: d.base.clone(),
        verdict: if d.accepted {
            Verdict::Verified
        } else {
            Verdict::Fail
        },
        ..Report::default()
    };
    let mut line = ledger::line("hook", &report, None);
    line["action"] = serde_json::json!(d.action);
    line["accepted"] = serde_json::json!(d.accepted);
    line["base"] = serde_json::json!(d.base);
    line
}

/// Print one reason per refused decision; exit 1 when there is any.
fn report_refusals(decisions: &[Decision]) -> Result<i32> {
    let refused: Vec<&Decision> = decisions.iter().filter(|d| !d.accepted).collect();
    for d in &refused {
        let branch = crate::render::escape(&d.branch);
        let base = d.base.as_deref().map(crate::render::escape);
        let base = base.as_deref().unwrap_or("the base");
        let short = &d.commit.to_string()[..12];
        match d.action {
            "delete" => eprintln!(
                "closegate hook: refusing to delete agent branch `{branch}` at {short}: it is not merged \
                 into `{base}` and its tip has no passing record"
            ),
            _ => eprintln!(
                "closegate hook: refusing to move `{base}` onto agent branch `{branch}` at {short}: \
                 its tip has no passing record"
            ),
        }
    }
    if refused.is_empty() {
        return Ok(0);
    }
    eprintln!(
        "closegate hook: to pass, run `closegate check` in the branch's worktree until it is VERIFIED, \
         or have a human run `closegate approve` for that commit"
    );
    Ok(1)
}

/// Whether `base` already holds `tip`'s changes (a squash or rebase merge); an error reads as
/// "not merged", so the hook then needs a passing record (fails closed).
fn holds_changes(repo: &Repo, base: Oid, tip: Oid) -> bool {
    repo.merged_into(base, tip)
        .is_ok_and(|merged| merged == crate::repo::merged::Merged::SameChanges)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines_and_refuses_malformed_ones() {
        let zero = "0".repeat(40);
        let input = format!("{zero} {} refs/tags/v1\n\n", "a".repeat(40));
        let updates = parse(input.as_bytes()).unwrap();
        assert_eq!(updates.len(), 1);
        assert_eq!(updates[0].refname, "refs/tags/v1");
        assert!(parse(b"abc refs/heads/x\n").is_err());
        assert!(parse(b"\xff\xfe").is_err());
    }

    #[test]
    fn values_are_ids_or_absent() {
        let zero = "0".repeat(40);
        assert_eq!(value(&zero, "r").unwrap(), None);
        assert!(value(&"ab".repeat(20), "r").unwrap().is_some());
        assert!(value("ref:refs/heads/main", "r").is_err());
    }

    #[test]
    fn non_prepared_states_and_non_branch_refs_pass_without_a_repository() {
        let zero = "0".repeat(40);
        let line = format!("{zero} {} refs/heads/agent/x\n", "a".repeat(40));
        for state in ["committed", "aborted"] {
            assert_eq!(
                main("reference-transaction", Some(state), &mut line.as_bytes()),
                0
            );
        }
        let tag = format!("{zero} {} refs/tags/t\n", "a".repeat(40));
        assert_eq!(
            main(
                "reference-transaction",
                Some("prepared"),
                &mut tag.as_bytes()
            ),
            0
        );
        assert_eq!(main("pre-push", Some("prepared"), &mut tag.as_bytes()), 1);
    }
}
