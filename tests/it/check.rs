//! `closegate check` against real repositories: every code of SPEC §4.2–§4.6 from a scenario.

use std::path::Path;

use git2::Oid;
use serde_json::Value;

use crate::fixture::{Fixture, REPORT_KEYS, closegate, git, parts, report_codes};
use crate::scene::{Scene, StatusDoc};

const PASSING_CONFIG: &str =
    "[[checks]]\nname = \"smoke\"\nrun = \"test -f src/lib.rs\"\ntimeout_s = 60\n";

/// The check tests' verbs on a scene (`Scene::returned`: `main` carrying the configuration, an
/// `agent/x` branch with one commit and a linked worktree `wt/x` on it).
trait CheckScene {
    fn write_status(&self, sha: &str, branch: &str, worktree: &str);
    fn honest(&self);
    fn check(&self, args: &[&str]) -> (i32, Value);
}

impl CheckScene for Scene {
    /// Write a close-ok status document naming `sha`, `branch` and `worktree`.
    fn write_status(&self, sha: &str, branch: &str, worktree: &str) {
        let subject = self.subject(self.tip);
        let text = status_doc(
            "x",
            "close-ok",
            &format!("{sha} — {subject}"),
            sha,
            branch,
            worktree,
        );
        std::fs::write(self.wt.join("_EXEC_STATUS.md"), text).unwrap();
    }

    /// The honest status document: the tip, the branch, this worktree.
    fn honest(&self) {
        self.write_status(&self.tip.to_string()[..12], "agent/x", &self.wt_str());
    }

    fn check(&self, args: &[&str]) -> (i32, Value) {
        check_in(&self.wt, args)
    }
}

/// A complete document of agent `x`'s work under `slug`: `last_commit` as written, the close line
/// naming `sha` on `branch` in `worktree`.
fn status_doc(
    slug: &str,
    state: &str,
    last_commit: &str,
    sha: &str,
    branch: &str,
    worktree: &str,
) -> String {
    StatusDoc::complete(slug, state)
        .abstract_text("adds x, proven by the smoke check")
        .last_commit_text(last_commit)
        .done("x exists, proven by the smoke check")
        .close(sha, branch, worktree)
        .render()
}

/// Write an honest close-ok status document into `wt` for `tip` on `branch`.
fn write_honest(fx: &Fixture, wt: &Path, slug: &str, tip: Oid, branch: &str) {
    let subject = fx
        .repo
        .find_commit(tip)
        .unwrap()
        .summary()
        .unwrap()
        .to_string();
    let root = wt.canonicalize().unwrap().display().to_string();
    let sha = tip.to_string();
    let last = format!("{} — {subject}", &sha[..12]);
    let text = status_doc(slug, "close-ok", &last, &sha, branch, &root);
    std::fs::write(wt.join("_EXEC_STATUS.md"), text).unwrap();
}

fn check_in(dir: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["check", "--format", "json"];
    all.extend_from_slice(args);
    let out = closegate(dir, &all);
    let (code, stdout, stderr) = parts(&out);
    let value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!("no JSON report (exit {code}): {e}\nstdout: {stdout}\nstderr: {stderr}")
    });
    (code, value)
}

fn codes(report: &Value) -> Vec<String> {
    report_codes(report)
}

fn finding<'a>(report: &'a Value, code: &str) -> &'a Value {
    let all = report["findings"].as_array().unwrap();
    all.iter()
        .find(|f| f["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {:?}", codes(report)))
}

/// Assert the report holds a finding `code`, naming every code it holds otherwise.
fn assert_has(report: &Value, code: &str) {
    assert!(has(report, code), "no {code} in {:?}", codes(report));
}

fn has(report: &Value, code: &str) -> bool {
    codes(report).iter().any(|c| c == code)
}

