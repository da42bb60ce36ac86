//! The test census (SPEC §26.4): each check's run yields the ids of the tests that ran and
//! passed; a test that passed on the merge base and did not pass on the commit is
//! `tests-missing`, and the report's check entry carries `census`. Real runners on real
//! repositories: cargo (libtest), Python's unittest and pytest (installed into a venv once per
//! build directory), `go test -json`, `node --test`; a TAP-printing script where the runner is
//! beside the point. A missing toolchain fails its test loudly; nothing is skipped.
//!
//! Attacks, one test each: a test deleted; `mod tests;` removed so libtest runs 0 tests (exit
//! 0); a pytest `-k` deselect in a new `pytest.ini`; the runner swapped out behind a wrapper
//! (`make test` printing nothing any runner prints); a test made to fail while the check passes
//! anyway; an id carrying terminal escapes. Honest controls: a return that adds a test; the
//! base's run taken once per base commit and reused by a second agent.

use std::path::{Path, PathBuf};
use std::process::Command;

use git2::Oid;
use serde_json::Value;

use crate::fixture::parts;
use crate::scene::{Scene, StatusDoc, json_report};

/// The absolute path of `tool` on PATH; `None` when it is absent (the test says so in one line
/// and is skipped; under `.ci/run` it fails instead: [`crate::fixture::require`]).
fn require(tool: &'static str) -> Option<PathBuf> {
    crate::fixture::require(crate::fixture::Part::Tool(tool))
}

/// A directory kept across test runs (tool caches, the pytest venv), readable by checks.
fn shared_dir(name: &str) -> PathBuf {
    let dir = crate::fixture::readable_by_checks()
        .join("census")
        .join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A repository whose `main` holds `config` and `files`, with agents branching from it.
struct Suite {
    s: Scene,
    env: Vec<(String, String)>,
}

impl Suite {
    fn new(config: &str, files: &[(&str, Option<&str>)]) -> Suite {
        let mut all = vec![(".closegate.toml", Some(config))];
        all.extend_from_slice(files);
        let s = Scene::new().on_main(&all, "configure closegate");
        Suite { s, env: Vec::new() }
    }

    /// Agent `slug` on `agent/<slug>` with `files` committed, its worktree and a close-ok
    /// document naming `artifact`.
    fn agent(&self, slug: &str, files: &[(&str, Option<&str>)], artifact: &str) -> (PathBuf, Oid) {
        let branch = format!("agent/{slug}");
        let tip = self.s.fx.commit(&branch, files, &format!("work of {slug}"));
        let wt = self.s.fx.worktree(slug, &branch);
        let path = wt.canonicalize().unwrap().display().to_string();
        let sha = &tip.to_string()[..12];
        StatusDoc::complete(slug, "close-ok")
            .last_commit(sha, &format!("work of {slug}"))
            .artifacts(&[artifact])
            .close(sha, &branch, &path)
            .write(&wt);
        (wt, tip)
    }

    fn command(&self, wt: &Path, args: &[&str]) -> Command {
        let mut cmd = self.s.bin(wt, args);
        cmd.env_remove("CARGO_TARGET_DIR");
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd
    }

    /// `closegate check --format json <args>` in `wt`.
    fn check(&self, wt: &Path, args: &[&str]) -> (i32, Value) {
        let mut all = vec!["check", "--format", "json"];
        all.extend_from_slice(args);
        json_report(&self.command(wt, &all).output().unwrap())
    }

    fn merge_base(&self, tip: Oid) -> Oid {
        let main = self.s.fx.repo.refname_to_id("refs/heads/main").unwrap();
        self.s.fx.repo.merge_base(main, tip).unwrap()
    }
}

fn codes(report: &Value) -> Vec<String> {
    crate::fixture::report_codes(report)
}

/// The census's one finding: `tests-missing` (gate `checks`), or — where the return changed test
/// paths and the overlay ran every base test — `tests-weakened-edit` (gate `protected`), since
/// SPEC §27.1 makes a test gone from the commit's own run a dropped test then. (Before §27.1 every
/// such test expected `tests-missing`; the message is the census's either way.)
fn missing_message(report: &Value) -> String {
    let found: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            f["code"] == "tests-missing"
                || (f["code"] == "tests-weakened-edit" && f["path"].is_null())
        })
        .collect();
    assert_eq!(found.len(), 1, "{report}");
    assert_eq!(found[0]["severity"], "review");
    let gate = match found[0]["code"].as_str() {
        Some("tests-missing") => "checks",
        _ => "protected",
    };
    assert_eq!(found[0]["gate"], gate);
    found[0]["message"].as_str().unwrap().to_string()
}

