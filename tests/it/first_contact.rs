//! First contact with real projects (issue 25, SPEC §4.5, §17): `close-no-change`, the narrowed
//! `config-not-from-worktree`, the widened default `tests` surface, `{ extend = [...] }`, and
//! assignments and option words of a check's `run` that name no path.

use std::path::{Path, PathBuf};

use closegate::config::Config;
use serde_json::Value;

use crate::fixture::{Fixture, closegate, git, parts, report_codes};

const CONFIG: &str = "[[checks]]\nname = \"smoke\"\nrun = \"true\"\ntimeout_s = 60\n";

/// `closegate close` then `closegate check --format json` in `wt`: (exit code, report).
fn close_and_check(wt: &Path, check_args: &[&str]) -> (i32, Value) {
    let (code, out, err) = parts(&closegate(
        wt,
        &["close", "--slug", "x", "--abstract", "work"],
    ));
    assert_eq!(code, 0, "close: {out}{err}");
    check(wt, check_args)
}

fn check(wt: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["check", "--format", "json"];
    all.extend_from_slice(args);
    let out = closegate(wt, &all);
    let (code, stdout, stderr) = parts(&out);
    let report = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}"));
    (code, report)
}

/// A repository configured with `config`, and a worktree `wt/x` on a fresh `agent/x` at main.
fn scene(config: &str) -> (Fixture, PathBuf) {
    let fx = Fixture::new();
    fx.commit("main", &[(".closegate.toml", Some(config))], "configure");
    fx.checkout(&fx.root());
    let main = fx.repo.refname_to_id("refs/heads/main").unwrap();
    fx.repo
        .branch("agent/x", &fx.repo.find_commit(main).unwrap(), false)
        .unwrap();
    let wt = fx.worktree("x", "agent/x");
    (fx, wt)
}

/// Attack: an agent that changed nothing claims `close-ok` — refused, not VERIFIED.
#[test]
fn an_agent_that_changed_nothing_is_refused() {
    let (_fx, wt) = scene(CONFIG);
    let (code, report) = close_and_check(&wt, &["--no-record"]);
    assert_eq!(code, 1, "{:?}", report_codes(&report));
    let codes = report_codes(&report);
    assert!(codes.contains(&"close-no-change".to_string()), "{codes:?}");
    let f = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "close-no-change")
        .unwrap();
    assert_eq!(f["severity"], "refusal");
    assert_eq!(f["gate"], "close");
}

/// Attack: commits that cancel out (add, then revert) still add nothing.
#[test]
fn commits_that_cancel_out_add_nothing() {
    let (fx, wt) = scene(CONFIG);
    fx.commit("agent/x", &[("src/a.rs", Some("x\n"))], "add a");
    fx.commit("agent/x", &[("src/a.rs", None)], "remove a");
    git(&wt, &["reset", "--hard", "-q", "agent/x"]);
    let (code, report) = close_and_check(&wt, &["--no-record"]);
    assert_eq!(code, 1);
    assert!(report_codes(&report).contains(&"close-no-change".to_string()));
}

/// `closed-without-merge` with nothing done is a normal retirement; `stop-2-ready` is a claim.
#[test]
fn closed_without_merge_with_nothing_done_is_not_refused() {
    let (_fx, wt) = scene(CONFIG);
    let out = closegate(
        &wt,
        &[
            "close",
            "--slug",
            "x",
            "--abstract",
            "w",
            "--state",
            "closed-without-merge",
        ],
    );
    assert_eq!(parts(&out).0, 0, "{}", parts(&out).2);
    let (code, report) = check(&wt, &["--no-record"]);
    assert!(!report_codes(&report).contains(&"close-no-change".to_string()));
    assert_eq!(code, 0, "{:?}", report_codes(&report));
    let out = closegate(
        &wt,
        &[
            "close",
            "--slug",
            "x",
            "--abstract",
            "w",
            "--state",
            "stop-2-ready",
        ],
    );
    assert_eq!(parts(&out).0, 0);
    let (code, report) = check(&wt, &["--no-record"]);
    assert_eq!(code, 1);
    assert!(report_codes(&report).contains(&"close-no-change".to_string()));
}