#[test]
fn honest_return_is_verified_and_mergeable() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.honest();
    let (code, report) = s.check(&[]);
    assert_eq!(codes(&report), Vec::<String>::new());
    assert_eq!(code, 0);
    assert_eq!(report["verdict"], "VERIFIED");
    assert_eq!(report["mergeable"], true);
    assert_eq!(report["commit"], s.tip.to_string());
    assert_eq!(report["branch"], "agent/x");
    assert_eq!(report["base"], "main");
    assert_eq!(report["checks"][0]["name"], "smoke");
    assert_eq!(report["checks"][0]["exit_code"], 0);
    assert_eq!(
        report["artifacts"][0],
        serde_json::json!({"path": "src/lib.rs", "present": true})
    );
}

#[test]
fn report_has_every_schema_field() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.honest();
    let (_, report) = s.check(&["--no-record"]);
    for key in REPORT_KEYS {
        assert!(report.get(key).is_some(), "missing {key}");
    }
    assert_eq!(report["schema"], 1);
    assert!(report["tool"].as_str().unwrap().starts_with("closegate "));
    assert_eq!(report["state"], "close-ok");
    assert!(report["approval"].is_null());
}

#[test]
fn no_checks_configured_is_unverified() {
    let s = Scene::returned(None);
    s.honest();
    let (code, report) = s.check(&[]);
    assert_eq!(codes(&report), ["checks-none"]);
    assert_eq!(code, 4);
    assert_eq!(report["verdict"], "UNVERIFIED");
    assert_eq!(report["mergeable"], false);
}

#[test]
fn no_checks_flag_is_unverified() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.honest();
    let (code, report) = s.check(&["--no-checks"]);
    assert_eq!(codes(&report), ["checks-skipped"]);
    assert_eq!(code, 4);
}

#[test]
fn unknown_commit_is_refused() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.write_status("deadbeefdeadbeef", "agent/x", &s.wt_str());
    let (code, report) = s.check(&[]);
    assert_has(&report, "close-commit-unknown");
    assert_eq!(finding(&report, "close-commit-unknown")["line"], 12);
    assert_eq!(code, 1);
    assert_eq!(report["verdict"], "FAIL");
}

#[test]
fn ambiguous_commit_is_refused() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    // Two blobs whose ids share the 7-digit prefix c67420a (found offline, ids are stable).
    let a = s.fx.repo.blob(b"ambiguous 4523\n").unwrap();
    let b = s.fx.repo.blob(b"ambiguous 14795\n").unwrap();
    assert_eq!(&a.to_string()[..7], &b.to_string()[..7]);
    s.write_status("c67420a", "agent/x", &s.wt_str());
    let (code, report) = s.check(&[]);
    assert_has(&report, "close-commit-ambiguous");
    assert_eq!(code, 1);
}

#[test]
fn unknown_branch_is_refused() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.write_status(&s.tip.to_string(), "agent/nope", &s.wt_str());
    let (_, report) = s.check(&[]);
    assert_has(&report, "close-branch-unknown");
}

#[test]
fn commit_on_another_branch_is_refused() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let other =
        s.fx.commit("agent/other", &[("other.txt", Some("o\n"))], "other work");
    s.write_status(&other.to_string(), "agent/x", &s.wt_str());
    let (_, report) = s.check(&[]);
    assert_has(&report, "close-commit-not-on-branch");
}

#[test]
fn branch_moved_past_the_commit_is_refused() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let stale = s.tip;
    s.fx.commit("agent/x", &[("src/more.rs", Some("more\n"))], "more work");
    s.fx.checkout(&s.wt);
    s.write_status(&stale.to_string(), "agent/x", &s.wt_str());
    let (code, report) = s.check(&[]);
    assert_has(&report, "close-commit-not-tip");
    assert_eq!(code, 1);
}

#[test]
fn one_trailing_status_only_commit_is_accepted() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.honest();
    let text = std::fs::read_to_string(s.wt.join("_EXEC_STATUS.md")).unwrap();
    s.fx.commit("agent/x", &[("_EXEC_STATUS.md", Some(&text))], "status");
    s.fx.checkout(&s.wt);
    let (code, report) = s.check(&[]);
    assert_eq!(codes(&report), Vec::<String>::new());
    assert_eq!(code, 0);
    assert_eq!(
        report["commit"],
        s.tip.to_string(),
        "the verified commit is the one the close line names"
    );
}