/// The report's census of its first check.
fn census(report: &Value) -> &Value {
    &report["checks"][0]["census"]
}

fn expect_census(report: &Value, runner: &str, base: u64, commit: u64, missing: &[&str]) {
    let want = serde_json::json!({
        "runner": runner, "base": base, "commit": commit, "missing": missing,
    });
    assert_eq!(census(report), &want, "{report}");
}

// --- A TAP-printing script: the census rules, with no toolchain in the way ----------------------

/// `sh t.sh` prints TAP: one line per test named in `tests.txt` (the suite the agent edits).
const TAP_CONFIG: &str =
    "[[checks]]\nname = \"suite\"\nrun = \"sh t.sh\"\ncensus = \"tap\"\ntimeout_s = 60\n";
const TAP_SCRIPT: &str = "echo 'TAP version 13'\nn=0\nwhile read -r t; do n=$((n+1)); echo \"ok $n - $t\"; done < tests.txt\necho \"1..$n\"\n";

fn tap_suite(config: &str) -> Suite {
    Suite::new(
        config,
        &[
            ("t.sh", Some(TAP_SCRIPT)),
            ("tests.txt", Some("adds\nsubtracts\nmultiplies\n")),
            ("src/lib.rs", Some("pub fn x() {}\n")),
        ],
    )
}

#[test]
fn a_deleted_test_is_tests_missing_naming_it_and_the_count() {
    let suite = tap_suite(TAP_CONFIG);
    let (wt, _) = suite.agent(
        "x",
        &[
            ("tests.txt", Some("adds\nmultiplies\n")),
            ("src/lib.rs", Some("pub fn x() -> u8 { 1 }\n")),
        ],
        "src/lib.rs",
    );
    let (code, report) = suite.check(&wt, &["--no-record"]);
    expect_census(&report, "tap", 3, 2, &["subtracts"]);
    let msg = missing_message(&report);
    assert!(
        msg.contains("check `suite`: 1 test that passed on the merge base"),
        "{msg}"
    );
    assert!(msg.ends_with(": subtracts"), "{msg}");
    assert_eq!(report["verdict"], "PENDING_REVIEW", "{report}");
    assert_eq!(code, 3);
    assert_eq!(report["checks"][0]["exit_code"], 0);
}

#[test]
fn human_output_has_a_census_line_and_names_the_baseline_run() {
    let suite = tap_suite(TAP_CONFIG);
    let (wt, _) = suite.agent(
        "x",
        &[
            ("tests.txt", Some("adds\nmultiplies\n")),
            ("src/lib.rs", Some("pub fn x() -> u8 { 1 }\n")),
        ],
        "src/lib.rs",
    );
    let (_, out, _) = parts(
        &suite
            .command(&wt, &["check", "--no-record"])
            .output()
            .unwrap(),
    );
    assert!(
        out.contains("census: tap, 3 passed on the base, 2 on the commit, 1 missing"),
        "{out}"
    );
    assert!(
        out.contains("base             census baseline (tree "),
        "{out}"
    );
}

