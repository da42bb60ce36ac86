//! `closegate land` (SPEC §22) on real repositories: branches that break together, conflicts,
//! a base moved by someone else, two lands at once, every strategy's shape, dry runs, batches
//! with bisection (check runs counted with a probe file), and what follows a landing (board
//! MERGED, teardown with no check, the hook allowing the branch's deletion).

use std::path::{Path, PathBuf};
use std::process::Command;

use git2::Oid;
use serde_json::Value;

use crate::fixture::{git, hermetic, parts};
use crate::scene::Scene;
use crate::teardown::{audit, write_status};

/// Passes unless some file calls `old_name()` while no file defines it: two branches that each
/// pass (one renames the function, one adds a call to the old name) break the base together.
pub fn config(probe: &Path) -> String {
    format!(
        "[[checks]]\nname = \"calls\"\nrun = 'echo run >> \"{p}/runs\"; ! grep -rq \"old_name()\" \"$PWD/src\" || grep -rq \"fn old_name\" \"$PWD/src\"'\ntimeout_s = 60\nwritable = ['{p}']\n",
        p = probe.display()
    )
}

/// A [`Scene`] whose check counts its runs in `probe`.
pub struct Land {
    scene: Scene,
    pub probe: tempfile::TempDir,
}

impl std::ops::Deref for Land {
    type Target = Scene;
    fn deref(&self) -> &Scene {
        &self.scene
    }
}

impl Land {
    pub fn new() -> Land {
        Land::with_prefix("")
    }

    /// A scene whose configuration starts with `prefix` (e.g. `server_checks = "run"`).
    pub fn with_prefix(prefix: &str) -> Land {
        let scene = Scene::new();
        let probe = tempfile::tempdir().unwrap();
        let cfg = format!("{prefix}{}", config(probe.path()));
        let scene = scene.on_main(
            &[
                (".gitignore", Some("target/\n")),
                (".closegate.toml", Some(&cfg)),
                ("src/lib.rs", Some("pub fn old_name() {}\n")),
            ],
            "configure closegate",
        );
        Land { scene, probe }
    }

    /// `agent/<slug>` with one commit of `files`, its worktree and an honest status document.
    pub fn agent(&self, slug: &str, files: &[(&str, Option<&str>)]) -> (PathBuf, Oid) {
        let branch = format!("agent/{slug}");
        let tip = self.fx.commit(&branch, files, &format!("add {slug}"));
        let wt = self.fx.worktree(slug, &branch);
        write_status(&wt, slug, "close-ok", tip, &format!("add {slug}"));
        (wt, tip)
    }

    /// An agent that checked VERIFIED.
    pub fn verified(&self, slug: &str, files: &[(&str, Option<&str>)]) -> (PathBuf, Oid) {
        let (wt, tip) = self.agent(slug, files);
        let (code, out, err) = self.run(&wt, &["check"]);
        assert_eq!(code, 0, "check of {slug}:\n{out}{err}");
        (wt, tip)
    }

    pub fn run_env(
        &self,
        cwd: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> (i32, String, String) {
        let mut cmd = self.bin(cwd, args);
        cmd.envs(env.iter().copied());
        parts(&cmd.output().unwrap())
    }

    /// `land --json ARGS` from the main worktree.
    pub fn land(&self, args: &[&str]) -> (i32, Value) {
        self.land_env(args, &[])
    }

    pub fn land_env(&self, args: &[&str], env: &[(&str, &str)]) -> (i32, Value) {
        let mut all = vec!["land", "--json"];
        all.extend_from_slice(args);
        let (code, out, err) = self.run_env(&self.fx.root(), &all, env);
        let value: Value = serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("no JSON (exit {code}): {e}\n{out}\n{err}"));
        // Every `land --json` reads back as its type and writes the same object (SPEC §1.2).
        let typed: closegate::render::land::LandJson = serde_json::from_value(value.clone())
            .unwrap_or_else(|e| panic!("land --json is not a LandJson: {e}\n{out}"));
        assert_eq!(serde_json::to_value(&typed).unwrap(), value);
        (code, value)
    }

