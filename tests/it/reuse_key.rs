//! The reuse key holds what a check is given (SPEC §19; issue 24, item 10): the
//! `CLOSEGATE_SLUG` and `CLOSEGATE_BRANCH` values, and with `reuse = "commit"` the commit id.
//!
//! Attacks, one test each:
//! - a check that reads `CLOSEGATE_SLUG` passes under a decoy slug without an acceptance test;
//!   the pass was reused under the real slug (same tree) — now it runs again, and fails;
//! - a check that reads history (`git log`) passed on one commit and was reused for another
//!   commit with the same tree — with `reuse = "commit"` it runs again.

use std::path::Path;

use serde_json::Value;

use crate::fixture::{closegate, git, parts};
use crate::scene::agent_status;
use crate::teardown::Scene;

/// A check `slugged` that appends to `<dir>/runs` and fails only under the slug `x`.
fn config(dir: &Path, extra: &str) -> String {
    let d = dir.display();
    format!(
        "[[checks]]\nname = \"slugged\"\ntimeout_s = 60\nwritable = ['{d}']\n{extra}\
         run = 'echo \"$CLOSEGATE_SLUG $CLOSEGATE_COMMIT\" >> {d}/runs; test \"$CLOSEGATE_SLUG\" != x'\n"
    )
}

/// The runs on the claimed commit (a run on the merge base's own tree, SPEC §23, is given an
/// empty `CLOSEGATE_SLUG` and is not counted).
fn runs(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("runs"))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with(' '))
        .map(str::to_string)
        .collect()
}

fn check(wt: &Path) -> (i32, Value) {
    let (code, out, err) = parts(&closegate(wt, &["check", "--format", "json"]));
    let report = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("no JSON report (exit {code}): {e}\n{out}\n{err}"));
    (code, report)
}

#[test]
fn a_pass_under_a_decoy_slug_is_not_reused_under_the_real_slug() {
    let dir = tempfile::tempdir().unwrap();
    let s = Scene::honest_return_with(Some(&config(dir.path(), "")));
    // The same commit (same tree), the status document naming a decoy slug.
    let doc = agent_status(&s.wt, "x", "close-ok", s.tip, "add x");
    let real = doc.render();
    let decoy = doc.slug("decoy").render();
    std::fs::write(s.wt.join("_EXEC_STATUS.md"), &decoy).unwrap();
    let (_, first) = check(&s.wt);
    assert_eq!(runs(dir.path()).len(), 1, "{first}");
    assert_eq!(first["checks"][0]["exit_code"], 0, "{first}");
    // The real slug: the check runs again (its result under `decoy` says nothing) and fails.
    std::fs::write(s.wt.join("_EXEC_STATUS.md"), &real).unwrap();
    let (code, second) = check(&s.wt);
    // A second run on the commit, with the two reruns of its failure (SPEC §27.2; the run on
    // the merge base's own tree that its failure brings, SPEC §23, has an empty slug and is not
    // counted by `runs`).
    assert_eq!(
        runs(dir.path()).len(),
        4,
        "the decoy's pass was reused: {second}"
    );
    assert!(second["checks"][0]["reused"].is_null(), "{second}");
    assert_eq!(second["checks"][0]["exit_code"], 1, "{second}");
    assert_ne!(code, 0);
    assert_ne!(second["verdict"], "VERIFIED");
    // The record's entry names the values the check was given.
    let text = std::fs::read_to_string(s.fx.git_dir().join("closegate/audit.jsonl")).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["checks"][0]["slug"], "x", "{last}");
    assert_eq!(last["checks"][0]["branch"], "agent/x", "{last}");
    assert!(last["checks"][0].get("commit").is_none(), "{last}");
    // Unchanged, the same slug's result is reused (the honest side).
    let (_, third) = check(&s.wt);
    assert_eq!(runs(dir.path()).len(), 4, "{third}");
    assert!(third["checks"][0]["reused"].is_string(), "{third}");
}

/// Two commits with one tree: `agent/x`'s tip, then an empty commit on top.
fn same_tree_twice(extra: &str) -> (Scene, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let s = Scene::honest_return_with(Some(&config(dir.path(), extra)));
    let wt = s.wt.clone();
    agent_status(&wt, "x", "close-ok", s.tip, "add x")
        .slug("y")
        .write(&wt);
    check(&wt);
    git(&wt, &["commit", "-q", "--allow-empty", "-m", "same tree"]);
    let head = s.fx.repo.revparse_single("agent/x").unwrap().id();
    agent_status(&wt, "x", "close-ok", head, "same tree")
        .slug("y")
        .write(&wt);
    check(&wt);
    (s, dir)
}

#[test]
fn reuse_commit_puts_the_commit_in_the_key() {
    let (_s, dir) = same_tree_twice("reuse = \"commit\"\n");
    let seen = runs(dir.path());
    assert_eq!(
        seen.len(),
        2,
        "a result was reused across commits: {seen:?}"
    );
    assert_ne!(seen[0], seen[1]);
    // Without it, the tree is the key: one run serves both commits.
    let (_s, dir) = same_tree_twice("");
    assert_eq!(runs(dir.path()).len(), 1);
}

#[test]
fn reuse_takes_only_tree_or_commit() {
    let s = Scene::honest_return_with(Some(
        "[[checks]]\nname = \"c\"\nrun = \"true\"\nreuse = \"always\"\n",
    ));
    let (code, out, err) = parts(&closegate(&s.wt, &["check"]));
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("reuse"), "{err}");
}