#[test]
fn a_run_reporting_no_test_where_the_base_ran_some_is_tests_missing_whatever_its_exit() {
    let suite = tap_suite(TAP_CONFIG);
    let (wt, _) = suite.agent("x", &[("tests.txt", Some(""))], "tests.txt");
    let (_, report) = suite.check(&wt, &["--no-record"]);
    assert_eq!(report["checks"][0]["exit_code"], 0, "{report}");
    expect_census(&report, "tap", 3, 0, &["adds", "multiplies", "subtracts"]);
    let msg = missing_message(&report);
    assert!(msg.contains("ran no passing test (tap)"), "{msg}");
    assert!(msg.contains("3 tests missing"), "{msg}");
}

#[test]
fn more_than_twenty_missing_tests_are_named_twenty_and_counted() {
    let many: String = (0..25).map(|i| format!("t{i:02}\n")).collect();
    let suite = Suite::new(
        TAP_CONFIG,
        &[
            ("t.sh", Some(TAP_SCRIPT)),
            ("tests.txt", Some(&many)),
            ("src/lib.rs", Some("\n")),
        ],
    );
    let (wt, _) = suite.agent("x", &[("tests.txt", Some("t00\n"))], "tests.txt");
    let (_, report) = suite.check(&wt, &["--no-record"]);
    let msg = missing_message(&report);
    assert!(msg.contains("24 tests that passed"), "{msg}");
    assert!(msg.contains("t20 and 4 more"), "{msg}");
    assert!(!msg.contains("t21"), "{msg}");
    assert_eq!(census(&report)["missing"].as_array().unwrap().len(), 24);
}

#[test]
fn an_honest_return_adding_a_test_has_no_finding() {
    let suite = tap_suite(TAP_CONFIG);
    let (wt, _) = suite.agent(
        "x",
        &[
            ("tests.txt", Some("adds\nsubtracts\nmultiplies\ndivides\n")),
            ("src/lib.rs", Some("pub fn x() -> u8 { 1 }\n")),
        ],
        "src/lib.rs",
    );
    let (_, report) = suite.check(&wt, &["--no-record"]);
    expect_census(&report, "tap", 3, 4, &[]);
    assert!(
        !codes(&report).contains(&"tests-missing".to_string()),
        "{report}"
    );
}

#[test]
fn a_test_that_fails_on_the_commit_is_missing_even_when_the_check_passes() {
    // The suite exits 0 whatever its tests say.
    let script = "echo 'TAP version 13'\nn=0\nwhile read -r t r; do n=$((n+1)); echo \"${r:-ok} $n - $t\"; done < tests.txt\necho \"1..$n\"\n";
    let suite = Suite::new(
        TAP_CONFIG,
        &[
            ("t.sh", Some(script)),
            ("tests.txt", Some("a\nb\n")),
            ("src/lib.rs", Some("\n")),
        ],
    );
    let (wt, _) = suite.agent(
        "x",
        &[
            ("src/lib.rs", Some("// b breaks\n")),
            ("tests.txt", Some("a\nb not ok\n")),
        ],
        "src/lib.rs",
    );
    let (_, report) = suite.check(&wt, &["--no-record"]);
    assert_eq!(report["checks"][0]["exit_code"], 0);
    expect_census(&report, "tap", 2, 1, &["b"]);
}

