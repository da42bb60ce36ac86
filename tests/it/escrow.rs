//! Nothing is ever gone (SPEC §24, §7 `--force`): the escrow every teardown writes, `restore`,
//! `gc` of old escrows, and processes working inside a worktree (`teardown-busy`, `--reap`).
//!
//! Attacks tried here (an agent that wants its worktree gone without a trace, or kept busy):
//! an escrow ref planted to make an orphan commit look reached; `--force` over a dirty tracked
//! file; a file written after the escrow; a process started inside the worktree; restore over an
//! existing path; a branch moved after the teardown.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use git2::Oid;
use serde_json::Value;

use crate::fixture::{Fixture, T0, closegate, git, git_output, parts};
use crate::teardown::{Scene, agent, audit};

const FAST: [&str; 2] = ["--no-checks", "--allow-unverified"];

/// Every entry under `dir` but `.git`: a file as `mode:sha1-of-bytes`, a link as `link:target`.
pub fn disk(dir: &Path) -> BTreeMap<String, String> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git")
        .map(|e| e.unwrap())
        .filter(|e| e.depth() > 0 && !e.file_type().is_dir())
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
            let meta = e.path().symlink_metadata().unwrap();
            let what = if meta.file_type().is_symlink() {
                format!("link:{}", std::fs::read_link(e.path()).unwrap().display())
            } else {
                let bytes = std::fs::read(e.path()).unwrap();
                let id = Oid::hash_object(git2::ObjectType::Blob, &bytes).unwrap();
                format!("{:o}:{id}", meta.permissions().mode() & 0o111)
            };
            (rel, what)
        })
        .collect()
}

fn porcelain(wt: &Path) -> String {
    git(
        wt,
        &["status", "--porcelain", "-z", "--untracked-files=all"],
    )
}

fn teardown(wt: &Path, root: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["teardown", wt.to_str().unwrap()];
    all.extend_from_slice(args);
    parts(&closegate(root, &all))
}

fn escrow_refs(fx: &Fixture) -> Vec<String> {
    let mut names: Vec<String> = fx
        .repo
        .references_glob("refs/closegate/escrow/*")
        .unwrap()
        .names()
        .map(|n| n.unwrap().to_string())
        .collect();
    names.sort();
    names
}

fn last_teardown(fx: &Fixture) -> Value {
    audit(fx)
        .into_iter()
        .rev()
        .find(|r| r["event"] == "teardown")
        .unwrap()
}

/// A commit made on a detached HEAD and left: only the worktree's HEAD reflog holds it.
fn reflog_only_commit(wt: &Path) -> String {
    git(wt, &["checkout", "-q", "--detach"]);
    std::fs::write(wt.join("src/lib.rs"), "pub fn experiment() {}\n").unwrap();
    git(wt, &["commit", "-q", "-a", "-m", "an experiment"]);
    let id = git(wt, &["rev-parse", "HEAD"]).trim().to_string();
    git(wt, &["checkout", "-q", "agent/x"]);
    id
}

