//! Test integrity (SPEC §23, §19): the overlay (the commit's code under the base's own tests),
//! the reverse overlay (the branch's tests on the base's code), a failing check on the merge
//! base's own tree, the report's `integrity` object, policy `integrity` and reuse. Each test
//! plays an agent on a small real repository whose "suite" is shell scripts under `tests/`.

use std::path::Path;

use git2::Oid;
use serde_json::Value;

use crate::fixture::{closegate, parts, report_codes};
use crate::scene::{Scene, StatusDoc, status_doc};

/// The code under test: `add` adds.
const ADD: &str = "add() { echo $(($1 + $2)); }\n";
/// A wrong `add`: it multiplies.
const ADD_WRONG: &str = "add() { echo $(($1 * $2)); }\n";
const ADD_TEST: &str = ". ./src/add.sh\n[ \"$(add 2 3)\" = 5 ] || { echo \"add 2 3 is $(add 2 3), expected 5\"; exit 1; }\necho add ok\n";
/// The test edited to expect what the wrong code gives.
const ADD_TEST_WEAK: &str = ". ./src/add.sh\n[ \"$(add 2 3)\" = 6 ] || exit 1\necho add ok\n";
const SUB: &str = "sub() { echo $(($1 - $2)); }\n";
const SUB_TEST: &str =
    ". ./src/sub.sh\n[ \"$(sub 5 3)\" = 2 ] || { echo \"sub 5 3 wrong\"; exit 1; }\necho sub ok\n";

/// Runs every `tests/*_test.sh` present; a missing `tests/` folder runs nothing.
const RUN: &str =
    r#"for t in tests/*_test.sh; do [ -f "$t" ] || continue; sh "$t" || exit 1; done"#;

/// Asks for the reverse overlay (SPEC §27.1: it runs only when asked).
const ASK_REVERSE: &str = "[protected.integrity]\nfail_to_pass = true\n";

/// The suite as the one check, plus `extra`, with the reverse overlay asked for: SPEC §27.1 runs
/// it only when asked (`fail_to_pass`), and these tests are about both overlays (SPEC §23).
fn config(extra: &str) -> String {
    format!("{}{ASK_REVERSE}", config_as_is(extra))
}

/// The suite as the one check, plus `extra`, as written.
fn config_as_is(extra: &str) -> String {
    format!("[[checks]]\nname = \"suite\"\nrun = '{RUN}'\ntimeout_s = 60\n{extra}")
}

/// `main` with `config`, `src/add.sh`, `tests/add_test.sh` plus `main_files`; `agent/x` one
/// commit ahead with `agent` (and `src/lib.rs`, the document's artifact), in `wt/x`.
fn scene(
    config: &str,
    main_files: &[(&str, Option<&str>)],
    agent: &[(&str, Option<&str>)],
) -> Scene {
    let mut files = vec![
        (".closegate.toml", Some(config)),
        ("src/add.sh", Some(ADD)),
        ("tests/add_test.sh", Some(ADD_TEST)),
    ];
    files.extend_from_slice(main_files);
    let mut work = vec![("src/lib.rs", Some("pub fn x() {}\n"))];
    work.extend_from_slice(agent);
    let s = Scene::new()
        .on_main(&files, "configure closegate")
        .on_agent(&work, "add x")
        .worktree();
    s.claim(&s.wt, s.tip);
    s
}

/// The overlay tests' verbs on a scene.
trait OverlayScene {
    fn claim(&self, wt: &Path, commit: Oid);
    fn merge_base(&self) -> Oid;
    fn check(&self, args: &[&str]) -> (i32, Value);
}

impl OverlayScene for Scene {
    fn claim(&self, wt: &Path, commit: Oid) {
        let path = wt.canonicalize().unwrap().display().to_string();
        let doc = status_doc("close-ok", &commit.to_string()[..12], &path);
        std::fs::write(wt.join("_EXEC_STATUS.md"), doc).unwrap();
    }

    fn merge_base(&self) -> Oid {
        let main = self.fx.repo.refname_to_id("refs/heads/main").unwrap();
        self.fx.repo.merge_base(main, self.tip).unwrap()
    }

    /// `closegate check --format json` (recorded unless `args` says otherwise).
    fn check(&self, args: &[&str]) -> (i32, Value) {
        check_in(&self.wt, args)
    }
}

fn check_in(wt: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["check", "--format", "json"];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = parts(&closegate(wt, &all));
    let report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not a JSON report ({e}):\n{stdout}\n{stderr}"));
    (code, report)
}

fn findings<'a>(report: &'a Value, code: &str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .collect()
}

fn runs<'a>(report: &'a Value, on: &str) -> Vec<&'a Value> {
    report["integrity"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["on"] == on)
        .collect()
}

#[test]
fn a_weakened_test_for_a_wrong_change_is_tests_weakened_naming_the_check() {
    // Attack: break `add`, then edit the expected value until the suite passes.
    let s = scene(
        &config(""),
        &[],
        &[
            ("src/add.sh", Some(ADD_WRONG)),
            ("tests/add_test.sh", Some(ADD_TEST_WEAK)),
        ],
    );
    let (code, report) = s.check(&["--no-record"]);
    assert_eq!(report["checks"][0]["exit_code"], 0, "{report}");
    assert_eq!(report["integrity"]["base_tests"], "fail", "{report}");
    let weakened = findings(&report, "tests-weakened");
    assert_eq!(weakened.len(), 1, "{report}");
    let f = weakened[0];
    assert_eq!(f["severity"], "review");
    assert_eq!(f["gate"], "checks");
    assert_eq!(f["path"], "tests/add_test.sh");
    let msg = f["message"].as_str().unwrap();
    assert!(msg.contains("`suite`"), "{msg}");
    assert!(msg.contains("tests/add_test.sh"), "{msg}");
    assert!(
        msg.contains("add 2 3 is 6, expected 5"),
        "the overlay's output: {msg}"
    );
    assert_eq!(report["verdict"], "PENDING_REVIEW");
    assert_eq!(code, 3);
    // The reverse overlay ran too: the weakened test fails on the base's (right) code.
    assert_eq!(report["integrity"]["new_tests_on_base"], "fail", "{report}");
}

