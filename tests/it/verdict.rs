//! One verdict, bound to its claim (SPEC §26.1, §26.2), on real repositories: each attack of issue
//! 36 that let a verdict cross branches, and `land` judging with the one gate under the base it
//! moves. Every test names the attack it stands for; each has its honest control beside it.

use std::path::{Path, PathBuf};

use git2::Oid;
use serde_json::Value;

use crate::fixture::{git, git_output, parts};
use crate::land::Land;
use crate::scene::Scene;
use crate::teardown::{audit, write_status};

/// The board's row of `branch`.
/// The board's row of `branch` (the red team's tests read it too).
pub(crate) fn row(l: &Scene, branch: &str) -> Value {
    let (_, out, err) = l.run(&l.fx.root(), &["board", "--json"]);
    let board: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    board["worktrees"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["branch"] == branch)
        .cloned()
        .unwrap_or_else(|| panic!("{branch} not on the board: {board:#}"))
}

pub(crate) fn stage(l: &Scene, branch: &str) -> String {
    row(l, branch)["stage"].as_str().unwrap().to_string()
}

/// One branch's result of `land --json`: outcome, codes and the first finding's message.
pub(crate) fn outcome(v: &Value, branch: &str) -> (String, Vec<String>, String) {
    let b = v["branches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["branch"] == branch)
        .unwrap_or_else(|| panic!("{branch} not in {v:#}"));
    let codes = b["codes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect();
    let message = b["findings"][0]["message"]
        .as_str()
        .unwrap_or("")
        .to_string();
    (b["outcome"].as_str().unwrap().to_string(), codes, message)
}

/// A branch `agent/<slug>` made at `at`, its worktree, and (when `state` is given) a status
/// document naming `at` — an agent that committed nothing of its own.
fn branch_at(l: &Land, slug: &str, at: Oid, state: Option<&str>) -> PathBuf {
    let branch = format!("agent/{slug}");
    let commit = l.fx.repo.find_commit(at).unwrap();
    l.fx.repo.branch(&branch, &commit, false).unwrap();
    let wt = l.fx.worktree(slug, &branch);
    if let Some(state) = state {
        write_status(&wt, slug, state, at, &l.subject(at));
    }
    wt
}

fn check(l: &Land, wt: &Path) -> (i32, Value) {
    l.check_json(wt, &[])
}

fn codes(report: &Value) -> Vec<String> {
    crate::fixture::report_codes(report)
}

/// Attack: an agent that committed nothing claims a feature. Its `close-no-change` FAIL must
/// stand after another branch lands (a `land` record counted for the commit the base moved
/// *from*, turning it VERIFIED and MERGED, and `sweep` archived it).
#[test]
fn an_empty_claim_fails_before_and_after_another_branch_lands() {
    let l = Land::new();
    let fork = l.main();
    let empty = branch_at(&l, "empty", fork, Some("close-ok"));
    let (code, report) = check(&l, &empty);
    assert_eq!(code, 1, "{report:#}");
    assert!(codes(&report).contains(&"close-no-change".to_string()));
    assert_eq!(stage(&l, "agent/empty"), "FAILED");

    // Control: another agent's honest work lands, moving the base from `fork`.
    l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let (code, v) = l.land(&["agent/x"]);
    assert_eq!(code, 0, "{v:#}");
    assert_ne!(l.main(), fork);

    let (code, report) = check(&l, &empty);
    assert_eq!(code, 1, "the empty claim passed after a land: {report:#}");
    assert!(codes(&report).contains(&"close-no-change".to_string()));
    assert_eq!(stage(&l, "agent/empty"), "FAILED", "never MERGED");
    let (code, out, err) = l.run(&l.fx.root(), &["sweep", "--dry-run"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(empty.exists());
    assert!(
        !out.lines()
            .any(|line| line.contains("wt/empty") && line.contains("remove")),
        "sweep would archive the empty claim:\n{out}"
    );
}

/// Attack: agent y's close line names agent x's verified commit. The FAIL it earns is recorded
/// against agent/y (the branch checked), never against agent/x: x stays COMPLETED and landable.
#[test]
fn another_agents_close_line_naming_my_commit_changes_nothing_of_mine() {
    let l = Land::new();
    let (x_wt, x_tip) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let (y_wt, _) = l.agent("y", &[("src/y.rs", Some("fn y() {}\n"))]);
    // y's document claims x's commit, branch and worktree.
    let forged = crate::scene::StatusDoc::complete("y", "close-ok")
        .last_commit(&x_tip.to_string()[..12], &l.subject(x_tip))
        .close(
            &x_tip.to_string()[..12],
            "agent/x",
            &x_wt.canonicalize().unwrap().display().to_string(),
        );
    forged.write(&y_wt);
    let (code, report) = check(&l, &y_wt);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["branch"], "agent/y", "{report:#}");
    let last = audit(&l.fx).pop().unwrap();
    assert_eq!(
        last["branch"], "agent/y",
        "recorded against the checked branch"
    );
    assert_eq!(last["commit"], x_tip.to_string());

    assert_eq!(stage(&l, "agent/x"), "COMPLETED");
    assert_eq!(stage(&l, "agent/y"), "FAILED");
    let (code, v) = l.land(&["--dry-run", "agent/x"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(outcome(&v, "agent/x").0, "landed");
}

/// Attack: a fresh worktree made at a commit another branch verified showed MERGED (and so was
/// swept). It has nothing of its own: RUNNING, before and after that branch lands.
#[test]
fn a_fresh_worktree_at_a_verified_commit_is_running_and_sweep_keeps_it() {
    let l = Land::new();
    let (_, x_tip) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let fresh = branch_at(&l, "fresh", x_tip, None);
    assert_eq!(stage(&l, "agent/fresh"), "RUNNING");
    assert_eq!(row(&l, "agent/fresh")["verdict"], Value::Null);
    let (code, v) = l.land(&["agent/x"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(stage(&l, "agent/fresh"), "RUNNING");
    let (code, out, err) = l.run(&l.fx.root(), &["sweep"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(fresh.exists(), "sweep removed a fresh worktree:\n{out}");
    assert!(l.fx.repo.find_reference("refs/heads/agent/fresh").is_ok());
}

/// Attack (a false refusal): check (VERIFIED) → `git merge --ff-only` → `teardown
/// --delete-branch`, with the status document committed as the trailing status-only commit,
/// was refused `state-not-returned` (the merged document read as inherited).
#[test]
fn verify_then_ff_merge_with_the_document_committed_then_teardown_delete_branch() {
    let l = Land::new();
    let (wt, _) = l.agent("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    git(&wt, &["add", "_EXEC_STATUS.md"]);
    git(&wt, &["commit", "-q", "-m", "status"]);
    let (code, report) = check(&l, &wt);
    assert_eq!(code, 0, "{report:#}");
    git(&l.fx.root(), &["merge", "-q", "--ff-only", "agent/x"]);
    let (code, out, err) = l.run(
        &l.fx.root(),
        &["teardown", wt.to_str().unwrap(), "--delete-branch"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(!wt.exists());
    assert!(l.fx.repo.find_reference("refs/heads/agent/x").is_err());

    // Control: a branch made at the base with the same committed document and no record of its
    // own is still not this agent's claim.
    let doc = std::fs::read(l.fx.root().join("_EXEC_STATUS.md")).unwrap();
    let other = branch_at(&l, "other", l.main(), None);
    std::fs::write(other.join("_EXEC_STATUS.md"), doc).unwrap();
    let (_, report) = check(&l, &other);
    assert!(
        codes(&report).contains(&"state-not-returned".to_string()),
        "{report:#}"
    );
}

/// A PENDING_REVIEW return: a test file edited on a protected surface.
fn pending(l: &Land) -> PathBuf {
    let (wt, _) = l.agent("x", &[("tests/x_test.sh", Some("true\n"))]);
    let (code, report) = check(l, &wt);
    assert_eq!(code, 3, "{report:#}");
    wt
}

/// A human's word as `approve` / `reject` records it, with the timestamp given.
fn word(l: &Land, event: &str, commit: Oid, ts: &str) {
    let config = crate::land::config(l.probe.path());
    let config = Oid::hash_object(git2::ObjectType::Blob, config.as_bytes()).unwrap();
    let mut line = serde_json::json!({
        "ts": ts, "event": event, "slug": "x", "branch": "agent/x", "commit": commit.to_string(),
        "contract": null, "config": config.to_string(), "config_source": "base",
        "base_source": "configured",
    });
    if event == "approve" {
        line["by"] = "Ann".into();
        line["verdict"] = "VERIFIED".into();
    } else {
        line["by"] = "Rita".into();
        line["note"] = "redo it".into();
        line["verdict"] = "FAIL".into();
    }
    closegate::record::append(&l.fx.git_dir(), &line).unwrap();
}

/// Attack (a false refusal): approve, reject and approve again within one second ended rejected
/// (timestamps compared). Newest is the log's order. Control: approve then reject in the same
/// second ends rejected.
#[test]
fn approve_reject_approve_in_one_second_ends_approved() {
    let l = Land::new();
    let wt = pending(&l);
    let tip = l.fx.repo.refname_to_id("refs/heads/agent/x").unwrap();
    let ts = "2026-12-03T10:00:00Z";
    word(&l, "approve", tip, ts);
    word(&l, "reject", tip, ts);
    let (code, report) = check(&l, &wt);
    assert_eq!(code, 1, "{report:#}");
    assert!(codes(&report).contains(&"review-rejected".to_string()));
    assert_eq!(stage(&l, "agent/x"), "REJECTED");

    word(&l, "approve", tip, ts);
    let (code, report) = check(&l, &wt);
    assert_eq!(
        code, 0,
        "the newer approval lost to an equal timestamp: {report:#}"
    );
    assert_eq!(report["approval"]["by"], "Ann");
    assert_eq!(stage(&l, "agent/x"), "COMPLETED");
    let (code, v) = l.land(&["--dry-run", "agent/x"]);
    assert_eq!(code, 0, "{v:#}");
}

/// Attack: `land` merged a `closed-without-merge` return (and would `in-progress` or `blocked`
/// ones) on its VERIFIED record. The agent's latest word decides: refused, the state named.
#[test]
fn land_refuses_a_return_whose_latest_word_is_not_a_return_to_merge() {
    for state in ["closed-without-merge", "in-progress", "blocked"] {
        let l = Land::new();
        let (wt, tip) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
        let before = l.main();
        let mut doc = crate::scene::agent_status(&wt, "x", state, tip, &l.subject(tip));
        if state == "blocked" {
            doc = doc.next("the api key");
        }
        doc.write(&wt);
        let (code, v) = l.land(&["agent/x"]);
        assert_eq!(code, 1, "{state}: {v:#}");
        let (outcome, codes, message) = outcome(&v, "agent/x");
        assert_eq!(
            (outcome.as_str(), codes),
            ("refused", vec!["land-not-verified".to_string()])
        );
        assert!(message.contains(state), "{state}: {message}");
        assert_eq!(l.main(), before, "{state}");
    }
}

/// Attack: `land --all` took RUNNING and STOPPED branches. Only COMPLETED ones go.
#[test]
fn land_all_takes_only_completed_branches() {
    let l = Land::new();
    l.verified("done", &[("src/done.rs", Some("fn done() {}\n"))]);
    let (running, tip) = l.verified("running", &[("src/running.rs", Some("fn r() {}\n"))]);
    write_status(&running, "running", "in-progress", tip, &l.subject(tip));
    let (stopped, tip) = l.verified("stopped", &[("src/stopped.rs", Some("fn s() {}\n"))]);
    write_status(
        &stopped,
        "stopped",
        "closed-without-merge",
        tip,
        &l.subject(tip),
    );
    assert_eq!(stage(&l, "agent/running"), "RUNNING");
    assert_eq!(stage(&l, "agent/stopped"), "STOPPED");
    let (code, v) = l.land(&["--all", "--no-teardown"]);
    assert_eq!(code, 0, "{v:#}");
    let landed: Vec<&str> = v["branches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["branch"].as_str().unwrap())
        .collect();
    assert_eq!(landed, ["agent/done"]);
}

/// Attack: a contract added to the base after the verdict was ignored by `land`. The verdict must
/// have been made under the contract that binds the branch now.
#[test]
fn a_contract_added_after_the_verdict_binds_the_branch() {
    let l = Land::new();
    l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let contract = "goal = \"x\"\nscope = [\"docs/**\"]\n";
    l.fx.commit(
        "main",
        &[(".closegate/contracts/x.toml", Some(contract))],
        "contract",
    );
    l.fx.checkout(&l.fx.root());
    let (code, v) = l.land(&["agent/x"]);
    assert_eq!(code, 1, "{v:#}");
    let (outcome, codes, message) = outcome(&v, "agent/x");
    assert_eq!(
        (outcome.as_str(), codes),
        ("refused", vec!["land-not-verified".to_string()])
    );
    assert!(message.contains("contract"), "{message}");
}

/// Attack: a contract-bound branch was admitted on a verdict made on another branch at the same
/// commit. Control: the branch that earned the verdict lands.
#[test]
fn a_verdict_made_on_another_branch_does_not_admit_this_one() {
    let l = Land::new();
    let contract = "goal = \"y\"\nbranch = \"agent/y\"\napproval = \"always\"\n";
    l.fx.commit(
        "main",
        &[(".closegate/contracts/y.toml", Some(contract))],
        "contract for y",
    );
    l.fx.checkout(&l.fx.root());
    let (_, x_tip) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let y = branch_at(&l, "y", x_tip, Some("close-ok"));
    assert!(y.exists());
    let (code, v) = l.land(&["--dry-run", "agent/y"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(outcome(&v, "agent/y").1, ["land-not-verified"]);
    let (code, v) = l.land(&["--dry-run", "agent/x"]);
    assert_eq!(code, 0, "{v:#}");
}

/// The configuration `land` judges under is read after the lock, from the base tip it composes
/// on, again on every retry. Attack: a stricter configuration committed to the base while the
/// composed tree is being checked (the test switch runs between compose and move).
#[test]
fn a_stricter_configuration_committed_during_the_check_is_read_on_the_retry() {
    let l = Land::new();
    l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let before = l.main();
    let stricter = format!(
        "{}\n[protected]\nsrc = [\"src/**\"]\n",
        crate::land::config(l.probe.path())
    );
    let path = l.fx.root().join(".closegate.toml");
    std::fs::write(l.probe.path().join("stricter.toml"), &stricter).unwrap();
    let command = format!(
        "cp '{p}/stricter.toml' '{file}' && git -C '{root}' commit -qam stricter && rm '{p}/stricter.toml'",
        p = l.probe.path().display(),
        file = path.display(),
        root = l.fx.root().display()
    );
    let (code, v) = l.land_env(
        &["agent/x"],
        &[("CLOSEGATE_TEST_LAND_BEFORE_MOVE", &command)],
    );
    assert_eq!(code, 1, "{v:#}");
    let (outcome, codes, _) = outcome(&v, "agent/x");
    assert_eq!(
        (outcome.as_str(), codes),
        ("refused", vec!["land-not-verified".to_string()])
    );
    let now = l.main();
    assert_ne!(now, before, "the stricter configuration was committed");
    let tree = l.fx.repo.find_commit(now).unwrap().tree().unwrap();
    assert!(
        tree.get_path(Path::new("src/x.rs")).is_err(),
        "x landed under the configuration read before the retry"
    );
}

/// The lock wait is bounded (`--wait`), then `land-base-busy`; a second `land` that waited reads
/// the configuration committed meanwhile.
#[test]
fn a_second_land_waits_for_the_lock_then_reads_the_configuration_committed_meanwhile() {
    let l = Land::new();
    l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let lock_path = l.fx.git_dir().join("closegate/land-main.lock");
    std::fs::create_dir_all(lock_path.parent().unwrap()).unwrap();
    let holder = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .unwrap();
    holder.lock().unwrap();
    // Bounded: busy after --wait, nothing moved.
    let before = l.main();
    let (code, v) = l.land(&["--wait", "1s", "agent/x"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(outcome(&v, "agent/x").1, ["land-base-busy"]);
    assert_eq!(l.main(), before);
    // A land that waits; meanwhile the base gets a stricter configuration.
    let mut waiting = l.bin(&l.fx.root(), &["land", "--json", "agent/x"]);
    waiting.stdout(std::process::Stdio::piped());
    let child = waiting.spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let stricter = format!(
        "{}\n[protected]\nsrc = [\"src/**\"]\n",
        crate::land::config(l.probe.path())
    );
    l.fx.commit("main", &[(".closegate.toml", Some(&stricter))], "stricter");
    l.fx.checkout(&l.fx.root());
    drop(holder);
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{v:#}");
    assert_eq!(outcome(&v, "agent/x").1, ["land-not-verified"]);
}

/// `--push`: the configuration is the remote base's. Attack: the remote's base holds a stricter
/// configuration than the local one.
#[test]
fn land_push_judges_under_the_remote_bases_configuration() {
    let l = Land::new();
    l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let bare = l.fx.root().parent().unwrap().join("remote.git");
    git(
        l.fx.root().parent().unwrap(),
        &[
            "clone",
            "-q",
            "--bare",
            l.fx.root().to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
    git(
        &l.fx.root(),
        &["remote", "add", "origin", bare.to_str().unwrap()],
    );
    // The remote's main gets a stricter configuration (someone else pushed it).
    let scratch = l.fx.root().parent().unwrap().join("scratch");
    git(
        l.fx.root().parent().unwrap(),
        &[
            "clone",
            "-q",
            bare.to_str().unwrap(),
            scratch.to_str().unwrap(),
        ],
    );
    let stricter = format!(
        "{}\n[protected]\nsrc = [\"src/**\"]\n",
        crate::land::config(l.probe.path())
    );
    std::fs::write(scratch.join(".closegate.toml"), stricter).unwrap();
    git(&scratch, &["commit", "-qam", "stricter"]);
    git(&scratch, &["push", "-q", "origin", "main"]);
    let remote_before = git(&bare, &["rev-parse", "main"]);
    let (code, v) = l.land(&["--push", "origin", "agent/x"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(outcome(&v, "agent/x").1, ["land-not-verified"]);
    assert_eq!(git(&bare, &["rev-parse", "main"]), remote_before);
}

/// Attack (a false refusal): a branch VERIFIED under `[protected.policy] tests = "integrity"` was
/// refused by `land`'s protected re-check. A verdict made under the policy lands as it is.
#[test]
fn an_integrity_verdict_lands_as_it_is() {
    let l = Land::with_prefix("[protected.policy]\ntests = \"integrity\"\n");
    // The check also runs every test script: the new test fails on the base's code.
    let run_tests = "[[checks]]\nname = \"tests\"\nrun = 'for t in tests/*.sh; do [ -e \"$t\" ] || continue; sh \"$t\" || exit 1; done'\ntimeout_s = 60\n";
    let config = format!(
        "[protected.policy]\ntests = \"integrity\"\n[protected.integrity]\nfail_to_pass = true\n{}{run_tests}",
        crate::land::config(l.probe.path())
    );
    l.fx.commit("main", &[(".closegate.toml", Some(&config))], "tests check");
    l.fx.checkout(&l.fx.root());
    let (wt, _) = l.agent(
        "x",
        &[
            ("src/feature.txt", Some("on\n")),
            ("tests/feature.sh", Some("test -f src/feature.txt\n")),
        ],
    );
    let (code, report) = check(&l, &wt);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(
        report["integrity"]["new_tests_on_base"], "fail",
        "{report:#}"
    );
    l.fx.commit("main", &[("docs.md", Some("docs\n"))], "docs");
    l.fx.checkout(&l.fx.root());
    let (code, v) = l.land(&["agent/x"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(outcome(&v, "agent/x").0, "landed");
}

/// A branch the base already holds by a squash merge is `skipped`, never composed again.
#[test]
fn a_squash_merged_branch_is_skipped() {
    let l = Land::new();
    l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    git(&l.fx.root(), &["merge", "-q", "--squash", "agent/x"]);
    git(&l.fx.root(), &["commit", "-q", "-m", "squash x"]);
    let before = l.main();
    let (code, v) = l.land(&["agent/x"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(outcome(&v, "agent/x").0, "skipped");
    assert_eq!(l.main(), before);
}

/// Commits `land` writes take git's identity: `GIT_AUTHOR_*` and `GIT_COMMITTER_*` first (a CI
/// job's identity was lost to a made-up `closegate@localhost`).
#[test]
fn land_commits_take_the_identity_git_would() {
    let l = Land::new();
    l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    l.fx.commit("main", &[("docs.md", Some("docs\n"))], "docs");
    l.fx.checkout(&l.fx.root());
    let env = [
        ("GIT_AUTHOR_NAME", "CI Author"),
        ("GIT_AUTHOR_EMAIL", "author@ci.example"),
        ("GIT_COMMITTER_NAME", "CI Committer"),
        ("GIT_COMMITTER_EMAIL", "committer@ci.example"),
        ("GIT_COMMITTER_DATE", "@1764752804 +0100"),
    ];
    let (code, v) = l.land_env(&["agent/x"], &env);
    assert_eq!(code, 0, "{v:#}");
    let commit = l.fx.repo.find_commit(l.main()).unwrap();
    assert_eq!(commit.author().name(), Some("CI Author"));
    assert_eq!(commit.author().email(), Some("author@ci.example"));
    assert_eq!(commit.committer().name(), Some("CI Committer"));
    assert_eq!(commit.committer().email(), Some("committer@ci.example"));
    assert_eq!(commit.committer().when().seconds(), 1_764_752_804);
    assert_eq!(commit.committer().when().offset_minutes(), 60);
    // An unreadable date is an error naming the variable, never a made-up time; nothing moves.
    l.verified("y", &[("src/y.rs", Some("fn y() {}\n"))]);
    let before = l.main();
    let (code, out, err) = l.run_env(
        &l.fx.root(),
        &["land", "agent/y"],
        &[("GIT_AUTHOR_DATE", "yesterday-ish")],
    );
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("GIT_AUTHOR_DATE"), "{err}");
    assert_eq!(l.main(), before);
}

/// `land` deletes the branch before the worktree's files, so a large worktree is removed in the
/// background and `land` returns once the base moved and the record is written.
#[test]
fn land_deletes_the_branch_first_and_removes_a_large_worktree_in_the_background() {
    let l = Land::new();
    let (wt, _) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let target = wt.join("target");
    std::fs::create_dir_all(&target).unwrap();
    for i in 0..9000 {
        std::fs::write(target.join(format!("o{i}")), b"x").unwrap();
    }
    let (code, v) = l.land(&["agent/x"]);
    assert_eq!(code, 0, "{v:#}");
    let steps: Vec<String> = v["branches"][0]["teardown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    let deleted = steps
        .iter()
        .position(|s| s.starts_with("deleted branch agent/x"));
    let removing = steps
        .iter()
        .position(|s| s.starts_with("removing worktree"));
    assert!(
        matches!((deleted, removing), (Some(d), Some(r)) if d < r),
        "{steps:#?}"
    );
    assert!(l.fx.repo.find_reference("refs/heads/agent/x").is_err());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while wt.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(!wt.exists(), "the background removal did not finish");
    assert!(audit(&l.fx).iter().any(|r| r["event"] == "land"));
    let _ = git_output(&l.fx.root(), &["worktree", "prune"]);
    let (_, out, _) = parts(&git_output(&l.fx.root(), &["worktree", "list"]));
    assert!(!out.contains("wt/x"), "{out}");
}
