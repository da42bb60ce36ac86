//! "Merged into the base" by content (SPEC §7's blob rule; patch ids never), as the hook, the
//! server gate and teardown judge it (issue 24, item 8).
//!
//! Attacks: a branch whose one binary file the base changed differently (patch ids hash every
//! binary change as "Binary files differ"), and a branch whose change the base made with other
//! indentation (patch ids drop whitespace), would read as merged, so `git branch -D` or
//! `push :agent/x` would lose never-checked work.

use crate::fixture::{Fixture, git_output, parts};
use crate::hook::{HookScene, PASSING_CONFIG, Scene};
use crate::server::{Server, Transport};

const BIN_A: &str = "\0\u{1}\u{2}binary A\n";
const BIN_B: &str = "\0\u{1}\u{2}binary B from the agent\n";
const BIN_C: &str = "\0\u{1}\u{2}binary C on the base\n";

/// `main` with `data.bin` = A; `agent/x` changes it to B; then `main` changes it to C.
fn binary_scene() -> Scene {
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.fx.commit("main", &[("data.bin", Some(BIN_A))], "add data");
    s.fx.repo
        .reference("refs/heads/agent/x", s.main_tip(), true, "restart")
        .unwrap();
    s.fx.commit("agent/x", &[("data.bin", Some(BIN_B))], "agent data");
    s.fx.commit("main", &[("data.bin", Some(BIN_C))], "base data");
    s.fx.checkout(&s.root());
    s
}

/// `main` with a three-line file; `agent/x` indents its middle line with spaces, `main` with a tab.
fn indent_scene() -> Scene {
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.fx.commit("main", &[("src/f.rs", Some("fn f() {\n1\n}\n"))], "add f");
    s.fx.repo
        .reference("refs/heads/agent/x", s.main_tip(), true, "restart")
        .unwrap();
    s.fx.commit(
        "agent/x",
        &[("src/f.rs", Some("fn f() {\n    1\n}\n"))],
        "indent",
    );
    s.fx.commit("main", &[("src/f.rs", Some("fn f() {\n\t1\n}\n"))], "tabs");
    s.fx.checkout(&s.root());
    s
}

fn merged(s: &Scene) -> closegate::repo::merged::Merged {
    let repo = closegate::repo::Repo::discover(&s.root()).unwrap();
    let tip = repo.branch_tip("agent/x").unwrap();
    repo.merged_into(s.main_tip(), tip, "_EXEC_STATUS.md")
        .unwrap()
}

#[test]
fn two_changes_of_one_binary_file_are_not_merged_and_the_hook_refuses_the_delete() {
    let s = binary_scene();
    assert_eq!(merged(&s), closegate::repo::merged::Merged::No);
    s.install();
    let out = git_output(&s.root(), &["branch", "-D", "agent/x"]);
    let (code, _, stderr) = parts(&out);
    assert_ne!(code, 0, "the hook let the delete through");
    assert!(
        stderr.contains("refusing to delete agent branch `agent/x`"),
        "{stderr}"
    );
    assert!(s.branch_exists("agent/x"));
}

#[test]
fn indentation_only_differences_are_not_merged_and_the_hook_refuses_the_delete() {
    let s = indent_scene();
    assert_eq!(merged(&s), closegate::repo::merged::Merged::No);
    s.install();
    s.assert_delete_refused(&s.root());
}

#[test]
fn the_very_blobs_on_the_base_are_merged_and_the_delete_passes() {
    // The honest side: the base took the agent's bytes (a squash), so deleting loses nothing.
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.fx.commit(
        "main",
        &[("src/lib.rs", Some("pub fn x() {}\n"))],
        "squash x",
    );
    s.fx.checkout(&s.root());
    assert_eq!(merged(&s), closegate::repo::merged::Merged::SameChanges);
    s.install();
    let out = git_output(&s.root(), &["branch", "-D", "agent/x"]);
    assert_eq!(out.status.code(), Some(0), "{}", parts(&out).2);
}

#[test]
fn a_deleted_path_counts_only_when_absent_from_the_base() {
    let fx = Fixture::new();
    fx.commit("main", &[("old.txt", Some("old\n"))], "old");
    let tip = fx.commit("agent/x", &[("old.txt", None)], "drop old");
    let repo = closegate::repo::Repo::discover(&fx.root()).unwrap();
    let main = repo.branch_tip("main").unwrap();
    // old.txt still on the base: not merged (and the tip is not reachable).
    fx.commit("main", &[("other.txt", Some("o\n"))], "other");
    let main2 = repo.branch_tip("main").unwrap();
    assert_ne!(main, main2);
    assert!(
        !repo
            .merged_into(main2, tip, "_EXEC_STATUS.md")
            .unwrap()
            .is_merged()
    );
    fx.commit("main", &[("old.txt", None)], "base drops old too");
    let main3 = repo.branch_tip("main").unwrap();
    assert!(
        repo.merged_into(main3, tip, "_EXEC_STATUS.md")
            .unwrap()
            .is_merged()
    );
}

#[test]
fn the_status_document_is_ignored_by_the_blob_rule() {
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.fx.commit(
        "agent/x",
        &[("_EXEC_STATUS.md", Some("# status\n"))],
        "status",
    );
    s.fx.commit(
        "main",
        &[("src/lib.rs", Some("pub fn x() {}\n"))],
        "squash x",
    );
    assert_eq!(merged(&s), closegate::repo::merged::Merged::SameChanges);
    let repo = closegate::repo::Repo::discover(&s.root()).unwrap();
    let tip = repo.branch_tip("agent/x").unwrap();
    // Under another status file name, the document is a change the base lacks.
    assert!(
        !repo
            .merged_into(s.main_tip(), tip, "OTHER.md")
            .unwrap()
            .is_merged()
    );
}

#[test]
fn the_server_refuses_deleting_a_branch_whose_binary_change_the_base_made_differently() {
    let srv = Server::new(Transport::File);
    let fx = &srv.s.fx;
    fx.commit("main", &[("data.bin", Some(BIN_A))], "add data");
    fx.checkout(&srv.root());
    let (ok, stderr) = srv.push(&["main"]);
    assert!(ok, "{stderr}");
    let main = fx.repo.refname_to_id("refs/heads/main").unwrap();
    fx.repo
        .reference("refs/heads/agent/y", main, true, "branch")
        .unwrap();
    let tip = fx.commit("agent/y", &[("data.bin", Some(BIN_B))], "agent data");
    fx.commit("main", &[("data.bin", Some(BIN_C))], "base data");
    fx.checkout(&srv.root());
    let (ok, stderr) = srv.push(&["main", "agent/y"]);
    assert!(ok, "{stderr}");
    let (ok, stderr) = srv.push(&[":agent/y"]);
    assert!(!ok, "the server let the delete through: {stderr}");
    assert!(
        stderr.contains("refusing to delete agent branch `agent/y`"),
        "{stderr}"
    );
    assert_eq!(srv.server_ref("refs/heads/agent/y"), Some(tip.to_string()));
}
