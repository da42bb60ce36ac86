//! `closegate board` (SPEC §13) on real repositories: one row per worktree, the stage from the
//! status document and the recorded (or, with `--check`, fresh) verdict for the current tip.

use std::path::{Path, PathBuf};

use git2::Oid;
use serde_json::Value;

use crate::fixture::{closegate, parts};
use crate::scene::{Scene, StatusDoc};

const CONFIG: &str = "[[checks]]\nname = \"smoke\"\nrun = \"test -f README.md\"\ntimeout_s = 60\n";

/// A repository with the configuration on `main`; agents are added one by one.
fn scene() -> Scene {
    Scene::new().on_main(&[(".closegate.toml", Some(CONFIG))], "configure")
}

/// The board tests' verbs on a scene.
trait BoardScene {
    fn agent(&self, name: &str, files: &[(&str, Option<&str>)]) -> (PathBuf, Oid);
    fn returned(&self, name: &str, state: &str, files: &[(&str, Option<&str>)]) -> (PathBuf, Oid);
    fn write_doc(&self, wt: &Path, slug: &str, state: &str, tip: Oid);
    fn board(&self, args: &[&str]) -> (i32, String);
    fn json(&self, args: &[&str]) -> Value;
}

impl BoardScene for Scene {
    /// `agent/<name>` with `files` committed, in the worktree `wt/<name>`.
    fn agent(&self, name: &str, files: &[(&str, Option<&str>)]) -> (PathBuf, Oid) {
        let tip = self
            .fx
            .commit(&format!("agent/{name}"), files, &format!("work on {name}"));
        let wt = self.fx.worktree(name, &format!("agent/{name}"));
        (wt, tip)
    }

    /// An agent whose status document is `doc(name, state, tip)`.
    fn returned(&self, name: &str, state: &str, files: &[(&str, Option<&str>)]) -> (PathBuf, Oid) {
        let (wt, tip) = self.agent(name, files);
        self.write_doc(&wt, name, state, tip);
        (wt, tip)
    }

    /// A complete status document in `state` naming `tip` and the worktree.
    fn write_doc(&self, wt: &Path, slug: &str, state: &str, tip: Oid) {
        let sha = &tip.to_string()[..12];
        let path = wt.canonicalize().unwrap().display().to_string();
        StatusDoc::complete(slug, state)
            .abstract_text(&format!("work on {slug}, proven by smoke"))
            .last_commit(sha, &self.subject(tip))
            .done("it is in, proven by the smoke check")
            .artifacts(&[])
            .close(sha, &format!("agent/{slug}"), &path)
            .write(wt);
    }

    fn board(&self, args: &[&str]) -> (i32, String) {
        let mut all = vec!["board"];
        all.extend_from_slice(args);
        let out = closegate(&self.fx.root(), &all);
        let (code, stdout, stderr) = parts(&out);
        assert!(stderr.is_empty() || code != 0, "stderr: {stderr}");
        (code, stdout)
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let (code, stdout) = self.board(&all);
        assert_eq!(code, 0, "{stdout}");
        serde_json::from_str(&stdout).unwrap()
    }
}

/// Run `closegate check` in `wt` (recorded) and return its verdict.
fn check(wt: &Path, args: &[&str]) -> String {
    let mut all = vec!["check", "--format", "json"];
    all.extend_from_slice(args);
    let (_, stdout, stderr) = parts(&closegate(wt, &all));
    let report: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout} {stderr}"));
    report["verdict"].as_str().unwrap().to_string()
}

/// The row whose slug (or, for main, `main: true`) is `slug`.
fn row<'a>(board: &'a Value, slug: &str) -> &'a Value {
    let rows = board["worktrees"].as_array().unwrap();
    rows.iter()
        .find(|r| r["slug"] == slug || (slug == "main" && r["main"] == true))
        .unwrap_or_else(|| panic!("no row {slug} in {board}"))
}

