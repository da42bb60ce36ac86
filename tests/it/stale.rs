//! Stale verdicts (SPEC §9; issue 24, item 10): a passing record counts only when it was made
//! with the configuration blob (and contract blob) at the base tip now; a `closed-without-merge`
//! teardown covers deleting the branch, never merging it.
//!
//! Attacks, one test each:
//! - get VERIFIED under a lax configuration, wait for the base to add a protected surface, then
//!   merge on the old verdict (the hook let it through, the board said VERIFIED);
//! - the same with a contract added for the slug after the verdict;
//! - retire the branch as `closed-without-merge` (a clean teardown), then merge it anyway.

use crate::fixture::{closegate, git, git_output, parts};
use crate::hook::{HookScene, PASSING_CONFIG, Scene};
use crate::teardown::write_status;

/// `agent/x` VERIFIED by `closegate check` under `PASSING_CONFIG`, the hook installed.
fn verified() -> Scene {
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.install();
    let wt = s.honest_worktree();
    s.pass_check(&wt);
    s
}

fn merge_refused(s: &Scene) {
    let before = s.main_tip();
    let (code, _, stderr) = parts(&git_output(
        &s.root(),
        &["merge", "--no-ff", "-m", "m", "agent/x"],
    ));
    assert_ne!(code, 0, "the hook let the merge through");
    assert!(
        stderr.contains("refusing to move `main` onto agent branch `agent/x`"),
        "{stderr}"
    );
    assert_eq!(s.main_tip(), before);
    git(&s.root(), &["reset", "-q", "--merge"]);
}

#[test]
fn a_verdict_under_an_older_configuration_does_not_cover_a_merge() {
    let s = verified();
    // The base adds a protected surface after the verdict.
    let stricter = format!("{PASSING_CONFIG}\n[protected]\npaths = [\"src/**\"]\n");
    s.fx.commit(
        "main",
        &[(".closegate.toml", Some(&stricter))],
        "protect src",
    );
    s.fx.checkout(&s.root());
    merge_refused(&s);
    // The board no longer shows the old verdict as the branch's.
    let (code, out, err) = parts(&closegate(&s.root(), &["board", "--json"]));
    assert_eq!(code, 0, "{out}{err}");
    let board: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = board["worktrees"].as_array().cloned().unwrap_or_default();
    let x = rows
        .iter()
        .find(|r| r["branch"] == "agent/x")
        .unwrap_or_else(|| panic!("{out}"));
    assert_ne!(x["stage"], "VERIFIED", "{out}");
    assert_eq!(x["verdict"], serde_json::Value::Null, "{out}");
}

#[test]
fn the_same_verdict_covers_the_merge_while_the_configuration_is_unchanged() {
    let s = verified();
    // A base commit that leaves .closegate.toml alone changes nothing.
    s.fx.commit("main", &[("NOTES.md", Some("n\n"))], "notes");
    s.fx.checkout(&s.root());
    let (code, _, stderr) = parts(&git_output(
        &s.root(),
        &["merge", "--no-ff", "-m", "m", "agent/x"],
    ));
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_verdict_made_before_the_slug_had_a_contract_does_not_cover_a_merge() {
    let s = verified();
    let contract = "required_artifacts = [\"src/lib.rs\"]\n";
    s.fx.commit(
        "main",
        &[(".closegate/contracts/x.toml", Some(contract))],
        "contract for x",
    );
    s.fx.checkout(&s.root());
    merge_refused(&s);
}

#[test]
fn a_closed_without_merge_teardown_covers_deleting_never_merging() {
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    let wt = s.fx.worktree("x", "agent/x");
    write_status(&wt, "x", "closed-without-merge", s.tip, "add x");
    let (code, out, err) = parts(&closegate(&s.root(), &["teardown", wt.to_str().unwrap()]));
    assert_eq!(code, 0, "{out}{err}");
    s.install();
    merge_refused(&s);
    let out = git_output(&s.root(), &["branch", "-D", "agent/x"]);
    assert_eq!(out.status.code(), Some(0), "{}", parts(&out).2);
}
