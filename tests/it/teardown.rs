//! `closegate teardown` against real repositories (SPEC §7): every refusal code from a scenario,
//! nothing lost after a refusal, the removal, the archive, the branch, and a removal that stops
//! midway and is finished by running it again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use git2::Oid;
use serde_json::Value;

use crate::fixture::{Fixture, closegate, git, git_output, parts};

pub use crate::scene::{PASSING_CONFIG, Scene, agent, write_status};

pub fn audit(fx: &Fixture) -> Vec<Value> {
    let path = fx.git_dir().join("closegate/audit.jsonl");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every file under `dir` (the `.git` file aside) with its bytes, ignored files included.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file() && e.depth() > 0)
        .filter(|e| !e.path().strip_prefix(dir).unwrap().starts_with(".git"))
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
            (rel, std::fs::read(e.path()).unwrap())
        })
        .collect()
}

fn registered(fx: &Fixture, wt: &Path) -> bool {
    let list = git(&fx.root(), &["worktree", "list", "--porcelain"]);
    let want = format!(
        "worktree {}",
        wt.canonicalize().unwrap_or(wt.to_path_buf()).display()
    );
    list.lines().any(|l| l == want)
}

/// Run a teardown that must be refused with `code`: exit 1, the code named, every byte and the
/// registration and the branch still there.
fn assert_refused(s: &Scene, args: &[&str], code: &str) -> String {
    let before = snapshot(&s.wt);
    let tip = s.fx.repo.refname_to_id("refs/heads/agent/x").ok();
    let (exit, out, err) = s.teardown(args);
    assert_eq!(
        exit, 1,
        "teardown must refuse with {code}\nstdout: {out}\nstderr: {err}"
    );
    assert!(out.contains(code), "{code} not named:\n{out}");
    assert!(out.contains("teardown refused"), "{out}");
    assert_eq!(
        snapshot(&s.wt),
        before,
        "a refused teardown changed the worktree"
    );
    assert!(
        registered(&s.fx, &s.wt),
        "the worktree is no longer registered"
    );
    assert_eq!(s.fx.repo.refname_to_id("refs/heads/agent/x").ok(), tip);
    let last = s.audit().pop().unwrap();
    assert_eq!(last["event"], "teardown");
    assert_eq!(last["removed"], false);
    assert!(last["codes"].as_array().unwrap().iter().any(|c| c == code));
    out
}

#[test]
fn verified_worktree_is_removed_with_its_ignored_files_and_the_document_archived() {
    let s = Scene::honest_return();
    s.fx.write(&s.wt, "target/debug/out.o", "build output\n");
    let doc = std::fs::read(s.wt.join("_EXEC_STATUS.md")).unwrap();
    let admin = s.fx.git_dir().join("worktrees/x");
    let wt = s.wt.canonicalize().unwrap();
    let (exit, out, err) = s.teardown(&[]);
    assert_eq!(exit, 0, "stdout: {out}\nstderr: {err}");
    assert!(out.starts_with("VERIFIED"), "{out}");
    assert!(out.contains("teardown done"), "{out}");
    assert!(!s.wt.exists(), "the worktree directory is still there");
    assert!(!admin.exists(), "the administrative data is still there");
    assert!(!registered(&s.fx, &wt));
    assert!(
        s.fx.repo.find_reference("refs/heads/agent/x").is_ok(),
        "the branch is kept"
    );
    assert!(
        out.contains("kept") && out.contains("branch agent/x"),
        "{out}"
    );
    let archive =
        s.fx.git_dir()
            .join(format!("closegate/records/x/{}.md", s.tip));
    assert_eq!(
        std::fs::read(&archive).unwrap(),
        doc,
        "the archive is the document"
    );
    assert!(out.contains(&archive.display().to_string()), "{out}");
    let records = s.audit();
    let events: Vec<&str> = records
        .iter()
        .map(|r| r["event"].as_str().unwrap())
        .collect();
    assert_eq!(events, ["check", "teardown"]);
    let teardown = &records[1];
    assert_eq!(teardown["removed"], true);
    assert_eq!(teardown["verdict"], "VERIFIED");
    assert_eq!(teardown["admission"], "verified");
    assert_eq!(teardown["commit"], s.tip.to_string());
    assert_eq!(teardown["slug"], "x");
    assert_eq!(teardown["artifacts"][0]["path"], "src/lib.rs");
    assert_eq!(teardown["deleted"]["branch"], Value::Null);
    assert!(teardown["ts"].as_str().unwrap().ends_with('Z'));
    let aside = recorded_aside(&records);
    assert!(
        aside
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(".x.closegate-removing-"),
        "{}",
        aside.display()
    );
    assert!(!aside.exists());
    assert!(!crate::teardown_safety::breadcrumb(&aside).exists());
}