#[test]
fn a_weakened_test_is_never_let_through_by_policy_integrity() {
    let cfg = config("[protected.policy]\ntests = \"integrity\"\n");
    let s = scene(
        &cfg,
        &[],
        &[
            ("src/add.sh", Some(ADD_WRONG)),
            ("tests/add_test.sh", Some(ADD_TEST_WEAK)),
        ],
    );
    let (code, report) = s.check(&["--no-record"]);
    assert_eq!(report["verdict"], "PENDING_REVIEW", "{report}");
    assert_eq!(code, 3);
    let surface = findings(&report, "protected-surface");
    assert!(
        surface.iter().all(|f| f["severity"] == "review"),
        "{report}"
    );
}

#[test]
fn an_approval_turns_tests_weakened_into_a_warning() {
    let s = scene(
        &config(""),
        &[],
        &[
            ("src/add.sh", Some(ADD_WRONG)),
            ("tests/add_test.sh", Some(ADD_TEST_WEAK)),
        ],
    );
    let (code, _) = s.check(&[]);
    assert_eq!(code, 3);
    let sha = s.tip.to_string();
    let out = closegate(
        &s.wt,
        &["approve", "--yes", "--commit", &sha, "--by", "reviewer"],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let (code, report) = s.check(&["--no-record"]);
    let weakened = findings(&report, "tests-weakened");
    assert_eq!(weakened.len(), 1, "{report}");
    assert_eq!(weakened[0]["severity"], "warning");
    assert_eq!(report["verdict"], "VERIFIED", "{report}");
    assert_eq!(code, 0);
}

#[test]
fn a_real_test_for_a_real_change_passes_the_base_tests_and_fails_on_the_base() {
    let s = scene(
        &config(""),
        &[],
        &[
            ("src/sub.sh", Some(SUB)),
            ("tests/sub_test.sh", Some(SUB_TEST)),
        ],
    );
    let (code, report) = s.check(&["--no-record"]);
    assert_eq!(report["integrity"]["base_tests"], "pass", "{report}");
    assert_eq!(report["integrity"]["new_tests_on_base"], "fail", "{report}");
    assert!(findings(&report, "tests-weakened").is_empty(), "{report}");
    assert!(
        findings(&report, "tests-pass-on-base").is_empty(),
        "{report}"
    );
    // Without the policy a test edit still goes to a human (the seeds' rule).
    assert_eq!(report["verdict"], "PENDING_REVIEW");
    assert_eq!(code, 3);
    assert_eq!(runs(&report, "overlay").len(), 1);
    assert_eq!(runs(&report, "reverse-overlay").len(), 1);
    assert!(
        runs(&report, "base").is_empty(),
        "no check failed: {report}"
    );
}

#[test]
fn policy_integrity_lets_an_exercising_test_through_without_a_human() {
    let cfg = config("[protected.policy]\ntests = \"integrity\"\n");
    let s = scene(
        &cfg,
        &[],
        &[
            ("src/sub.sh", Some(SUB)),
            ("tests/sub_test.sh", Some(SUB_TEST)),
        ],
    );
    let (code, report) = s.check(&["--no-record"]);
    assert_eq!(report["verdict"], "VERIFIED", "{report}");
    assert_eq!(code, 0);
    let surface = findings(&report, "protected-surface");
    assert_eq!(surface.len(), 1);
    assert_eq!(surface[0]["severity"], "warning");
    assert!(
        surface[0]["message"]
            .as_str()
            .unwrap()
            .contains("policy `integrity`")
    );
}

#[test]
fn policy_integrity_never_lets_a_deleted_test_file_through() {
    // Attack: delete an inconvenient test file beside an honest new test.
    let cfg = config("[protected.policy]\ntests = \"integrity\"\n");
    let s = scene(
        &cfg,
        &[("tests/old_test.sh", Some("echo old ok\n"))],
        &[
            ("src/sub.sh", Some(SUB)),
            ("tests/sub_test.sh", Some(SUB_TEST)),
            ("tests/old_test.sh", None),
        ],
    );
    let (code, report) = s.check(&["--no-record"]);
    assert_eq!(report["integrity"]["base_tests"], "pass", "{report}");
    assert_eq!(report["integrity"]["new_tests_on_base"], "fail", "{report}");
    assert_eq!(report["verdict"], "PENDING_REVIEW", "{report}");
    assert_eq!(code, 3);
    let deleted: Vec<_> = findings(&report, "protected-surface")
        .into_iter()
        .filter(|f| f["path"] == "tests/old_test.sh")
        .collect();
    assert_eq!(deleted.len(), 1);
    assert_eq!(deleted[0]["severity"], "review");
}

#[test]
fn deleting_the_failing_test_file_is_tests_weakened() {
    // Attack: break `add` and delete the test that catches it.
    let s = scene(
        &config(""),
        &[],
        &[("src/add.sh", Some(ADD_WRONG)), ("tests/add_test.sh", None)],
    );
    let (_, report) = s.check(&["--no-record"]);
    assert_eq!(report["checks"][0]["exit_code"], 0, "{report}");
    assert_eq!(report["integrity"]["base_tests"], "fail", "{report}");
    let weakened = findings(&report, "tests-weakened");
    assert_eq!(weakened.len(), 1);
    assert!(
        weakened[0]["message"]
            .as_str()
            .unwrap()
            .contains("tests/add_test.sh (deleted)")
    );
    // Only deletions: there are no new tests to run on the base.
    assert_eq!(
        report["integrity"]["new_tests_on_base"],
        Value::Null,
        "{report}"
    );
}

#[test]
fn renaming_and_weakening_a_test_is_tests_weakened_on_both_paths() {
    // Attack: move the test aside and weaken it, hoping the old path is not restored.
    let s = scene(
        &config(""),
        &[],
        &[
            ("src/add.sh", Some(ADD_WRONG)),
            ("tests/add_test.sh", None),
            ("tests/plus_test.sh", Some(ADD_TEST_WEAK)),
        ],
    );
    let (_, report) = s.check(&["--no-record"]);
    assert_eq!(report["integrity"]["base_tests"], "fail", "{report}");
    let mut paths: Vec<&str> = findings(&report, "tests-weakened")
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    paths.sort();
    assert_eq!(
        paths,
        ["tests/add_test.sh", "tests/plus_test.sh"],
        "{report}"
    );
}

#[test]
fn a_test_folder_replaced_by_a_file_is_put_back_on_the_overlay() {
    // Attack: replace `tests/` by a plain file `tests`, so the suite finds nothing to run.
    let s = scene(
        &config(""),
        &[],
        &[
            ("src/add.sh", Some(ADD_WRONG)),
            ("tests/add_test.sh", None),
            ("tests", Some("nothing to see\n")),
        ],
    );
    let (_, report) = s.check(&["--no-record"]);
    assert_eq!(report["checks"][0]["exit_code"], 0, "{report}");
    assert_eq!(report["integrity"]["base_tests"], "fail", "{report}");
    assert!(!findings(&report, "tests-weakened").is_empty(), "{report}");
    assert_eq!(report["verdict"], "PENDING_REVIEW");
}

#[test]
fn a_test_that_passes_on_the_old_code_is_tests_pass_on_base() {
    let extra = ". ./src/add.sh\n[ \"$(add 1 1)\" = 2 ] || exit 1\n";
    let s = scene(
        &config(""),
        &[],
        &[
            ("src/sub.sh", Some(SUB)),
            ("tests/more_test.sh", Some(extra)),
        ],
    );
    let (_, report) = s.check(&["--no-record"]);
    assert_eq!(report["integrity"]["base_tests"], "pass", "{report}");
    assert_eq!(report["integrity"]["new_tests_on_base"], "pass", "{report}");
    let warned = findings(&report, "tests-pass-on-base");
    assert_eq!(warned.len(), 1, "{report}");
    // SPEC §27.1: asked for (`fail_to_pass`), it holds the return; unasked it never runs.
    assert_eq!(warned[0]["severity"], "review");
    assert_eq!(warned[0]["gate"], "checks");
    assert!(warned[0]["message"].as_str().unwrap().contains("`suite`"));
}

#[test]
fn tests_passing_on_the_base_are_not_let_through_by_the_policy() {
    let cfg = config("[protected.policy]\ntests = \"integrity\"\n");
    let extra = ". ./src/add.sh\n[ \"$(add 1 1)\" = 2 ] || exit 1\n";
    let s = scene(&cfg, &[], &[("tests/more_test.sh", Some(extra))]);
    let (_, report) = s.check(&["--no-record"]);
    assert_eq!(report["integrity"]["new_tests_on_base"], "pass", "{report}");
    assert_eq!(report["verdict"], "PENDING_REVIEW", "{report}");
}

#[test]
fn a_check_failing_on_a_red_base_says_so() {
    let red = "echo base is red; exit 1\n";
    let s = scene(&config(""), &[("tests/red_test.sh", Some(red))], &[]);
    let (code, report) = s.check(&["--no-record"]);
    assert_eq!(report["verdict"], "FAIL", "{report}");
    assert_eq!(code, 1);
    assert_eq!(report["checks"][0]["red_on_base"], true, "{report}");
    let mb = s.merge_base().to_string();
    let failed = findings(&report, "check-failed");
    let msg = failed[0]["message"].as_str().unwrap();
    assert!(
        msg.contains(&format!("also fails on the base ({})", &mb[..12])),
        "{msg}"
    );
    let base = runs(&report, "base");
    assert_eq!(base.len(), 1);
    assert_eq!(
        base[0]["tree"],
        s.fx.repo
            .find_commit(s.merge_base())
            .unwrap()
            .tree_id()
            .to_string()
    );
    // No test path changed: no overlay ran.
    assert_eq!(report["integrity"]["base_tests"], Value::Null);
}

#[test]
fn a_check_failing_only_on_the_commit_is_not_red_on_base() {
    let s = scene(&config(""), &[], &[("src/add.sh", Some(ADD_WRONG))]);
    let (_, report) = s.check(&["--no-record"]);
    assert_eq!(report["verdict"], "FAIL");
    assert_eq!(report["checks"][0]["red_on_base"], false, "{report}");
    let msg = findings(&report, "check-failed")[0]["message"]
        .as_str()
        .unwrap();
    assert!(!msg.contains("also fails on the base"), "{msg}");
}

#[test]
fn nothing_extra_runs_when_no_test_path_changed_and_the_checks_pass() {
    let s = scene(&config(""), &[], &[("src/mul.sh", Some("mul() { :; }\n"))]);
    let (code, report) = s.check(&["--no-record"]);
    assert_eq!(report["verdict"], "VERIFIED", "{report}");
    assert_eq!(code, 0);
    let integrity = &report["integrity"];
    assert_eq!(integrity["base_tests"], Value::Null);
    assert_eq!(integrity["new_tests_on_base"], Value::Null);
    assert_eq!(integrity["checks"], serde_json::json!([]));
    assert!(report["checks"][0].get("red_on_base").is_none(), "{report}");
}

#[test]
fn overlay_and_base_runs_get_the_closegate_values_of_what_they_stand_for() {
    // The suite prints the values, and fails on the base's red test and on the weakened one.
    let run = format!("echo \"C=$CLOSEGATE_COMMIT B=$CLOSEGATE_BRANCH S=$CLOSEGATE_SLUG\"; {RUN}");
    let cfg = format!("[[checks]]\nname = \"suite\"\nrun = '{run}'\ntimeout_s = 60\n{ASK_REVERSE}");
    let s = scene(
        &cfg,
        &[],
        &[
            ("src/add.sh", Some(ADD_WRONG)),
            ("tests/add_test.sh", Some(ADD_TEST_WEAK)),
        ],
    );
    let (_, report) = s.check(&["--no-record"]);
    let commit_line = format!("C={} B=agent/x S=x", s.tip);
    for on in ["overlay", "reverse-overlay"] {
        let out = &runs(&report, on)[0]["output"];
        assert_eq!(out[0], commit_line.as_str(), "{on}: {report}");
    }
    // A failing commit's check on the merge base's own tree: the merge base, the base branch,
    // no slug.
    let s = scene(&cfg, &[], &[("src/add.sh", Some(ADD_WRONG))]);
    let (_, report) = s.check(&["--no-record"]);
    let out = &runs(&report, "base")[0]["output"];
    assert_eq!(
        out[0],
        format!("C={} B=main S=", s.merge_base()).as_str(),
        "{report}"
    );
}

#[test]
fn a_second_check_reuses_every_overlay_and_base_run() {
    let s = scene(
        &config(""),
        &[],
        &[
            ("src/sub.sh", Some(SUB)),
            ("tests/sub_test.sh", Some(SUB_TEST)),
        ],
    );
    let (_, first) = s.check(&[]);
    assert!(runs(&first, "overlay")[0]["reused"].is_null());
    let (_, second) = s.check(&[]);
    assert_eq!(
        first["integrity"]["base_tests"],
        second["integrity"]["base_tests"]
    );
    assert_eq!(
        first["integrity"]["new_tests_on_base"],
        second["integrity"]["new_tests_on_base"]
    );
    let all = second["integrity"]["checks"].as_array().unwrap();
    assert_eq!(all.len(), 2, "{second}");
    assert!(all.iter().all(|r| r["reused"].is_string()), "{second}");
    assert!(second["checks"][0]["reused"].is_string());
    // --rerun runs them again.
    let (_, third) = s.check(&["--rerun", "--no-record"]);
    let all = third["integrity"]["checks"].as_array().unwrap();
    assert!(all.iter().all(|r| r["reused"].is_null()), "{third}");
}

#[test]
fn the_base_run_is_reused_by_another_agent_on_the_same_base() {
    let red = "echo base is red; exit 1\n";
    let s = scene(&config(""), &[("tests/red_test.sh", Some(red))], &[]);
    let (_, first) = s.check(&[]);
    assert!(runs(&first, "base")[0]["reused"].is_null(), "{first}");
    // A second agent, another branch and slug, forked from the same base commit.
    let tip =
        s.fx.commit("agent/y", &[("src/y.sh", Some("y() { :; }\n"))], "add y");
    let wt = s.fx.worktree("y", "agent/y");
    let path = wt.canonicalize().unwrap().display().to_string();
    let sha = &tip.to_string()[..12];
    StatusDoc::complete("y", "close-ok")
        .abstract_text("adds x, proven by the smoke check")
        .last_commit(sha, "add x")
        .done("x exists, proven by the smoke check")
        .close(sha, "agent/y", &path)
        .write(&wt);
    let (_, second) = check_in(&wt, &["--no-record"]);
    assert_eq!(second["checks"][0]["red_on_base"], true, "{second}");
    assert!(runs(&second, "base")[0]["reused"].is_string(), "{second}");
}

#[test]
fn integrity_surfaces_are_configurable() {
    // `[protected.integrity] evals = true`: an eval edited to pass a wrong change is caught too.
    let run = r#"for t in tests/*_test.sh evals/*.sh; do [ -f "$t" ] || continue; sh "$t" || exit 1; done"#;
    let cfg = format!(
        "[[checks]]\nname = \"suite\"\nrun = '{run}'\ntimeout_s = 60\n[protected.integrity]\nevals = true\n"
    );
    let eval = ". ./src/add.sh\n[ \"$(add 4 4)\" = 8 ] || { echo eval failed; exit 1; }\n";
    let weak = ". ./src/add.sh\n[ \"$(add 4 4)\" = 16 ] || exit 1\n";
    let s = scene(
        &cfg,
        &[
            ("evals/add.sh", Some(eval)),
            ("tests/add_test.sh", Some("exit 0\n")),
        ],
        &[
            ("src/add.sh", Some(ADD_WRONG)),
            ("evals/add.sh", Some(weak)),
        ],
    );
    let (_, report) = s.check(&["--no-record"]);
    assert_eq!(report["integrity"]["base_tests"], "fail", "{report}");
    assert_eq!(
        findings(&report, "tests-weakened")[0]["path"],
        "evals/add.sh"
    );
}

#[test]
fn bad_integrity_configuration_is_an_exit_2_naming_the_key() {
    for (extra, key) in [
        (
            "[protected.integrity]\nnope = true\n",
            "protected.integrity.nope",
        ),
        (
            "[protected.integrity]\nevals = \"yes\"\n",
            "protected.integrity.evals",
        ),
        (
            "[protected.integrity]\nci = true\n",
            "protected.integrity.ci",
        ),
        (
            "[protected.policy]\nci = \"integrity\"\n",
            "protected.policy.ci",
        ),
    ] {
        let s = scene(&config_as_is(extra), &[], &[]);
        let out = closegate(&s.wt, &["check", "--no-record"]);
        let (code, _, stderr) = parts(&out);
        assert_eq!(code, 2, "{extra}: {stderr}");
        assert!(stderr.contains(key), "{extra}: {stderr}");
    }
}

#[test]
fn human_output_has_one_line_per_overlay() {
    let s = scene(
        &config(""),
        &[],
        &[
            ("src/add.sh", Some(ADD_WRONG)),
            ("tests/add_test.sh", Some(ADD_TEST_WEAK)),
        ],
    );
    let out = closegate(&s.wt, &["check", "--no-record"]);
    let (_, stdout, _) = parts(&out);
    let lines: Vec<&str> = stdout.lines().collect();
    let at = lines.iter().position(|l| *l == "integrity").expect(&stdout);
    assert!(
        lines[at + 1].trim_start().starts_with("overlay"),
        "{stdout}"
    );
    assert!(lines[at + 1].contains("base_tests: fail"), "{stdout}");
    assert!(
        lines[at + 2].trim_start().starts_with("reverse-overlay"),
        "{stdout}"
    );
    assert!(
        lines[at + 2].contains("new_tests_on_base: fail"),
        "{stdout}"
    );
    let codes = {
        let (_, report) = s.check(&["--no-record"]);
        report_codes(&report)
    };
    assert!(codes.contains(&"tests-weakened".to_string()));
}

#[test]
fn sarif_and_github_locate_tests_weakened_at_the_test_path() {
    let s = scene(
        &config(""),
        &[],
        &[
            ("src/add.sh", Some(ADD_WRONG)),
            ("tests/add_test.sh", Some(ADD_TEST_WEAK)),
        ],
    );
    let (_, gh, _) = parts(&closegate(
        &s.wt,
        &["check", "--no-record", "--format", "github"],
    ));
    let line = gh
        .lines()
        .find(|l| l.contains("tests-weakened"))
        .unwrap_or_else(|| panic!("{gh}"));
    assert!(line.contains("file=tests/add_test.sh"), "{line}");
    let (_, sarif, _) = parts(&closegate(
        &s.wt,
        &["check", "--no-record", "--format", "sarif"],
    ));
    let sarif: Value = serde_json::from_str(&sarif).unwrap();
    let result = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "tests-weakened")
        .unwrap_or_else(|| panic!("{sarif}"));
    let uri = &result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
    assert_eq!(uri, "tests/add_test.sh");
}