fn stage(board: &Value, slug: &str) -> String {
    row(board, slug)["stage"].as_str().unwrap().to_string()
}

/// Eight worktrees, seven stages, from the record alone.
#[test]
fn every_stage_from_the_record() {
    let b = scene();
    let (run, _) = b.agent("run", &[("src/run.rs", Some("r\n"))]);
    StatusDoc::new("run", "in-progress").write(&run);
    let (blk, _) = b.agent("blk", &[("src/blk.rs", Some("b\n"))]);
    StatusDoc::new("blk", "blocked")
        .next("the schema review")
        .write(&blk);
    b.returned("ver", "close-ok", &[("src/ver.rs", Some("v\n"))]);
    let (done, _) = b.returned("done", "close-ok", &[("src/done.rs", Some("d\n"))]);
    assert_eq!(check(&done, &[]), "VERIFIED");
    // Deleting README.md makes the smoke check fail.
    let (fail, _) = b.returned("fail", "close-ok", &[("README.md", None)]);
    assert_eq!(check(&fail, &[]), "FAIL");
    let (rev, _) = b.returned(
        "rev",
        "stop-2-ready",
        &[("tests/a_test.sh", Some("true\n"))],
    );
    assert_eq!(check(&rev, &[]), "PENDING_REVIEW");
    let (unv, _) = b.returned("unv", "close-ok", &[("src/unv.rs", Some("u\n"))]);
    assert_eq!(check(&unv, &["--no-checks"]), "UNVERIFIED");
    b.returned(
        "stop",
        "closed-without-merge",
        &[("src/stop.rs", Some("s\n"))],
    );

    let board = b.json(&[]);
    assert_eq!(board["schema"], 1);
    assert_eq!(board["worktrees"].as_array().unwrap().len(), 9);
    let main = row(&board, "main");
    assert_eq!(main["main"], true);
    assert_eq!(main["branch"], "main");
    assert!(main["state"].is_null() && main["slug"].is_null() && main["verdict"].is_null());
    assert_eq!(main["stage"], "RUNNING");
    let want = [
        ("run", "RUNNING", "in-progress", Value::Null),
        ("blk", "BLOCKED", "blocked", Value::Null),
        ("ver", "VERIFYING", "close-ok", Value::Null),
        ("done", "COMPLETED", "close-ok", "VERIFIED".into()),
        ("fail", "FAILED", "close-ok", "FAIL".into()),
        ("rev", "REVIEW", "stop-2-ready", "PENDING_REVIEW".into()),
        ("unv", "UNVERIFIED", "close-ok", "UNVERIFIED".into()),
        ("stop", "STOPPED", "closed-without-merge", Value::Null),
    ];
    for (slug, stage, state, verdict) in want {
        let r = row(&board, slug);
        assert_eq!(r["stage"], stage, "{slug}: {r}");
        assert_eq!(r["state"], state, "{slug}");
        assert_eq!(r["verdict"], verdict, "{slug}");
        assert_eq!(r["main"], false, "{slug}");
        assert_eq!(r["branch"], format!("agent/{slug}"), "{slug}");
        let path = r["path"].as_str().unwrap();
        assert!(path.ends_with(&format!("/wt/{slug}")), "{path}");
    }
    for r in board["worktrees"].as_array().unwrap() {
        let mut keys: Vec<&String> = r.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "branch", "main", "path", "slug", "stage", "state", "verdict"
            ]
        );
    }
}