/// The aside directory the last teardown record that began a removal names.
pub fn recorded_aside(records: &[Value]) -> PathBuf {
    let record = records
        .iter()
        .rev()
        .find(|r| r["event"] == "teardown" && r["removed"] == true && r["aside"].is_string())
        .expect("a teardown record naming its aside directory");
    PathBuf::from(record["aside"].as_str().unwrap())
}

#[test]
fn dry_run_changes_nothing_and_records_nothing() {
    let s = Scene::honest_return();
    let before = snapshot(&s.wt);
    let (exit, out, _) = s.teardown(&["--dry-run", "--delete-branch"]);
    assert_eq!(
        exit, 1,
        "unmerged branch with --delete-branch is refused: {out}"
    );
    let (exit, out, _) = s.teardown(&["--dry-run"]);
    assert_eq!(exit, 0, "{out}");
    assert!(
        out.contains("would remove") && out.contains("would archive"),
        "{out}"
    );
    assert_eq!(snapshot(&s.wt), before);
    assert!(registered(&s.fx, &s.wt));
    assert!(s.audit().is_empty(), "a dry run records nothing");
    assert!(!s.fx.git_dir().join("closegate/records").exists());
}

#[test]
fn dirty_worktree_is_refused_with_the_gates_findings() {
    let s = Scene::honest_return();
    s.fx.write(&s.wt, "src/lib.rs", "pub fn x() { uncommitted() }\n");
    let out = assert_refused(&s, &[], "teardown-dirty");
    assert!(
        out.contains("close-worktree-dirty"),
        "the gate's findings too:\n{out}"
    );
    // SPEC §21: a refused teardown is headed REFUSED with the reasons' codes; the work itself
    // failed here (the close gate refuses the dirty worktree), so its report says FAIL below.
    assert!(
        out.starts_with("REFUSED  close-worktree-dirty, teardown-dirty"),
        "{out}"
    );
    assert!(out.lines().any(|l| l.starts_with("FAIL  x")), "{out}");
}