#[test]
fn the_base_census_is_taken_once_per_base_commit_and_reused_by_every_agent() {
    let counter = tempfile::tempdir().unwrap();
    let runs = counter.path().join("runs");
    let config = format!(
        "[[checks]]\nname = \"suite\"\nrun = 'echo \"$CLOSEGATE_COMMIT\" >> {}; sh t.sh'\ncensus = \"tap\"\ntimeout_s = 60\nwritable = ['{}']\n",
        runs.display(),
        counter.path().display()
    );
    let suite = tap_suite(&config);
    let (x, x_tip) = suite.agent(
        "x",
        &[("src/lib.rs", Some("pub fn x() -> u8 { 1 }\n"))],
        "src/lib.rs",
    );
    let (y, _) = suite.agent("y", &[("tests.txt", Some("adds\n"))], "tests.txt");
    let base = suite.merge_base(x_tip).to_string();
    let ran_on_base = || {
        let text = std::fs::read_to_string(&runs).unwrap_or_default();
        text.lines().filter(|l| *l == base).count()
    };
    let (_, first) = suite.check(&x, &[]);
    assert_eq!(ran_on_base(), 1, "{first}");
    expect_census(&first, "tap", 3, 3, &[]);
    // A second agent on the same base: the base's run (and its census) comes from the record.
    let (_, second) = suite.check(&y, &[]);
    assert_eq!(ran_on_base(), 1, "{second}");
    expect_census(&second, "tap", 3, 1, &["multiplies", "subtracts"]);
    let base_runs: Vec<&Value> = second["integrity"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["on"] == "base")
        .collect();
    assert!(base_runs[0]["reused"].is_string(), "{second}");
    // The first agent again: its own run and the base's are both reused, the census the same.
    let lines_before = std::fs::read_to_string(&runs).unwrap().lines().count();
    let (_, again) = suite.check(&x, &[]);
    assert_eq!(
        std::fs::read_to_string(&runs).unwrap().lines().count(),
        lines_before
    );
    assert!(again["checks"][0]["reused"].is_string(), "{again}");
    assert_eq!(census(&again), census(&first));
}

#[test]
fn a_runner_closegate_does_not_read_gives_census_null_and_human_output_says_so() {
    let config = "[[checks]]\nname = \"suite\"\nrun = \"sh t.sh\"\ntimeout_s = 60\n";
    let suite = tap_suite(config);
    let (wt, _) = suite.agent("x", &[("tests.txt", Some("adds\n"))], "tests.txt");
    let (_, report) = suite.check(&wt, &["--no-record"]);
    assert!(census(&report).is_null(), "{report}");
    assert!(!codes(&report).contains(&"tests-missing".to_string()));
    // No run on the merge base's own tree is made for it.
    let on_base = report["integrity"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["on"] == "base")
        .count();
    assert_eq!(on_base, 0, "{report}");
    let (_, out, _) = parts(
        &suite
            .command(&wt, &["check", "--no-record"])
            .output()
            .unwrap(),
    );
    assert!(
        out.contains("census: none (its `run` names no test runner closegate reads"),
        "{out}"
    );
}

#[test]
fn census_off_turns_the_census_off() {
    let config = TAP_CONFIG.replace("census = \"tap\"", "census = \"off\"");
    let suite = tap_suite(&config);
    let (wt, _) = suite.agent("x", &[("tests.txt", Some(""))], "tests.txt");
    let (_, report) = suite.check(&wt, &["--no-record"]);
    assert!(census(&report).is_null(), "{report}");
    assert!(!codes(&report).contains(&"tests-missing".to_string()));
}

#[test]
fn a_census_key_naming_no_runner_is_an_exit_2_naming_the_key() {
    let config = TAP_CONFIG.replace("census = \"tap\"", "census = \"rspec\"");
    let suite = tap_suite(&config);
    let (wt, _) = suite.agent("x", &[("src/lib.rs", Some("\n"))], "src/lib.rs");
    let (code, _, err) = parts(&suite.command(&wt, &["check"]).output().unwrap());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("`checks[0].census`: `rspec` is not a runner"),
        "{err}"
    );
}