#[test]
fn approved_review_is_completed() {
    let b = scene();
    let (rev, tip) = b.returned("rev", "close-ok", &[("tests/a_test.sh", Some("true\n"))]);
    assert_eq!(check(&rev, &[]), "PENDING_REVIEW");
    assert_eq!(stage(&b.json(&[]), "rev"), "REVIEW");
    // As `approve` writes it: bound to the branch, the configuration blob and the contract (none),
    // made with the base's configuration and the configured base (SPEC §6, §8, §26.1).
    let config = Oid::hash_object(git2::ObjectType::Blob, CONFIG.as_bytes()).unwrap();
    let approval = serde_json::json!({
        "ts": "2026-11-29T12:00:00Z", "event": "approve", "slug": "rev", "branch": "agent/rev",
        "contract": null,
        "commit": tip.to_string(), "by": "reviewer", "verdict": "PENDING_REVIEW",
        "config": config.to_string(), "config_source": "base", "base_source": "configured",
    });
    closegate::record::append(&b.fx.git_dir(), &approval).unwrap();
    // The next check applies the approval bound to this commit.
    assert_eq!(check(&rev, &[]), "VERIFIED");
    assert_eq!(stage(&b.json(&[]), "rev"), "COMPLETED");
}

#[test]
fn a_verdict_for_an_older_tip_does_not_count() {
    let b = scene();
    let (wt, _) = b.returned("moved", "close-ok", &[("src/m.rs", Some("m\n"))]);
    assert_eq!(check(&wt, &[]), "VERIFIED");
    assert_eq!(stage(&b.json(&[]), "moved"), "COMPLETED");
    b.fx.commit("agent/moved", &[("src/m2.rs", Some("more\n"))], "more work");
    b.fx.checkout(&wt);
    let board = b.json(&[]);
    assert_eq!(stage(&board, "moved"), "VERIFYING");
    assert!(row(&board, "moved")["verdict"].is_null());
    // The document still names the old commit: the gate refuses the stale claim, and the board
    // shows that refusal although it is recorded against the commit the claim names.
    assert_eq!(check(&wt, &[]), "FAIL");
    assert_eq!(stage(&b.json(&[]), "moved"), "FAILED");
}

#[test]
fn trailing_status_only_commit_keeps_the_verdict_of_its_parent() {
    let b = scene();
    let (wt, tip) = b.returned("trail", "close-ok", &[("src/t.rs", Some("t\n"))]);
    let doc = std::fs::read_to_string(wt.join("_EXEC_STATUS.md")).unwrap();
    b.fx.commit("agent/trail", &[("_EXEC_STATUS.md", Some(&doc))], "status");
    b.fx.checkout(&wt);
    assert_eq!(check(&wt, &[]), "VERIFIED");
    let board = b.json(&[]);
    assert_eq!(stage(&board, "trail"), "COMPLETED");
    // A second trailing commit that changes code is a new tip with no verdict.
    b.fx.commit("agent/trail", &[("src/t.rs", Some("t2\n"))], "change");
    b.fx.checkout(&wt);
    assert_ne!(
        b.fx.repo.refname_to_id("refs/heads/agent/trail").unwrap(),
        tip
    );
    assert_eq!(stage(&b.json(&[]), "trail"), "VERIFYING");
}

#[test]
fn worktree_missing_on_this_machine_has_no_state() {
    let b = scene();
    let (wt, _) = b.returned("gone", "close-ok", &[("src/g.rs", Some("g\n"))]);
    std::fs::remove_dir_all(&wt).unwrap();
    let board = b.json(&[]);
    let rows = board["worktrees"].as_array().unwrap();
    let gone = rows.iter().find(|r| r["branch"] == "agent/gone").unwrap();
    assert!(gone["state"].is_null() && gone["slug"].is_null());
    assert_eq!(gone["stage"], "RUNNING");
}