#[test]
fn two_trailing_status_commits_are_refused() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.honest();
    let text = std::fs::read_to_string(s.wt.join("_EXEC_STATUS.md")).unwrap();
    s.fx.commit(
        "agent/x",
        &[("_EXEC_STATUS.md", Some("draft\n"))],
        "status draft",
    );
    s.fx.commit("agent/x", &[("_EXEC_STATUS.md", Some(&text))], "status");
    s.fx.checkout(&s.wt);
    let (_, report) = s.check(&[]);
    assert_has(&report, "close-commit-not-tip");
}

#[test]
fn last_commit_naming_another_commit_or_subject_is_refused() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let wt = s.wt_str();
    let sha = s.tip.to_string();
    let text = status_doc(
        "x",
        "close-ok",
        "0123456789ab — add x",
        &sha,
        "agent/x",
        &wt,
    );
    std::fs::write(s.wt.join("_EXEC_STATUS.md"), text).unwrap();
    let (_, report) = s.check(&[]);
    assert_has(&report, "close-last-commit-mismatch");
    assert_eq!(finding(&report, "close-last-commit-mismatch")["line"], 5);

    let text = status_doc(
        "x",
        "close-ok",
        &format!("{} — add y", &sha[..9]),
        &sha,
        "agent/x",
        &wt,
    );
    std::fs::write(s.wt.join("_EXEC_STATUS.md"), text).unwrap();
    let (_, report) = s.check(&[]);
    assert_has(&report, "close-last-commit-mismatch");
}

#[test]
fn path_that_is_no_worktree_is_refused() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let elsewhere = s.fx.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    s.write_status(
        &s.tip.to_string(),
        "agent/x",
        &elsewhere.display().to_string(),
    );
    let (_, report) = s.check(&[]);
    assert_has(&report, "close-worktree-unknown");
}

#[test]
fn close_line_naming_another_worktree_is_refused() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.fx.commit("agent/y", &[("y.txt", Some("y\n"))], "y");
    let other = s.fx.worktree("y", "agent/y");
    s.write_status(&s.tip.to_string(), "agent/x", &other.display().to_string());
    let (_, report) = s.check(&[]);
    assert_has(&report, "close-worktree-mismatch");
}

#[test]
fn worktree_paths_are_compared_canonically() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = Scene::returned(Some(PASSING_CONFIG));
    let link = s.fx.tmp.path().join("link-to-x");
    std::os::unix::fs::symlink(&s.wt, &link).unwrap();
    s.write_status(
        &s.tip.to_string(),
        "agent/x",
        &format!("{}/", link.display()),
    );
    let (code, report) = s.check(&[]);
    assert_eq!(codes(&report), Vec::<String>::new());
    assert_eq!(code, 0);
}

#[test]
fn main_worktree_is_recognised() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let fx = Fixture::new();
    fx.commit(
        "main",
        &[(".closegate.toml", Some(PASSING_CONFIG))],
        "configure",
    );
    let tip = fx.commit("agent/m", &[("src/lib.rs", Some("m\n"))], "add m");
    git(&fx.root(), &["checkout", "-q", "-f", "agent/m"]);
    write_honest(&fx, &fx.root(), "m", tip, "agent/m");
    let (code, report) = check_in(&fx.root(), &[]);
    assert_eq!(codes(&report), Vec::<String>::new());
    assert_eq!(code, 0);
}

#[test]
fn registered_worktree_not_on_this_machine_is_a_gap() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.fx.commit("agent/gone", &[("g.txt", Some("g\n"))], "g");
    let gone = s.fx.worktree("gone", "agent/gone");
    let gone_str = gone.canonicalize().unwrap().display().to_string();
    std::fs::remove_dir_all(&gone).unwrap();
    s.write_status(&s.tip.to_string(), "agent/x", &gone_str);
    let (_, report) = s.check(&[]);
    assert_eq!(finding(&report, "close-worktree-absent")["severity"], "gap");
}