#[test]
fn a_wrapper_whose_runner_is_swapped_out_runs_no_test_and_is_tests_missing() {
    // `make test` wraps the TAP script; the agent rewires the target to print nothing a runner
    // prints. Under `auto` the runner is the one the base's run showed.
    let make = "test:\n\tsh t.sh\n";
    let config = "[[checks]]\nname = \"suite\"\nrun = \"make -s test\"\ntimeout_s = 60\n";
    let suite = Suite::new(
        config,
        &[
            ("Makefile", Some(make)),
            ("t.sh", Some(TAP_SCRIPT)),
            ("tests.txt", Some("adds\nsubtracts\n")),
        ],
    );
    if require("make").is_none() {
        return;
    }
    let (wt, _) = suite.agent("x", &[("t.sh", Some("echo all good\n"))], "t.sh");
    let (_, report) = suite.check(&wt, &["--no-record"]);
    expect_census(&report, "tap", 2, 0, &["adds", "subtracts"]);
    missing_message(&report);
    // An honest change behind the same wrapper: no finding.
    let (wt, _) = suite.agent(
        "y",
        &[("tests.txt", Some("adds\nsubtracts\nmore\n"))],
        "tests.txt",
    );
    let (_, report) = suite.check(&wt, &["--no-record"]);
    expect_census(&report, "tap", 2, 3, &[]);
}

#[test]
fn ids_are_kept_free_of_terminal_escapes() {
    // A test name carrying escapes that clear the screen and retitle the terminal.
    let evil = "adds\x1b[2J\x1b]0;pwned\x07\n";
    let suite = Suite::new(
        TAP_CONFIG,
        &[
            ("t.sh", Some(TAP_SCRIPT)),
            ("tests.txt", Some(evil)),
            ("src/lib.rs", Some("\n")),
        ],
    );
    let (wt, _) = suite.agent("x", &[("tests.txt", Some(""))], "tests.txt");
    let (_, report) = suite.check(&wt, &["--no-record"]);
    let missing = census(&report)["missing"][0].as_str().unwrap().to_string();
    assert_eq!(missing, "adds", "{report}");
    let (_, out, _) = parts(
        &suite
            .command(&wt, &["check", "--no-record"])
            .output()
            .unwrap(),
    );
    assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out:?}");
}

// --- Real runners ---------------------------------------------------------------------------

/// A crate `tally` with two unit tests in `src/tests.rs` and one integration test.
const CARGO_TOML: &str =
    "[package]\nname = \"tally\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n";
const LIB_RS: &str =
    "pub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests;\n";
const TESTS_RS: &str = "use super::add;\n\n#[test]\nfn adds() {\n    assert_eq!(add(2, 3), 5);\n}\n\n#[test]\nfn adds_zero() {\n    assert_eq!(add(2, 0), 2);\n}\n";

fn cargo_suite() -> Suite {
    let cargo = require("cargo").expect("cargo runs this very test");
    // Each run builds in its own checkout: a target directory shared by runs of different trees
    // at once can hand one tree the other's test binary (cargo judges freshness by mtime).
    let config = "[[checks]]\nname = \"test\"\nrun = \"cargo test --offline\"\ntimeout_s = 600\n";
    let mut suite = Suite::new(
        config,
        &[
            ("Cargo.toml", Some(CARGO_TOML)),
            ("src/lib.rs", Some(LIB_RS)),
            ("src/tests.rs", Some(TESTS_RS)),
            (
                "tests/sums.rs",
                Some("#[test]\nfn sums() {\n    assert_eq!(tally::add(1, 1), 2);\n}\n"),
            ),
            (".gitignore", Some("target/\nCargo.lock\n")),
        ],
    );
    let home = std::env::var("HOME").unwrap();
    suite.env = vec![
        (
            "CARGO_HOME".into(),
            std::env::var("CARGO_HOME").unwrap_or(format!("{home}/.cargo")),
        ),
        (
            "RUSTUP_HOME".into(),
            std::env::var("RUSTUP_HOME").unwrap_or(format!("{home}/.rustup")),
        ),
        (
            "PATH".into(),
            format!("{}:/usr/bin:/bin", cargo.parent().unwrap().display()),
        ),
    ];
    suite
}

#[test]
fn cargo_a_deleted_unit_test_is_tests_missing() {
    let suite = cargo_suite();
    let only_adds = TESTS_RS.split("#[test]\nfn adds_zero").next().unwrap();
    let (wt, _) = suite.agent("x", &[("src/tests.rs", Some(only_adds))], "src/tests.rs");
    let (_, report) = suite.check(&wt, &["--no-record"]);
    assert_eq!(report["checks"][0]["exit_code"], 0, "{report}");
    expect_census(&report, "libtest", 3, 2, &["tally::tests::adds_zero"]);
    missing_message(&report);
}