#[test]
fn untracked_files_are_named_one_by_one() {
    let s = Scene::honest_return();
    s.fx.write(&s.wt, "notes/a.txt", "a\n");
    s.fx.write(&s.wt, "notes/deep/b.txt", "b\n");
    s.fx.write(&s.wt, "target/ignored.o", "ignored\n");
    let out = assert_refused(&s, &[], "teardown-untracked");
    assert!(
        out.contains("notes/a.txt") && out.contains("notes/deep/b.txt"),
        "{out}"
    );
    assert!(
        !out.contains("ignored.o"),
        "ignored files are not untracked:\n{out}"
    );
    let last = s.audit().pop().unwrap();
    let untracked = last["codes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| *c == "teardown-untracked");
    assert_eq!(untracked.count(), 2);
}

#[test]
fn locked_worktree_is_refused() {
    let s = Scene::honest_return();
    git(
        &s.fx.root(),
        &[
            "worktree",
            "lock",
            "--reason",
            "on a usb stick",
            s.wt.to_str().unwrap(),
        ],
    );
    let out = assert_refused(&s, &[], "teardown-locked");
    assert!(out.contains("on a usb stick"), "{out}");
}

#[test]
fn main_worktree_is_refused() {
    let s = Scene::honest_return();
    let root = s.fx.root();
    let before = snapshot(&root);
    let (exit, out, err) = parts(&closegate(&root, &["teardown", root.to_str().unwrap()]));
    assert_eq!(exit, 1, "{out}{err}");
    assert!(out.contains("teardown-main-worktree"), "{out}");
    assert_eq!(snapshot(&root).len(), before.len());
    assert!(root.join(".git").is_dir());
}

#[test]
fn unmerged_branch_is_refused_with_delete_branch_and_kept() {
    let s = Scene::honest_return();
    let out = assert_refused(&s, &["--delete-branch"], "teardown-unmerged");
    assert!(out.contains("agent/x"), "{out}");
}

#[test]
fn operation_in_progress_is_refused() {
    let s = Scene::honest_return();
    git(&s.wt, &["bisect", "start"]);
    let out = assert_refused(&s, &[], "teardown-operation-in-progress");
    assert!(out.contains("bisect"), "{out}");
}

#[test]
fn hidden_changes_are_refused_by_content_not_stat() {
    let s = Scene::honest_return();
    git(&s.wt, &["update-index", "--skip-worktree", "src/lib.rs"]);
    git(&s.wt, &["update-index", "--assume-unchanged", "README.md"]);
    // Same content, new mtime: not a change.
    std::fs::write(s.wt.join("README.md"), "hello\n").unwrap();
    let (exit, out, err) = s.teardown(&["--dry-run"]);
    assert_eq!(exit, 0, "same bytes are no hidden change:\n{out}{err}");
    s.fx.write(&s.wt, "src/lib.rs", "pub fn x() { hidden() }\n");
    s.fx.write(&s.wt, "README.md", "hidden too\n");
    let out = assert_refused(&s, &[], "teardown-hidden-changes");
    assert!(
        out.contains("skip-worktree") && out.contains("assume-unchanged"),
        "{out}"
    );
    assert!(
        !out.contains("close-worktree-dirty"),
        "git status hides them:\n{out}"
    );
}

#[test]
fn nested_repository_in_an_ignored_place_is_refused() {
    let s = Scene::honest_return();
    let nested = s.wt.join("target/vendor");
    std::fs::create_dir_all(&nested).unwrap();
    git(&nested, &["init", "-q"]);
    s.fx.write(&nested, "own.txt", "history of its own\n");
    git(&nested, &["add", "own.txt"]);
    git(&nested, &["commit", "-q", "-m", "own"]);
    let out = assert_refused(&s, &[], "teardown-nested-repo");
    assert!(out.contains("target/vendor"), "{out}");
}

#[test]
fn submodule_with_changes_of_its_own_is_refused() {
    let s = Scene::honest_return();
    let lib = s.fx.tmp.path().join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    git(&lib, &["init", "-q", "-b", "main"]);
    s.fx.write(&lib, "lib.txt", "lib\n");
    git(&lib, &["add", "lib.txt"]);
    git(&lib, &["commit", "-q", "-m", "lib"]);
    let lib_s = lib.to_str().unwrap();
    git(
        &s.wt,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            lib_s,
            "vendor/lib",
        ],
    );
    git(&s.wt, &["commit", "-q", "-m", "add x"]);
    let head = git(&s.wt, &["rev-parse", "HEAD"]);
    let head = Oid::from_str(head.trim()).unwrap();
    write_status(&s.wt, "x", "close-ok", head, "add x");
    // `.gitmodules` is always protected (SPEC §4.5): a human approves it first.
    let wt_s = s.wt.to_str().unwrap();
    let (exit, out, err) = parts(&closegate(
        &s.fx.root(),
        &["approve", wt_s, "--by", "tester"],
    ));
    assert_eq!(exit, 0, "{out}{err}");
    let (exit, out, err) = s.teardown(&["--dry-run"]);
    assert_eq!(exit, 0, "a clean submodule loses nothing:\n{out}{err}");
    s.fx.write(
        &s.wt,
        "vendor/lib/lib.txt",
        "changed inside the submodule\n",
    );
    let out = assert_refused(&s, &[], "teardown-nested-repo");
    assert!(out.contains("vendor/lib"), "{out}");
}

#[test]
fn head_moved_after_the_status_is_refused_and_the_branch_kept() {
    let s = Scene::honest_return();
    s.fx.commit(
        "agent/x",
        &[("src/more.rs", Some("more\n"))],
        "more after the status",
    );
    s.fx.checkout(&s.wt);
    let out = assert_refused(&s, &["--delete-branch"], "teardown-moved");
    assert!(out.contains("close-commit-not-tip"), "{out}");
}

#[test]
fn trailing_status_only_commit_is_not_moved() {
    let s = Scene::honest_return();
    let text = std::fs::read_to_string(s.wt.join("_EXEC_STATUS.md")).unwrap();
    s.fx.commit("agent/x", &[("_EXEC_STATUS.md", Some(&text))], "status");
    s.fx.checkout(&s.wt);
    let (exit, out, err) = s.teardown(&[]);
    assert_eq!(exit, 0, "{out}{err}");
    assert!(!s.wt.exists());
}