#[test]
fn no_worktree_turns_absent_into_a_warning() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.write_status(
        &s.tip.to_string()[..7],
        "agent/x",
        "/runner/has/no/such/worktree",
    );
    let (code, report) = s.check(&["--no-worktree"]);
    assert_eq!(codes(&report), ["close-worktree-absent"]);
    assert_eq!(
        finding(&report, "close-worktree-absent")["severity"],
        "warning"
    );
    assert_eq!(code, 0);
}

#[test]
fn worktree_on_another_branch_is_refused() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.honest();
    git(&s.wt, &["checkout", "-q", "-b", "agent/side"]);
    let (_, report) = s.check(&[]);
    assert_has(&report, "close-worktree-branch");
}

#[test]
fn dirty_worktree_is_refused_and_untracked_is_a_warning() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.honest();
    s.fx.write(&s.wt, "notes/todo.txt", "later\n");
    let (code, report) = s.check(&[]);
    assert_eq!(codes(&report), ["close-worktree-untracked"]);
    assert!(
        finding(&report, "close-worktree-untracked")["message"]
            .as_str()
            .unwrap()
            .contains("notes/todo.txt")
    );
    assert_eq!(code, 0);

    s.fx.write(&s.wt, "src/lib.rs", "pub fn x() { changed() }\n");
    let (code, report) = s.check(&[]);
    assert_has(&report, "close-worktree-dirty");
    assert!(
        finding(&report, "close-worktree-dirty")["message"]
            .as_str()
            .unwrap()
            .contains("src/lib.rs")
    );
    assert_eq!(code, 1);
}

#[test]
fn staged_change_is_dirty() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.honest();
    s.fx.write(&s.wt, "staged.txt", "s\n");
    git(&s.wt, &["add", "staged.txt"]);
    let (_, report) = s.check(&[]);
    assert_has(&report, "close-worktree-dirty");
}

#[test]
fn in_progress_is_not_returned() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    StatusDoc::new("x", "in-progress")
        .next("finish x")
        .write(&s.wt);
    let (code, report) = s.check(&[]);
    assert_has(&report, "state-not-returned");
    assert_eq!(finding(&report, "state-not-returned")["severity"], "gap");
    assert_eq!(code, 4);
    assert!(
        report["artifacts"].as_array().unwrap().is_empty(),
        "manifest gate skipped"
    );
}

#[test]
fn missing_and_unchanged_artifacts() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    let wt = s.wt_str();
    let sha = s.tip.to_string();
    StatusDoc::complete("x", "close-ok")
        .last_commit(&sha[..12], "add x")
        .artifacts(&["src/lib.rs", "README.md", "docs/", "src/lib.rs/"])
        .close(&sha, "agent/x", &wt)
        .write(&s.wt);
    let (code, report) = s.check(&[]);
    let all = codes(&report);
    assert_eq!(
        all.iter().filter(|c| *c == "artifact-missing").count(),
        2,
        "{all:?}"
    );
    assert_eq!(finding(&report, "artifact-unchanged")["path"], "README.md");
    let artifacts = &report["artifacts"];
    assert_eq!(artifacts[0]["present"], true);
    assert_eq!(artifacts[1]["present"], true);
    assert_eq!(artifacts[2]["present"], false);
    assert_eq!(
        artifacts[3]["present"], false,
        "a trailing slash needs a directory"
    );
    assert_eq!(code, 1);
}

#[test]
fn edited_test_is_pending_review() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.fx.commit(
        "main",
        &[("tests/smoke.rs", Some("assert!(true);\n"))],
        "add test",
    );
    // Rebuild agent/x on top of the new main so the test exists at the merge base.
    let fx = &s.fx;
    let tip = fx.commit(
        "agent/t",
        &[
            ("tests/smoke.rs", Some("// weakened\n")),
            ("src/lib.rs", Some("t\n")),
        ],
        "t",
    );
    let wt = fx.worktree("t", "agent/t");
    write_honest(fx, &wt, "x", tip, "agent/t");
    let (code, report) = check_in(&wt, &[]);
    assert_eq!(codes(&report), ["protected-surface"]);
    assert_eq!(
        report["protected"][0],
        serde_json::json!({"path": "tests/smoke.rs", "surface": "tests", "change": "modified"})
    );
    assert_eq!(code, 3);
    assert_eq!(report["verdict"], "PENDING_REVIEW");
    assert_eq!(report["mergeable"], false);
}