/// The cheat of issue 37 on termtree: `#[cfg(test)] mod tests;` removed from `src/lib.rs` (a
/// path on no surface): libtest runs 0 unit tests and exits 0.
#[test]
fn cargo_mod_tests_removed_runs_no_unit_test_and_is_tests_missing() {
    let suite = cargo_suite();
    let lib = LIB_RS.replace("#[cfg(test)]\nmod tests;\n", "");
    let (wt, _) = suite.agent("x", &[("src/lib.rs", Some(&lib))], "src/lib.rs");
    let (code, report) = suite.check(&wt, &["--no-record"]);
    assert_eq!(report["checks"][0]["exit_code"], 0, "{report}");
    expect_census(
        &report,
        "libtest",
        3,
        1,
        &["tally::tests::adds", "tally::tests::adds_zero"],
    );
    missing_message(&report);
    assert_eq!(report["verdict"], "PENDING_REVIEW", "{report}");
    assert_eq!(code, 3);
}

/// A venv with pytest, made once per build directory (from PyPI).
/// `None` when python3 is absent (the caller skips).
fn pytest_python() -> Option<PathBuf> {
    let python3 = require("python3")?;
    let venv = shared_dir("pytest-venv");
    let python = venv.join("bin/python");
    if !venv.join("bin/pytest").exists() {
        let out = Command::new(&python3)
            .args(["-m", "venv"])
            .arg(&venv)
            .output()
            .unwrap();
        assert!(out.status.success(), "venv: {out:?}");
        let out = Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "pytest",
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "pip install pytest: {out:?}");
    }
    Some(python)
}

const CALC_PY: &str = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";
const TEST_CALC_PY: &str = "import unittest\n\nimport calc\n\n\nclass CalcTests(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n\n    def test_sub(self):\n        self.assertEqual(calc.sub(5, 3), 2)\n";

/// The cheat of issue 37 on itsdangerous: a new runner configuration deselecting a test
/// (`-k "not test_sub"`); the suite passes.
#[test]
fn pytest_a_k_deselect_is_tests_missing() {
    let Some(python) = pytest_python() else {
        return;
    };
    let config = format!(
        "[[checks]]\nname = \"pytest\"\nrun = \"{} -m pytest -v -p no:cacheprovider\"\ntimeout_s = 300\n",
        python.display()
    );
    let suite = Suite::new(
        &config,
        &[
            ("calc.py", Some(CALC_PY)),
            ("test_calc.py", Some(TEST_CALC_PY)),
        ],
    );
    let (wt, _) = suite.agent(
        "x",
        &[
            (
                "pytest.ini",
                Some("[pytest]\naddopts = -k \"not test_sub\"\n"),
            ),
            ("calc.py", Some(&CALC_PY.replace("a - b", "a + b"))),
        ],
        "calc.py",
    );
    let (_, report) = suite.check(&wt, &["--no-record"]);
    assert_eq!(report["checks"][0]["exit_code"], 0, "{report}");
    expect_census(
        &report,
        "pytest",
        2,
        1,
        &["test_calc.py::CalcTests::test_sub"],
    );
    missing_message(&report);
}