/// Work that was verified, then merged (the merge base is now the tip itself), is not "nothing":
/// the passing record for this branch and commit exempts it. A passing record of another branch
/// at the same commit does not.
#[test]
fn verified_then_merged_work_is_not_nothing() {
    let (fx, wt) = scene(CONFIG);
    let tip = fx.commit("agent/x", &[("src/a.rs", Some("x\n"))], "add a");
    git(&wt, &["reset", "--hard", "-q", "agent/x"]);
    let (code, report) = close_and_check(&wt, &[]);
    assert_eq!(code, 0, "{:?}", report_codes(&report));
    // The base fast-forwards to the agent's tip.
    fx.repo
        .reference("refs/heads/main", tip, true, "merge agent/x")
        .unwrap();
    let (code, report) = check(&wt, &["--no-record"]);
    assert_eq!(
        code,
        0,
        "merged work stays verified: {:?}",
        report_codes(&report)
    );

    // Another agent branch at the same commit was never verified on its own.
    fx.repo
        .branch("agent/y", &fx.repo.find_commit(tip).unwrap(), false)
        .unwrap();
    let wt_y = fx.worktree("y", "agent/y");
    let (code, report) = close_and_check(&wt_y, &["--no-record"]);
    assert_eq!(code, 1, "{:?}", report_codes(&report));
    assert!(report_codes(&report).contains(&"close-no-change".to_string()));
}

/// SPEC §17: `config-not-from-worktree` only for an edit made in the worktree, not when the
/// base's configuration moved on after the worktree was made.
#[test]
fn config_moved_on_in_the_base_is_not_an_edit_in_the_worktree() {
    let (fx, wt) = scene(CONFIG);
    fx.commit("agent/x", &[("src/a.rs", Some("x\n"))], "add a");
    git(&wt, &["reset", "--hard", "-q", "agent/x"]);
    let moved = "[[checks]]\nname = \"smoke\"\nrun = \"true\"\ntimeout_s = 61\n";
    fx.commit(
        "main",
        &[(".closegate.toml", Some(moved))],
        "tune the check",
    );
    let (code, report) = close_and_check(&wt, &["--no-record"]);
    assert_eq!(code, 0, "{:?}", report_codes(&report));
    assert!(!report_codes(&report).contains(&"config-not-from-worktree".to_string()));

    // An edit in the worktree (uncommitted) is named.
    std::fs::write(
        wt.join(".closegate.toml"),
        "[[checks]]\nname = \"s\"\nrun = \"true\"\n",
    )
    .unwrap();
    let (_, report) = check(&wt, &["--no-record"]);
    assert!(report_codes(&report).contains(&"config-not-from-worktree".to_string()));
}

fn config(text: &str) -> Config {
    Config::parse(text, "test").unwrap()
}

/// SPEC §4.5: the widened default `tests` surface — real projects keep suites in `test.js`,
/// `test.py`, `tests.rs`, `spec/`, `e2e/`, `*Test.java` …; `.codex/` is on `instructions`.
#[test]
fn widened_default_tests_surface() {
    let c = Config::default();
    for path in [
        "test.js",
        "test.py",
        "src/tests.rs",
        "spec/a_spec.rb",
        "lib/x_spec.rb",
        "specs/a.js",
        "e2e/login.ts",
        "cypress/run.js",
        "src/FooTest.java",
        "src/FooTests.java",
        "src/FooTest.kt",
        "src/FooTests.cs",
    ] {
        assert_eq!(c.surfaces_for(path), ["tests"], "{path}");
    }
    assert_eq!(c.surfaces_for(".codex/hooks.json"), ["instructions"]);
    assert_eq!(c.surfaces_for(".gemini/settings.json"), ["instructions"]);
    for path in ["src/testing.rs", "contest.py", "latest.js", "src/lib.rs"] {
        assert!(c.surfaces_for(path).is_empty(), "{path}");
    }
}

