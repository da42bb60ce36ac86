//! Teardown fixes found by a black-box audit of SPEC §6, §7 and §16: a pruned registration that
//! would orphan commits, an archive path through a planted link, `--delete-branch` on abandoned
//! work, submodules in a linked worktree, and the main worktree's refusal.

use std::path::Path;

use git2::Oid;

use crate::fixture::{git, parts};
use crate::teardown::Scene;

/// In the worktree: detach, commit `q.txt`, go back to the branch. The commit is then held only by
/// the worktree's HEAD reflog.
fn commit_only_the_head_reflog_holds(wt: &Path) -> Oid {
    git(wt, &["checkout", "-q", "--detach"]);
    std::fs::write(wt.join("q.txt"), "q\n").unwrap();
    git(wt, &["add", "q.txt"]);
    git(wt, &["commit", "-q", "-m", "q"]);
    let id = git(wt, &["rev-parse", "HEAD"]);
    git(wt, &["checkout", "-q", "agent/x"]);
    Oid::from_str(id.trim()).unwrap()
}

#[test]
fn gone_directory_whose_head_reflog_holds_the_only_copy_is_not_pruned() {
    let s = Scene::honest_return();
    let lost = commit_only_the_head_reflog_holds(&s.wt);
    let admin = s.fx.git_dir().join("worktrees/x");
    std::fs::remove_dir_all(&s.wt).unwrap();
    for args in [&["--dry-run"][..], &[]] {
        let (exit, out, err) = s.teardown(args);
        assert_eq!(exit, 1, "{args:?}: {out}{err}");
        assert!(out.contains("teardown-unreachable-commits"), "{out}");
        assert!(out.contains(&lost.to_string()), "{out}");
        assert!(
            admin.join("logs/HEAD").is_file(),
            "the HEAD reflog was removed"
        );
        assert!(git(&s.fx.root(), &["worktree", "list"]).contains("/wt/x"));
    }
    let last = s.audit().pop().unwrap();
    assert_eq!(last["event"], "teardown");
    assert_eq!(last["removed"], false);
    let codes = last["codes"].as_array().unwrap();
    assert!(codes.iter().any(|c| c == "teardown-unreachable-commits"));
    // Kept by a branch, the commit survives the prune: the registration goes.
    git(&s.fx.root(), &["branch", "keep", &lost.to_string()]);
    let (exit, out, err) = s.teardown(&[]);
    assert_eq!(exit, 0, "{out}{err}");
    assert!(!admin.exists());
}

#[test]
fn gone_directory_detached_on_its_own_commit_is_not_pruned() {
    let s = Scene::honest_return();
    let lost = commit_only_the_head_reflog_holds(&s.wt);
    git(&s.wt, &["checkout", "-q", "--detach", &lost.to_string()]);
    std::fs::remove_dir_all(&s.wt).unwrap();
    let (exit, out, err) = s.teardown(&[]);
    assert_eq!(exit, 1, "{out}{err}");
    assert!(out.contains("teardown-unreachable-commits"), "{out}");
    assert!(out.contains(&lost.to_string()), "{out}");
    assert!(s.fx.git_dir().join("worktrees/x/HEAD").is_file());
}

#[test]
fn gone_directory_whose_index_holds_staged_changes_is_not_pruned() {
    let s = Scene::honest_return();
    std::fs::write(s.wt.join("staged.txt"), "staged only\n").unwrap();
    git(&s.wt, &["add", "staged.txt"]);
    std::fs::remove_dir_all(&s.wt).unwrap();
    for args in [&["--dry-run"][..], &[]] {
        let (exit, out, err) = s.teardown(args);
        assert_eq!(exit, 1, "{args:?}: {out}{err}");
        assert!(out.contains("teardown-dirty"), "{out}");
        assert!(out.contains("staged.txt"), "{out}");
        assert!(s.fx.git_dir().join("worktrees/x/index").is_file());
    }
}

#[test]
fn gone_directory_reports_every_reason_together() {
    let s = Scene::honest_return();
    let lost = commit_only_the_head_reflog_holds(&s.wt);
    let wt = s.wt.to_str().unwrap().to_string();
    git(
        &s.fx.root(),
        &["worktree", "lock", "--reason", "on a stick", &wt],
    );
    std::fs::remove_dir_all(&s.wt).unwrap();
    let (exit, out, err) = s.teardown(&[]);
    assert_eq!(exit, 1, "{out}{err}");
    assert!(out.contains("teardown-locked"), "{out}");
    assert!(out.contains("teardown-unreachable-commits"), "{out}");
    assert!(out.contains(&lost.to_string()), "{out}");
    assert!(s.fx.git_dir().join("worktrees/x/locked").is_file());
    let (exit, out, _) = parts(&crate::fixture::closegate(
        &s.fx.root(),
        &["teardown", &wt, "--dry-run"],
    ));
    assert_eq!(exit, 1, "{out}");
}

