//! Red team of the one verdict (SPEC §26.1, §26.2): an agent that writes refs, objects, the audit
//! log, git config and its worktree, and a careless coordinator, trying to make a verdict cross
//! branches, to make `land` move the base to something that did not pass, or to have an honest
//! flow refused. Each test names its attack; where the behaviour is by design it says so.

use std::path::Path;

use git2::Oid;
use serde_json::Value;

use crate::fixture::{git, git_output, parts};
use crate::land::Land;
use crate::scene::{Scene, StatusDoc, write_status};
use crate::teardown::audit;
use crate::verdict::{row, stage};

/// One branch's result of `land --json`: outcome and codes.
fn outcome(v: &Value, branch: &str) -> (String, Vec<String>) {
    let (outcome, codes, _) = crate::verdict::outcome(v, branch);
    (outcome, codes)
}

fn codes(report: &Value) -> Vec<String> {
    crate::fixture::report_codes(report)
}

fn canonical(p: &Path) -> String {
    p.canonicalize().unwrap().display().to_string()
}

/// A commit on `agent/evil` (made from `main`) carrying `doc` as its status document.
fn evil_commit(l: &Land, doc: &StatusDoc) -> Oid {
    l.fx.commit(
        "agent/evil",
        &[
            ("src/evil.rs", Some("fn evil() {}\n")),
            ("_EXEC_STATUS.md", Some(&doc.render())),
        ],
        "evil",
    )
}