#[test]
fn the_stop_hook_feeds_tests_weakened_back_to_the_agent() {
    // The agent claims VERIFIED after weakening the test; the stop is blocked and the reason
    // names what the overlay found.
    let s = scene(
        &config(""),
        &[],
        &[
            ("src/add.sh", Some(ADD_WRONG)),
            ("tests/add_test.sh", Some(ADD_TEST_WEAK)),
        ],
    );
    let input = serde_json::json!({
        "cwd": s.wt,
        "hook_event_name": "Stop",
        "last_assistant_message": "VERIFIED: add fixed, the suite passes\n\n@signal done\n",
        "session_id": "s",
        "stop_hook_active": false,
        "transcript_path": null,
    });
    let out = crate::fixture::closegate_stdin(
        &s.wt,
        &["agent", "stop-hook"],
        Some(input.to_string().as_bytes()),
    );
    let (code, stdout, stderr) = parts(&out);
    assert_eq!(code, 0, "{stderr}");
    let value: Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(value["decision"], "block", "{value}");
    let reason = value["reason"].as_str().unwrap();
    assert!(reason.contains("tests-weakened"), "{reason}");
    assert!(reason.contains("`suite`"), "{reason}");
}

#[test]
fn with_jobs_the_overlays_run_at_once_and_say_the_same() {
    // Code and tests changed: both overlays run, under `jobs = 2` (one after the other here: the
    // check has the network, see `overlays_that_could_reach_each_other_run_one_after_the_other`).
    let cfg = format!("jobs = 2\n{}", config(""));
    let s = scene(
        &cfg,
        &[],
        &[
            ("src/add.sh", Some(ADD_WRONG)),
            ("tests/add_test.sh", Some(ADD_TEST_WEAK)),
        ],
    );
    let (code, report) = s.check(&[]);
    assert_eq!(code, 3, "{report}");
    assert_eq!(report["integrity"]["base_tests"], "fail", "{report}");
    assert_eq!(report["integrity"]["new_tests_on_base"], "fail", "{report}");
    assert_eq!(runs(&report, "overlay").len(), 1);
    assert_eq!(runs(&report, "reverse-overlay").len(), 1);
    assert_eq!(findings(&report, "tests-weakened").len(), 1);
    // Reused the second time, in the same order.
    let (_, again) = s.check(&["--no-record"]);
    let all = again["integrity"]["checks"].as_array().unwrap();
    assert_eq!(all[0]["on"], "overlay");
    assert_eq!(all[1]["on"], "reverse-overlay");
    assert!(all.iter().all(|r| r["reused"].is_string()), "{again}");
}