#[test]
fn agent_config_edit_is_flagged_and_ignored() {
    let failing = "[[checks]]\nname = \"gate\"\nrun = \"exit 1\"\n";
    let fx = Fixture::new();
    fx.commit("main", &[(".closegate.toml", Some(failing))], "strict gate");
    // The agent rewrites the configuration on its branch to drop the failing check.
    let tip = fx.commit(
        "agent/c",
        &[
            (".closegate.toml", Some(PASSING_CONFIG)),
            ("src/lib.rs", Some("c\n")),
        ],
        "relax",
    );
    let wt = fx.worktree("c", "agent/c");
    write_honest(&fx, &wt, "c", tip, "agent/c");
    let (code, report) = check_in(&wt, &[]);
    assert!(
        has(&report, "check-failed"),
        "the base's check ran: {:?}",
        codes(&report)
    );
    let hit = &report["protected"][0];
    assert_eq!(hit["path"], ".closegate.toml");
    assert_eq!(hit["surface"], "ci");
    assert_eq!(code, 1);
}

#[test]
fn config_from_worktree_is_never_read() {
    let s = Scene::returned(None);
    s.honest();
    // An untracked configuration in the agent's worktree must not count as configured checks.
    s.fx.write(&s.wt, ".closegate.toml", PASSING_CONFIG);
    let (_, report) = s.check(&[]);
    assert_has(&report, "checks-none");
}

#[test]
fn unresolvable_base_is_a_gap() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.honest();
    let (code, report) = s.check(&["--base", "no-such-branch"]);
    assert_has(&report, "base-unknown");
    assert_eq!(code, 4);
}

#[test]
fn failing_check_is_refused_with_its_output() {
    let config = "[[checks]]\nname = \"unit\"\nrun = \"echo broken; exit 3\"\n";
    let s = Scene::returned(Some(config));
    s.honest();
    let (code, report) = s.check(&[]);
    assert_has(&report, "check-failed");
    assert_eq!(report["checks"][0]["exit_code"], 3);
    assert_eq!(code, 1);
}

#[test]
fn check_past_its_timeout_is_refused() {
    let config = "[[checks]]\nname = \"slow\"\nrun = \"sleep 30\"\ntimeout_s = 1\n";
    let s = Scene::returned(Some(config));
    s.honest();
    let (code, report) = s.check(&[]);
    assert_has(&report, "check-timeout");
    assert_eq!(report["checks"][0]["timed_out"], true);
    assert_eq!(code, 1);
}

#[test]
fn bad_configuration_is_an_error_naming_file_and_key() {
    let s = Scene::returned(Some(
        "[[checks]]\nname = \"x\"\nrun = \"true\"\nbogus = 1\n",
    ));
    s.honest();
    let out = closegate(&s.wt, &["check"]);
    let (code, _, stderr) = parts(&out);
    assert_eq!(code, 2);
    assert!(
        stderr.contains(".closegate.toml") && stderr.contains("bogus"),
        "{stderr}"
    );
}

#[test]
fn not_a_repository_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = closegate(dir.path(), &["check"]);
    let (code, _, stderr) = parts(&out);
    assert_eq!(code, 2);
    assert!(stderr.starts_with("closegate: "), "{stderr}");
}

#[test]
fn rev_reads_the_status_from_a_trailing_commit() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.write_status(&s.tip.to_string(), "agent/x", "/ci/has/no/worktree");
    let text = std::fs::read_to_string(s.wt.join("_EXEC_STATUS.md")).unwrap();
    std::fs::remove_file(s.wt.join("_EXEC_STATUS.md")).unwrap();
    s.fx.commit("agent/x", &[("_EXEC_STATUS.md", Some(&text))], "status");
    let (code, report) = check_in(&s.fx.root(), &["--rev", "agent/x", "--no-worktree"]);
    assert_eq!(codes(&report), ["close-worktree-absent"]);
    assert_eq!(code, 0);
}

