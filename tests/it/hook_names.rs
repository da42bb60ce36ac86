//! Branch names that are not UTF-8 reach the hook like any other (SPEC §9, §11): a branch no
//! agent glob matches passes, an agent branch is judged. Real `git` commands with byte arguments.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Output};

use crate::fixture::{git, hermetic, parts};
use crate::hook::{HookScene, PASSING_CONFIG, Scene};

/// `git` with arguments given as bytes (a branch name need not be UTF-8).
fn git_bytes(cwd: &Path, args: &[&[u8]]) -> Output {
    let mut cmd = Command::new("git");
    cmd.args(args.iter().map(|a| OsStr::from_bytes(a)))
        .current_dir(cwd);
    hermetic(&mut cmd, cwd);
    cmd.output().unwrap()
}

fn has_branch(cwd: &Path, name: &[u8]) -> bool {
    let full = [b"refs/heads/".as_slice(), name].concat();
    git_bytes(cwd, &[b"rev-parse", b"-q", b"--verify", &full])
        .status
        .success()
}

#[test]
fn a_branch_whose_name_is_not_utf8_and_matches_no_agent_glob_passes() {
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.install();
    let root = s.root();
    let name = b"feat/\xff";
    let (code, _, stderr) = parts(&git_bytes(&root, &[b"branch", name, b"agent/x"]));
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = parts(&git_bytes(&root, &[b"branch", b"-D", name]));
    assert_eq!(code, 0, "a non-agent branch was held: {stderr}");
    assert!(!has_branch(&root, name));
    // `git update-ref -d` names no old value: the hook looks the ref up by its bytes
    git_bytes(&root, &[b"branch", name, b"main"]);
    let full = [b"refs/heads/".as_slice(), name].concat();
    let (code, _, stderr) = parts(&git_bytes(&root, &[b"update-ref", b"-d", &full]));
    assert_eq!(code, 0, "{stderr}");
    assert!(!has_branch(&root, name));
}

#[test]
fn an_agent_branch_whose_name_is_not_utf8_is_judged() {
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.install();
    let root = s.root();
    // its own unverified commit, on no other agent branch
    let work = s.fx.commit("feat/y", &[("y.txt", Some("y\n"))], "add y");
    let name = b"agent/\xff";
    let (code, _, stderr) = parts(&git_bytes(&root, &[b"branch", name, b"feat/y"]));
    assert_eq!(
        code, 0,
        "creating an agent branch is the agent's work: {stderr}"
    );

    for delete in [
        vec![b"branch".as_slice(), b"-D", name],
        vec![b"update-ref", b"-d", b"refs/heads/agent/\xff"],
    ] {
        let (code, _, stderr) = parts(&git_bytes(&root, &delete));
        assert_ne!(code, 0, "deleted unjudged: {delete:?}");
        assert!(
            stderr.contains("refusing to delete agent branch `agent/\\xff`"),
            "{stderr}"
        );
        assert!(has_branch(&root, name));
    }
    git(&root, &["branch", "-q", "-D", "feat/y"]);

    let before = s.main_tip();
    let (code, _, stderr) = parts(&git_bytes(&root, &[b"merge", b"--ff-only", name]));
    assert_ne!(code, 0, "merged unjudged");
    assert!(
        stderr.contains("onto agent branch `agent/\\xff`"),
        "{stderr}"
    );
    assert_eq!(s.main_tip(), before);
    // the name cannot be typed: the printed commands name the commit
    let check = format!("`closegate check --rev {work} --no-worktree`");
    assert!(stderr.contains(&check), "{stderr}");
    let records = s.records("hook");
    let last = records.last().unwrap();
    assert_eq!(last["branch"], "agent/\\xff");
    assert_eq!(last["commit"], work.to_string());
}