/// `tests = { extend = [...] }` keeps every default pattern and adds the new ones; a plain list
/// still replaces the surface.
#[test]
fn a_surface_may_be_extended_rather_than_replaced() {
    let c = config("[protected]\ntests = { extend = [\"checks/**\"] }\n");
    assert_eq!(c.surfaces_for("checks/a.sh"), ["tests"]);
    assert_eq!(c.surfaces_for("test.js"), ["tests"], "defaults kept");
    assert_eq!(c.surfaces_for("src/__tests__/a.js"), ["tests"]);
    let c = config("[protected]\ntests = [\"checks/**\"]\n");
    assert!(c.surfaces_for("test.js").is_empty(), "a list replaces");
    // A new surface may be written as an extension of nothing.
    let c = config("[protected]\ndb = { extend = [\"db/**\"] }\n");
    assert_eq!(c.surfaces_for("db/m.sql"), ["db"]);
}

/// Bad shapes are exit-2 errors naming the key.
#[test]
fn bad_surface_shapes_name_the_key() {
    for (text, key) in [
        (
            "[protected]\ntests = { add = [\"x\"] }\n",
            "protected.tests.add",
        ),
        (
            "[protected]\ntests = { extend = 3 }\n",
            "protected.tests.extend",
        ),
        (
            "[protected]\ntests = { extend = [\"[\"] }\n",
            "protected.tests",
        ),
        ("[protected]\npolicy = [\"x/**\"]\n", "protected.policy"),
        (
            "[protected.integrity]\nnope = true\n",
            "protected.integrity.nope",
        ),
        (
            "[protected.integrity]\ntests = \"yes\"\n",
            "protected.integrity.tests",
        ),
    ] {
        let err = Config::parse(text, "main:.closegate.toml").unwrap_err();
        let msg = format!("{err:#}");
        assert!(msg.contains(key), "{text}: {msg}");
    }
    config("[protected.integrity]\ntests = true\n");
    config(
        "[protected.policy]\ntests = \"modify\"\n[protected]\ntests = { extend = [\"t/**\"] }\n",
    );
}