#[test]
fn each_check_appends_one_audit_line_unless_no_record() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.honest();
    let log = s.fx.git_dir().join("closegate").join("audit.jsonl");
    s.check(&["--no-record"]);
    assert!(!log.exists() || std::fs::read_to_string(&log).unwrap().is_empty());
    s.check(&[]);
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1);
    let line: Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(line["event"], "check");
    assert_eq!(line["verdict"], "VERIFIED");
    assert_eq!(line["claimed"], "close-ok");
    assert_eq!(line["commit"], s.tip.to_string());
    assert!(line["ts"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn unsupported_repository_extension_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "repo"]);
    let repo = dir.path().join("repo");
    git(&repo, &["config", "core.repositoryformatversion", "1"]);
    git(&repo, &["config", "extensions.refStorage", "reftable"]);
    let out = closegate(&repo, &["check"]);
    let (code, stdout, stderr) = parts(&out);
    assert_eq!(code, 2, "{stdout}");
    assert!(stderr.contains("extensions.refstorage"), "{stderr}");
}

/// SPEC §15: a repository libgit2 cannot open gets exit 2 naming the extension — from the hooks
/// too (SPEC §9: they refuse; git takes exit 2 as a refusal as well).
#[test]
fn the_hooks_answer_exit_2_naming_an_unsupported_extension() {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "repo"]);
    let repo = dir.path().join("repo");
    git(&repo, &["config", "core.repositoryformatversion", "1"]);
    git(&repo, &["config", "extensions.refStorage", "reftable"]);
    let zero = "0".repeat(40);
    let line = format!("{zero} {} refs/heads/agent/x\n", "1".repeat(40));
    for args in [
        &["hook", "run", "reference-transaction", "prepared"][..],
        &["hook", "run", "pre-receive"][..],
    ] {
        let out = crate::fixture::closegate_stdin(&repo, args, Some(line.as_bytes()));
        let (code, _, stderr) = parts(&out);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(
            stderr.contains("extensions.refstorage"),
            "{args:?}: {stderr}"
        );
    }
}

/// SPEC §15: a SHA-256 repository is one libgit2 (as built here) cannot open: exit 2 naming the
/// extension, never a verdict.
#[test]
fn a_sha256_repository_is_an_error_naming_extensions_objectformat() {
    let dir = tempfile::tempdir().unwrap();
    git(
        dir.path(),
        &["init", "-q", "--object-format=sha256", "repo"],
    );
    let out = closegate(&dir.path().join("repo"), &["check", "--no-worktree"]);
    let (code, stdout, stderr) = parts(&out);
    assert_eq!(code, 2, "{stdout}");
    assert!(stderr.contains("extensions.objectformat"), "{stderr}");
}

#[test]
fn in_progress_report_names_the_worktree_branch() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    StatusDoc::new("x", "in-progress")
        .next("finish x")
        .write(&s.wt);
    let (_, report) = s.check(&["--no-checks"]);
    assert_eq!(report["branch"], "agent/x");
    assert_eq!(report["commit"], s.tip.to_string());
}

#[test]
fn ci_merge_gate_in_a_fresh_clone() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    // The README's merge gate: a clone where the agent's worktree does not exist.
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.honest();
    let text = std::fs::read_to_string(s.wt.join("_EXEC_STATUS.md")).unwrap();
    s.fx.commit("agent/x", &[("_EXEC_STATUS.md", Some(&text))], "status");
    std::fs::remove_dir_all(&s.wt).unwrap(); // the runner has no such worktree
    let ci = s.fx.tmp.path().join("ci");
    let origin = s.fx.root().display().to_string();
    git(
        s.fx.tmp.path(),
        &["clone", "-q", &origin, &ci.display().to_string()],
    );
    git(&ci, &["fetch", "-q", "origin", "agent/x:agent/x"]);
    let (code, report) = check_in(
        &ci,
        &["--no-worktree", "--rev", "agent/x", "--base", "main"],
    );
    assert_eq!(codes(&report), ["close-worktree-absent"]);
    assert_eq!(
        finding(&report, "close-worktree-absent")["severity"],
        "warning"
    );
    assert_eq!(report["commit"], s.tip.to_string());
    assert_eq!(code, 0);
}

