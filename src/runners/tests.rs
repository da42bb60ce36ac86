//! The table held whole: every row has what its kind needs, and every question asked of a `run`
//! string is answered through the one reader.

use super::census::Mode;
use super::*;

/// A row lacks a field its kind needs: a name, a way to be recognised, and — for a runner with
/// a census — an id format, parsers that read something, and a way to run named tests or a
/// reason in this list why it has none; for a runner with a language, graded input or an
/// explicit place in `NO_GRADED`.
#[test]
fn every_row_is_whole() {
    /// Runners whose configuration no file decides (their graded input is the paths the
    /// check names and what runs before every test).
    const NO_GRADED: [Runner; 3] = [Runner::Unittest, Runner::Prove, Runner::Task];
    /// Runners that run files, not single tests: a rerun reruns the whole run.
    const NO_ONLY: [Runner; 4] = [Runner::Tap, Runner::Make, Runner::Npm, Runner::Task];
    let mut names = BTreeSet::new();
    for runner in Runner::ALL {
        let row = runner.row();
        assert_eq!(
            row.runner, runner,
            "{:?}'s row names another runner",
            runner
        );
        assert!(
            !row.name.is_empty() && names.insert(row.name),
            "{}",
            row.name
        );
        assert_eq!(Runner::parse(row.name), Some(runner));
        if let Some(census) = &row.census {
            assert!(!census.id_format.is_empty(), "{}: no id format", row.name);
            assert!(!(census.parsers)(Reading::Named).is_empty(), "{}", row.name);
            assert!(!(census.parsers)(Reading::Auto).is_empty(), "{}", row.name);
        }
        assert_eq!(
            row.only.is_none(),
            NO_ONLY.contains(&runner),
            "{}: how to run only named tests",
            row.name
        );
        assert_eq!(
            row.graded.is_empty() && row.keys.is_empty(),
            NO_GRADED.contains(&runner),
            "{}: graded input",
            row.name
        );
    }
    assert_eq!(names.len(), Runner::ALL.len());
}

/// Every row is recognised from a command of its own, and only by itself among the runners
/// with a census.
#[test]
fn every_runner_is_recognised_from_its_command() {
    let commands = [
        (Runner::Libtest, "cargo test --locked"),
        (Runner::Pytest, "pytest -q"),
        (Runner::Unittest, "python3 -m unittest discover"),
        (Runner::Go, "go test ./..."),
        (Runner::Node, "node --test"),
        (Runner::Mocha, "mocha test"),
        (Runner::Jest, "jest --ci"),
        (Runner::Vitest, "vitest run"),
        (Runner::Tap, "tape 't/*.js'"),
        (Runner::Prove, "prove -r t"),
        (Runner::Nextest, "cargo nextest run"),
        (Runner::Make, "make test"),
        (Runner::Npm, "npm test"),
        (Runner::Task, "just test"),
    ];
    assert_eq!(commands.len(), Runner::ALL.len());
    for (runner, run) in commands {
        let invoked = Invoked::of([run]);
        assert!(invoked.has(runner), "{run}: {invoked:?}");
        if runner.has_census() {
            assert_eq!(census_mode(run), Mode::Named(vec![runner]), "{run}");
        }
    }
}

#[test]
fn the_run_names_its_runner() {
    use Runner::*;
    let cases: [(&str, Mode); 19] = [
        ("cargo test --locked", Mode::Named(vec![Libtest])),
        (
            "CARGO_HOME=\"$HOME\"/x cargo +nightly test",
            Mode::Named(vec![Libtest]),
        ),
        (".venv/bin/python -m pytest -v", Mode::Named(vec![Pytest])),
        ("PYTHONPATH=src pytest", Mode::Named(vec![Pytest])),
        (
            "python3 -m unittest discover -q",
            Mode::Named(vec![Unittest]),
        ),
        (
            "export GOCACHE=/x; go test -json ./...",
            Mode::Named(vec![Go]),
        ),
        ("node --test", Mode::Named(vec![Node])),
        ("npx mocha test.js", Mode::Named(vec![Mocha])),
        (
            "cargo test && python -m pytest",
            Mode::Named(vec![Libtest, Pytest]),
        ),
        ("sh -c 'prove -r t'", Mode::Named(vec![Prove])),
        ("npm ci && npm test", Mode::Auto),
        ("make test", Mode::Auto),
        ("tox -e py311", Mode::Auto),
        ("cargo build && ./run-tests.sh", Mode::Off),
        ("node index.js", Mode::Off),
        // Issue #46: wrapped, chained and nested runners are found.
        ("true || timeout 600 pytest", Mode::Named(vec![Pytest])),
        ("env CI=1 go test ./...", Mode::Named(vec![Go])),
        ("xvfb-run -a npx vitest run", Mode::Named(vec![Vitest])),
        (
            "bash -c 'cd web && pnpm exec jest'",
            Mode::Named(vec![Jest]),
        ),
    ];
    for (run, want) in cases {
        assert_eq!(census_mode(run), want, "{run}");
    }
}

#[test]
fn the_rows_give_the_under_test_markers_of_a_language() {
    let js = under_test_markers(b"src/a.ts");
    for m in ["JEST_WORKER_ID", "process.env.VITEST", "typeof describe"] {
        assert!(js.contains(&m), "{m}: {js:?}");
    }
    assert!(under_test_markers(b"src/lib.rs").contains(&"cfg!(test"));
    assert!(under_test_markers(b"a.py").contains(&"PYTEST_CURRENT_TEST"));
    assert!(under_test_markers(b"a.go").contains(&"testing.Testing()"));
    assert!(
        under_test_markers(b"a.c").is_empty(),
        "C's are the macro rule's"
    );
}

#[test]
fn the_rows_run_only_named_tests() {
    let only = |r: Runner, ids: &[&str]| (r.row().only.unwrap())(ids);
    assert_eq!(
        only(Runner::Pytest, &["tests/t.py::test_a"]),
        ["tests/t.py::test_a"]
    );
    assert_eq!(
        only(Runner::Libtest, &["it::a::b", "crate::x"]),
        ["--", "--exact", "a::b", "x"]
    );
    assert_eq!(
        only(
            Runner::Go,
            &["example.com/m::TestA", "example.com/m::TestB/case"]
        ),
        ["-run", "^(TestA|TestB)$"]
    );
    assert_eq!(
        only(Runner::Jest, &["a.test.js > sum > adds (1+1)"]),
        ["--testNamePattern", "^(adds \\(1\\+1\\))$"]
    );
}

#[test]
fn wiring_and_configs_come_from_every_row() {
    let names = wiring_names();
    for n in [
        "**/conftest.py",
        "**/__mocks__/**",
        "**/.mocharc*",
        "**/vitest.config.*",
    ] {
        assert!(names.contains(&n), "{n}");
    }
    let configs = wiring_configs();
    for c in ["package.json", "pytest.ini", "Cargo.toml", ".mocharc.yml"] {
        assert!(configs.contains(&c), "{c}");
    }
}