/// Each run says when it slept and how many runs' marks it saw in `/tmp` (its own included),
/// then runs the suite.
const SPAN: &str = "m=$(mktemp /tmp/span-mark.XXXXXX); start=$(date +%s%N); sleep 2; \
     seen=$(ls /tmp | grep -c '^span-mark'); end=$(date +%s%N); rm -f \"$m\"; \
     echo \"span $start $end $seen\"\n";

/// `(start, end, marks seen)` of the overlay's and the reverse overlay's run.
fn spans(report: &Value) -> Vec<(u128, u128, u32)> {
    ["overlay", "reverse-overlay"]
        .iter()
        .map(|on| {
            let run = runs(report, on);
            let line = run[0]["output"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .find_map(|l| l.strip_prefix("span "))
                .unwrap_or_else(|| panic!("no span line on {on}: {report}"))
                .to_string();
            let v: Vec<&str> = line.split(' ').collect();
            (
                v[0].parse().unwrap(),
                v[1].parse().unwrap(),
                v[2].parse().unwrap(),
            )
        })
        .collect()
}

/// The scene of a real change with its test (overlay and reverse overlay both run), the
/// check's `run` timing itself with `span.sh` first, under `extra` configuration.
fn span_scene(extra: &str, top: &str) -> Scene {
    timed_scene("", extra, top)
}

/// [`span_scene`] with `pre` run before the span.
fn timed_scene(pre: &str, extra: &str, top: &str) -> Scene {
    spanned(pre, &format!("{extra}{ASK_REVERSE}"), top)
}

/// A return that changes code and its test, with the check timing itself (no reverse overlay
/// asked for), under `extra` check lines and `top` lines.
fn commit_span_scene(extra: &str, top: &str) -> Scene {
    spanned("", extra, top)
}

/// The scene of a real change with its test, the check's `run` timing itself with `span.sh`
/// after `pre`, under `extra` (as written) and `top`.
fn spanned(pre: &str, extra: &str, top: &str) -> Scene {
    let run = format!("{pre}sh span.sh; {RUN}");
    let config =
        format!("{top}[[checks]]\nname = \"suite\"\nrun = '{run}'\ntimeout_s = 60\n{extra}");
    scene(
        &config,
        &[("span.sh", Some(SPAN))],
        &[
            ("src/sub.sh", Some(SUB)),
            ("tests/sub_test.sh", Some(SUB_TEST)),
        ],
    )
}

/// With `jobs = 1`, the overlay and the reverse overlay of a check that shares nothing with
/// another run of itself (sandboxed, `network = false`, no `writable`, no `env`) run
/// side by side: each in its own `/tmp`, where it sees only its own mark. The verdict is the
/// same as one after the other.
#[test]
fn isolated_overlays_run_side_by_side_each_in_its_own_tmp() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = span_scene("network = false\n", "");
    checked_side_by_side(&s);
}