#[test]
fn a_signal_while_checks_run_kills_them_and_removes_the_checkout() {
    use std::process::{Command, Stdio};
    let tmp = tempfile::tempdir().unwrap();
    let pid_file = tmp.path().join("check.pid");
    // The check may write the pid file only because it lists the directory as `writable`
    // (SPEC §4.6); inside the sandbox `$$` is a pid of the check's own PID namespace, so the
    // check is found on the host by its unique `sleep` argument instead.
    let config = format!(
        "[[checks]]\nname = \"long\"\nrun = \"echo $$ > '{}'; sleep 60.0303\"\n\
         timeout_s = 600\nwritable = ['{}']\n",
        pid_file.display(),
        tmp.path().display()
    );
    let s = Scene::returned(Some(&config));
    s.honest();
    let scratch = tmp.path().join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
    cmd.args(["check", "--no-record"]).current_dir(&s.wt);
    crate::fixture::hermetic(&mut cmd, tmp.path());
    cmd.env("TMPDIR", &scratch)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::read_to_string(&pid_file).map_or(true, |t| t.trim().is_empty()) {
        assert!(std::time::Instant::now() < until, "the check never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SIGTERM to our own child, through kill(1): unsafe code is denied (Cargo.toml [lints]).
    let pid = child.id().to_string();
    let sent = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2), "no verdict was reached");
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted"));
    assert!(
        sleepers_gone_soon("60.0303"),
        "the check outlived closegate"
    );
    let left: Vec<_> = std::fs::read_dir(&scratch).unwrap().collect();
    assert!(
        left.is_empty(),
        "the pristine checkout was left behind: {left:?}"
    );
}

/// SPEC §5: the configuration is the base tip's; an edit of `.closegate.toml` in the checked
/// worktree has no effect, and the report says so (`config-not-from-worktree`, a warning) and
/// names where the configuration came from (`config` blob, human `config:` line).
#[test]
fn config_edited_in_the_worktree_is_named_not_used() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.honest();
    let blob =
        s.fx.repo
            .blob(PASSING_CONFIG.as_bytes())
            .unwrap()
            .to_string();
    let (code, report) = s.check(&["--no-record"]);
    assert_eq!(code, 0, "{:?}", codes(&report));
    assert_eq!(report["config"], blob);
    assert!(!has(&report, "config-not-from-worktree"));

    let gutted = "[[checks]]\nname = \"smoke\"\nrun = \"true\"\n";
    std::fs::write(s.wt.join(".closegate.toml"), gutted).unwrap();
    let (_, report) = s.check(&["--no-record"]);
    let warning = finding(&report, "config-not-from-worktree");
    assert_eq!(warning["severity"], "warning");
    assert_eq!(warning["gate"], "close");
    assert_eq!(warning["path"], ".closegate.toml");
    assert_eq!(
        report["config"], blob,
        "the base tip's configuration was read"
    );
    assert_eq!(report["checks"][0]["command"], "test -f src/lib.rs");

    let out = closegate(&s.wt, &["check", "--no-record"]);
    let (_, stdout, _) = parts(&out);
    let line = format!("config: main:.closegate.toml (blob {})", &blob[..7]);
    assert!(stdout.contains(&line), "{line:?} missing from:\n{stdout}");
}

/// Without a configuration on the base the defaults apply: `config` is null and human output
/// says so; a worktree that adds a `.closegate.toml` is told it has no effect.
#[test]
fn defaults_are_named_and_a_worktree_config_has_no_effect() {
    let s = Scene::returned(None);
    s.honest();
    std::fs::write(s.wt.join(".closegate.toml"), PASSING_CONFIG).unwrap();
    let (code, report) = s.check(&["--no-record"]);
    assert_eq!(code, 4, "no checks configured: {:?}", codes(&report));
    assert!(report["config"].is_null());
    assert_has(&report, "config-not-from-worktree");
    assert_has(&report, "checks-none");
    let out = closegate(&s.wt, &["check", "--no-record"]);
    assert!(parts(&out).1.contains("config: built-in defaults"));
}

