//! Is the base ready for agents? What `validate` reports beyond parsing (SPEC §17, §18): the
//! configured checks run on the base tip (`validate --run`, `check-red-on-base`), tracked test
//! files no configured surface protects (`validate-unprotected-tests`), an agent stop hook
//! installed in the worktree but not committed to the base, and a base run that passed while it
//! skipped tests of a project that builds compiled extensions (SPEC §26.4; `init`'s try too).

use anyhow::Result;
use git2::Oid;

use crate::catalog::Code;
use crate::config::Config;
use crate::finding::Finding;
use crate::gates::Session;
use crate::gates::runner::Target;
use crate::repo::Repo;

/// Run every configured check on the base tip `tip` (named `base`) in the sandbox, reusing a
/// recorded result with the same key (SPEC §19: the merge base's own tree, `CLOSEGATE_BRANCH` the
/// base and an empty slug). Returns one line per check, a `check-red-on-base` gap per failure,
/// and the runs themselves.
pub fn run_on_base(session: &Session, base: &str, tip: Oid) -> Result<BaseRuns> {
    let config = session.config();
    if config.checks.is_empty() {
        return Ok((
            vec!["no checks are configured: nothing to run".into()],
            Vec::new(),
            Vec::new(),
        ));
    }
    // The base's own tree (SPEC §19): `CLOSEGATE_BRANCH` the base and an empty slug, through
    // the session's runner, so the same secrets are hidden as for `check` (SPEC §4.6).
    let target = Target::BaseTip { tip, base };
    let checked = session.runner().run(&target, &config.checks, false)?;
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
        for (bytes, path) in change.touched() {
            let looks = tests.is_match(bytes) || named.iter().any(|n| n == path);
            if looks && config.surfaces_for(bytes).is_empty() && !found.iter().any(|f| f == path) {
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
    crate::runners::run_words(script)
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

/// SPEC §26.4: a check that passed on the base tip while it skipped tests because a compiled part
/// was missing, in a project that builds compiled extensions (`built` says how): its build
/// skipped because a kept tree was keyed on the manifests only, no compiler or headers, an
/// optional extension that fell back to pure code. Every agent's verdict would then rest on the
/// tests that did run. A skip reason (pytest `-rs`: `SKIPPED [N] where: reason`) counts when it
/// names an import failure or an unavailable part ([`MISSING_PART`]): markupsafe's own
/// `speedups not active` skip, with its extension built, does not. A run that printed no reasons
/// gets a warning naming the count and how to see them. A warning line (SPEC gives it no code);
/// nothing for a run that skipped nothing, or failed (that is `check-red-on-base`).
pub fn skipped_compiled(
    ran: &crate::report::CheckRun,
    base: &str,
    short: &str,
    built: &str,
) -> Option<String> {
    if ran.exit_code != Some(0) || ran.timed_out {
        return None;
    }
    let skipped = skipped_count(&ran.output)?;
    let reasons = skip_reasons(&ran.output);
    let head = format!(
        "warning: check `{}` passed on {base} ({short}) but skipped",
        ran.name
    );
    let fix = "build it in `run` in every check (`closegate init --force` writes such a check)";
    if reasons.is_empty() {
        return Some(format!(
            "{head} {skipped} test{} and printed no reasons (pytest's -rs prints them) while the \
             project builds compiled extensions ({built}): if a compiled part was missing, no \
             agent's check tests it; {fix}",
            plural(skipped)
        ));
    }
    let missing: Vec<&(usize, &str)> = reasons.iter().filter(|(_, r)| missing_part(r)).collect();
    if missing.is_empty() {
        return None;
    }
    let count: usize = missing.iter().map(|(n, _)| n).sum();
    let said: Vec<&str> = missing.iter().take(3).map(|(_, r)| *r).collect();
    Some(format!(
        "{head} {count} test{} because a compiled part was missing (the project builds compiled \
         extensions: {built}), so no agent's check tests it; {fix}; the runner said: {}",
        plural(count),
        said.join("; ")
    ))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Words of a skip reason that say a part could not be loaded.
const MISSING_PART: [&str; 10] = [
    "no module named",
    "could not import",
    "cannot import",
    "importerror",
    "undefined symbol",
    "unavailable",
    "not available",
    "not built",
    "not compiled",
    "failed to import",
];

/// Whether a skip reason says a part could not be loaded.
fn missing_part(reason: &str) -> bool {
    let lower = reason.to_ascii_lowercase();
    MISSING_PART.iter().any(|w| lower.contains(w))
}

/// pytest's `-rs` lines, `SKIPPED [N] where: reason`, as (N, the rest), each once.
fn skip_reasons(output: &[String]) -> Vec<(usize, &str)> {
    let mut reasons: Vec<(usize, &str)> = Vec::new();
    for line in output {
        let Some(rest) = line.strip_prefix("SKIPPED ") else {
            continue;
        };
        let count = rest
            .strip_prefix('[')
            .and_then(|r| r.split_once(']'))
            .and_then(|(n, _)| n.parse().ok())
            .unwrap_or(1);
        if !reasons.iter().any(|(_, r)| *r == rest.trim()) {
            reasons.push((count, rest.trim()));
        }
    }
    reasons
}

/// How many tests a run's output says it skipped: pytest's summary (`3 passed, 44 skipped in
/// 0.5s`) or unittest's (`OK (skipped=44)`), the last such line; `None` when none was skipped.
fn skipped_count(output: &[String]) -> Option<usize> {
    output.iter().rev().find_map(|line| {
        if let Some(rest) = line.split("skipped=").nth(1) {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            return digits.parse().ok().filter(|n| *n > 0);
        }
        let words: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || c == ',' || c == '=')
            .filter(|w| !w.is_empty())
            .collect();
        let at = words.windows(2).position(|w| w[1] == "skipped")?;
        words[at].parse().ok().filter(|n| *n > 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn pytest_and_unittest_summaries_give_the_skipped_count() {
        let pytest = lines(
            "..s\nSKIPPED [1] tests/t.py:2: could not import 'x._c'\n2 passed, 44 skipped in 0.31s",
        );
        assert_eq!(skipped_count(&pytest), Some(44));
        let framed = lines("===== 1 passed, 1 skipped, 2 warnings in 0.01s =====");
        assert_eq!(skipped_count(&framed), Some(1));
        assert_eq!(
            skipped_count(&lines("Ran 50 tests in 0.1s\n\nOK (skipped=3)")),
            Some(3)
        );
        assert_eq!(skipped_count(&lines("5 passed in 0.1s")), None);
        assert_eq!(skipped_count(&lines("test_skipped_ok PASSED")), None);
    }

    #[test]
    fn only_a_passing_run_that_skipped_a_missing_part_warns_and_names_the_reasons() {
        let run = |code: i32, out: &str| crate::report::CheckRun {
            name: "test".into(),
            command: String::new(),
            exit_code: Some(code),
            timed_out: false,
            duration_ms: 0,
            output: lines(out),
            reused: None,
            red_on_base: None,
            census: None,
            tally: None,
            census_note: None,
            snapshot: None,
            parallel: false,
            retries: 0,
            flaky: Vec::new(),
            rerun_passed: false,
        };
        let built = "setup.py names `Extension`";
        let out = "SKIPPED [44] tests/conftest.py:30: speedups unavailable\n\
                   SKIPPED [1] tests/test_ext_init.py:19: speedups not active\n\
                   89 passed, 45 skipped in 0.31s";
        let warning = skipped_compiled(&run(0, out), "main", "abc", built).expect("a warning");
        assert!(
            warning.contains("skipped 44 tests because a compiled part"),
            "{warning}"
        );
        assert!(warning.contains("speedups unavailable"), "{warning}");
        assert!(!warning.contains("not active"), "{warning}");
        // markupsafe with its extension built: one skip by design, no warning.
        let built_ok = "SKIPPED [1] tests/test_ext_init.py:19: speedups not active\n\
                        132 passed, 1 skipped in 0.5s";
        assert_eq!(
            skipped_compiled(&run(0, built_ok), "main", "abc", built),
            None
        );
        // No reasons printed: the count, and how to see why.
        let bare = skipped_compiled(&run(0, "1 passed, 1 skipped in 0.1s"), "main", "abc", built);
        assert!(
            bare.expect("a warning")
                .contains("printed no reasons (pytest's -rs")
        );
        assert!(skipped_compiled(&run(1, out), "main", "abc", built).is_none());
        assert!(skipped_compiled(&run(0, "2 passed in 0.1s"), "main", "abc", built).is_none());
    }
}