/// The control of the attacks below under `jobs = 2`: an isolated check's overlays still run
/// side by side, each in its own `/tmp`.
#[test]
fn isolated_overlays_run_side_by_side_with_jobs_too() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = span_scene("network = false\n", "jobs = 2\n");
    checked_side_by_side(&s);
}

/// Check `s` (a real change with its test): the overlays give the verdict they give one after
/// the other, and ran at once (on a machine of two cores or more), each seeing only its own
/// mark in `/tmp`; the report.
fn checked_side_by_side(s: &Scene) -> Value {
    let (code, report) = s.check(&["--no-record"]);
    assert_eq!(report["sandbox"], "bwrap", "{report}");
    assert_eq!(report["integrity"]["base_tests"], "pass", "{report}");
    assert_eq!(report["integrity"]["new_tests_on_base"], "fail", "{report}");
    assert_eq!(
        (code, report["verdict"].as_str()),
        (3, Some("PENDING_REVIEW"))
    );
    let [(s1, e1, seen1), (s2, e2, seen2)] = spans(&report)[..] else {
        panic!("two spans")
    };
    if std::thread::available_parallelism().map_or(1, usize::from) > 1 {
        assert!(s1 < e2 && s2 < e1, "the overlays did not overlap: {report}");
    }
    assert_eq!(
        (seen1, seen2),
        (1, 1),
        "a run saw another run's /tmp: {report}"
    );
    report
}