#[test]
fn restore_is_exact_after_a_forced_teardown() {
    let s = Scene::honest_return();
    let wt = s.wt.canonicalize().unwrap();
    let lost = reflog_only_commit(&wt);
    s.fx.write(&wt, "notes/deep/er/a.txt", "nested untracked\n");
    s.fx.write(&wt, "notes/b.txt", "another\n");
    s.fx.write(&wt, "run.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(wt.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("src/lib.rs", wt.join("link")).unwrap();
    std::fs::write(wt.join("empty.txt"), "").unwrap();
    std::fs::write(wt.join("new\nline.txt"), "a newline in the name\n").unwrap();
    s.fx.write(&wt, "target/out.o", "ignored build output\n");
    let status = porcelain(&wt);
    let mut files = disk(&wt);
    files.remove("target/out.o");

    // Without --force: refused on both codes, nothing escrowed.
    let (exit, out, _) = teardown(&wt, &s.fx.root(), &FAST);
    assert_eq!(exit, 1, "{out}");
    assert!(out.contains("teardown-untracked") && out.contains("teardown-unreachable-commits"));
    assert!(
        escrow_refs(&s.fx).is_empty(),
        "a refused teardown writes no escrow"
    );

    let mut args = FAST.to_vec();
    args.push("--force");
    let (exit, out, err) = teardown(&wt, &s.fx.root(), &args);
    assert_eq!(exit, 0, "{out}{err}");
    assert!(!wt.exists());
    assert_eq!(escrow_refs(&s.fx), ["refs/closegate/escrow/x/1"]);
    let record = last_teardown(&s.fx);
    assert_eq!(record["escrow"], "refs/closegate/escrow/x/1", "{record}");
    let forced: Vec<&str> = record["forced"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        forced.contains(&"teardown-untracked") && forced.contains(&"teardown-unreachable-commits")
    );
    // The orphan is kept by the escrow.
    let root = s.fx.root();
    let kept = git_output(
        &root,
        &[
            "merge-base",
            "--is-ancestor",
            &lost,
            "refs/closegate/escrow/x/1",
        ],
    );
    assert!(
        kept.status.success(),
        "the reflog commit is reachable from the escrow"
    );

    let (exit, out, err) = parts(&closegate(&root, &["restore", "x"]));
    assert_eq!(exit, 0, "{out}{err}");
    assert!(out.contains("branch agent/x"), "{out}");
    assert_eq!(porcelain(&wt), status, "untracked files untracked again");
    assert_eq!(disk(&wt), files, "every byte, mode and link back");
    assert!(
        !wt.join("target/out.o").exists(),
        "ignored files are not escrowed"
    );
    assert_eq!(
        git(&wt, &["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/agent/x"
    );
    let kept = git_output(&root, &["cat-file", "-e", &format!("{lost}^{{commit}}")]);
    assert!(kept.status.success());
}

#[test]
fn a_clean_teardown_escrow_is_one_small_commit_named_in_the_record() {
    let s = Scene::honest_return();
    let wt = s.wt.canonicalize().unwrap();
    let doc = std::fs::read(wt.join("_EXEC_STATUS.md")).unwrap();
    let (exit, out, err) = teardown(&wt, &s.fx.root(), &[]);
    assert_eq!(exit, 0, "{out}{err}");
    assert!(out.contains("escrowed"), "{out}");
    let record = last_teardown(&s.fx);
    let refname = record["escrow"].as_str().unwrap();
    let id = s.fx.repo.refname_to_id(refname).unwrap();
    assert_eq!(record["escrow_commit"], id.to_string());
    let commit = s.fx.repo.find_commit(id).unwrap();
    assert_eq!(commit.parent_ids().collect::<Vec<_>>(), [s.tip]);
    let msg = commit.message().unwrap();
    assert!(
        msg.contains(&format!("worktree: {}", wt.display())),
        "{msg}"
    );
    assert!(msg.contains("branch: agent/x"), "{msg}");
    assert!(
        msg.contains(&format!("ts: {}", record["ts"].as_str().unwrap())),
        "{msg}"
    );
    // The tree: HEAD's own plus the status document.
    let tree = commit.tree().unwrap();
    let head = s.fx.repo.find_commit(s.tip).unwrap().tree().unwrap();
    let diff =
        s.fx.repo
            .diff_tree_to_tree(Some(&head), Some(&tree), None)
            .unwrap();
    let changed: Vec<String> = diff
        .deltas()
        .map(|d| d.new_file().path().unwrap().display().to_string())
        .collect();
    assert_eq!(changed, ["_EXEC_STATUS.md"]);
    let blob = tree.get_path(Path::new("_EXEC_STATUS.md")).unwrap().id();
    assert_eq!(s.fx.repo.find_blob(blob).unwrap().content(), doc.as_slice());
}

#[test]
fn force_never_overrides_a_dirty_tracked_file_and_refusal_writes_no_escrow() {
    let s = Scene::honest_return();
    let wt = s.wt.canonicalize().unwrap();
    s.fx.write(&wt, "src/lib.rs", "pub fn changed() {}\n");
    s.fx.write(&wt, "scratch.txt", "untracked\n");
    let mut args = FAST.to_vec();
    args.push("--force");
    let (exit, out, _) = teardown(&wt, &s.fx.root(), &args);
    assert_eq!(exit, 1, "{out}");
    assert!(out.contains("teardown-dirty"), "{out}");
    assert!(wt.join("scratch.txt").exists() && wt.join("src/lib.rs").exists());
    assert!(escrow_refs(&s.fx).is_empty(), "{:?}", escrow_refs(&s.fx));
    // A dry run under --force names the escrow it would write and writes none.
    git(&wt, &["checkout", "--", "src/lib.rs"]);
    args.push("--dry-run");
    let (exit, out, _) = teardown(&wt, &s.fx.root(), &args);
    assert_eq!(exit, 0, "{out}");
    assert!(
        out.contains("would escrow") && out.contains("refs/closegate/escrow/x/"),
        "{out}"
    );
    assert!(escrow_refs(&s.fx).is_empty());
}

#[test]
fn a_planted_escrow_ref_never_makes_an_orphan_commit_reached() {
    let s = Scene::honest_return();
    let wt = s.wt.canonicalize().unwrap();
    let lost = reflog_only_commit(&wt);
    let id = Oid::from_str(&lost).unwrap();
    s.fx.repo
        .reference("refs/closegate/escrow/x/7", id, false, "planted")
        .unwrap();
    let (exit, out, _) = teardown(&wt, &s.fx.root(), &FAST);
    assert_eq!(exit, 1, "{out}");
    assert!(out.contains("teardown-unreachable-commits"), "{out}");
    assert!(out.contains(&lost), "{out}");
    assert!(wt.exists());
}

#[test]
fn restore_never_writes_over_an_existing_path() {
    let s = Scene::honest_return();
    let wt = s.wt.canonicalize().unwrap();
    let (exit, out, err) = teardown(&wt, &s.fx.root(), &FAST);
    assert_eq!(exit, 0, "{out}{err}");
    std::fs::create_dir_all(&wt).unwrap();
    std::fs::write(wt.join("mine.txt"), "someone else's\n").unwrap();
    let (exit, out, err) = parts(&closegate(&s.fx.root(), &["restore", "x"]));
    assert_eq!(exit, 1, "{out}{err}");
    assert!(out.contains("restore refused"), "{out}");
    assert_eq!(std::fs::read_dir(&wt).unwrap().count(), 1);
    // At another PATH it is restored.
    let other = s.fx.tmp.path().join("elsewhere");
    let (exit, out, err) = parts(&closegate(
        &s.fx.root(),
        &[
            "restore",
            "refs/closegate/escrow/x/1",
            other.to_str().unwrap(),
        ],
    ));
    assert_eq!(exit, 0, "{out}{err}");
    assert!(other.join("_EXEC_STATUS.md").is_file() && other.join("src/lib.rs").is_file());
    // Unknown escrows are an error naming the input.
    let (exit, _, err) = parts(&closegate(&s.fx.root(), &["restore", "nope"]));
    assert_eq!(exit, 2);
    assert!(err.contains("nope"), "{err}");
}

#[test]
fn restore_recreates_a_deleted_branch_and_detaches_from_a_moved_one() {
    let s = Scene::honest_return();
    let wt = s.wt.canonicalize().unwrap();
    let root = s.fx.root();
    let (exit, out, err) = teardown(&wt, &root, &FAST);
    assert_eq!(exit, 0, "{out}{err}");
    git(&root, &["branch", "-D", "agent/x"]);
    let (exit, out, err) = parts(&closegate(&root, &["restore", "x"]));
    assert_eq!(exit, 0, "{out}{err}");
    assert!(out.contains("re-created"), "{out}");
    assert_eq!(
        s.fx.repo.refname_to_id("refs/heads/agent/x").unwrap(),
        s.tip
    );
    assert_eq!(
        git(&wt, &["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/agent/x"
    );

    // Torn down again (escrow 2), then the branch moves on: restore detaches and says so.
    let (exit, out, err) = teardown(&wt, &root, &FAST);
    assert_eq!(exit, 0, "{out}{err}");
    assert!(escrow_refs(&s.fx).contains(&"refs/closegate/escrow/x/2".to_string()));
    let moved =
        s.fx.commit("agent/x", &[("more.txt", Some("more\n"))], "more");
    let (exit, out, err) = parts(&closegate(&root, &["restore", "x"]));
    assert_eq!(exit, 0, "{out}{err}");
    assert!(out.contains("detached") && out.contains("moved"), "{out}");
    assert_eq!(git(&wt, &["rev-parse", "HEAD"]).trim(), s.tip.to_string());
    assert_eq!(
        s.fx.repo.refname_to_id("refs/heads/agent/x").unwrap(),
        moved
    );
}

#[test]
fn gc_drops_escrows_older_than_escrow_days() {
    let s = Scene::honest_return();
    let wt = s.wt.canonicalize().unwrap();
    let root = s.fx.root();
    let (exit, out, err) = teardown(&wt, &root, &FAST);
    assert_eq!(exit, 0, "{out}{err}");
    // An escrow made long ago (a fixture commit's time is T0, in 2023).
    let old = s.fx.commit(
        "old-escrow",
        &[("a.txt", Some("a\n"))],
        "closegate escrow of old\n\nworktree: /gone\nbranch: agent/old\nhead: 0000000000000000000000000000000000000001\nts: 2023-11-14T22:13:20Z\n",
    );
    const { assert!(T0 < 1_800_000_000) };
    s.fx.repo
        .reference("refs/closegate/escrow/old/1", old, false, "old")
        .unwrap();
    let (exit, out, err) = parts(&closegate(&root, &["gc", "--dry-run"]));
    assert_eq!(exit, 0, "{out}{err}");
    assert!(
        out.contains("would drop: escrow refs/closegate/escrow/old/1"),
        "{out}"
    );
    assert_eq!(escrow_refs(&s.fx).len(), 2);
    let (exit, out, _) = parts(&closegate(&root, &["gc"]));
    assert_eq!(exit, 0, "{out}");
    assert_eq!(escrow_refs(&s.fx), ["refs/closegate/escrow/x/1"], "{out}");
    // escrow_days = 0 on the base drops them all.
    let config = format!("escrow_days = 0\n{}", crate::teardown::PASSING_CONFIG);
    s.fx.commit("main", &[(".closegate.toml", Some(&config))], "no escrows");
    let (exit, out, _) = parts(&closegate(&root, &["gc"]));
    assert_eq!(exit, 0, "{out}");
    assert!(escrow_refs(&s.fx).is_empty(), "{out}");
}

fn spawn_in(cwd: &Path, script: &str) -> Child {
    Command::new("sh")
        .args(["-c", script])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn a_process_inside_the_worktree_refuses_and_reap_ends_it() {
    let s = Scene::honest_return();
    let wt = s.wt.canonicalize().unwrap();
    let mut sleeper = spawn_in(&wt, "exec sleep 120");
    let pid = sleeper.id().to_string();
    let (exit, out, _) = teardown(&wt, &s.fx.root(), &FAST);
    assert_eq!(exit, 1, "{out}");
    assert!(out.contains("teardown-busy") && out.contains(&pid), "{out}");
    assert!(escrow_refs(&s.fx).is_empty());

    let mut args = FAST.to_vec();
    args.push("--reap");
    let (exit, out, err) = teardown(&wt, &s.fx.root(), &args);
    assert_eq!(exit, 0, "{out}{err}");
    assert!(out.contains("ended") && out.contains(&pid), "{out}");
    let status = sleeper.wait().unwrap();
    assert!(!status.success(), "ended by a signal");
    assert!(!wt.exists());
    let record = last_teardown(&s.fx);
    assert_eq!(record["reaped"][0]["pid"].to_string(), pid, "{record}");
    assert_eq!(record["reaped"][0]["signal"], "SIGTERM");
}

#[test]
fn a_process_holding_a_file_open_inside_is_found_and_one_ignoring_sigterm_is_killed() {
    let s = Scene::honest_return();
    let wt = s.wt.canonicalize().unwrap();
    let outside = s.fx.tmp.path().to_path_buf();
    let file = wt.join("src/lib.rs");
    let script = format!(
        "trap '' TERM; exec 3<'{}'; while :; do sleep 1; done",
        file.display()
    );
    let mut holder = spawn_in(&outside, &script);
    let pid = holder.id().to_string();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let (exit, out, _) = teardown(&wt, &s.fx.root(), &FAST);
    assert_eq!(exit, 1, "{out}");
    assert!(out.contains("teardown-busy") && out.contains(&pid), "{out}");
    assert!(out.contains("open file"), "{out}");
    let mut args = FAST.to_vec();
    args.push("--reap");
    let (exit, out, err) = teardown(&wt, &s.fx.root(), &args);
    assert_eq!(exit, 0, "{out}{err}");
    holder.wait().unwrap();
    let record = last_teardown(&s.fx);
    assert_eq!(record["reaped"][0]["signal"], "SIGKILL", "{record}");
}

#[test]
fn closegate_started_inside_the_worktree_is_exempt_and_named() {
    let s = Scene::honest_return();
    let wt = s.wt.canonicalize().unwrap();
    let (exit, out, err) = parts(&closegate(
        &wt,
        &["teardown", "--no-checks", "--allow-unverified"],
    ));
    assert_eq!(exit, 0, "{out}{err}");
    // Exempt, and named in a warning: the code `teardown-busy` at severity warning.
    assert!(out.contains("teardown-busy"), "{out}");
    assert!(out.contains("it is exempt"), "{out}");
}

#[test]
fn a_file_written_after_the_escrow_is_never_removed_unescrowed() {
    // The escrow is taken, then (paused at the record) the agent writes another untracked file:
    // the last probe finds a file the escrow does not hold, so nothing is removed and the escrow
    // of the refused teardown is dropped.
    let s = Scene::honest_return();
    let wt = s.wt.canonicalize().unwrap();
    s.fx.write(&wt, "scratch.txt", "escrowed\n");
    let sync = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
    cmd.args([
        "teardown",
        wt.to_str().unwrap(),
        "--no-checks",
        "--allow-unverified",
        "--force",
    ])
    .current_dir(s.fx.root());
    crate::fixture::hermetic(&mut cmd, &s.fx.root());
    cmd.env("CLOSEGATE_TEST_FAILPOINT", "pause:record")
        .env("CLOSEGATE_TEST_FAILPOINT_DIR", sync.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    let paused = sync.path().join("paused");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !paused.exists() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(paused.exists(), "never paused");
    std::fs::write(wt.join("late.txt"), "written after the escrow\n").unwrap();
    std::fs::write(wt.join("scratch.txt"), "changed after the escrow\n").unwrap();
    std::fs::write(sync.path().join("go"), "").unwrap();
    let out = child.wait_with_output().unwrap();
    let (exit, out, err) = parts(&out);
    assert_eq!(exit, 1, "{out}{err}");
    assert!(
        out.contains("late.txt") && out.contains("scratch.txt"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("late.txt")).unwrap(),
        "written after the escrow\n"
    );
    assert!(escrow_refs(&s.fx).is_empty(), "{:?}", escrow_refs(&s.fx));
}

#[test]
fn two_agents_escrows_are_numbered_per_slug() {
    let fx = Fixture::new();
    fx.commit(
        "main",
        &[(".closegate.toml", Some(crate::teardown::PASSING_CONFIG))],
        "configure",
    );
    fx.checkout(&fx.root());
    for slug in ["a", "b"] {
        let (wt, _) = agent(&fx, slug, "close-ok");
        let (exit, out, err) = teardown(&wt.canonicalize().unwrap(), &fx.root(), &FAST);
        assert_eq!(exit, 0, "{out}{err}");
    }
    assert_eq!(
        escrow_refs(&fx),
        ["refs/closegate/escrow/a/1", "refs/closegate/escrow/b/1"]
    );
}

#[test]
fn a_forced_teardown_killed_after_the_rename_is_finished_for_what_its_escrow_holds() {
    let s = Scene::honest_return();
    let wt = s.wt.canonicalize().unwrap();
    s.fx.write(&wt, "scratch/notes.txt", "escrowed before the kill\n");
    // Steps: escrow 1, archive 2, record 3, rename aside 4; 5 is the first after the rename.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
    cmd.args([
        "teardown",
        wt.to_str().unwrap(),
        "--no-checks",
        "--allow-unverified",
        "--force",
    ])
    .current_dir(s.fx.root());
    crate::fixture::hermetic(&mut cmd, &s.fx.root());
    cmd.env("CLOSEGATE_TEST_FAILPOINT", "kill:5");
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), None, "killed by the failpoint");
    assert!(!wt.exists());
    let elsewhere = tempfile::tempdir().unwrap();
    let (exit, out, err) = teardown(&wt, elsewhere.path(), &[]);
    assert_eq!(exit, 0, "{out}{err}");
    assert_eq!(escrow_refs(&s.fx), ["refs/closegate/escrow/x/1"]);
    let (exit, out, err) = parts(&closegate(&s.fx.root(), &["restore", "x"]));
    assert_eq!(exit, 0, "{out}{err}");
    assert_eq!(
        std::fs::read_to_string(wt.join("scratch/notes.txt")).unwrap(),
        "escrowed before the kill\n"
    );
}