#[test]
fn check_gives_fresh_verdicts_and_records_them() {
    let b = scene();
    b.returned("done", "close-ok", &[("src/done.rs", Some("d\n"))]);
    b.returned("rev", "close-ok", &[("tests/a_test.sh", Some("true\n"))]);
    b.returned("fail", "close-ok", &[("README.md", None)]);
    b.returned(
        "stop",
        "closed-without-merge",
        &[("src/stop.rs", Some("s\n"))],
    );
    let before = b.json(&[]);
    for slug in ["done", "rev", "fail"] {
        assert_eq!(stage(&before, slug), "VERIFYING", "{slug}");
    }

    let board = b.json(&["--check"]);
    assert_eq!(row(&board, "done")["verdict"], "VERIFIED");
    assert_eq!(stage(&board, "done"), "COMPLETED");
    assert_eq!(stage(&board, "rev"), "REVIEW");
    assert_eq!(stage(&board, "fail"), "FAILED");
    assert_eq!(row(&board, "stop")["verdict"], "VERIFIED");
    assert_eq!(stage(&board, "stop"), "STOPPED");
    // main has no status document: no gate ran there.
    assert!(row(&board, "main")["verdict"].is_null());

    // The fresh verdicts were recorded: the board without --check now shows them.
    let after = b.json(&[]);
    for slug in ["done", "rev", "fail", "stop"] {
        assert_eq!(
            row(&after, slug)["verdict"],
            row(&board, slug)["verdict"],
            "{slug}"
        );
    }
    let log = std::fs::read_to_string(b.fx.git_dir().join("closegate/audit.jsonl")).unwrap();
    assert_eq!(
        log.lines()
            .filter(|l| l.contains("\"event\":\"check\""))
            .count(),
        4
    );
}

#[test]
fn check_without_record_leaves_the_log_alone() {
    let b = scene();
    b.returned("done", "close-ok", &[("src/done.rs", Some("d\n"))]);
    let board = b.json(&["--check", "--no-record"]);
    assert_eq!(stage(&board, "done"), "COMPLETED");
    assert!(!b.fx.git_dir().join("closegate/audit.jsonl").exists());
    assert_eq!(stage(&b.json(&[]), "done"), "VERIFYING");
}

#[test]
fn human_board_has_aligned_columns_and_marks_main() {
    let b = scene();
    b.returned("a-long-slug-name", "close-ok", &[("src/a.rs", Some("a\n"))]);
    let (blk, _) = b.agent("b", &[("src/b.rs", Some("b\n"))]);
    StatusDoc::new("b", "blocked").next("x").write(&blk);
    let (code, text) = b.board(&[]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[0].starts_with("STAGE"));
    let column = |line: &str, word: &str| line.find(word).unwrap();
    let path_col = column(lines[0], "WORKTREE");
    let tmp = b.fx.tmp.path().canonicalize().unwrap();
    let tmp = tmp.to_str().unwrap();
    let slug_col = column(lines[0], "SLUG");
    assert!(lines[1].starts_with("RUNNING") && lines[1].ends_with("(main)"));
    assert!(lines[2].starts_with("VERIFYING"));
    assert_eq!(column(lines[2], "a-long-slug-name"), slug_col);
    assert_eq!(column(lines[2], tmp), path_col);
    assert!(lines[3].starts_with("BLOCKED"));
    assert_eq!(column(lines[3], tmp), path_col);
    assert!(!text.contains('\x1b'));
}