/// Attacks on that speed-up: two runs of a check that can reach something in common would
/// race on it — and the reverse overlay runs the agent's tests while the overlay runs the
/// agent's code under the base's tests, so a test the agent added could serve its code the
/// answers the base's tests want (over the host's network, through a shared `writable` path or a
/// service named in `env`, or anywhere unsandboxed). So they run one after the other, with
/// `jobs = 1` and with `jobs = 2` alike — a check with the network on, with a `writable` path,
/// with a variable passed in (`env`), or unsandboxed.
#[test]
fn overlays_that_could_reach_each_other_run_one_after_the_other() {
    for jobs in ["", "jobs = 2\n"] {
        reachable_overlays_one_after_the_other(jobs);
    }
}

/// The checks two runs of which could reach each other, as `(case, check lines, top lines)`:
/// the network on, a `writable` path (`cache`), a variable passed in, no sandbox.
fn reachable_cases(cache: &Path) -> [(&'static str, String, &'static str); 4] {
    let writable = format!("network = false\nwritable = ['{}']\n", cache.display());
    [
        ("network on", String::new(), ""),
        ("writable", writable, ""),
        ("env", "network = false\nenv = [\"LANG\"]\n".to_string(), ""),
        (
            "sandbox off",
            "network = false\n".to_string(),
            "sandbox = \"off\"\n",
        ),
    ]
}

/// [`overlays_that_could_reach_each_other_run_one_after_the_other`] under `jobs` (a top line).
fn reachable_overlays_one_after_the_other(jobs: &str) {
    let cache = tempfile::tempdir().unwrap();
    let cases = reachable_cases(cache.path());
    for (case, extra, top) in cases {
        let s = span_scene(&extra, &format!("{jobs}{top}"));
        let (_, report) = s.check(&["--no-record"]);
        assert_eq!(
            report["integrity"]["base_tests"], "pass",
            "{case}: {report}"
        );
        let [(s1, e1, _), (s2, e2, _)] = spans(&report)[..] else {
            panic!("two spans")
        };
        assert!(
            e1 <= s2 || e2 <= s1,
            "{case} {jobs}: the overlays overlapped: {report}"
        );
    }
}

