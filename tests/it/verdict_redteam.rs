//! Red team of the one verdict (SPEC §26.1, §26.2): an agent that writes refs, objects, the audit
//! log, git config and its worktree, and a careless coordinator, trying to make a verdict cross
//! branches, to make `land` move the base to something that did not pass, or to have an honest
//! flow refused. Each test names its attack; where the behaviour is by design it says so.

use std::path::Path;

use git2::Oid;
use serde_json::Value;

use crate::fixture::git;
use crate::land::Land;
use crate::scene::{Scene, StatusDoc, write_status};
use crate::teardown::audit;

/// The board's row of `branch`.
fn row(l: &Scene, branch: &str) -> Value {
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

fn stage(l: &Scene, branch: &str) -> String {
    row(l, branch)["stage"].as_str().unwrap().to_string()
}

/// One branch's result of `land --json`: outcome and codes.
fn outcome(v: &Value, branch: &str) -> (String, Vec<String>) {
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
    (b["outcome"].as_str().unwrap().to_string(), codes)
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