/// Attack: a CI job (or the agent) runs `check --no-worktree --rev <sha>` on agent/evil's commit,
/// whose committed document claims agent/x's verified commit, branch and worktree and lists an
/// artifact that does not exist. The FAIL was recorded against agent/x — the branch the close
/// line names — which became FAILED and unlandable (issue 36's second attack, through `--rev`).
/// The claim of a `--rev <sha>` run belongs to a branch only when that branch holds the commit
/// the document was read from (its tip, or the work a trailing status-only tip stands for).
#[test]
fn a_rev_check_of_another_branchs_commit_records_nothing_against_the_named_branch() {
    let l = Land::new();
    let (x_wt, x_tip) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let x12 = &x_tip.to_string()[..12];
    let forged = StatusDoc::complete("evil", "close-ok")
        .last_commit(x12, &l.subject(x_tip))
        .artifacts(&["no/such/artifact.txt"])
        .close(x12, "agent/x", &canonical(&x_wt));
    let evil = evil_commit(&l, &forged);
    let rev = evil.to_string();
    let (code, report) = l.check_json(&l.fx.root(), &["--no-worktree", "--rev", &rev]);
    assert_eq!(code, 1, "{report:#}");
    assert!(codes(&report).contains(&"artifact-missing".to_string()));
    let last = audit(&l.fx).pop().unwrap();
    assert_ne!(
        last["branch"], "agent/x",
        "recorded against agent/x: {last:#}"
    );

    assert_eq!(stage(&l, "agent/x"), "COMPLETED");
    let (code, v) = l.land(&["--dry-run", "agent/x"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(outcome(&v, "agent/x").0, "landed");

    // Control: `--rev <sha>` of the branch's own tip (its document committed as the trailing
    // status-only commit) is that branch's claim.
    let (y_wt, y_work) = l.agent("y", &[("src/y.rs", Some("fn y() {}\n"))]);
    git(&y_wt, &["add", "_EXEC_STATUS.md"]);
    git(&y_wt, &["commit", "-q", "-m", "status"]);
    let y_tip = l.fx.repo.refname_to_id("refs/heads/agent/y").unwrap();
    let (code, report) = l.check_json(
        &l.fx.root(),
        &["--no-worktree", "--rev", &y_tip.to_string()],
    );
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["branch"], "agent/y");
    assert_eq!(report["commit"], y_work.to_string());
    assert_eq!(stage(&l, "agent/y"), "COMPLETED");
}

/// Attack: a tag spelled like agent/x points at agent/evil's commit (whose document names
/// agent/x's verified commit and a missing artifact); `check --no-worktree --rev agent/x` reads
/// the tag's commit, as git's own lookup order does. The FAIL is no claim of agent/x: the branch
/// named does not hold the commit the document was read from.
#[test]
fn a_tag_spelled_like_a_branch_records_nothing_against_the_branch() {
    let l = Land::new();
    let (x_wt, x_tip) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let x12 = &x_tip.to_string()[..12];
    let forged = StatusDoc::complete("evil", "close-ok")
        .last_commit(x12, &l.subject(x_tip))
        .artifacts(&["no/such/artifact.txt"])
        .close(x12, "agent/x", &canonical(&x_wt));
    let evil = evil_commit(&l, &forged);
    git(&l.fx.root(), &["tag", "agent/x", &evil.to_string()]);
    let (code, report) = l.check_json(&l.fx.root(), &["--no-worktree", "--rev", "agent/x"]);
    assert_eq!(code, 1, "{report:#}");
    assert_ne!(report["branch"], "agent/x", "{report:#}");
    assert_eq!(stage(&l, "agent/x"), "COMPLETED");
}

/// Attack: the same `--rev <sha>` run, with a document that passes: agent/evil's commit claims
/// agent/x's *unchecked* tip under a slug no contract binds. The VERIFIED was recorded for
/// agent/x, so once x's own agent wrote `close-ok` its branch was COMPLETED and landable without
/// its own document (artifacts, slug, contract) ever being checked.
#[test]
fn a_rev_check_of_another_branchs_commit_never_verifies_the_named_branch() {
    let l = Land::new();
    let (x_wt, x_tip) = l.agent("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    write_status(&x_wt, "x", "in-progress", x_tip, &l.subject(x_tip));
    let x12 = &x_tip.to_string()[..12];
    let forged = StatusDoc::complete("anything", "close-ok")
        .last_commit(x12, &l.subject(x_tip))
        .artifacts(&["src/x.rs"])
        .close(x12, "agent/x", &canonical(&x_wt));
    let evil = evil_commit(&l, &forged);
    let (code, report) = l.check_json(&l.fx.root(), &["--no-worktree", "--rev", &evil.to_string()]);
    assert_eq!(code, 0, "the content passes on its merits: {report:#}");
    assert_ne!(report["branch"], "agent/x", "{report:#}");

    write_status(&x_wt, "x", "close-ok", x_tip, &l.subject(x_tip));
    assert_eq!(
        stage(&l, "agent/x"),
        "VERIFYING",
        "x's return was never checked"
    );
    let (code, v) = l.land(&["--dry-run", "agent/x"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(outcome(&v, "agent/x").1, ["land-not-verified"]);
}

/// Attack: git takes `refs/heads/agent/x` as a branch name (the ref `refs/heads/refs/heads/agent/x`).
/// The one query stripped `refs/heads/` from names that were already short, so an agent's branch
/// so named, made at agent/x's verified commit, was judged on agent/x's decisions: its row showed
/// x's verdict and `land` run in its worktree admitted it on them. A branch name is compared as
/// git spells it.
#[test]
fn a_branch_named_like_a_full_ref_of_another_is_another_branch() {
    let l = Land::new();
    let (_, x_tip) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let evil_name = "refs/heads/agent/x";
    l.fx.repo
        .branch(evil_name, &l.fx.repo.find_commit(x_tip).unwrap(), false)
        .unwrap();
    let evil = l.fx.worktree("evil", evil_name);
    let x12 = &x_tip.to_string()[..12];
    StatusDoc::complete("evil", "close-ok")
        .last_commit(x12, &l.subject(x_tip))
        .artifacts(&["src/x.rs"])
        .close(x12, evil_name, &canonical(&evil))
        .write(&evil);
    let evil_row = row(&l, evil_name);
    assert_eq!(evil_row["verdict"], Value::Null, "{evil_row:#}");
    assert_eq!(evil_row["stage"], "VERIFYING", "{evil_row:#}");
    let (code, out, err) = l.run(&evil, &["land", "--json", "--dry-run"]);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(outcome(&v, evil_name).1, ["land-not-verified"]);
    // agent/x itself is untouched.
    assert_eq!(stage(&l, "agent/x"), "COMPLETED");
}

/// A PENDING_REVIEW return under a record key: agent/x edits a test.
fn keyed_pending() -> Scene {
    let config = crate::scene::PASSING_CONFIG;
    let s = Scene::new()
        .on_main(&[(".closegate.toml", Some(config))], "configure closegate")
        .key_init()
        .on_agent(
            &[
                ("src/lib.rs", Some("pub fn x() {}\n")),
                ("tests/x_test.sh", Some("true\n")),
            ],
            "add x test",
        )
        .worktree();
    write_status(&s.wt, "x", "close-ok", s.tip, "add x test");
    let (code, report) = s.check_json(&s.wt, &[]);
    assert_eq!(code, 3, "{report:#}");
    s
}

fn log_lines(s: &Scene) -> Vec<String> {
    let path = s.fx.git_dir().join("closegate/audit.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().map(str::to_string).collect()
}

/// Attack (tier 2, under a record key): the reviewer approved, then rejected; the agent appends
/// a copy of the genuine approval line (its mac verifies: it is the reviewer's own line) to the
/// log. "Newest is the order of the log" made the replayed approval win. A line the log already
/// holds counts once, where it was first written: an agent that can only append cannot change a
/// decision (`log --verify` names the replay as before).
#[test]
fn a_replayed_approval_line_does_not_clear_a_later_rejection() {
    let s = keyed_pending();
    let (code, out, err) = s.run(&s.wt, &["approve", "--by", "Ann", "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    let approval = log_lines(&s).pop().unwrap();
    assert!(approval.contains("\"approve\""), "{approval}");
    let (code, out, err) = s.run(
        &s.wt,
        &["reject", "--by", "Rita", "--note", "redo it", "--yes"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(stage(&s, "agent/x"), "REJECTED");

    // The replay: appended as an agent with write access to the log would.
    use std::io::Write;
    let path = s.fx.git_dir().join("closegate/audit.jsonl");
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    writeln!(log, "{approval}").unwrap();
    drop(log);

    let (code, report) = s.check_json(&s.wt, &[]);
    assert_eq!(code, 1, "the replayed approval won: {report:#}");
    assert!(codes(&report).contains(&"review-rejected".to_string()));
    assert_eq!(stage(&s, "agent/x"), "REJECTED");
    let (code, out, _) = s.run(&s.fx.root(), &["log", "--verify"]);
    assert_eq!(code, 1, "{out}");

    // Control: a genuine approval after the rejection wins.
    let (code, out, err) = s.run(&s.wt, &["approve", "--by", "Ann", "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(stage(&s, "agent/x"), "COMPLETED");
}

/// Attack (a careless coordinator retries a task on its branch): the first agent committed
/// nothing and retired with `closed-without-merge` (torn down, branch kept). A clean retirement
/// is a "passing record" for deleting the branch (SPEC §9), never work that was verified: it
/// made a new worktree on the branch MERGED, and the retry's agent claiming `close-ok` with
/// nothing done was exempt from `close-no-change` (SPEC §17 exempts work that was verified and
/// then merged or landed) and VERIFIED.
#[test]
fn a_closed_without_merge_retirement_attests_no_work() {
    let l = Land::new();
    let fork = l.main();
    let branch = "agent/x";
    l.fx.repo
        .branch(branch, &l.fx.repo.find_commit(fork).unwrap(), false)
        .unwrap();
    let first = l.fx.worktree("x", branch);
    write_status(&first, "x", "closed-without-merge", fork, &l.subject(fork));
    let (code, out, err) = l.run(&l.fx.root(), &["teardown", first.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!first.exists());
    let retirement = audit(&l.fx).pop().unwrap();
    assert_eq!(
        retirement["claimed"], "closed-without-merge",
        "{retirement:#}"
    );

    let retry = l.fx.worktree("x-retry", branch);
    assert_eq!(stage(&l, branch), "RUNNING");
    write_status(&retry, "x", "close-ok", fork, &l.subject(fork));
    let (code, report) = l.check_json(&retry, &[]);
    assert_eq!(code, 1, "nothing done, yet passed: {report:#}");
    assert!(codes(&report).contains(&"close-no-change".to_string()));
    assert_eq!(stage(&l, branch), "FAILED");
}

/// `land --all` takes the oldest verdict first (SPEC §22), and "oldest" is the log's order, never
/// a comparison of timestamps (SPEC §26.1). Attack (a false order): two verdicts written in the
/// same second (as a fast coordinator writes them) were landed in branch-name order.
#[test]
fn land_all_takes_the_oldest_verdict_first_in_log_order() {
    let l = Land::new();
    l.verified("b", &[("src/b.rs", Some("fn b() {}\n"))]);
    l.verified("a", &[("src/a.rs", Some("fn a() {}\n"))]);
    // Both verdicts in the same second, b's written first.
    let path = l.fx.git_dir().join("closegate/audit.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let same: Vec<String> = text
        .lines()
        .map(|line| {
            let mut v: Value = serde_json::from_str(line).unwrap();
            v["ts"] = "2026-11-29T12:00:00Z".into();
            v.to_string()
        })
        .collect();
    std::fs::write(&path, same.join("\n") + "\n").unwrap();
    let (code, v) = l.land(&["--all", "--dry-run"]);
    assert_eq!(code, 0, "{v:#}");
    let order: Vec<&str> = v["branches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["branch"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["agent/b", "agent/a"]);
}

/// Attack (tier 2: the agent writes the common dir): a FIFO planted where `land`'s lock lives
/// made `land` block in `open` for ever, whatever `--wait` said; a symbolic link there had it
/// create and lock a file wherever the link pointed. The lock is opened without following a link
/// and without blocking, and only a regular file is taken: anything else is an error naming it,
/// nothing moves.
#[test]
fn a_land_lock_planted_as_a_fifo_or_a_link_is_an_error_never_a_hang() {
    let l = Land::new();
    l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let before = l.main();
    let lock_path = l.fx.git_dir().join("closegate/land-main.lock");
    std::fs::create_dir_all(lock_path.parent().unwrap()).unwrap();
    let elsewhere = l.fx.tmp.path().join("elsewhere");
    for what in ["fifo", "link"] {
        let _ = std::fs::remove_file(&lock_path);
        if what == "fifo" {
            let status = std::process::Command::new("mkfifo")
                .arg(&lock_path)
                .status()
                .unwrap();
            assert!(status.success());
        } else {
            std::os::unix::fs::symlink(&elsewhere, &lock_path).unwrap();
        }
        let mut child = l
            .bin(&l.fx.root(), &["land", "--json", "--wait", "1s", "agent/x"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                child.kill().unwrap();
                panic!("{what}: land hung on the planted lock");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let out = child.wait_with_output().unwrap();
        let (code, out, err) = parts(&out);
        assert_eq!(code, 2, "{what}: {out}{err}");
        assert!(err.contains("land-main.lock"), "{what}: {err}");
        assert!(
            !elsewhere.exists(),
            "{what}: a file was made where the link points"
        );
        assert_eq!(l.main(), before, "{what}");
    }
}

fn install_hook(l: &Land) {
    let (code, out, err) = l.run(&l.fx.root(), &["hook", "install"]);
    assert_eq!(code, 0, "{out}{err}");
}

/// A false refusal of the hook's `shared_tips` rule: agent/a committed its status document as
/// the trailing status-only commit and was verified (its record names the work commit A, which
/// the status commit stands for); agent/b was made at A for a follow-up task and has nothing of
/// its own yet. Merging agent/a brings in A as b's newest commit: it is a's verified work, so
/// the merge goes through.
#[test]
fn shared_tips_follow_a_status_only_tip_to_the_work_it_stands_for() {
    let l = Land::new();
    let (wt, work) = l.agent("a", &[("src/a.rs", Some("fn a() {}\n"))]);
    git(&wt, &["add", "_EXEC_STATUS.md"]);
    git(&wt, &["commit", "-q", "-m", "status"]);
    let (code, report) = l.check_json(&wt, &[]);
    assert_eq!(code, 0, "{report:#}");
    l.fx.repo
        .branch("agent/b", &l.fx.repo.find_commit(work).unwrap(), false)
        .unwrap();
    install_hook(&l);
    let out = git_output(
        &l.fx.root(),
        &["merge", "-q", "--no-ff", "-m", "a", "agent/a"],
    );
    let (code, out, err) = parts(&out);
    assert_eq!(code, 0, "{out}{err}");
}

/// Attack: agent/typo is verified for slug `typo` (no contract). A contract for the slug `auth`
/// lands on the base (scope `docs/**`); the agent then rewrites its worktree's close-ok document
/// to claim `auth`. The verdict decided (agent/typo, `typo`, commit); the claim now is
/// (agent/typo, `auth`, commit), which was never judged — under `auth`'s contract the work is out
/// of scope. `land` (and the board) must not let the `typo` verdict stand for it.
#[test]
fn a_verdict_for_one_slug_does_not_stand_for_a_document_that_now_claims_another() {
    let l = Land::new();
    let (wt, tip) = l.verified("typo", &[("src/typo.rs", Some("fn typo() {}\n"))]);
    let contract = "goal = \"auth\"\nscope = [\"docs/**\"]\n";
    l.fx.commit(
        "main",
        &[(".closegate/contracts/auth.toml", Some(contract))],
        "contract for auth",
    );
    l.fx.checkout(&l.fx.root());
    // Control: the claim as judged still lands.
    let (code, v) = l.land(&["--dry-run", "agent/typo"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(stage(&l, "agent/typo"), "COMPLETED");

    write_status(&wt, "auth", "close-ok", tip, "add typo");
    let (code, v) = l.land(&["--dry-run", "agent/typo"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(outcome(&v, "agent/typo").1, ["land-not-verified"]);
    assert_ne!(stage(&l, "agent/typo"), "COMPLETED");
    // The git hook agrees with `land --dry-run`: a hand merge of the branch is refused.
    install_hook(&l);
    let before = l.main();
    let out = git_output(
        &l.fx.root(),
        &["merge", "-q", "--no-ff", "-m", "typo", "agent/typo"],
    );
    assert_ne!(out.status.code(), Some(0), "{}", parts(&out).1);
    assert_eq!(l.main(), before);
    // What the gate says of the claim now: the contract refuses it.
    let (code, report) = l.check_json(&wt, &[]);
    assert_eq!(code, 1, "{report:#}");
    assert!(codes(&report).contains(&"contract-out-of-scope".to_string()));
    let (code, v) = l.land(&["--dry-run", "agent/typo"]);
    assert_eq!(code, 1, "{v:#}");
}

/// Attack: agent/x is verified (slug `x`), fast-forward merged and torn down with its branch;
/// the branch name is then reused for another task (slug `y`) from the base, whose tip is x's
/// verified commit. The new agent commits nothing and returns `close-ok` for `y`. History
/// attests x's work for the slug x, never for `y`: the empty claim is `close-no-change` (FAIL),
/// not exempt (SPEC §17, §26.1). Control: the same reuse claiming `x` again is exempt, as SPEC
/// §26.1 words it (a passing record for this branch names its tip).
#[test]
fn a_reused_branch_name_does_not_inherit_the_history_of_another_slug() {
    let l = Land::new();
    let (wt, tip) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    git(&l.fx.root(), &["merge", "-q", "--ff-only", "agent/x"]);
    let (code, out, err) = l.run(
        &l.fx.root(),
        &["teardown", wt.to_str().unwrap(), "--delete-branch"],
    );
    assert_eq!(code, 0, "{out}{err}");
    l.fx.repo
        .branch("agent/x", &l.fx.repo.find_commit(l.main()).unwrap(), false)
        .unwrap();
    assert_eq!(l.main(), tip);
    let again = l.fx.worktree("x-again", "agent/x");
    let sha = &tip.to_string()[..12];
    let claim = |slug: &str| {
        StatusDoc::complete(slug, "close-ok")
            .artifacts(&[])
            .last_commit(sha, "add x")
            .close(sha, "agent/x", &canonical(&again))
    };
    claim("y").write(&again);
    let (code, report) = l.check_json(&again, &[]);
    assert_eq!(code, 1, "{report:#}");
    assert!(
        codes(&report).contains(&"close-no-change".to_string()),
        "{report:#}"
    );
    assert_eq!(stage(&l, "agent/x"), "FAILED");

    claim("x").write(&again);
    let (_, report) = l.check_json(&again, &[]);
    assert!(
        !codes(&report).contains(&"close-no-change".to_string()),
        "{report:#}"
    );
}

/// Attack: agent/x was verified, then its agent went
/// back to work (`in-progress` in its worktree), so nothing of x lands. Another agent, who can
/// write the common git directory, rewrites `worktrees/x/gitdir` to point into a directory it
/// owns (a `.git` file back to the admin directory, and a `close-ok` document). Every reader
/// that finds "the worktree of agent/x" through git's worktree list — `land`'s latest word, the
/// board's row — then reads the forged document: `land` admits x's work against its agent's
/// own word. The authenticated anchor is the decision's record, which names the worktree the
/// claim was checked in: a decision reached in another worktree than the one git lists now is
/// no decision on that worktree's document (`verdict::Claim::read_in`).
#[test]
fn a_forged_worktree_gitdir_cannot_speak_for_the_agent() {
    let l = Land::new();
    let (wt, tip) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    write_status(&wt, "x", "in-progress", tip, "add x");
    let (code, v) = l.land(&["--dry-run", "agent/x"]);
    assert_eq!(code, 1, "{v:#}");

    let admin = l.fx.repo.path().join("worktrees").join("x");
    let forged = l.fx.root().parent().unwrap().join("forged");
    std::fs::create_dir_all(&forged).unwrap();
    std::fs::write(
        forged.join(".git"),
        format!("gitdir: {}\n", admin.display()),
    )
    .unwrap();
    std::fs::write(
        forged.join("_EXEC_STATUS.md"),
        std::fs::read_to_string(wt.join("_EXEC_STATUS.md"))
            .unwrap()
            .replace("state: in-progress", "state: close-ok"),
    )
    .unwrap();
    std::fs::write(
        admin.join("gitdir"),
        format!("{}\n", forged.join(".git").display()),
    )
    .unwrap();

    let (code, v) = l.land(&["--dry-run", "agent/x"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(outcome(&v, "agent/x").1, ["land-not-verified"]);
    assert_ne!(stage(&l, "agent/x"), "COMPLETED");
}

/// Control of the attack above: a worktree moved with `git worktree move` after its verdict is
/// the same case to the record (the verdict was reached in another directory than the one git
/// lists now). `land` refuses, naming both places and the check to run, instead of taking the
/// document there as the one judged; a `--no-worktree` verdict names no worktree and still
/// lands (`a_rev_check_of_another_branchs_commit_records_nothing_against_the_named_branch`).
#[test]
fn a_worktree_moved_after_its_verdict_is_judged_again_before_it_lands() {
    let l = Land::new();
    let (wt, _) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let (code, v) = l.land(&["--dry-run", "agent/x"]);
    assert_eq!(code, 0, "{v:#}");

    let moved = l.fx.root().parent().unwrap().join("moved-x");
    let (from, to) = (wt.display().to_string(), moved.display().to_string());
    git(&l.fx.root(), &["worktree", "move", &from, &to]);
    let (code, v) = l.land(&["--dry-run", "agent/x"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(outcome(&v, "agent/x").1, ["land-not-verified"]);
    let said = v.to_string();
    assert!(
        said.contains("moved since") && said.contains("moved-x"),
        "{v:#}"
    );
    assert_ne!(stage(&l, "agent/x"), "COMPLETED");
}