/// What a kept check prints first: where it runs (`ws`), and the runs its kept `target/`
/// remembers (`kept`); then it adds its own: the names in its `src/`, on one line.
const WHERE: &str = "echo \"ws $(pwd)\"; mkdir -p target; \
     echo \"kept $(paste -sd \"|\" target/ran 2>/dev/null)\"; echo $(ls src) >> target/ran; ";

/// The line of the run on `on` that starts with `prefix`, without it.
fn line_of(report: &Value, on: &str, prefix: &str) -> String {
    let run = runs(report, on);
    run[0]["output"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} line on {on}: {report}"))
        .to_string()
}

/// The fixed path every run of the scene's check `suite` sees its checkout at (SPEC §27.2).
fn check_path(s: &Scene) -> std::path::PathBuf {
    let cache = crate::fixture::cache_root(&s.fx.git_dir());
    cache.join("checks/suite/checkout")
}

/// [`span_scene`] with a warm workspace: the check keeps `target/` and says where it runs.
fn kept_scene(top: &str) -> Scene {
    timed_scene(WHERE, "network = false\nkeep = [\"target/\"]\n", top)
}

/// A check with a warm workspace (`keep`) starts every run on an agent's code from the base
/// snapshot (SPEC §27.2): the overlay and the reverse overlay, side by side, each see the
/// checkout at the check's one path, each on a layer of its own over the snapshot — neither sees
/// what the commit's run or the other wrote — and the verdict is the one they give one after the
/// other.
#[test]
fn kept_overlays_run_side_by_side_each_in_its_own_workspace() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = kept_scene("");
    let report = checked_side_by_side(&s);
    let at = check_path(&s).display().to_string();
    assert_eq!(line_of(&report, "overlay", "ws "), at);
    assert_eq!(line_of(&report, "reverse-overlay", "ws "), at);
    // Both start from what the base's own run left (the base's code: no `sub.sh`), and from
    // nothing any run on the agent's code wrote.
    assert_eq!(line_of(&report, "overlay", "kept "), "add.sh");
    assert_eq!(line_of(&report, "reverse-overlay", "kept "), "add.sh");
    let snaps = crate::fixture::snapshots(&crate::fixture::cache_root(&s.fx.git_dir()), "suite");
    assert_eq!(snaps.len(), 1, "{snaps:?}");
    let base_ran = std::fs::read_to_string(snaps[0].join("checkout/target/ran")).unwrap();
    assert_eq!(base_ran, "add.sh\n");
}

/// Attack on where warm state once lived: the agent (who can write the common dir) plants
/// symbolic links at `closegate/work/…` pointing at a directory or file of the operator's.
/// Nothing reads or writes there any more (SPEC §27.2: nothing read as warm state lies in the
/// common directory): the verdict is what it would be, nothing outside is reset away or
/// written, and `gc` removes the link itself, never what it points at.
#[test]
fn links_planted_where_the_workspaces_live_are_replaced_not_followed() {
    for plant in ["", "suite", "_base-suite", "suite.lock"] {
        let s = kept_scene("");
        let outside = tempfile::tempdir().unwrap();
        for dir in ["checkout", "suite/checkout", "_base-suite/checkout"] {
            std::fs::create_dir_all(outside.path().join(dir)).unwrap();
            std::fs::write(outside.path().join(dir).join("victim"), "mine\n").unwrap();
        }
        std::fs::write(outside.path().join("lock"), "mine\n").unwrap();
        let work = s.fx.git_dir().join("closegate/work");
        let link = work.join(plant);
        let link = link.components().as_path().to_path_buf();
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        let target = if plant.ends_with(".lock") {
            outside.path().join("lock")
        } else {
            outside.path().to_path_buf()
        };
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let (code, report) = s.check(&["--no-record"]);
        assert_eq!(
            (code, report["verdict"].as_str()),
            (3, Some("PENDING_REVIEW")),
            "{plant:?}: {report}"
        );
        let (code, out, err) = parts(&closegate(&s.fx.root(), &["gc"]));
        assert_eq!(code, 0, "{plant:?}: {out}{err}");
        for dir in ["checkout", "suite/checkout", "_base-suite/checkout"] {
            let victim = outside.path().join(dir).join("victim");
            assert_eq!(
                std::fs::read_to_string(&victim).ok().as_deref(),
                Some("mine\n"),
                "{plant:?}: the reset or gc followed the link into {}",
                victim.display()
            );
            let ran = outside.path().join(dir).join("target");
            assert!(!ran.exists(), "{plant:?}: a check ran in {}", ran.display());
        }
        assert_eq!(
            std::fs::read_to_string(outside.path().join("lock")).unwrap(),
            "mine\n"
        );
        assert!(
            std::fs::symlink_metadata(&work).is_err(),
            "{plant:?}: gc left the old workspaces' directory"
        );
    }
}

/// A check failing on the commit runs on the merge base's own tree, the base's code, at the
/// check's one path. The base runs once (SPEC §27.2): the run that built the base snapshot (the
/// merge base is the base tip here) is the merge base's run, starting from nothing kept; what
/// the commit's run wrote never reaches the snapshot.
#[test]
fn the_base_tree_runs_in_the_base_workspace() {
    let run = format!("{WHERE}{RUN}");
    let config = format!(
        "[[checks]]\nname = \"suite\"\nrun = '{run}'\ntimeout_s = 60\nkeep = [\"target/\"]\n{ASK_REVERSE}"
    );
    let red = "echo base is red; exit 1\n";
    let s = scene(&config, &[("tests/red_test.sh", Some(red))], &[]);
    let (code, report) = s.check(&["--no-record"]);
    assert_eq!((code, report["verdict"].as_str()), (1, Some("FAIL")));
    assert_eq!(report["checks"][0]["red_on_base"], true, "{report}");
    assert_eq!(
        line_of(&report, "base", "ws "),
        check_path(&s).display().to_string()
    );
    assert_eq!(line_of(&report, "base", "kept "), "");
    let snaps = crate::fixture::snapshots(&crate::fixture::cache_root(&s.fx.git_dir()), "suite");
    assert_eq!(snaps.len(), 1, "{snaps:?}");
    let base_ran = std::fs::read_to_string(snaps[0].join("checkout/target/ran")).unwrap();
    assert_eq!(base_ran, "add.sh\n", "the base's own run, once");
}

