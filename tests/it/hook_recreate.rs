//! Deleting the base and creating it again, or creating `master` as `main` goes, cannot land
//! unverified agent work (SPEC §9 with §5): real `git` commands, the hook firing is the point.

use crate::fixture::{git, git_output, git_stdin, parts};
use crate::hook::{HookScene, PASSING_CONFIG, Scene};

#[test]
fn deleting_the_base_to_recreate_it_on_agent_work_is_refused() {
    // The auditor's repro A: the move is refused, so delete main and create it again.
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.install();
    let root = s.root();
    let before = s.main_tip();
    let (code, ..) = parts(&git_output(
        &root,
        &["update-ref", "refs/heads/main", "agent/x"],
    ));
    assert_ne!(code, 0, "the base moved onto unverified agent work");
    let (code, _, stderr) = parts(&git_output(&root, &["update-ref", "-d", "refs/heads/main"]));
    assert_ne!(code, 0, "the base was deleted");
    assert!(
        stderr.contains("refusing to delete `main`")
            && stderr.contains("git -c core.hooksPath=/dev/null"),
        "{stderr}"
    );
    assert_eq!(s.main_tip(), before);
    let refused = s.records("hook");
    assert!(
        refused
            .iter()
            .any(|r| r["action"] == "config" && r["accepted"] == false && r["branch"] == "main"),
        "{refused:?}"
    );
}

#[test]
fn a_base_deleted_past_the_hook_is_judged_when_created_again() {
    // Deleted deliberately (bypass): creating it again is judged like moving it from nothing.
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.install();
    let root = s.root();
    let wt = s.honest_worktree();
    s.pass_check(&wt);
    std::fs::write(wt.join("more.txt"), "more\n").unwrap();
    git(&wt, &["add", "more.txt"]);
    git(&wt, &["commit", "-q", "-m", "unverified"]);
    let bypass = ["-c", "core.hooksPath=/dev/null"];
    git(
        &root,
        &[&bypass[..], &["update-ref", "-d", "refs/heads/main"]].concat(),
    );
    assert!(!s.branch_exists("main"));
    let (code, _, stderr) = parts(&git_output(
        &root,
        &["update-ref", "refs/heads/main", "agent/x"],
    ));
    assert_ne!(code, 0, "the base was created on unverified agent work");
    assert!(stderr.contains("onto agent branch `agent/x`"), "{stderr}");
    assert!(!s.branch_exists("main"));
    // created at the covered commit, it passes
    git(
        &root,
        &["update-ref", "refs/heads/main", &s.tip.to_string()],
    );
    assert_eq!(s.main_tip(), s.tip);
}

#[test]
fn creating_master_while_deleting_main_is_refused_and_the_agent_branch_stays() {
    // The auditor's repro B: one transaction deletes main and creates master at agent/x.
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.install();
    let root = s.root();
    let input = format!(
        "delete refs/heads/main\ncreate refs/heads/master {}\n",
        s.tip
    );
    let out = git_stdin(&root, &["update-ref", "--stdin"], input.as_bytes());
    let (code, _, stderr) = parts(&out);
    assert_ne!(
        code, 0,
        "master became the base holding unverified agent work"
    );
    assert!(stderr.contains("onto agent branch `agent/x`"), "{stderr}");
    assert!(s.branch_exists("main"));
    assert!(!s.branch_exists("master"));
    s.assert_delete_refused(&root);
}

#[test]
fn master_is_guarded_while_main_exists() {
    // Creating master alone at agent work is judged too: it becomes the base once main goes.
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.install();
    let root = s.root();
    let (code, _, stderr) = parts(&git_output(&root, &["branch", "master", "agent/x"]));
    assert_ne!(code, 0, "master was created on unverified agent work");
    assert!(stderr.contains("onto agent branch `agent/x`"), "{stderr}");
    assert!(!s.branch_exists("master"));
    // a legitimate copy of the base passes, and so does moving it along the base
    git(&root, &["branch", "master", "main"]);
    assert!(s.branch_exists("master"));
    git(&root, &["branch", "-D", "master"]);
    assert!(!s.branch_exists("master"));
}