/// SPEC §4.5: `PYTHONPATH=src python3 -m pytest` does not put `src/` on `ci` (every agent would
/// need a human); `-c ci/pytest.ini` does protect that file.
#[test]
fn assignments_and_option_words_name_no_path() {
    let run = "PYTHONPATH=src python3 -m pytest --cov=src -p no:cacheprovider -c ci/pytest.ini";
    let cfg = format!("[[checks]]\nname = \"t\"\nrun = \"{run}\"\n");
    let fx = Fixture::new();
    fx.commit(
        "main",
        &[
            (".closegate.toml", Some(cfg.as_str())),
            ("src/pkg/a.py", Some("A = 1\n")),
            ("ci/pytest.ini", Some("[pytest]\n")),
        ],
        "configure",
    );
    fx.checkout(&fx.root());
    fx.commit(
        "agent/x",
        &[
            ("src/pkg/a.py", Some("A = 2\n")),
            ("ci/pytest.ini", Some("[pytest]\naddopts = -x\n")),
        ],
        "work",
    );
    let wt = fx.worktree("x", "agent/x");
    let (_, report) = close_and_check(&wt, &["--no-checks", "--no-record"]);
    let protected: Vec<&str> = report["protected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    assert_eq!(protected, ["ci/pytest.ini"], "{report}");
}

/// A repository whose `main` carries `config` and `files`.
fn base_with(config: &str, files: &[(&str, Option<&str>)]) -> Fixture {
    let fx = Fixture::new();
    let mut all = vec![(".closegate.toml", Some(config))];
    all.extend_from_slice(files);
    fx.commit("main", &all, "configure");
    fx.checkout(&fx.root());
    fx
}

/// SPEC §17: `validate` lists tracked files that look like tests but match no configured
/// surface (a replaced default) as `validate-unprotected-tests`, a warning that never changes the
/// exit code. Attack: the user replaced `tests` with `["tests/**"]` and the suite is `test.js`.
#[test]
fn validate_lists_tests_a_replaced_surface_leaves_unprotected() {
    let config = "[protected]\ntests = [\"tests/**\"]\n";
    let files = [
        ("test.js", Some("assert(1)\n")),
        ("src/__tests__/a.test.js", Some("x\n")),
        ("tests/ok.py", Some("x\n")),
        ("bin/run.js", Some("x\n")),
        (
            "package.json",
            Some("{\"scripts\": {\"test\": \"node bin/run.js\"}}\n"),
        ),
    ];
    let fx = base_with(config, &files);
    let (code, out, err) = parts(&closegate(&fx.root(), &["validate"]));
    assert_eq!(code, 0, "a warning never changes the exit code: {out}{err}");
    let line = out
        .lines()
        .find(|l| l.contains("validate-unprotected-tests"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains("test.js") && line.contains("src/__tests__/a.test.js"),
        "{line}"
    );
    assert!(
        line.contains("bin/run.js"),
        "the runner's test script names it: {line}"
    );
    assert!(!line.contains("tests/ok.py"), "protected: {line}");

    // Extending instead of replacing protects them: no warning.
    let config = "[protected]\ntests = { extend = [\"bin/**\"] }\n";
    let fx = base_with(config, &files);
    let (code, out, _) = parts(&closegate(&fx.root(), &["validate"]));
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("validate-unprotected-tests"), "{out}");
}

/// SPEC §17: `validate --run` runs every configured check on the base tip in the sandbox; one
/// that fails there is `check-red-on-base` (gap: exit 1), with its output. Attack on the set-up:
/// a check that only passes in the user's clone (a file never committed).
#[test]
fn validate_run_finds_a_check_red_on_base() {
    let config = "[[checks]]\nname = \"green\"\nrun = \"test -f README.md\"\n\n\
                  [[checks]]\nname = \"red\"\nrun = \"echo missing-local-file; test -f local.txt\"\n";
    let fx = base_with(config, &[]);
    fx.write(&fx.root(), "local.txt", "only in the clone\n");
    let (code, out, err) = parts(&closegate(&fx.root(), &["validate"]));
    assert_eq!(code, 0, "without --run nothing runs: {out}{err}");
    assert!(!out.contains("check-red-on-base"), "{out}");
    let (code, out, err) = parts(&closegate(&fx.root(), &["validate", "--run"]));
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("check `green` passed on main"), "{out}");
    let red = out
        .lines()
        .find(|l| l.contains("check-red-on-base"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        red.starts_with("gap check-red-on-base: check `red` exited 1"),
        "{red}"
    );
    assert!(
        out.contains("missing-local-file"),
        "its output is shown: {out}"
    );
}

/// SPEC §18: `validate` warns when the stop hook is installed here but the base tip lacks it.
#[test]
fn validate_warns_when_the_base_lacks_the_installed_hook() {
    let fx = base_with(CONFIG, &[]);
    let root = fx.root();
    let (code, out, err) = parts(&closegate(
        &root,
        &["agent", "install", "--target", "claude-code"],
    ));
    assert_eq!(code, 0, "{out}{err}");
    let (_, out, _) = parts(&closegate(&root, &["validate"]));
    assert!(
        out.contains("warning: .claude/settings.json here has closegate's stop hook but the base tip main does not"),
        "{out}"
    );
    git(&root, &["add", ".claude/settings.json"]);
    git(&root, &["commit", "-qm", "stop hook"]);
    let (_, out, _) = parts(&closegate(&root, &["validate"]));
    assert!(!out.contains(".claude/settings.json here"), "{out}");
}

/// The protected gate's findings and report entries of a branch changing `files` on a base that
/// carries `config` and `base_files` (checks not run).
fn protected_of(
    config: &str,
    base_files: &[(&str, Option<&str>)],
    files: &[(&str, Option<&str>)],
) -> (Vec<String>, Value) {
    let fx = base_with(config, base_files);
    fx.commit("agent/x", files, "work");
    let wt = fx.worktree("x", "agent/x");
    let (_, report) = close_and_check(&wt, &["--no-checks", "--no-record"]);
    let messages = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "protected-surface" && f["severity"] == "review")
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect();
    (messages, report)
}