/// `gc` removes a run's layer that a killed closegate left (its lock free) and keeps one a run
/// holds, and keeps the snapshot of the base's tip (SPEC §27.2: only bases no branch is near
/// go).
#[test]
fn gc_keeps_a_base_workspace_in_use_and_never_removes_a_lock() {
    let s = kept_scene("");
    let (code, report) = s.check(&["--no-record"]);
    assert_eq!(code, 3, "{report}");
    let cache = crate::fixture::cache_root(&s.fx.git_dir());
    let runs = cache.join("runs");
    for left in ["run-left", "run-held"] {
        std::fs::create_dir_all(runs.join(left).join("upper/target")).unwrap();
    }
    let lock = std::fs::File::create(runs.join("run-held.lock")).unwrap();
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive).unwrap();
    let root = s.fx.root();
    let (code, out, err) = parts(&closegate(&root, &["gc"]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("in use, kept") && out.contains("run-held"),
        "{out}"
    );
    assert!(runs.join("run-held/upper/target").is_dir());
    assert!(!runs.join("run-left").exists(), "{out}");
    assert_eq!(crate::fixture::snapshots(&cache, "suite").len(), 1, "{out}");
    drop(lock);
    let (code, out, err) = parts(&closegate(&root, &["gc"]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(!runs.join("run-held").exists(), "{out}");
}

/// `(start, end, marks seen)` of the span line in `run`'s output.
fn span_of(run: &Value) -> (u128, u128, u32) {
    let line = run["output"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find_map(|l| l.strip_prefix("span "))
        .unwrap_or_else(|| panic!("no span line: {run}"));
    let v: Vec<u128> = line.split(' ').map(|x| x.parse().unwrap()).collect();
    (v[0], v[1], u32::try_from(v[2]).unwrap())
}

/// SPEC §27.2 side by side: the commit's own run and its overlay (the commit's code under the
/// base's tests) run at once when the check shares nothing with another run of itself, each in
/// its own `/tmp` (it sees only its own mark), and both say `parallel`.
#[test]
fn the_commit_and_its_overlay_run_side_by_side_each_in_its_own_tmp() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = commit_span_scene("network = false\n", "");
    let (_, report) = s.check(&["--no-record"]);
    assert_eq!(report["integrity"]["base_tests"], "pass", "{report}");
    let own = &report["checks"][0];
    let over = runs(&report, "overlay")[0];
    let ((s1, e1, seen1), (s2, e2, seen2)) = (span_of(own), span_of(over));
    assert_eq!((seen1, seen2), (1, 1), "a run saw another's /tmp: {report}");
    if std::thread::available_parallelism().map_or(1, usize::from) > 1 {
        assert!(s1 < e2 && s2 < e1, "the runs did not overlap: {report}");
        assert_eq!(
            (own["parallel"].clone(), over["parallel"].clone()),
            (true.into(), true.into()),
            "{report}"
        );
    }
}

/// Attacks on it: the commit's run executes the agent's tests while the overlay runs its code
/// under the base's tests; if the two could reach each other (the host's network, a shared
/// `writable` path, a service named in `env`, or no sandbox), a test of the agent could serve
/// its code the answers the base's tests want. Those run one after the other, `parallel` false.
#[test]
fn a_commit_and_overlay_that_could_reach_each_other_run_one_after_the_other() {
    let cache = tempfile::tempdir().unwrap();
    let cases = reachable_cases(cache.path());
    for (case, extra, top) in cases {
        let s = commit_span_scene(&extra, top);
        let (_, report) = s.check(&["--no-record"]);
        assert_eq!(
            report["integrity"]["base_tests"], "pass",
            "{case}: {report}"
        );
        let own = &report["checks"][0];
        let over = runs(&report, "overlay")[0];
        let ((s1, e1, _), (s2, e2, _)) = (span_of(own), span_of(over));
        assert!(
            e1 <= s2 || e2 <= s1,
            "{case}: the runs overlapped: {report}"
        );
        assert_eq!(own["parallel"], false, "{case}: {report}");
        assert_eq!(over["parallel"], false, "{case}: {report}");
    }
}

/// An attack on the head start: the overlay ran for every check beside the commit's run, but a
/// check that fails on the commit is judged as before — its overlay run is not kept, and the
/// return is not let through by it.
#[test]
fn an_overlay_run_early_counts_only_for_checks_that_passed_on_the_commit() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let broken = "sub() { echo 0; }\n";
    let config =
        format!("[[checks]]\nname = \"suite\"\nrun = '{RUN}'\ntimeout_s = 60\nnetwork = false\n");
    let s = scene(
        &config,
        &[],
        &[
            ("src/sub.sh", Some(broken)),
            ("tests/sub_test.sh", Some(SUB_TEST)),
        ],
    );
    let (code, report) = s.check(&["--no-record"]);
    assert_eq!(report["checks"][0]["exit_code"], 1, "{report}");
    assert_eq!(
        (code, report["verdict"].as_str()),
        (1, Some("FAIL")),
        "{report}"
    );
    assert!(runs(&report, "overlay").is_empty(), "{report}");
}