#[test]
fn unittest_a_deleted_test_is_tests_missing_and_an_added_one_is_not() {
    if require("python3").is_none() {
        return;
    }
    let config =
        "[[checks]]\nname = \"unittest\"\nrun = \"python3 -m unittest -v\"\ntimeout_s = 300\n";
    let suite = Suite::new(
        config,
        &[
            ("calc.py", Some(CALC_PY)),
            ("test_calc.py", Some(TEST_CALC_PY)),
        ],
    );
    let gone = TEST_CALC_PY
        .split("\n    def test_sub")
        .next()
        .unwrap()
        .to_string()
        + "\n";
    let (wt, _) = suite.agent("x", &[("test_calc.py", Some(&gone))], "test_calc.py");
    let (_, report) = suite.check(&wt, &["--no-record"]);
    expect_census(&report, "unittest", 2, 1, &["test_calc.CalcTests.test_sub"]);
    missing_message(&report);
    let more = format!(
        "{TEST_CALC_PY}\n    def test_add_zero(self):\n        self.assertEqual(calc.add(2, 0), 2)\n"
    );
    let (wt, _) = suite.agent("y", &[("test_calc.py", Some(&more))], "test_calc.py");
    let (_, report) = suite.check(&wt, &["--no-record"]);
    expect_census(&report, "unittest", 2, 3, &[]);
}