const PKG: &str = "{\n  \"name\": \"n\",\n  \"scripts\": {\"test\": \"mocha\", \"lint\": \"eslint .\"},\n  \"devDependencies\": {\"mocha\": \"^3\"}\n}\n";

/// SPEC §4.5, attack: the agent rewrites the runner's test command (`"test": "mocha || true"`)
/// instead of fixing the code — PENDING_REVIEW on `ci` with the key named. A dependency added to
/// `package.json`, or a script the checks never run, is not graded input.
#[test]
fn the_runners_test_command_is_graded_input() {
    let config = "[[checks]]\nname = \"t\"\nrun = \"npm install && npm test\"\n";
    let weakened = PKG.replace("\"mocha\", \"lint\"", "\"mocha || true\", \"lint\"");
    let (messages, report) = protected_of(
        config,
        &[("package.json", Some(PKG))],
        &[("package.json", Some(&weakened))],
    );
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].contains("`package.json: scripts.test` on protected surface `ci`"),
        "{messages:?}"
    );
    assert_eq!(
        report["verdict"], "PENDING_REVIEW",
        "a review comes before the --no-checks gap: {report}"
    );
    assert_eq!(report["protected"][0]["surface"], "ci");

    let dep = PKG.replace("\"^3\"}", "\"^3\", \"chai\": \"^4\"}");
    let lint = PKG.replace("eslint .", "eslint src");
    for (what, text) in [("a dependency", dep), ("a script no check runs", lint)] {
        let (messages, _) = protected_of(
            config,
            &[("package.json", Some(PKG))],
            &[("package.json", Some(&text))],
        );
        assert!(messages.is_empty(), "{what}: {messages:?}");
    }
    // A pre-script the invoked script gets, and a `mocha` key, count too.
    let pre = PKG.replace("\"lint\":", "\"pretest\": \"exit 0\", \"lint\":");
    let (messages, _) = protected_of(
        config,
        &[("package.json", Some(PKG))],
        &[("package.json", Some(&pre))],
    );
    assert!(
        messages.iter().any(|m| m.contains("scripts.pretest")),
        "{messages:?}"
    );
    let garbage = "{ not json";
    let (messages, _) = protected_of(
        config,
        &[("package.json", Some(PKG))],
        &[("package.json", Some(garbage))],
    );
    assert!(
        messages.iter().any(|m| m.contains("does not parse")),
        "{messages:?}"
    );
}