/// Whether every process on the host whose command line is exactly `sleep <arg>` is gone (or a
/// zombie) within a few seconds.
fn sleepers_gone_soon(arg: &str) -> bool {
    let want = format!("sleep\0{arg}\0");
    let live = || {
        std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            let dir = e.path();
            let running = std::fs::read_to_string(dir.join("stat")).is_ok_and(|stat| {
                !stat
                    .rsplit_once(')')
                    .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
            });
            running && std::fs::read(dir.join("cmdline")).is_ok_and(|c| c == want.as_bytes())
        })
    };
    let until = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while std::time::Instant::now() < until {
        if !live() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

/// SPEC §15: a mode-only change, or a file turned symlink with the same bytes, is a change. An
/// artifact the branch changed only so is produced by the branch, not `artifact-unchanged` (the
/// protected gate already counted such changes as `modified` / `type-changed`).
#[test]
fn a_mode_only_or_file_to_symlink_change_is_not_an_unchanged_artifact() {
    let mut s = Scene::returned(Some(PASSING_CONFIG));
    git(&s.fx.root(), &["checkout", "-q", "main"]);
    std::fs::write(s.fx.root().join("ptr"), "README.md").unwrap();
    git(&s.fx.root(), &["add", "ptr"]);
    git(&s.fx.root(), &["commit", "-q", "-m", "ptr"]);
    git(&s.wt, &["merge", "-q", "--no-edit", "main"]);
    use std::os::unix::fs::PermissionsExt;
    let readme = s.wt.join("README.md");
    std::fs::set_permissions(&readme, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::remove_file(s.wt.join("ptr")).unwrap();
    std::os::unix::fs::symlink("README.md", s.wt.join("ptr")).unwrap();
    git(&s.wt, &["add", "-A", "README.md", "ptr"]);
    git(&s.wt, &["commit", "-q", "-m", "mode and symlink"]);
    s.tip = Oid::from_str(git(&s.wt, &["rev-parse", "HEAD"]).trim()).unwrap();
    s.honest();
    let doc = std::fs::read_to_string(s.wt.join("_EXEC_STATUS.md")).unwrap();
    let doc = doc.replace(
        "  - src/lib.rs\n",
        "  - src/lib.rs\n  - README.md\n  - ptr\n",
    );
    std::fs::write(s.wt.join("_EXEC_STATUS.md"), doc).unwrap();
    let contract = s.fx.tmp.path().join("contract.toml");
    std::fs::write(&contract, "required_artifacts = [\"README.md\", \"ptr\"]\n").unwrap();
    let contract = contract.to_str().unwrap();
    let (_, report) = s.check(&["--no-record", "--contract", contract]);
    let all = codes(&report);
    assert!(!all.contains(&"artifact-unchanged".to_string()), "{report}");
    assert!(!all.contains(&"artifact-missing".to_string()), "{report}");
    assert!(
        !all.contains(&"contract-artifact-missing".to_string()),
        "{report}"
    );
}

/// SPEC §5: a base NAME is resolved as a branch. `/main`, `//main` and `refs/heads//main` are no
/// branch names git accepts (`git check-ref-format --branch` refuses them), so they resolve to no
/// base (`base-unknown`), though libgit2 would read them as `refs/heads/main`.
#[test]
fn a_base_name_git_refuses_is_no_branch() {
    let s = Scene::returned(Some(PASSING_CONFIG));
    s.honest();
    for name in ["/main", "//main", "refs/heads//main", "main/"] {
        let (_, report) = s.check(&["--no-record", "--no-checks", "--base", name]);
        assert!(
            codes(&report).contains(&"base-unknown".to_string()),
            "{name}: {report}"
        );
        assert!(report["base"].is_null(), "{name}: {report}");
    }
    let (_, report) = s.check(&["--no-record", "--no-checks", "--base", "refs/heads/main"]);
    assert!(
        !codes(&report).contains(&"base-unknown".to_string()),
        "{report}"
    );
}