/// `board --tree`: clean / dirty / untracked from the close gate's scan, ahead/behind the base,
/// in both formats; plain `board` has no `tree` field at all.
#[test]
fn tree_column_shows_the_working_tree_and_ahead_behind() {
    let b = scene();
    let (clean, _) = b.returned("clean", "close-ok", &[("src/clean.rs", Some("c\n"))]);
    let (dirty, _) = b.agent("dirty", &[("src/dirty.rs", Some("d\n"))]);
    std::fs::write(dirty.join("src/dirty.rs"), "changed\n").unwrap();
    std::fs::write(dirty.join("notes.txt"), "n\n").unwrap();
    let (untracked, _) = b.agent("untracked", &[("src/u.rs", Some("u\n"))]);
    std::fs::create_dir_all(untracked.join("new/deeper")).unwrap();
    std::fs::write(untracked.join("new/deeper/a.txt"), "a\n").unwrap();
    std::fs::write(untracked.join("new/b.txt"), "b\n").unwrap();
    // Two more commits on the branch, and the base one ahead of where `clean` forked.
    b.fx.commit("agent/clean", &[("src/c2.rs", Some("2\n"))], "two");
    b.fx.checkout(&clean);
    b.returned("gone", "close-ok", &[("src/g.rs", Some("g\n"))]);
    b.fx.commit("main", &[("docs/later.md", Some("l\n"))], "base moves on");
    b.fx.checkout(&b.fx.root());
    std::fs::remove_dir_all(b.fx.tmp.path().join("wt/gone")).unwrap();

    let plain = b.json(&[]);
    for row in plain["worktrees"].as_array().unwrap() {
        assert!(
            row.get("tree").is_none(),
            "plain board scans nothing: {row}"
        );
    }
    let board = b.json(&["--tree"]);
    let tree = |slug: &str| row(&board, slug)["tree"].clone();
    assert_eq!(
        tree("clean"),
        serde_json::json!({"status": "clean", "dirty": 0, "untracked": 0, "ahead": 2, "behind": 1}),
        "the status document is exempt, as in the close gate"
    );
    let rows = board["worktrees"].as_array().unwrap();
    let by_branch = |branch: &str| {
        rows.iter()
            .find(|r| r["branch"] == branch)
            .unwrap_or_else(|| panic!("{branch}: {board}"))["tree"]
            .clone()
    };
    let d = by_branch("agent/dirty");
    assert_eq!(
        (
            d["status"].as_str(),
            d["dirty"].as_u64(),
            d["untracked"].as_u64()
        ),
        (Some("dirty"), Some(1), Some(1))
    );
    let u = by_branch("agent/untracked");
    assert_eq!(
        (
            u["status"].as_str(),
            u["dirty"].as_u64(),
            u["untracked"].as_u64()
        ),
        (Some("untracked"), Some(0), Some(2)),
        "files inside untracked folders count one by one"
    );
    assert_eq!(by_branch("agent/gone")["status"], "absent");
    let main = row(&board, "main")["tree"].clone();
    assert_eq!(
        (
            main["status"].as_str(),
            main["ahead"].as_u64(),
            main["behind"].as_u64()
        ),
        (Some("clean"), Some(0), Some(0))
    );
    // The scan agrees with `git status` on each worktree.
    for (wt, status) in [
        (&dirty, "dirty"),
        (&untracked, "untracked"),
        (&clean, "clean"),
    ] {
        let porcelain = crate::fixture::git(wt, &["status", "--porcelain", "-uall"]);
        let lines: Vec<&str> = porcelain
            .lines()
            .filter(|l| !l.ends_with("_EXEC_STATUS.md"))
            .collect();
        let git_says = if lines.iter().any(|l| !l.starts_with("??")) {
            "dirty"
        } else if lines.is_empty() {
            "clean"
        } else {
            "untracked"
        };
        assert_eq!(git_says, status, "{porcelain}");
    }

    let (code, human) = b.board(&["--tree"]);
    assert_eq!(code, 0, "{human}");
    let header = human.lines().next().unwrap();
    let words: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(words[words.len() - 2..], ["TREE", "WORKTREE"], "{header}");
    let line = |needle: &str| {
        human
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle}: {human}"))
    };
    assert!(line("agent/clean").contains("clean +2 -1"), "{human}");
    assert!(
        line("agent/dirty").contains("dirty+untracked +1 -1"),
        "{human}"
    );
    assert!(
        line("agent/untracked").contains("untracked +1 -1"),
        "{human}"
    );
    assert!(line("agent/gone").contains("absent"), "{human}");
    let (_, plain) = b.board(&[]);
    let header: Vec<&str> = plain.lines().next().unwrap().split_whitespace().collect();
    assert!(!header.contains(&"TREE"), "{plain}");
}