#[test]
fn squash_merged_branch_is_deleted() {
    let s = Scene::honest_return();
    s.fx.commit(
        "main",
        &[("src/lib.rs", Some("pub fn x() {}\n"))],
        "squash: add x",
    );
    let (exit, out, err) = s.teardown(&["--delete-branch"]);
    assert_eq!(exit, 0, "{out}{err}");
    assert!(
        out.contains("deleted") && out.contains("branch agent/x"),
        "{out}"
    );
    assert!(
        s.fx.repo.find_reference("refs/heads/agent/x").is_err(),
        "branch still there"
    );
    let last = s.audit().pop().unwrap();
    assert_eq!(last["deleted"]["branch"], "agent/x");
    assert_eq!(last["deleted"]["branch_tip"], s.tip.to_string());
}

/// `git merge --squash agent/x` on `main` (in the main worktree), committed, then a later base
/// commit that changes the same file, so the branch's change no longer applies cleanly.
fn squash_then_change(s: &Scene) {
    let root = s.fx.root();
    git(&root, &["merge", "-q", "--squash", "agent/x"]);
    git(&root, &["commit", "-q", "-m", "squash: add x"]);
    std::fs::write(root.join("src/lib.rs"), "pub fn x() { later() }\n").unwrap();
    git(&root, &["commit", "-q", "-am", "base changes x later"]);
}

#[test]
fn squash_merge_the_base_changed_later_is_not_merged() {
    // SPEC §7: merged by content only when every changed path holds the tip's very blob; the
    // base changed the file again, so the branch's bytes are not all there (no patch ids).
    let s = Scene::honest_return();
    squash_then_change(&s);
    let repo = closegate::repo::Repo::discover(&s.fx.root()).unwrap();
    let main = repo.branch_tip("main").unwrap();
    assert_eq!(
        repo.merged_into(main, s.tip, "_EXEC_STATUS.md").unwrap(),
        closegate::repo::merged::Merged::No
    );
    let out = assert_refused(&s, &["--delete-branch"], "teardown-unmerged");
    assert!(out.contains("agent/x"), "{out}");
    assert_eq!(
        s.fx.repo.refname_to_id("refs/heads/agent/x").unwrap(),
        s.tip
    );
}

#[test]
fn a_branch_with_work_beyond_its_squash_merge_is_still_refused() {
    let s = Scene::honest_return();
    let root = s.fx.root();
    git(&root, &["merge", "-q", "--squash", "agent/x"]);
    git(&root, &["commit", "-q", "-m", "squash: add x"]);
    // The agent went on after the squash merge: that commit is in no base commit.
    let tip = s.fx.commit(
        "agent/x",
        &[("src/more.rs", Some("pub fn more() {}\n"))],
        "add more",
    );
    s.fx.checkout(&s.wt);
    write_status(&s.wt, "x", "close-ok", tip, "add more");
    let repo = closegate::repo::Repo::discover(&s.fx.root()).unwrap();
    let main = repo.branch_tip("main").unwrap();
    assert_eq!(
        repo.merged_into(main, s.tip, "_EXEC_STATUS.md").unwrap(),
        closegate::repo::merged::Merged::SameChanges
    );
    assert_eq!(
        repo.merged_into(main, tip, "_EXEC_STATUS.md").unwrap(),
        closegate::repo::merged::Merged::No
    );
    let out = assert_refused(&s, &["--delete-branch"], "teardown-unmerged");
    assert!(out.contains("agent/x"), "{out}");
    assert_eq!(s.fx.repo.refname_to_id("refs/heads/agent/x").unwrap(), tip);
}

