//! "Merged into the base" (SPEC §7) on eight merge shapes, as `board` (stage MERGED, §13) and
//! `teardown --delete-branch` see it: a branch merged by fast-forward, merge commit, squash or
//! rebase is MERGED and its deletion loses nothing (its own commits are integrated, so
//! `teardown-unreachable-commits` does not count them); one not merged, partly cherry-picked, or
//! with work beyond its squash merge stays COMPLETED and `--delete-branch` refuses it.

use git2::Oid;
use serde_json::Value;

use crate::fixture::git;
use crate::land::Land;
use crate::teardown::write_status;

const ONE: (&str, Option<&str>) = ("src/one.rs", Some("fn one() {}\n"));
const TWO: (&str, Option<&str>) = ("src/two.rs", Some("fn two() {}\n"));

/// `agent/s` with two commits (ONE, TWO) made with `git commit` in its worktree (so the
/// worktree's HEAD reflog holds them, as an agent's does), and a VERIFIED check of its tip.
fn verified_two_commits(l: &Land) -> (std::path::PathBuf, Oid) {
    let main = l.main();
    l.fx.repo
        .branch("agent/s", &l.fx.repo.find_commit(main).unwrap(), false)
        .unwrap();
    let wt = l.fx.worktree("s", "agent/s");
    for (path, content) in [ONE, TWO] {
        l.fx.write(&wt, path, content.unwrap());
        git(&wt, &["add", path]);
        let msg = if path == ONE.0 { "one" } else { "two" };
        git(&wt, &["commit", "-qm", msg]);
    }
    let tip = l.fx.repo.refname_to_id("refs/heads/agent/s").unwrap();
    write_status(&wt, "s", "close-ok", tip, "two");
    recheck(l, &wt);
    (wt, tip)
}

fn recheck(l: &Land, wt: &std::path::Path) {
    let (code, out, err) = l.run(wt, &["check"]);
    assert_eq!(code, 0, "{out}{err}");
}

fn stage(l: &Land) -> String {
    let (_, out, _) = l.run(&l.fx.root(), &["board", "--json"]);
    let board: Value = serde_json::from_str(&out).unwrap();
    let row = board["worktrees"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["branch"] == "agent/s")
        .cloned()
        .unwrap();
    row["stage"].as_str().unwrap().to_string()
}

/// Run the shape, then assert the board's stage and what `teardown --delete-branch` does.
fn judge(name: &str, shape: impl FnOnce(&Land, &std::path::Path, Oid), merged: bool) {
    let l = Land::new();
    let (wt, tip) = verified_two_commits(&l);
    shape(&l, &wt, tip);
    l.fx.checkout(&l.fx.root());
    let want = if merged { "MERGED" } else { "COMPLETED" };
    assert_eq!(stage(&l), want, "{name}");
    let (code, out, err) = l.run(
        &l.fx.root(),
        &["teardown", wt.to_str().unwrap(), "--delete-branch"],
    );
    let branch = l.fx.repo.find_reference("refs/heads/agent/s").is_ok();
    if merged {
        assert_eq!(code, 0, "{name}:\n{out}{err}");
        assert!(!branch, "{name}: the branch was kept");
        assert!(!wt.exists());
    } else {
        assert_eq!(code, 1, "{name}:\n{out}{err}");
        assert!(out.contains("teardown-unmerged"), "{name}:\n{out}");
        assert!(
            !out.contains("teardown-unreachable-commits"),
            "{name}:\n{out}"
        );
        assert!(branch && wt.exists(), "{name}");
    }
}

fn main_commit(l: &Land, files: &[(&str, Option<&str>)], msg: &str) -> Oid {
    l.fx.commit("main", files, msg)
}

#[test]
fn fast_forward_is_merged() {
    judge(
        "fast-forward",
        |l, _, tip| {
            l.fx.repo
                .reference("refs/heads/main", tip, true, "ff")
                .unwrap();
        },
        true,
    );
}

#[test]
fn merge_commit_is_merged() {
    judge(
        "merge commit",
        |l, _, _| {
            git(
                &l.fx.root(),
                &["merge", "--no-ff", "-q", "-m", "merge", "agent/s"],
            );
        },
        true,
    );
}

#[test]
fn squash_is_merged_and_deleting_it_loses_nothing() {
    judge(
        "squash",
        |l, _, _| {
            main_commit(l, &[ONE, TWO], "squashed s");
        },
        true,
    );
}

#[test]
fn rebase_is_merged_and_deleting_it_loses_nothing() {
    judge(
        "rebase",
        |l, _, _| {
            main_commit(l, &[("docs.md", Some("docs\n"))], "docs");
            main_commit(l, &[ONE], "one");
            main_commit(l, &[TWO], "two");
        },
        true,
    );
}

#[test]
fn one_of_two_commits_cherry_picked_is_not_merged() {
    judge(
        "one of two cherry-picked",
        |l, _, _| {
            main_commit(l, &[ONE], "one");
        },
        false,
    );
}

#[test]
fn not_merged_is_not_merged() {
    judge("not merged", |_, _, _| {}, false);
}

#[test]
fn squash_then_one_more_commit_is_not_merged() {
    judge(
        "squash then one more commit",
        |l, wt, _| {
            main_commit(l, &[ONE, TWO], "squashed s");
            let more = l.fx.commit(
                "agent/s",
                &[("src/more.rs", Some("fn more() {}\n"))],
                "more",
            );
            l.fx.checkout(wt);
            write_status(wt, "s", "close-ok", more, "more");
            recheck(l, wt);
        },
        false,
    );
}

/// The eighth shape, a squash the base then edits in the same file, is "merged" only by patch id,
/// which SPEC §7 no longer accepts; its blob rule is engineer 2's rewrite of `repo::merged`, and
/// the assertion for it (COMPLETED, `--delete-branch` refused) lands with that rewrite.
#[test]
fn landed_branch_is_merged_by_its_land_record() {
    judge(
        "landed by squash, then the base edits the same file",
        |l, _, _| {
            let (code, out, err) = l.run(
                &l.fx.root(),
                &["land", "--no-teardown", "--strategy", "squash", "agent/s"],
            );
            assert_eq!(code, 0, "{out}{err}");
            main_commit(
                l,
                &[("src/one.rs", Some("fn one() { later() }\n"))],
                "later",
            );
        },
        true,
    );
}
