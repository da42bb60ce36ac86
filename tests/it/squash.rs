//! A squash is a merge (SPEC §9; issue 24, item 11): a base move after which an agent branch
//! that was not merged before is merged by content (§7's blob rule) is judged like a merge of
//! that branch.
//!
//! Attacks, one test each: `git merge --squash agent/x && git commit`; `git cherry-pick` of the
//! branch's commit; the same pushed to the server gate. Honest sides: after a passing check the
//! squash lands; a branch already merged by content before the move is not judged again.

use crate::fixture::{git, git_output, parts};
use crate::hook::{HookScene, PASSING_CONFIG, Scene};
use crate::server::{Server, Transport};

fn refused(s: &Scene, args: &[&str]) -> String {
    let before = s.main_tip();
    let (code, _, stderr) = parts(&git_output(&s.root(), args));
    assert_ne!(code, 0, "{args:?} went through: {stderr}");
    assert_eq!(s.main_tip(), before, "{args:?} moved main");
    stderr
}

#[test]
fn a_squash_merge_of_an_unchecked_branch_is_refused_like_a_merge() {
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.install();
    let root = s.root();
    git(&root, &["merge", "-q", "--squash", "agent/x"]);
    let stderr = refused(&s, &["commit", "-q", "-m", "squash x"]);
    assert!(stderr.contains("agent branch `agent/x`"), "{stderr}");
    assert!(stderr.contains("squash"), "{stderr}");
    assert!(stderr.contains("closegate check"), "{stderr}");
    let merges: Vec<_> = s
        .records("hook")
        .into_iter()
        .filter(|r| r["action"] == "merge")
        .collect();
    assert_eq!(merges.len(), 1);
    assert_eq!(merges[0]["accepted"], false);
    assert_eq!(merges[0]["commit"], s.tip.to_string());
    // After a passing check the same squash lands.
    git(&root, &["reset", "-q", "--merge"]);
    let wt = s.honest_worktree();
    s.pass_check(&wt);
    git(&root, &["merge", "-q", "--squash", "agent/x"]);
    git(&root, &["commit", "-q", "-m", "squash x"]);
    assert_ne!(s.main_tip(), s.tip);
    assert_eq!(
        std::fs::read_to_string(root.join("src/lib.rs")).unwrap(),
        "pub fn x() {}\n"
    );
}

#[test]
fn a_cherry_pick_of_an_unchecked_branch_is_refused() {
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.install();
    let stderr = refused(&s, &["cherry-pick", &s.tip.to_string()]);
    assert!(stderr.contains("agent branch `agent/x`"), "{stderr}");
    git(&s.root(), &["cherry-pick", "--abort"]);
}

#[test]
fn a_hand_copied_change_is_refused_and_an_unrelated_commit_passes() {
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.install();
    let root = s.root();
    std::fs::write(root.join("NOTES.md"), "notes\n").unwrap();
    git(&root, &["add", "NOTES.md"]);
    git(&root, &["commit", "-q", "-m", "notes"]);
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub fn x() {}\n").unwrap();
    git(&root, &["add", "src/lib.rs"]);
    refused(&s, &["commit", "-q", "-m", "copy"]);
}

#[test]
fn a_branch_already_merged_by_content_is_not_judged_again() {
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.install();
    let root = s.root();
    // Squashed past the hook, deliberately.
    git(&root, &["merge", "-q", "--squash", "agent/x"]);
    git(
        &root,
        &[
            "-c",
            "core.hooksPath=/dev/null",
            "commit",
            "-q",
            "-m",
            "squash x",
        ],
    );
    std::fs::write(root.join("NOTES.md"), "notes\n").unwrap();
    git(&root, &["add", "NOTES.md"]);
    let (code, _, stderr) = parts(&git_output(&root, &["commit", "-q", "-m", "notes"]));
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn the_server_refuses_a_pushed_squash_of_an_unattested_branch() {
    let srv = Server::new(Transport::File);
    let root = srv.root();
    let (ok, stderr) = srv.push(&["agent/x"]);
    assert!(ok, "{stderr}");
    let before = srv.server_ref("refs/heads/main");
    git(&root, &["merge", "-q", "--squash", "agent/x"]);
    git(&root, &["commit", "-q", "-m", "squash x"]);
    let (ok, stderr) = srv.push(&["main"]);
    assert!(!ok, "the server took the squash: {stderr}");
    assert!(stderr.contains("agent/x"), "{stderr}");
    assert_eq!(srv.server_ref("refs/heads/main"), before);
}
