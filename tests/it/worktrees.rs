//! `Repo::worktrees` (the close gate's and teardown's list) against `git worktree list`, for the
//! layouts a repository can have: a plain `.git`, a bare common dir, and `core.worktree`.

use std::path::{Path, PathBuf};

use closegate::repo::Repo;

use crate::fixture::{Fixture, git};

/// `git worktree list --porcelain`: (canonical path, bare) per worktree, main first.
fn git_list(cwd: &Path) -> Vec<(PathBuf, bool)> {
    let out = git(cwd, &["worktree", "list", "--porcelain"]);
    out.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let path = block
                .lines()
                .next()
                .unwrap()
                .strip_prefix("worktree ")
                .unwrap();
            let path = Path::new(path)
                .canonicalize()
                .unwrap_or_else(|_| path.into());
            (path, block.lines().any(|l| l == "bare"))
        })
        .collect()
}

/// Ours, in git's shape: a bare repository's common dir stands where its main worktree would.
fn our_list(cwd: &Path) -> Vec<PathBuf> {
    let repo = Repo::discover(cwd).unwrap();
    repo.worktrees().into_iter().map(|w| w.path).collect()
}

fn non_bare(list: Vec<(PathBuf, bool)>) -> Vec<PathBuf> {
    list.into_iter()
        .filter(|(_, bare)| !bare)
        .map(|(path, _)| path)
        .collect()
}

#[test]
fn a_plain_repository_lists_its_main_worktree_first() {
    let fx = Fixture::new();
    fx.commit("main", &[("a.txt", Some("a\n"))], "a");
    fx.commit("agent/x", &[("b.txt", Some("b\n"))], "b");
    let wt = fx.worktree("x", "agent/x");
    let theirs = non_bare(git_list(&fx.root()));
    assert_eq!(theirs.len(), 2);
    assert_eq!(our_list(&fx.root()), theirs);
    assert_eq!(our_list(&wt), theirs);
}

#[test]
fn a_bare_repository_has_no_main_worktree() {
    let fx = Fixture::new();
    fx.commit("main", &[("a.txt", Some("a\n"))], "a");
    let bare = fx.tmp.path().join("bare.git");
    git(
        fx.tmp.path(),
        &[
            "clone",
            "-q",
            "--bare",
            &fx.root().display().to_string(),
            "bare.git",
        ],
    );
    git(&bare, &["worktree", "add", "-q", "../linked", "main"]);
    let linked = fx.tmp.path().join("linked");
    let theirs = non_bare(git_list(&bare));
    assert_eq!(theirs.len(), 1);
    assert_eq!(our_list(&linked), theirs);
}

/// With `core.worktree`, the main checkout lives where it points: `git status` works there,
/// though `git worktree list` still prints the common dir's parent.
#[test]
fn core_worktree_moves_the_main_worktree() {
    let fx = Fixture::new();
    fx.commit("main", &[("a.txt", Some("a\n"))], "a");
    let elsewhere = fx.tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    git(
        &fx.root(),
        &["config", "core.worktree", &elsewhere.display().to_string()],
    );
    fx.commit("agent/x", &[("b.txt", Some("b\n"))], "b");
    let wt = fx.worktree("x", "agent/x");
    let top = git(&fx.root(), &["rev-parse", "--show-toplevel"]);
    assert_eq!(Path::new(top.trim()), elsewhere.canonicalize().unwrap());
    let theirs = non_bare(git_list(&wt));
    assert_eq!(
        our_list(&wt),
        [elsewhere.canonicalize().unwrap(), theirs[1].clone()]
    );
}
