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
    let s = Scene::new();
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
    let s = Scene::new();
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
fn gone_directory_reports_every_reason_together() {
    let s = Scene::new();
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

/// Every file under `dir`, for "nothing changed" comparisons.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    walkdir::WalkDir::new(dir)
        .into_iter()
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
    let s = Scene::new();
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