    pub fn main(&self) -> Oid {
        self.fx.repo.refname_to_id("refs/heads/main").unwrap()
    }

    pub fn runs(&self) -> usize {
        std::fs::read_to_string(self.probe.path().join("runs"))
            .unwrap_or_default()
            .lines()
            .count()
    }

    fn file_at(&self, commit: Oid, path: &str) -> Option<String> {
        let tree = self.fx.repo.find_commit(commit).unwrap().tree().unwrap();
        let entry = tree.get_path(Path::new(path)).ok()?;
        let blob = self.fx.repo.find_blob(entry.id()).unwrap();
        Some(String::from_utf8_lossy(blob.content()).into_owned())
    }

    fn branch(&self, name: &str) -> Option<Oid> {
        self.fx
            .repo
            .refname_to_id(&format!("refs/heads/{name}"))
            .ok()
    }
}

fn branch_result<'a>(v: &'a Value, branch: &str) -> &'a Value {
    v["branches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["branch"] == branch)
        .unwrap_or_else(|| panic!("{branch} not in {v:#}"))
}

fn codes(b: &Value) -> Vec<String> {
    b["codes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect()
}

const RENAME: (&str, Option<&str>) = ("src/lib.rs", Some("pub fn new_name() {}\n"));
const CALL: (&str, Option<&str>) = ("src/b.rs", Some("fn b() { old_name() }\n"));

#[test]
fn two_branches_that_pass_alone_and_break_together() {
    let l = Land::new();
    l.verified("rename", &[RENAME]);
    l.verified("call", &[CALL]);
    let (code, v) = l.land(&["agent/rename", "agent/call"]);
    assert_eq!(code, 1, "{v:#}");
    let first = branch_result(&v, "agent/rename");
    assert_eq!(first["outcome"], "landed", "{v:#}");
    let second = branch_result(&v, "agent/call");
    assert_eq!(second["outcome"], "refused");
    assert_eq!(codes(second), ["land-check-failed"]);
    // The base stays where the first put it, and that tree still passes the check.
    let main = l.main();
    assert_eq!(first["composed"], main.to_string());
    assert_eq!(
        l.file_at(main, "src/lib.rs").unwrap(),
        "pub fn new_name() {}\n"
    );
    assert!(l.file_at(main, "src/b.rs").is_none());
    assert!(l.branch("agent/call").is_some(), "a refused branch is kept");
    // The main worktree moved with the base.
    let on_disk = std::fs::read_to_string(l.fx.root().join("src/lib.rs")).unwrap();
    assert_eq!(on_disk, "pub fn new_name() {}\n");
    assert_eq!(git(&l.fx.root(), &["status", "--porcelain"]), "");
}

#[test]
fn a_textual_conflict_changes_nothing() {
    let l = Land::new();
    l.verified(
        "one",
        &[("src/lib.rs", Some("pub fn old_name() { one() }\n"))],
    );
    let (_, two_tip) = l.verified(
        "two",
        &[("src/lib.rs", Some("pub fn old_name() { two() }\n"))],
    );
    let (code, _) = l.land(&["agent/one"]);
    assert_eq!(code, 0);
    let before = l.main();
    let records = audit(&l.fx).len();
    let (code, v) = l.land(&["agent/two"]);
    assert_eq!(code, 1, "{v:#}");
    let two = branch_result(&v, "agent/two");
    assert_eq!(codes(two), ["land-conflict"]);
    assert!(
        two["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("src/lib.rs")
    );
    assert_eq!(l.main(), before);
    assert_eq!(l.branch("agent/two"), Some(two_tip));
    assert_eq!(
        audit(&l.fx).len(),
        records,
        "a refused land records nothing"
    );
    assert_eq!(git(&l.fx.root(), &["status", "--porcelain"]), "");
}

#[test]
fn an_unchecked_or_failed_branch_is_not_verified() {
    let l = Land::new();
    l.agent("unchecked", &[("src/u.rs", Some("fn u() {}\n"))]);
    let before = l.main();
    let (code, v) = l.land(&["agent/unchecked"]);
    assert_eq!(code, 1);
    assert_eq!(
        codes(branch_result(&v, "agent/unchecked")),
        ["land-not-verified"]
    );
    assert_eq!(l.main(), before);
}

#[test]
fn the_base_moved_between_compose_and_move_is_retried_never_lost() {
    let l = Land::new();
    l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let marker = l.probe.path().join("moved");
    // Someone else commits to main once, after land composed and checked.
    let other = format!(
        "test -e '{m}' || {{ touch '{m}'; cd '{root}' && echo other > other.txt && git add other.txt && git -c user.name=o -c user.email=o@e commit -qm other; }}",
        m = marker.display(),
        root = l.fx.root().display()
    );
    let (code, v) = l.land_env(&["agent/x"], &[("CLOSEGATE_TEST_LAND_BEFORE_MOVE", &other)]);
    assert_eq!(code, 0, "{v:#}");
    let main = l.main();
    assert!(
        l.file_at(main, "other.txt").is_some(),
        "the other commit was lost"
    );
    assert!(l.file_at(main, "src/x.rs").is_some());
}

#[test]
fn a_base_that_keeps_moving_is_busy() {
    let l = Land::new();
    l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let other = format!(
        "cd '{root}' && date +%s%N >> busy.txt && git add busy.txt && git -c user.name=o -c user.email=o@e commit -qm busy",
        root = l.fx.root().display()
    );
    let (code, v) = l.land_env(&["agent/x"], &[("CLOSEGATE_TEST_LAND_BEFORE_MOVE", &other)]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(codes(branch_result(&v, "agent/x")), ["land-base-busy"]);
    assert!(l.file_at(l.main(), "src/x.rs").is_none());
}

#[test]
fn two_lands_at_once_both_land_one_after_the_other() {
    let l = Land::new();
    l.verified("a", &[("src/a.rs", Some("fn a() {}\n"))]);
    l.verified("b", &[("src/b2.rs", Some("fn b() {}\n"))]);
    let spawn = |branch: &str| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
        cmd.args(["land", "--json", branch])
            .current_dir(l.fx.root());
        hermetic(&mut cmd, &l.fx.root());
        cmd.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        cmd.spawn().unwrap()
    };
    let (one, two) = (spawn("agent/a"), spawn("agent/b"));
    for child in [one, two] {
        let out = child.wait_with_output().unwrap();
        let (code, stdout, stderr) = parts(&out);
        assert_eq!(code, 0, "{stdout}{stderr}");
    }
    let main = l.main();
    assert!(l.file_at(main, "src/a.rs").is_some());
    assert!(l.file_at(main, "src/b2.rs").is_some());
    let lands: Vec<Value> = audit(&l.fx)
        .into_iter()
        .filter(|r| r["event"] == "land")
        .collect();
    assert_eq!(lands.len(), 2);
    // One after the other: the second composed on the first's result.
    assert_eq!(lands[1]["base_before"], lands[0]["base_after"]);
}

/// A branch with two commits and a trailing commit that adds the status document.
fn two_commits_and_status(l: &Land) -> (PathBuf, Oid, Oid) {
    let first =
        l.fx.commit("agent/s", &[("src/s1.rs", Some("fn s1() {}\n"))], "first s");
    let _ = first;
    let second = l.fx.commit(
        "agent/s",
        &[("src/s2.rs", Some("fn s2() {}\n"))],
        "second s",
    );
    let wt = l.fx.worktree("s", "agent/s");
    write_status(&wt, "s", "close-ok", second, "second s");
    let doc = std::fs::read_to_string(wt.join("_EXEC_STATUS.md")).unwrap();
    let (code, out, err) = l.run(&wt, &["check"]);
    assert_eq!(code, 0, "{out}{err}");
    let tip =
        l.fx.commit("agent/s", &[("_EXEC_STATUS.md", Some(&doc))], "status");
    l.fx.checkout(&wt);
    (wt, second, tip)
}

#[test]
fn every_strategy_has_its_shape_and_no_status_document() {
    for strategy in ["merge", "squash", "rebase", "ff"] {
        let l = Land::new();
        let (_, second, tip) = two_commits_and_status(&l);
        if strategy != "ff" {
            // The base moves first, so only ff is refused below.
            l.fx.commit("main", &[("docs.md", Some("docs\n"))], "docs");
            l.fx.checkout(&l.fx.root());
        }
        let before = l.main();
        let (code, v) = l.land(&["--strategy", strategy, "--keep-branch", "agent/s"]);
        assert_eq!(code, 0, "{strategy}: {v:#}");
        let main = l.main();
        let commit = l.fx.repo.find_commit(main).unwrap();
        assert!(l.file_at(main, "_EXEC_STATUS.md").is_none(), "{strategy}");
        assert!(l.file_at(main, "src/s1.rs").is_some(), "{strategy}");
        assert!(l.file_at(main, "src/s2.rs").is_some(), "{strategy}");
        let parents: Vec<Oid> = commit.parent_ids().collect();
        match strategy {
            "merge" => {
                assert_eq!(parents, [before, second]);
                assert_eq!(
                    commit.summary().unwrap(),
                    "Land s: adds s, proven by the smoke check"
                );
            }
            "squash" => {
                assert_eq!(parents, [before]);
                let msg = commit.message().unwrap();
                assert!(msg.starts_with("Land s: adds s"), "{msg}");
                assert!(msg.contains("first s") && msg.contains("second s"), "{msg}");
            }
            "rebase" => {
                assert_eq!(commit.summary().unwrap(), "second s");
                let parent = l.fx.repo.find_commit(parents[0]).unwrap();
                assert_eq!(parent.summary().unwrap(), "first s");
                assert_eq!(parent.parent_ids().collect::<Vec<_>>(), [before]);
            }
            _ => assert_eq!(main, second, "ff lands the commit before the status commit"),
        }
        let _ = tip;
    }
}

#[test]
fn ff_is_refused_once_the_base_moved() {
    let l = Land::new();
    l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    l.fx.commit("main", &[("docs.md", Some("docs\n"))], "docs");
    l.fx.checkout(&l.fx.root());
    let before = l.main();
    let (code, v) = l.land(&["--strategy", "ff", "agent/x"]);
    assert_eq!(code, 1);
    assert_eq!(codes(branch_result(&v, "agent/x")), ["land-conflict"]);
    assert_eq!(l.main(), before);
}

#[test]
fn dry_run_changes_nothing() {
    let l = Land::new();
    let (wt, tip) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let before = l.main();
    let records = audit(&l.fx).len();
    let (code, v) = l.land(&["--dry-run", "agent/x"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(branch_result(&v, "agent/x")["outcome"], "landed");
    assert_eq!(v["dry_run"], true);
    assert_eq!(l.main(), before);
    assert_eq!(l.branch("agent/x"), Some(tip));
    assert!(wt.exists());
    assert_eq!(audit(&l.fx).len(), records);
    assert_eq!(git(&l.fx.root(), &["status", "--porcelain"]), "");
}

#[test]
fn a_dirty_base_worktree_is_refused_before_anything_moves() {
    let l = Land::new();
    l.verified("x", &[("src/lib.rs", Some("pub fn old_name() { x() }\n"))]);
    std::fs::write(
        l.fx.root().join("src/lib.rs"),
        "pub fn old_name() { mine() }\n",
    )
    .unwrap();
    let before = l.main();
    let (code, v) = l.land(&["agent/x"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(codes(branch_result(&v, "agent/x")), ["land-base-dirty"]);
    assert_eq!(l.main(), before);
    let on_disk = std::fs::read_to_string(l.fx.root().join("src/lib.rs")).unwrap();
    assert_eq!(
        on_disk, "pub fn old_name() { mine() }\n",
        "a user's byte was lost"
    );
}

#[test]
fn a_batch_of_eight_with_one_breaking_is_bisected_within_the_bound() {
    let l = Land::new();
    let mut names = Vec::new();
    for i in 0..8 {
        let slug = format!("b{i}");
        let path = format!("src/f{i}.rs");
        let body = if i == 5 {
            "fn f() { old_name() }\n".to_string()
        } else {
            format!("fn f{i}() {{}}\n")
        };
        l.verified(&slug, &[(&path, Some(&body))]);
        names.push(format!("agent/{slug}"));
    }
    // The renaming branch lands first, so b5 (a call to the old name) breaks the batch.
    l.verified("rename", &[RENAME]);
    let (code, _) = l.land(&["agent/rename"]);
    assert_eq!(code, 0);
    let before = l.runs();
    let mut args = vec!["--batch", "8"];
    args.extend(names.iter().map(String::as_str));
    let (code, v) = l.land(&args);
    assert_eq!(code, 1, "{v:#}");
    let ran = l.runs() - before;
    // SPEC §22: at most 1 + 2·⌈log₂ 8⌉ runs for the batch.
    assert!(ran <= 1 + 2 * 3, "{ran} check runs");
    for (i, name) in names.iter().enumerate() {
        let b = branch_result(&v, name);
        if i == 5 {
            assert_eq!(codes(b), ["land-check-failed"], "{v:#}");
        } else {
            assert_eq!(b["outcome"], "landed", "{name}: {v:#}");
            assert!(l.file_at(l.main(), &format!("src/f{i}.rs")).is_some());
        }
    }
    assert!(l.file_at(l.main(), "src/f5.rs").is_none());
}

#[test]
fn after_land_the_board_shows_merged_teardown_runs_no_check_and_the_hook_allows_deletion() {
    let l = Land::new();
    let (wt, _) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let (code, out, err) = l.run(&l.fx.root(), &["hook", "install"]);
    assert_eq!(code, 0, "{out}{err}");
    l.fx.commit("main", &[("docs.md", Some("docs\n"))], "docs");
    l.fx.checkout(&l.fx.root());
    let (code, v) = l.land(&["--no-teardown", "agent/x"]);
    assert_eq!(code, 0, "{v:#}");
    assert!(wt.exists(), "--no-teardown keeps the worktree");
    let (_, out, _) = l.run(&l.fx.root(), &["board", "--json"]);
    let board: Value = serde_json::from_str(&out).unwrap();
    let row = board["worktrees"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["branch"] == "agent/x")
        .unwrap();
    assert_eq!(row["stage"], "MERGED", "{board:#}");
    let before = l.runs();
    let (code, out, err) = l.run(&l.fx.root(), &["teardown", wt.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(l.runs(), before, "teardown after land ran a check again");
    // The hook lets the landed branch be deleted with plain git.
    let (code, out, err) = parts(&crate::fixture::git_output(
        &l.fx.root(),
        &["branch", "-D", "agent/x"],
    ));
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn land_tears_down_and_deletes_the_branch_by_default() {
    let l = Land::new();
    let (wt, _) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    l.fx.commit("main", &[("docs.md", Some("docs\n"))], "docs");
    l.fx.checkout(&l.fx.root());
    let before = l.runs();
    let (code, v) = l.land(&["agent/x"]);
    assert_eq!(code, 0, "{v:#}");
    assert!(!wt.exists(), "{v:#}");
    assert_eq!(l.branch("agent/x"), None, "{v:#}");
    // The composed tree is new (the base moved): one run there, none in the teardown.
    assert_eq!(l.runs() - before, 1);
    let land = audit(&l.fx)
        .into_iter()
        .find(|r| r["event"] == "land")
        .unwrap();
    for key in [
        "branch",
        "tip",
        "composed",
        "base_before",
        "base_after",
        "strategy",
        "checks",
    ] {
        assert!(!land[key].is_null(), "{key} missing from {land:#}");
    }
}

#[test]
fn a_base_that_has_not_moved_runs_no_check_again() {
    let l = Land::new();
    l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let before = l.runs();
    let (code, v) = l.land(&["agent/x"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(l.runs(), before, "{v:#}");
}

#[test]
fn board_shows_conflict_and_lists_conflicting_pairs() {
    let l = Land::new();
    l.verified(
        "one",
        &[("src/lib.rs", Some("pub fn old_name() { one() }\n"))],
    );
    l.verified(
        "two",
        &[("src/lib.rs", Some("pub fn old_name() { two() }\n"))],
    );
    let (_, out, _) = l.run(&l.fx.root(), &["board", "--conflicts", "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let typed: closegate::render::board::Conflicts = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(
        serde_json::to_value(&typed).unwrap(),
        v,
        "reads back as its type"
    );
    assert_eq!(typed.schema, 1);
    let pairs = v["conflicts"].as_array().unwrap();
    assert_eq!(pairs.len(), 1, "{v:#}");
    assert_eq!(pairs[0]["paths"][0], "src/lib.rs");
    l.fx.commit(
        "main",
        &[("src/lib.rs", Some("pub fn old_name() { base() }\n"))],
        "base edit",
    );
    l.fx.checkout(&l.fx.root());
    let (_, out, _) = l.run(&l.fx.root(), &["board", "--json"]);
    let board: Value = serde_json::from_str(&out).unwrap();
    let stages: Vec<&str> = board["worktrees"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["main"] == false)
        .map(|r| r["stage"].as_str().unwrap())
        .collect();
    assert_eq!(stages, ["CONFLICT", "CONFLICT"], "{board:#}");
}

/// A bare `server.git` cloned from the scene with the server gate installed (`server_checks =
/// "run"`: it runs the checks itself), reachable as `origin` at `url`.
fn server(l: &Land, url_of: impl FnOnce(&Path) -> String) -> PathBuf {
    let tmp = l.fx.tmp.path();
    git(tmp, &["clone", "-q", "--bare", "repo", "server.git"]);
    let bare = tmp.join("server.git");
    let (code, out, err) = l.run(&bare, &["hook", "install", "--server"]);
    assert_eq!(code, 0, "{out}{err}");
    git(&l.fx.root(), &["remote", "add", "origin", &url_of(&bare)]);
    bare
}

fn server_main(bare: &Path) -> String {
    git(bare, &["rev-parse", "refs/heads/main"])
        .trim()
        .to_string()
}

#[test]
fn land_push_over_git_daemon_is_judged_by_the_server_gate_and_accepted() {
    let l = Land::with_prefix("server_checks = \"run\"\n");
    let (wt, _) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    // As in CI, the agent commits its status document in a trailing commit; land leaves it out.
    let doc = std::fs::read_to_string(wt.join("_EXEC_STATUS.md")).unwrap();
    l.fx.commit("agent/x", &[("_EXEC_STATUS.md", Some(&doc))], "status");
    l.fx.checkout(&wt);
    let tmp = l.fx.tmp.path().to_path_buf();
    let daemon = crate::server::Daemon::start(&tmp);
    let port = daemon.port;
    let bare = server(&l, |_| format!("git://127.0.0.1:{port}/server.git"));
    let before = server_main(&bare);
    let local_before = l.main();
    let (code, v) = l.land(&["--push", "origin", "agent/x"]);
    assert_eq!(code, 0, "{v:#}");
    let after = server_main(&bare);
    assert_ne!(after, before);
    assert_eq!(v["base"]["after"], after);
    let composed =
        l.fx.repo
            .find_commit(Oid::from_str(&after).unwrap())
            .unwrap();
    assert_eq!(
        composed.parent_ids().next().unwrap().to_string(),
        before,
        "no force"
    );
    assert!(l.file_at(composed.id(), "src/x.rs").is_some());
    assert!(l.file_at(composed.id(), "_EXEC_STATUS.md").is_none());
    let log = std::fs::read_to_string(bare.join("closegate/audit.jsonl")).unwrap();
    assert!(
        log.contains("\"verdict\":\"VERIFIED\""),
        "the server gate judged it:\n{log}"
    );
    assert_eq!(
        l.main(),
        local_before,
        "--push moves the remote's base, not the local one"
    );
    drop(daemon);
}

#[test]
fn land_push_never_forces_over_a_remote_base_that_moved() {
    let l = Land::with_prefix("server_checks = \"run\"\n");
    l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let bare = server(&l, |bare| format!("file://{}", bare.display()));
    // Someone else pushes to the remote's main every time land is about to push.
    let other = l.fx.tmp.path().join("other");
    git(
        l.fx.tmp.path(),
        &[
            "clone",
            "-q",
            &format!("file://{}", bare.display()),
            "other",
        ],
    );
    let race = format!(
        "cd '{}' && date +%s%N >> other.txt && git add other.txt && git -c user.name=o -c user.email=o@e commit -qm other && git push -q origin HEAD:main",
        other.display()
    );
    let (code, v) = l.land_env(
        &["--push", "origin", "agent/x"],
        &[("CLOSEGATE_TEST_LAND_BEFORE_MOVE", &race)],
    );
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(codes(branch_result(&v, "agent/x")), ["land-base-busy"]);
    // Every one of the other pushes is still on the remote's main: nothing was overwritten.
    let theirs = git(&other, &["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(server_main(&bare), theirs);
}

#[test]
fn a_branch_that_moved_after_its_check_is_not_verified() {
    let l = Land::new();
    let (wt, _) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    // The agent commits more after the VERIFIED check: the new tip has no verdict.
    let more = l.fx.commit(
        "agent/x",
        &[("src/more.rs", Some("fn more() {}\n"))],
        "more",
    );
    l.fx.checkout(&wt);
    let before = l.main();
    let (code, v) = l.land(&["agent/x"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(codes(branch_result(&v, "agent/x")), ["land-not-verified"]);
    assert_eq!(l.main(), before);
    assert_eq!(l.branch("agent/x"), Some(more));
}

#[test]
fn a_branch_that_rewrites_its_own_check_is_not_landed() {
    let l = Land::new();
    // The agent sets the check to `true` on its branch: the configuration is protected, so the
    // verdict is PENDING_REVIEW, and land reads the checks from the base tip anyway.
    let (wt, _) = l.agent(
        "cheat",
        &[
            (
                ".closegate.toml",
                Some("[[checks]]\nname = \"calls\"\nrun = \"true\"\n"),
            ),
            ("src/b.rs", Some("fn b() { old_name() }\n")),
        ],
    );
    let (code, out, err) = l.run(&wt, &["check"]);
    assert_eq!(code, 3, "{out}{err}");
    let before = l.main();
    let (code, v) = l.land(&["agent/cheat"]);
    assert_eq!(code, 1, "{v:#}");
    let b = branch_result(&v, "agent/cheat");
    assert_eq!(codes(b), ["land-not-verified"]);
    assert!(
        b["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("PENDING_REVIEW")
    );
    assert_eq!(l.main(), before);
}

#[test]
fn land_all_takes_every_completed_branch_oldest_verdict_first() {
    let l = Land::new();
    l.verified("first", &[("src/first.rs", Some("fn first() {}\n"))]);
    l.verified("second", &[("src/second.rs", Some("fn second() {}\n"))]);
    l.agent("running", &[("src/running.rs", Some("fn running() {}\n"))]);
    let (code, v) = l.land(&["--all"]);
    assert_eq!(code, 0, "{v:#}");
    let order: Vec<&str> = v["branches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["branch"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["agent/first", "agent/second"]);
    assert!(l.branch("agent/running").is_some());
    let main = l.main();
    assert!(
        l.file_at(main, "src/first.rs").is_some() && l.file_at(main, "src/second.rs").is_some()
    );
}

#[test]
fn an_untracked_file_in_the_base_worktree_the_move_would_overwrite_is_dirty() {
    let l = Land::new();
    l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    std::fs::write(l.fx.root().join("src/x.rs"), "my own notes\n").unwrap();
    let before = l.main();
    let (code, v) = l.land(&["agent/x"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(codes(branch_result(&v, "agent/x")), ["land-base-dirty"]);
    assert_eq!(l.main(), before);
    let on_disk = std::fs::read_to_string(l.fx.root().join("src/x.rs")).unwrap();
    assert_eq!(on_disk, "my own notes\n");
}

#[test]
fn a_change_elsewhere_in_the_base_worktree_moves_along_untouched() {
    let l = Land::new();
    l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    std::fs::write(l.fx.root().join("README.md"), "my edit\n").unwrap();
    let (code, v) = l.land(&["agent/x"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        std::fs::read_to_string(l.fx.root().join("README.md")).unwrap(),
        "my edit\n"
    );
    assert_eq!(
        std::fs::read_to_string(l.fx.root().join("src/x.rs")).unwrap(),
        "fn x() {}\n"
    );
}

#[test]
fn a_teardown_that_refuses_after_the_move_leaves_the_branch_landed() {
    let l = Land::new();
    let (wt, tip) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    std::fs::write(wt.join("notes.txt"), "the agent's untracked notes\n").unwrap();
    let (code, v) = l.land(&["agent/x"]);
    assert_eq!(code, 0, "{v:#}");
    let b = branch_result(&v, "agent/x");
    assert_eq!(b["outcome"], "landed");
    let teardown: Vec<&str> = b["teardown_codes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(teardown.contains(&"teardown-untracked"), "{v:#}");
    assert!(l.file_at(l.main(), "src/x.rs").is_some());
    assert!(wt.join("notes.txt").exists(), "nothing lost");
    assert_eq!(
        l.branch("agent/x"),
        Some(tip),
        "a branch checked out in a live worktree is kept"
    );
}

#[test]
fn keep_branch_removes_the_worktree_and_keeps_the_branch() {
    let l = Land::new();
    let (wt, tip) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let (code, v) = l.land(&["--keep-branch", "agent/x"]);
    assert_eq!(code, 0, "{v:#}");
    assert!(!wt.exists());
    assert_eq!(l.branch("agent/x"), Some(tip));
    let (wt2, tip2) = l.verified("y", &[("src/y.rs", Some("fn y() {}\n"))]);
    let (code, v) = l.land(&["--no-teardown", "agent/y"]);
    assert_eq!(code, 0, "{v:#}");
    assert!(wt2.exists());
    assert_eq!(l.branch("agent/y"), Some(tip2));
}

#[test]
fn a_branch_already_in_the_base_is_skipped() {
    let l = Land::new();
    l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let (code, v) = l.land(&["--no-teardown", "agent/x"]);
    assert_eq!(code, 0, "{v:#}");
    let before = l.main();
    let (code, v) = l.land(&["agent/x"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(branch_result(&v, "agent/x")["outcome"], "skipped");
    assert_eq!(l.main(), before);
}

#[test]
fn a_rejected_branch_is_not_landed() {
    let l = Land::new();
    let (wt, _) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let (code, out, err) = l.run(&wt, &["reject", "--by", "Rita", "--note", "wrong approach"]);
    assert_eq!(code, 0, "{out}{err}");
    let before = l.main();
    let (code, v) = l.land(&["agent/x"]);
    assert_eq!(code, 1, "{v:#}");
    let b = branch_result(&v, "agent/x");
    assert_eq!(codes(b), ["land-not-verified"]);
    assert!(
        b["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("wrong approach")
    );
    assert_eq!(l.main(), before);
}
