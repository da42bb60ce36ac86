//! Is the base ready for agents? What `validate` reports beyond parsing (SPEC §17, §18): the
//! configured checks run on the base tip (`validate --run`, `check-red-on-base`), tracked test
//! files no configured surface protects (`validate-unprotected-tests`), and an agent stop hook
//! installed in the worktree but not committed to the base.

use anyhow::Result;
use git2::Oid;

use crate::catalog::Code;
use crate::config::Config;
use crate::finding::Finding;
use crate::gates::{Session, checks, reuse};
use crate::repo::Repo;

/// Run every configured check on the base tip `tip` (named `base`) in the sandbox, reusing a
/// recorded result with the same key (SPEC §19: the merge base's own tree, `CLOSEGATE_BRANCH` the
/// base and an empty slug). Returns one line per check, a `check-red-on-base` gap per failure,
/// and the runs themselves.
pub fn run_on_base(session: &Session, base: &str, tip: Oid) -> Result<BaseRuns> {
    let (repo, config) = (session.repo(), session.config());
    if config.checks.is_empty() {
        return Ok((
            vec!["no checks are configured: nothing to run".into()],
            Vec::new(),
            Vec::new(),
        ));
    }
    let env = checks::CheckEnv {
        commit: tip.to_string(),
        branch: base.to_string(),
        slug: String::new(),
        base: base.to_string(),
    };
    let (slug, branch) = env.key_values(repo);
    let key = reuse::Key {
        tree: repo.tree_of(tip).unwrap_or(tip).to_string(),
        config: session.config_blob().map(str::to_string),
        base_commit: Some(tip.to_string()),
        slug,
        branch,
        commit: tip.to_string(),
    };
    let recorded = reuse::Recorded::load(&repo.common_dir(), &key, false)?;
    // The same secrets hidden as for `check` (SPEC §4.6: `validate --run` and `init` too).
    let plan = checks::Plan {
        mode: config.sandbox,
        jobs: config.jobs,
        key: &key,
        recorded: &recorded,
        shield: session.shield(),
        fail_fast: false,
        label: None,
        // The base's own tree: the workspace that holds the base's code (as for SPEC §23).
        slot: crate::gates::workspace::Slot::Base,
    };
    let checked = checks::run_reusing(repo, tip, &config.checks, &env, &plan)?;
    let short = &tip.to_string()[..12];
    let mut lines = Vec::new();
    let mut findings: Vec<Finding> = checked
        .findings
        .into_iter()
        .filter(|f| !matches!(f.code, Code::CheckFailed | Code::CheckTimeout))
        .collect();
    for ran in &checked.runs {
        match judge_run(ran, base, short) {
            Ok(line) => lines.push(line),
            Err(finding) => findings.push(finding),
        }
    }
    Ok((lines, findings, checked.runs))
}

/// What [`run_on_base`] returns: a line per passing check, the findings, and the runs.
pub type BaseRuns = (Vec<String>, Vec<Finding>, Vec<crate::report::CheckRun>);

/// A passing run's line, or a failing run's `check-red-on-base`.
fn judge_run(ran: &crate::report::CheckRun, base: &str, short: &str) -> Result<String, Finding> {
    let secs = ran.duration_ms as f64 / 1000.0;
    let reused = (ran.reused.as_ref()).map_or(String::new(), |ts| format!(" (reused from {ts})"));
    if ran.exit_code == Some(0) && !ran.timed_out {
        let name = &ran.name;
        return Ok(format!(
            "check `{name}` passed on {base} ({short}) in {secs:.1} s{reused}"
        ));
    }
    let how = match (ran.timed_out, ran.exit_code) {
        (true, _) => "ran past its timeout".to_string(),
        (false, Some(code)) => format!("exited {code}"),
        (false, None) => "was killed".to_string(),
    };
    let tail = ran.output.len().saturating_sub(20);
    let msg = format!(
        "check `{}` {how} on the base tip {base} ({short}){reused}: every agent's check would \
         fail on it; fix its `run` (install what the tests need inside the checkout, keep tool \
         caches in the check's workspace) or the base. Last lines:\n{}",
        ran.name,
        ran.output[tail..].join("\n")
    );
    Err(Finding::new(Code::CheckRedOnBase, msg))
}

/// Tracked files at `tip` that look like tests — a default `tests` pattern matches them, or the
/// runner's own configuration names them (`package.json`'s test script) — but lie on no
/// configured surface: one `validate-unprotected-tests` warning naming them, or none.
pub fn unprotected_tests(repo: &Repo, config: &Config, tip: Oid) -> Result<Option<Finding>> {
    let defaults = Config::default();
    let Some(tests) = defaults.surfaces.iter().find(|s| s.name == "tests") else {
        return Ok(None);
    };
    let named = runner_named_tests(repo, tip);
    let mut found: Vec<String> = Vec::new();
    for change in repo.changes(None, tip)? {
        for path in change.paths() {
            let looks = tests.is_match(path) || named.iter().any(|n| n == path);
            if looks && config.surfaces_for(path).is_empty() && !found.iter().any(|f| f == path) {
                found.push(path.to_string());
            }
        }
    }
    if found.is_empty() {
        return Ok(None);
    }
    found.sort();
    const SHOWN: usize = 20;
    let more = found.len().saturating_sub(SHOWN);
    let mut list = found[..found.len().min(SHOWN)].join(", ");
    if more > 0 {
        list.push_str(&format!(" and {more} more"));
    }
    let msg = format!(
        "{} tracked file{} that look like tests match no configured protected surface: {list}; \
         an agent could weaken them without review (extend the default instead of replacing it: \
         `[protected] tests = {{ extend = [...] }}`)",
        found.len(),
        if found.len() == 1 { "" } else { "s" }
    );
    Ok(Some(Finding::new(Code::ValidateUnprotectedTests, msg)))
}

/// Files `package.json`'s `scripts.test` names by path (`mocha test.js`, `node t/run.js`).
fn runner_named_tests(repo: &Repo, tip: Oid) -> Vec<String> {
    let Some(bytes) = repo.read_blob(tip, "package.json") else {
        return Vec::new();
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return Vec::new();
    };
    let Some(script) = value["scripts"]["test"].as_str() else {
        return Vec::new();
    };
    crate::inputs::run_words(script)
        .into_iter()
        .filter(|w| matches!(repo.tree_entry(tip, w), Some((_, false))))
        .collect()
}

/// The harness settings files `agent install --scope project` writes.
const HOOK_FILES: [&str; 2] = [".claude/settings.json", ".codex/hooks.json"];

/// A warning line when the worktree `root` has closegate's stop hook installed in a project
/// settings file that the base tip lacks (or holds without the hook): worktrees made from the base
/// would run without it.
pub fn hook_not_on_base(repo: &Repo, root: &std::path::Path, base: &str, tip: Oid) -> Vec<String> {
    let mut lines = Vec::new();
    for file in HOOK_FILES {
        let here = crate::input_file::read(&root.join(file)).unwrap_or_default();
        if !has_stop_hook(&here) {
            continue;
        }
        let there = repo.read_blob(tip, file).unwrap_or_default();
        if !has_stop_hook(&there) {
            lines.push(format!(
                "warning: {file} here has closegate's stop hook but the base tip {base} does not: \
                 worktrees made from {base} run without it; commit {file} to {base}"
            ));
        }
    }
    lines
}

fn has_stop_hook(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    text.contains("agent stop-hook")
}