#[test]
fn rebase_merge_is_merged_until_the_base_changes_the_file_again() {
    let s = Scene::honest_return();
    let second = s.fx.commit(
        "agent/x",
        &[("src/lib.rs", Some("pub fn x() {}\npub fn y() {}\n"))],
        "add y",
    );
    let root = s.fx.root();
    // The two commits picked one by one onto the base: the base holds the tip's blobs.
    git(
        &root,
        &["cherry-pick", &s.tip.to_string(), &second.to_string()],
    );
    let repo = closegate::repo::Repo::discover(&root).unwrap();
    let main = repo.branch_tip("main").unwrap();
    assert_eq!(
        repo.merged_into(main, second, "_EXEC_STATUS.md").unwrap(),
        closegate::repo::merged::Merged::SameChanges
    );
    // The base edits the file again: the tip's blob is gone from it, so not merged (SPEC §7).
    std::fs::write(
        root.join("src/lib.rs"),
        "pub fn x() { later() }\npub fn y() {}\n",
    )
    .unwrap();
    git(&root, &["commit", "-q", "-am", "base changes x later"]);
    let main = repo.branch_tip("main").unwrap();
    assert_eq!(
        repo.merged_into(main, second, "_EXEC_STATUS.md").unwrap(),
        closegate::repo::merged::Merged::No
    );
    // Only the first commit picked: the second is truly unmerged.
    let s = Scene::honest_return();
    let second = s.fx.commit(
        "agent/x",
        &[("src/lib.rs", Some("pub fn x() {}\npub fn y() {}\n"))],
        "add y",
    );
    let root = s.fx.root();
    git(&root, &["cherry-pick", &s.tip.to_string()]);
    let repo = closegate::repo::Repo::discover(&root).unwrap();
    let main = repo.branch_tip("main").unwrap();
    assert_eq!(
        repo.merged_into(main, second, "_EXEC_STATUS.md").unwrap(),
        closegate::repo::merged::Merged::No
    );
}

#[test]
fn branch_reachable_from_the_base_is_deleted() {
    let s = Scene::honest_return();
    // Verified, then merged: the passing record keeps the merged work from being "nothing"
    // (SPEC §17 close-no-change: the merge base is now the tip itself).
    let (code, out, _) = parts(&closegate(&s.wt, &["check"]));
    assert_eq!(code, 0, "{out}");
    git(&s.fx.root(), &["merge", "-q", "--no-edit", "agent/x"]);
    let (exit, out, err) = s.teardown(&["--delete-branch"]);
    assert_eq!(exit, 0, "{out}{err}");
    assert!(s.fx.repo.find_reference("refs/heads/agent/x").is_err());
}

#[test]
fn compare_and_delete_keeps_a_branch_that_moved() {
    let s = Scene::honest_return();
    let repo = closegate::repo::Repo::discover(&s.fx.root()).unwrap();
    let moved =
        s.fx.commit("agent/x", &[("src/new.rs", Some("new\n"))], "moved");
    let got = repo.delete_branch_if_at("agent/x", s.tip).unwrap();
    assert_eq!(
        got,
        closegate::repo::safety::BranchDeletion::Moved(Some(moved))
    );
    assert_eq!(
        s.fx.repo.refname_to_id("refs/heads/agent/x").unwrap(),
        moved
    );
    let got = repo.delete_branch_if_at("agent/x", moved).unwrap();
    assert_eq!(got, closegate::repo::safety::BranchDeletion::Deleted);
}

#[test]
fn unverified_needs_allow_unverified_and_is_recorded_as_such() {
    let s = Scene::honest_return_with(None);
    let out = assert_refused(&s, &[], "checks-none");
    assert!(out.contains("--allow-unverified"), "{out}");
    let (exit, out, err) = s.teardown(&["--allow-unverified"]);
    assert_eq!(exit, 0, "{out}{err}");
    assert!(!s.wt.exists());
    let last = s.audit().pop().unwrap();
    assert_eq!(last["verdict"], "UNVERIFIED");
    assert_eq!(last["admission"], "allowed-unverified");
    assert_eq!(last["allow_unverified"], true);
}

#[test]
fn closed_without_merge_is_torn_down_without_a_verdict_of_verified() {
    let fx = Fixture::new();
    let (wt, tip) = agent(&fx, "stop", "closed-without-merge");
    let (exit, out, err) = parts(&closegate(&fx.root(), &["teardown", wt.to_str().unwrap()]));
    assert_eq!(exit, 0, "{out}{err}");
    assert!(!wt.exists());
    let last = audit(&fx).pop().unwrap();
    assert_eq!(last["admission"], "closed-without-merge");
    assert_eq!(last["removed"], true);
    // The removing teardown of a clean closed-without-merge return retires its branch (SPEC §9):
    // it is this branch's passing decision at this tip (SPEC §26.1).
    let repo = closegate::repo::Repo::discover(&fx.root()).unwrap();
    let book = closegate::verdict::Book::read(&fx.git_dir()).unwrap();
    let claim = closegate::verdict::Claim::on_branch("agent/stop", tip);
    let under = closegate::verdict::Under::history();
    let decision = book
        .decision(&repo, &claim, "_EXEC_STATUS.md", &under)
        .unwrap();
    assert!(decision.retires() && !decision.merges(), "{decision:?}");
}