/// SPEC §4.5: pytest's tables in pyproject.toml, Cargo's test keys, Makefiles and `.mocharc*`
/// are graded input for the runners that read them, and only for those.
#[test]
fn pytest_cargo_and_make_configuration_is_graded_input() {
    let pyproject = "[project]\nname = \"p\"\ndependencies = []\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n";
    let py = "[[checks]]\nname = \"t\"\nrun = \"PYTHONPATH=src python3 -m pytest\"\n";
    let skip = pyproject.replace("-q", "-q -k 'not slow'");
    let (messages, _) = protected_of(
        py,
        &[("pyproject.toml", Some(pyproject))],
        &[("pyproject.toml", Some(&skip))],
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("`pyproject.toml: tool.pytest.ini_options`")),
        "{messages:?}"
    );
    let dep = pyproject.replace("dependencies = []", "dependencies = [\"attrs\"]");
    let (messages, _) = protected_of(
        py,
        &[("pyproject.toml", Some(pyproject))],
        &[("pyproject.toml", Some(&dep))],
    );
    assert!(messages.is_empty(), "{messages:?}");

    let cargo_toml = "[package]\nname = \"c\"\nversion = \"0.1.0\"\n\n[dependencies]\n";
    let rs = "[[checks]]\nname = \"t\"\nrun = \"cargo test\"\n";
    let harness = format!("{cargo_toml}\n[[test]]\nname = \"it\"\nharness = false\n");
    let (messages, _) = protected_of(
        rs,
        &[("Cargo.toml", Some(cargo_toml))],
        &[("Cargo.toml", Some(&harness))],
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("`Cargo.toml: [[test]]`")),
        "{messages:?}"
    );
    let (messages, _) = protected_of(
        rs,
        &[],
        &[(".cargo/config.toml", Some("[alias]\nt = \"build\"\n"))],
    );
    assert!(
        messages.iter().any(|m| m.contains("`.cargo/config.toml`")),
        "{messages:?}"
    );

    let mk = "[[checks]]\nname = \"t\"\nrun = \"make check\"\n";
    let (messages, _) = protected_of(
        mk,
        &[("Makefile", Some("check:\n\ttrue\n"))],
        &[("Makefile", Some("check:\n\techo skipped\n"))],
    );
    assert!(
        messages.iter().any(|m| m.contains("`Makefile`")),
        "{messages:?}"
    );
    // The same Makefile edit under a cargo check is no graded input.
    let (messages, _) = protected_of(
        rs,
        &[("Makefile", Some("check:\n\ttrue\n"))],
        &[("Makefile", Some("check:\n\techo x\n"))],
    );
    assert!(messages.is_empty(), "{messages:?}");
}

/// `validate --run` runs the base's own tree (trusted code), so a check with `keep` builds the
/// base snapshot there (SPEC §27.2), at the check's one path, outside the common directory.
#[test]
fn validate_run_uses_the_base_workspace_of_a_kept_check() {
    let config = "[[checks]]\nname = \"warm\"\nrun = \"mkdir -p target && pwd > target/where\"\n\
                  keep = [\"target/\"]\n";
    let fx = base_with(config, &[]);
    let (code, out, err) = parts(&closegate(&fx.root(), &["validate", "--run"]));
    assert_eq!(code, 0, "{out}{err}");
    let cache = crate::fixture::cache_root(&fx.git_dir());
    let snaps = crate::fixture::snapshots(&cache, "warm");
    assert_eq!(snaps.len(), 1, "{snaps:?}");
    let said = std::fs::read_to_string(snaps[0].join("checkout/target/where")).unwrap();
    assert_eq!(
        said.trim(),
        cache.join("checks/warm/checkout").display().to_string()
    );
    assert!(!fx.git_dir().join("closegate/work").exists());
}

/// SPEC §4.5 (issue 50): a folder a check's command names (`--dir tests`) is on `ci`, so a new
/// test file there waits for a human; the finding says which check and which word made it so.
#[test]
fn a_test_folder_named_by_run_says_which_word_put_it_on_ci() {
    let cfg = "[[checks]]\nname = \"unit\"\nrun = \"npx vitest run --dir tests\"\n\
               [protected.policy]\ntests = \"modify\"\n";
    let fx = Fixture::new();
    fx.commit(
        "main",
        &[
            (".closegate.toml", Some(cfg)),
            ("tests/a.test.js", Some("test('a', () => {});\n")),
        ],
        "configure",
    );
    fx.checkout(&fx.root());
    fx.commit(
        "agent/x",
        &[("tests/b.test.js", Some("test('b', () => {});\n"))],
        "a new test",
    );
    let wt = fx.worktree("x", "agent/x");
    let (_, report) = close_and_check(&wt, &["--no-checks", "--no-record"]);
    let finding = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "protected-surface")
        .unwrap_or_else(|| panic!("{report}"));
    let msg = finding["message"].as_str().unwrap();
    assert_eq!(finding["severity"], "review", "{report}");
    assert!(
        msg.contains("on `ci` because check `unit`'s command names `tests`"),
        "{msg}"
    );
    // A path no command names says nothing of the kind.
    let cfg = closegate::config::Config::parse(cfg, "x").unwrap();
    assert_eq!(cfg.why_ci("tests/b.test.js"), None);
}