/// Every file under `dir` (a `.git` folder, which closegate's record lives in, left out), for
/// "nothing changed" comparisons.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_entry(|e| !(e.depth() == 1 && e.file_type().is_dir() && e.file_name() == ".git"))
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            (
                e.path().display().to_string(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// A link or a file planted on the archive's way, in the common directory the agent can write:
/// exit 2 naming it, nothing written where it points, nothing removed.
fn assert_archive_refused(plant: impl Fn(&Path, &Path) -> std::path::PathBuf) {
    let s = Scene::honest_return();
    let elsewhere = s.fx.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let named = plant(&s.fx.git_dir(), &elsewhere);
    let before = files(&s.wt);
    for args in [&["--dry-run"][..], &[]] {
        let (exit, out, err) = s.teardown(args);
        assert_eq!(exit, 2, "{args:?}: {out}{err}");
        assert!(err.contains(&named.display().to_string()), "{err}");
        assert_eq!(
            files(&elsewhere),
            vec![],
            "written outside the common directory"
        );
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        assert_eq!(files(&s.wt), before, "the worktree changed");
        assert!(s.wt.join(".git").is_file());
        assert!(s.fx.git_dir().join("worktrees/x").is_dir());
    }
}

#[test]
fn archive_refuses_a_link_planted_at_the_slug_folder() {
    assert_archive_refused(|common, elsewhere| {
        let records = common.join("closegate/records");
        std::fs::create_dir_all(&records).unwrap();
        std::os::unix::fs::symlink(elsewhere, records.join("x")).unwrap();
        records.join("x")
    });
}

#[test]
fn archive_refuses_a_link_planted_at_the_records_folder() {
    assert_archive_refused(|common, elsewhere| {
        std::fs::create_dir_all(common.join("closegate")).unwrap();
        let records = common.join("closegate/records");
        std::os::unix::fs::symlink(elsewhere, &records).unwrap();
        records
    });
}

#[test]
fn archive_refuses_a_file_planted_at_the_slug_folder() {
    assert_archive_refused(|common, _| {
        let records = common.join("closegate/records");
        std::fs::create_dir_all(&records).unwrap();
        std::fs::write(records.join("x"), "not a folder\n").unwrap();
        records.join("x")
    });
}

#[test]
fn record_refuses_a_link_planted_at_the_closegate_folder() {
    assert_archive_refused(|common, elsewhere| {
        // The audit log made by the scene's setup, if any, goes with the folder.
        let _ = std::fs::remove_dir_all(common.join("closegate"));
        std::os::unix::fs::symlink(elsewhere, common.join("closegate")).unwrap();
        common.join("closegate")
    });
}

/// `main` with a submodule `sub` (from `<tmp>/lib`), `agent/x` on it with a linked worktree whose
/// submodule is initialised there (its repository under `.git/worktrees/x/modules/sub`, its
/// `core.worktree` naming the worktree's path).
fn submodule_scene() -> (crate::fixture::Fixture, std::path::PathBuf) {
    use crate::fixture::Fixture;
    use crate::teardown::{PASSING_CONFIG, agent};
    let fx = Fixture::new();
    let files = [
        (".gitignore", Some("target/\n")),
        (".closegate.toml", Some(PASSING_CONFIG)),
    ];
    fx.commit("main", &files, "configure closegate");
    fx.checkout(&fx.root());
    let lib = fx.tmp.path().join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    git(&lib, &["init", "-q", "-b", "main"]);
    std::fs::write(lib.join("lib.txt"), "lib\n").unwrap();
    git(&lib, &["add", "lib.txt"]);
    git(&lib, &["commit", "-q", "-m", "lib"]);
    let allow = ["-c", "protocol.file.allow=always"];
    let root = fx.root();
    let mut add = allow.to_vec();
    add.extend(["submodule", "add", "-q", lib.to_str().unwrap(), "sub"]);
    git(&root, &add);
    git(&root, &["commit", "-q", "-m", "add sub"]);
    let (wt, _) = agent(&fx, "x", "close-ok");
    let mut init = allow.to_vec();
    init.extend(["submodule", "update", "--init", "-q"]);
    git(&wt, &init);
    assert!(
        fx.git_dir().join("worktrees/x/modules/sub").is_dir(),
        "the submodule's repository is not under the worktree's administrative data"
    );
    (fx, wt)
}

fn teardown_at(fx: &crate::fixture::Fixture, wt: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["teardown", wt.to_str().unwrap()];
    all.extend_from_slice(args);
    parts(&crate::fixture::closegate(&fx.root(), &all))
}

/// Refused with `teardown-nested-repo` naming `sub`, with `--dry-run` and without, nothing removed.
fn assert_submodule_refused(fx: &crate::fixture::Fixture, wt: &Path, why: &str) {
    let before = files(wt);
    for args in [&["--dry-run"][..], &[]] {
        let (exit, out, err) = teardown_at(fx, wt, args);
        assert_eq!(exit, 1, "{args:?}: {out}{err}");
        assert!(out.contains("teardown-nested-repo"), "{out}");
        assert!(out.contains(why), "{why} not said:\n{out}");
        assert_eq!(files(wt), before, "the worktree changed");
    }
}

#[test]
fn clean_submodule_in_a_linked_worktree_is_torn_down() {
    let (fx, wt) = submodule_scene();
    let (exit, out, err) = teardown_at(&fx, &wt, &["--dry-run"]);
    assert_eq!(exit, 0, "{out}{err}");
    let (exit, out, err) = teardown_at(&fx, &wt, &[]);
    assert_eq!(
        exit, 0,
        "the real run must agree with --dry-run:\n{out}{err}"
    );
    assert!(!out.contains("teardown-dirty"), "{out}");
    assert!(!wt.exists());
    assert!(!fx.git_dir().join("worktrees/x").exists());
}

#[test]
fn submodule_with_a_changed_file_in_a_linked_worktree_is_refused() {
    let (fx, wt) = submodule_scene();
    std::fs::write(wt.join("sub/lib.txt"), "changed in the submodule\n").unwrap();
    assert_submodule_refused(&fx, &wt, "changed or untracked");
}

#[test]
fn submodule_pointed_at_a_clean_copy_elsewhere_is_still_refused() {
    let (fx, wt) = submodule_scene();
    std::fs::write(wt.join("sub/lib.txt"), "changed in the submodule\n").unwrap();
    // The agent points the submodule's work tree at a clean checkout of the same commit.
    let clean = fx.tmp.path().join("clean");
    let lib = fx.tmp.path().join("lib");
    git(
        fx.tmp.path(),
        &[
            "clone",
            "-q",
            lib.to_str().unwrap(),
            clean.to_str().unwrap(),
        ],
    );
    let gitdir = fx.git_dir().join("worktrees/x/modules/sub");
    git(
        &gitdir,
        &["config", "core.worktree", clean.to_str().unwrap()],
    );
    assert_submodule_refused(&fx, &wt, "changed or untracked");
}

#[test]
fn submodule_commit_only_its_worktree_repository_holds_is_refused() {
    let (fx, wt) = submodule_scene();
    let sub = wt.join("sub");
    std::fs::write(sub.join("new.txt"), "only here\n").unwrap();
    git(&sub, &["add", "new.txt"]);
    git(&sub, &["commit", "-q", "-m", "only here"]);
    git(&wt, &["add", "sub"]);
    git(&wt, &["commit", "-q", "-m", "bump sub"]);
    let head = Oid::from_str(git(&wt, &["rev-parse", "HEAD"]).trim()).unwrap();
    crate::teardown::write_status(&wt, "x", "close-ok", head, "bump sub");
    assert_submodule_refused(&fx, &wt, "no remote-tracking branch holds");
}

#[test]
fn main_worktree_refusal_reports_every_reason_together() {
    let s = Scene::honest_return();
    let root = s.fx.root();
    std::fs::write(root.join("README.md"), "changed on main\n").unwrap();
    std::fs::write(root.join("notes.txt"), "untracked on main\n").unwrap();
    let before = files(&root);
    for args in [&["--dry-run"][..], &[]] {
        let mut all = vec!["teardown", root.to_str().unwrap()];
        all.extend_from_slice(args);
        let (exit, out, err) = parts(&crate::fixture::closegate(&root, &all));
        assert_eq!(exit, 1, "{args:?}: {out}{err}");
        for code in [
            "teardown-main-worktree",
            "teardown-dirty",
            "teardown-untracked",
        ] {
            assert!(out.contains(code), "{code} not reported:\n{out}");
        }
        assert!(
            out.contains("README.md") && out.contains("notes.txt"),
            "{out}"
        );
    }
    assert_eq!(files(&root), before, "the main worktree changed");
    let last = s.audit().pop().unwrap();
    assert_eq!(last["event"], "teardown");
    let codes = last["codes"].as_array().unwrap();
    assert!(codes.iter().any(|c| c == "teardown-dirty"), "{codes:?}");
    assert!(
        codes.iter().any(|c| c == "teardown-main-worktree"),
        "{codes:?}"
    );
}

#[test]
fn submodule_stash_only_its_worktree_repository_holds_is_refused() {
    let (fx, wt) = submodule_scene();
    let sub = wt.join("sub");
    std::fs::write(sub.join("lib.txt"), "stashed work\n").unwrap();
    git(&sub, &["stash", "-q"]);
    assert_submodule_refused(&fx, &wt, "no remote-tracking branch holds");
}