#[test]
fn go_test_json_a_deleted_test_is_tests_missing() {
    if require("go").is_none() {
        return;
    }
    let cache = shared_dir("go-cache");
    let config = format!(
        "[[checks]]\nname = \"go\"\nrun = \"go test -json ./...\"\ntimeout_s = 300\nwritable = ['{}']\n",
        cache.display()
    );
    let test = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n\nfunc TestAddZero(t *testing.T) {\n\tif Add(2, 0) != 2 {\n\t\tt.Fatal(\"zero\")\n\t}\n}\n";
    let mut suite = Suite::new(
        &config,
        &[
            ("go.mod", Some("module example.com/calc\n\ngo 1.19\n")),
            (
                "calc.go",
                Some("package calc\n\nfunc Add(a, b int) int { return a + b }\n"),
            ),
            ("calc_test.go", Some(test)),
        ],
    );
    suite.env = vec![
        ("GOCACHE".into(), cache.join("build").display().to_string()),
        ("GOPATH".into(), cache.join("path").display().to_string()),
        ("GOFLAGS".into(), "-mod=mod".into()),
    ];
    let gone = test.split("\nfunc TestAddZero").next().unwrap();
    let (wt, _) = suite.agent("x", &[("calc_test.go", Some(gone))], "calc_test.go");
    let (_, report) = suite.check(&wt, &["--no-record"]);
    assert_eq!(report["checks"][0]["exit_code"], 0, "{report}");
    expect_census(&report, "go", 2, 1, &["example.com/calc::TestAddZero"]);
    missing_message(&report);
}

#[test]
fn node_test_a_deleted_test_is_tests_missing() {
    if require("node").is_none() {
        return;
    }
    let config = "[[checks]]\nname = \"node\"\nrun = \"node --test\"\ntimeout_s = 300\n";
    let test = "const { test } = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('../calc.js');\n\ntest('adds', () => assert.strictEqual(add(2, 3), 5));\ntest('adds zero', () => assert.strictEqual(add(2, 0), 2));\n";
    let suite = Suite::new(
        config,
        &[
            ("calc.js", Some("exports.add = (a, b) => a + b;\n")),
            ("test/calc.test.js", Some(test)),
        ],
    );
    let gone = test.replace(
        "test('adds zero', () => assert.strictEqual(add(2, 0), 2));\n",
        "",
    );
    let (wt, _) = suite.agent(
        "x",
        &[("test/calc.test.js", Some(&gone))],
        "test/calc.test.js",
    );
    let (_, report) = suite.check(&wt, &["--no-record"]);
    assert_eq!(report["checks"][0]["exit_code"], 0, "{report}");
    expect_census(&report, "node", 2, 1, &["adds zero"]);
    missing_message(&report);
}

/// SPEC §27.1: ids are never paired by shape. A title holding a random value is set aside only
/// because a second run of the base's own tree does not pass it again; a stable
/// `TestIssue1234567` that the agent's code makes disappear is missing however alike the new
/// `TestIssue7654321` looks (before §27.1 the two were paired and the return was VERIFIED).
#[test]
fn ids_are_paired_by_identity_a_random_title_by_a_second_base_run() {
    let script = "echo 'TAP version 13'\necho \"ok 1 - random 0.$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')\"\n\
                  if [ -f src/skip ]; then echo 'ok 2 - TestIssue7654321'; else echo 'ok 2 - TestIssue1234567'; fi\n\
                  echo '1..2'\n";
    let suite = Suite::new(
        TAP_CONFIG,
        &[
            ("t.sh", Some(script)),
            ("src/lib.rs", Some("pub fn x() {}\n")),
        ],
    );
    // Honest: the random title differs every run, and nothing else is gone.
    let (wt, _) = suite.agent(
        "x",
        &[("src/lib.rs", Some("pub fn x() -> u8 { 1 }\n"))],
        "src/lib.rs",
    );
    let (_, report) = suite.check(&wt, &["--no-record"]);
    assert!(
        !codes(&report).contains(&"tests-missing".to_string()),
        "{report}"
    );
    assert_eq!(report["verdict"], "VERIFIED", "{report}");
    stable_id_swapped_away_is_missing(&suite);
}

/// The same with a base snapshot (a check that keeps state): the base's run that builds the
/// snapshot is not the second run of the base — a fresh run is made — so a title renamed each
/// run is set aside for a code-only return and for one that adds a test (the overlay), as with
/// no snapshot; the stable id swapped by the code is still missing.
#[test]
fn a_random_title_is_set_aside_by_a_fresh_base_run_when_the_check_keeps_state() {
    let config = "[[checks]]\nname = \"suite\"\nrun = \"sh t.sh\"\ncensus = \"tap\"\n\
                  keep = [\"warm/\"]\nnetwork = false\ntimeout_s = 60\n";
    let script = "mkdir -p warm\necho 'TAP version 13'\necho \"ok 1 - random 0.$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')\"\n\
                  if [ -f src/skip ]; then echo 'ok 2 - TestIssue7654321'; else echo 'ok 2 - TestIssue1234567'; fi\n\
                  for t in tests/*.sh; do [ -f \"$t\" ] && echo \"ok 3 - $t\"; done\n\
                  echo '1..3'\n";
    let suite = Suite::new(
        config,
        &[
            ("t.sh", Some(script)),
            ("tests/a.sh", Some("true\n")),
            ("src/lib.rs", Some("pub fn x() {}\n")),
        ],
    );
    let honest: [&[(&str, Option<&str>)]; 2] = [
        &[("src/lib.rs", Some("pub fn x() -> u8 { 1 }\n"))],
        &[
            ("src/lib.rs", Some("pub fn x() -> u8 { 1 }\n")),
            ("tests/b.sh", Some("true\n")),
        ],
    ];
    for (n, files) in honest.iter().enumerate() {
        let (wt, _) = suite.agent(&format!("h{n}"), files, "src/lib.rs");
        let (_, report) = suite.check(&wt, &["--no-record"]);
        assert!(
            !codes(&report).contains(&"tests-missing".to_string()),
            "{report}"
        );
        assert!(
            !codes(&report).contains(&"tests-weakened".to_string()),
            "{report}"
        );
    }
    stable_id_swapped_away_is_missing(&suite);
}

/// The attack on the random-title rule: the agent's code makes the stable `TestIssue1234567`
/// give way to `TestIssue7654321`, the same shape; it is still missing, never VERIFIED.
fn stable_id_swapped_away_is_missing(suite: &Suite) {
    let (wt, _) = suite.agent(
        "y",
        &[
            ("src/lib.rs", Some("pub fn x() -> u8 { 2 }\n")),
            ("src/skip", Some("")),
        ],
        "src/lib.rs",
    );
    let (_, report) = suite.check(&wt, &["--no-record"]);
    let msg = missing_message(&report);
    assert!(msg.ends_with(": TestIssue1234567"), "{msg}");
    assert_ne!(report["verdict"], "VERIFIED", "{report}");
}