#[test]
fn fail_never_tears_down() {
    let s = Scene::honest_return();
    write_status(&s.wt, "x", "close-ok", s.tip, "another subject");
    let out = assert_refused(&s, &["--allow-unverified"], "close-last-commit-mismatch");
    assert!(out.contains("FAIL"), "{out}");
}

#[test]
fn directory_gone_but_registered_is_pruned_and_a_second_run_is_graceful() {
    let s = Scene::honest_return();
    let wt = s.wt.canonicalize().unwrap();
    std::fs::remove_dir_all(&wt).unwrap();
    assert!(registered(&s.fx, &wt) || git(&s.fx.root(), &["worktree", "list"]).contains("/wt/x"));
    let (exit, out, err) = s.teardown(&[]);
    assert_eq!(exit, 0, "{out}{err}");
    assert!(out.contains("administrative data"), "{out}");
    assert!(!s.fx.git_dir().join("worktrees/x").exists());
    assert!(!git(&s.fx.root(), &["worktree", "list"]).contains("/wt/x"));
    let (exit, out, err) = s.teardown(&[]);
    assert_eq!(exit, 0, "{out}{err}");
    assert!(
        out.contains("nothing to tear down") && out.contains("was torn down at"),
        "{out}"
    );
}

#[test]
fn path_that_never_was_a_worktree_is_an_error() {
    let s = Scene::honest_return();
    let out = closegate(&s.fx.root(), &["teardown", "/nonexistent/closegate/wt"]);
    let (exit, _, err) = parts(&out);
    assert_eq!(exit, 2);
    assert!(
        err.contains("is not a worktree of this repository"),
        "{err}"
    );
}

/// Makes `dir` immutable (`chattr +i`, which stops root too) until dropped.
struct Immutable(PathBuf);

impl Immutable {
    fn set(dir: &Path) -> Option<Immutable> {
        let ok = std::process::Command::new("chattr")
            .arg("+i")
            .arg(dir)
            .output()
            .is_ok_and(|o| o.status.success());
        ok.then(|| Immutable(dir.to_path_buf()))
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .output();
    }
}

#[test]
fn removal_that_stops_midway_reports_what_is_left_and_a_rerun_finishes() {
    let s = Scene::honest_return();
    s.fx.write(&s.wt, "target/stuck/out.o", "build output\n");
    let wt = s.wt.canonicalize().unwrap();
    let Some(mut lock) = Immutable::set(&s.wt.join("target/stuck")) else {
        eprintln!("chattr +i is not available here: the midway failure is not exercised");
        return;
    };
    let (exit, out, err) = s.teardown(&[]);
    assert_eq!(exit, 2, "stdout: {out}\nstderr: {err}");
    assert!(err.contains("stopped midway"), "{err}");
    assert!(out.contains("left") && out.contains("out.o"), "{out}");
    assert!(!wt.exists(), "the worktree was moved aside as a whole");
    let aside = recorded_aside(&s.audit());
    assert!(aside.join("target/stuck/out.o").exists());
    assert!(
        s.fx.git_dir().join("worktrees/x").exists(),
        "the administrative data goes last, so a rerun can probe again"
    );
    let archive =
        s.fx.git_dir()
            .join(format!("closegate/records/x/{}.md", s.tip));
    assert!(archive.exists(), "archived before anything was removed");
    let last = s.audit().pop().unwrap();
    assert_eq!(last["incomplete"], true);
    lock.0 = aside.join("target/stuck"); // it moved aside with the worktree
    drop(lock);
    let (exit, out, err) = s.teardown(&[]);
    assert_eq!(exit, 0, "the re-run finishes: {out}{err}");
    assert!(!aside.exists(), "{out}");
    let last = s.audit().pop().unwrap();
    assert_eq!(last["resumed"], true);
    assert_eq!(last["removed"], true);
}

#[test]
fn not_a_repository_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = git_output(tmp.path(), &["--version"]);
    assert!(out.status.success());
    let (exit, _, err) = parts(&closegate(tmp.path(), &["teardown", "/nonexistent/x"]));
    assert_eq!(exit, 2, "{err}");
}
