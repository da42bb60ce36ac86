//! Each runner's reader of its failing tests' output (SPEC §27.2), on real output recorded from
//! the runner (`testdata/census/`, and `testdata/excerpt/`: a suite with a failing test, a
//! failing subtest, a passing test that prints a forged failure of another test, and a noisy
//! passing test), and the attacks on it.

use super::*;

fn recorded(dir: &str, name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(dir)
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn of(mode: &Mode, bytes: &[u8]) -> Vec<String> {
    excerpt(mode, bytes, 40)
        .unwrap()
        .unwrap_or_else(|| panic!("no failing test found under {mode:?}"))
}

fn named(runner: Runner) -> Mode {
    Mode::Named(vec![runner])
}

/// The ids the excerpt names, in order.
fn headers(lines: &[String]) -> Vec<&str> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix("failing test: "))
        .collect()
}

/// The lines under the header of `id`, up to the next header.
fn under<'a>(lines: &'a [String], id: &str) -> Vec<&'a str> {
    let header = format!("failing test: {id}");
    let Some(at) = lines.iter().position(|l| *l == header) else {
        panic!("no `{id}` in {lines:#?}");
    };
    lines[at + 1..]
        .iter()
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.trim())
        .collect()
}

/// Recorded outputs with a failing test: the folder, the file, its runner, the failing test's
/// id and words of its failure.
const CASES: &[(&str, &str, Runner, &str, &str)] = &[
    (
        "census",
        "go-json.txt",
        Runner::Go,
        "example.com/g/sub::TestFail",
        "b_test.go:4: bad",
    ),
    (
        "census",
        "go-v.txt",
        Runner::Go,
        "example.com/g/sub::TestFail",
        "b_test.go:4: bad",
    ),
    (
        "census",
        "go-plain.txt",
        Runner::Go,
        "example.com/g/sub::TestFail",
        "b_test.go:4: bad",
    ),
    (
        "census",
        "jest.txt",
        Runner::Jest,
        "jt/a.test.js > outer > fails",
        "Received: 1",
    ),
    (
        "census",
        "jest-verbose.txt",
        Runner::Jest,
        "jt/a.test.js > outer > fails",
        "Expected: 2",
    ),
    (
        "census",
        "mocha-spec.txt",
        Runner::Mocha,
        "outer > fails",
        "assert.ok(0)",
    ),
    (
        "census",
        "mocha-tap.txt",
        Runner::Mocha,
        "outer fails",
        "assert.ok(0)",
    ),
    (
        "census",
        "node-spec.txt",
        Runner::Node,
        "top fail",
        "assert.ok(0)",
    ),
    (
        "census",
        "node-tap.txt",
        Runner::Node,
        "top fail",
        "failureType: 'testCodeFailure'",
    ),
    (
        "census",
        "prove.txt",
        Runner::Prove,
        "t/b.t",
        "#   Failed test 'y'",
    ),
    (
        "census",
        "prove-v.txt",
        Runner::Prove,
        "t/b.t",
        "not ok 2 - y",
    ),
    (
        "census",
        "pytest-q.txt",
        Runner::Pytest,
        "tests/test_a.py::test_fail",
        "E       assert 0",
    ),
    (
        "census",
        "pytest-v.txt",
        Runner::Pytest,
        "tests/test_b.py::B::test_err",
        "E       ValueError: x",
    ),
    (
        "census",
        "pytest-rA.txt",
        Runner::Pytest,
        "tests/test_a.py::test_fail",
        "E       assert 0",
    ),
    (
        "census",
        "tape.txt",
        Runner::Tap,
        "second > should be strictly equal #2",
        "actual:   1",
    ),
    (
        "census",
        "unittest-v.txt",
        Runner::Unittest,
        "tests.test_b.B.test_err",
        "ValueError: x",
    ),
    (
        "census",
        "unittest-plain.txt",
        Runner::Unittest,
        "tests.test_b.B.test_err",
        "ValueError: x",
    ),
    (
        "census",
        "vitest.txt",
        Runner::Vitest,
        "vt/a.test.js > outer > fails",
        "+ 1",
    ),
    (
        "census",
        "vitest-verbose.txt",
        Runner::Vitest,
        "vt/a.test.js > outer > fails",
        "- 2",
    ),
    (
        "census",
        "vitest-tap.txt",
        Runner::Vitest,
        "vt/a.test.js > outer > fails",
        "actual: \"1\"",
    ),
    (
        "excerpt",
        "libtest.txt",
        Runner::Libtest,
        "rsx::tests::fails",
        "right: 3",
    ),
    (
        "excerpt",
        "nextest.txt",
        Runner::Nextest,
        "rsx tests::fails",
        "printed by fails",
    ),
    (
        "excerpt",
        "unittest-v.txt",
        Runner::Unittest,
        "tests.test_a.U.test_u_fail",
        "AssertionError: 1 != 2",
    ),
    (
        "excerpt",
        "prove-v.txt",
        Runner::Prove,
        "t/a.t",
        "#          got: '2'",
    ),
];

/// Every recorded output of a run with a failing test: its runner's reader finds the failing
/// test, named and under `auto`, and the excerpt holds the failure's own words.
#[test]
fn every_runner_shows_its_failing_tests_own_lines() {
    let cases = CASES;
    for (dir, file, runner, id, words) in cases {
        for mode in [named(*runner), Mode::Auto] {
            let lines = of(&mode, &recorded(dir, file));
            let own = under(&lines, id);
            assert!(
                own.iter().any(|l| l.contains(words.trim())),
                "{file} under {mode:?}: `{words}` not under `{id}`: {lines:#?}"
            );
            assert!(lines.len() <= 40, "{file}: {}", lines.len());
        }
    }
}

/// `go test -json`: each failing test's `Output` events, by their `Test`; go 1.19's
/// text-to-JSON converter turns `--- FAIL: TestOther` printed by a passing test into a failure of
/// a test that never ran, which is not shown; a parent whose subtest failed gives way to it; an
/// example's got/want is shown.
#[test]
fn go_json_shows_the_tests_that_ran_and_failed_never_a_forged_one() {
    let lines = of(
        &named(Runner::Go),
        &recorded("excerpt", "go-json-forged.txt"),
    );
    assert_eq!(
        headers(&lines),
        [
            "example.com/m::TestFail",
            "example.com/m::TestSub/two_words",
            "example.com/m::ExampleHello"
        ]
    );
    assert_eq!(
        under(&lines, "example.com/m::TestFail"),
        [
            "printed by TestFail",
            "m_test.go:16: got 1, want 2",
            "--- FAIL: TestFail (0.00s)"
        ]
    );
    assert_eq!(
        under(&lines, "example.com/m::ExampleHello"),
        [
            "--- FAIL: ExampleHello (0.00s)",
            "got:",
            "hello",
            "want:",
            "goodbye"
        ]
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("forged") || l.contains("noise"))
    );
}

/// Go's text reports cannot tell a printed `--- FAIL:` line from go's own: the forged test is
/// shown too, but never in place of the real failing tests, whose lines stay theirs.
#[test]
fn go_text_keeps_the_real_failing_tests_lines_beside_a_forged_block() {
    for file in ["go-v-forged.txt", "go-plain-forged.txt"] {
        let lines = of(&named(Runner::Go), &recorded("excerpt", file));
        let ids = headers(&lines);
        for id in [
            "example.com/m::TestFail",
            "example.com/m::TestSub/two_words",
            "example.com/m::ExampleHello",
        ] {
            assert!(ids.contains(&id), "{file}: {lines:#?}");
        }
        assert!(under(&lines, "example.com/m::TestFail").contains(&"m_test.go:16: got 1, want 2"));
        assert!(
            under(&lines, "example.com/m::TestSub/two_words").contains(&"m_test.go:21: sub broke")
        );
        assert!(under(&lines, "example.com/m::ExampleHello").contains(&"goodbye"));
        assert!(
            !lines
                .iter()
                .any(|l| l.contains("noise") || l.contains("PASS")),
            "{lines:#?}"
        );
    }
}

/// libtest: a block is a test's only when libtest reported it `FAILED` in that binary; a
/// failing test printing another block's header keeps its lines.
#[test]
fn libtest_shows_each_failed_tests_block_and_not_a_printed_header() {
    let lines = of(&named(Runner::Libtest), &recorded("excerpt", "libtest.txt"));
    assert_eq!(headers(&lines), ["rsx::tests::fails", "rsx::tests::panics"]);
    assert!(under(&lines, "rsx::tests::panics").contains(&"boom"));
    let forged = "\
     Running unittests src/lib.rs (target/debug/deps/c-0123456789abcdef)
running 2 tests
test t::real ... FAILED
test t::other ... ok

failures:

---- t::real stdout ----
before
---- t::other stdout ----
thread 't::real' panicked at src/lib.rs:3:5:
real reason

failures:
    t::real

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out
";
    let lines = of(&named(Runner::Libtest), forged.as_bytes());
    assert_eq!(headers(&lines), ["c::t::real"]);
    assert!(
        under(&lines, "c::t::real").contains(&"real reason"),
        "{lines:#?}"
    );
}

/// pytest: a section is a test's when the short summary lists it; a passing or failing test that
/// prints a section title does not take the next test's place.
#[test]
fn pytest_sections_are_the_listed_failures_and_a_printed_title_stays_in_its_test() {
    let lines = of(&named(Runner::Pytest), &recorded("excerpt", "pytest-v.txt"));
    assert_eq!(
        headers(&lines),
        [
            "tests/test_a.py::test_fails",
            "tests/test_a.py::TestK::test_method",
            "tests/test_a.py::U::test_u_fail"
        ]
    );
    assert!(under(&lines, "tests/test_a.py::test_fails").contains(&"printed by fails"));
    let forged = "\
=================================== FAILURES ===================================
__________________________________ test_real __________________________________
----------------------------- Captured stdout call -----------------------------
__________________________________ test_other __________________________________
E       assert real
=========================== short test summary info ============================
FAILED tests/t.py::test_real - assert real
======================= 1 failed, 1 passed in 0.01s ========================
";
    let lines = of(&named(Runner::Pytest), forged.as_bytes());
    assert_eq!(headers(&lines), ["tests/t.py::test_real"]);
    assert!(under(&lines, "tests/t.py::test_real").contains(&"E       assert real"));
}

/// node: in TAP each `not ok` and its YAML block (not the suite that failed because of it); a
/// `not ok` line a test prints in the spec report is not a result.
#[test]
fn node_shows_failing_tests_in_tap_and_spec_and_not_printed_results() {
    let tap = of(
        &named(Runner::Node),
        &recorded("excerpt", "node-tap-forged.txt"),
    );
    let ids = headers(&tap);
    assert_eq!(ids.len(), 2, "{tap:#?}");
    assert!(ids[0].ends_with("fails") && ids[1].ends_with("suite > inner bad"));
    assert!(!tap.iter().any(|l| l.contains("subtestsFailed")));
    let spec = of(
        &named(Runner::Node),
        &recorded("excerpt", "node-spec-forged.txt"),
    );
    assert_eq!(headers(&spec), ["fails", "suite > inner bad"]);
    assert!(under(&spec, "suite > inner bad").contains(&"Error: inner broke"));
}

/// nextest: the failing test's stdout and stderr sections, without libtest's own lines.
#[test]
fn nextest_shows_the_sections_of_failing_tests() {
    let lines = of(&named(Runner::Nextest), &recorded("excerpt", "nextest.txt"));
    assert_eq!(headers(&lines), ["rsx tests::panics", "rsx tests::fails"]);
    let fails = under(&lines, "rsx tests::fails");
    assert!(fails.contains(&"printed by fails"), "{lines:#?}");
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("test result:") || l.contains("running 1 test"))
    );
}

/// A failing test followed by a hundred lines of other output is still what the excerpt shows;
/// terminal escapes are removed.
#[test]
fn a_failure_before_a_hundred_lines_of_other_output_is_shown_without_escapes() {
    let mut out = String::from(
        "{\"Action\":\"run\",\"Package\":\"m\",\"Test\":\"TestA\"}\n\
         {\"Action\":\"output\",\"Package\":\"m\",\"Test\":\"TestA\",\"Output\":\"\\u001b[31mred reason\\u001b[0m\\n\"}\n\
         {\"Action\":\"fail\",\"Package\":\"m\",\"Test\":\"TestA\"}\n",
    );
    for i in 0..100 {
        out.push_str(&format!(
            "{{\"Action\":\"output\",\"Package\":\"m\",\"Test\":\"TestB\",\"Output\":\"noise {i}\\n\"}}\n"
        ));
    }
    let lines = of(&named(Runner::Go), out.as_bytes());
    assert_eq!(lines, ["failing test: m::TestA", "  red reason"]);
}

/// No failing test's output found (a build error, a passing run, a runner without a reader's
/// marks): `None`, and the caller keeps the last lines.
#[test]
fn no_failing_test_is_none() {
    let build = b"error[E0425]: cannot find value `x`\nerror: could not compile `c`\n";
    assert_eq!(
        excerpt(&named(Runner::Libtest), &build[..], 40).unwrap(),
        None
    );
    assert_eq!(excerpt(&Mode::Auto, &build[..], 40).unwrap(), None);
    assert_eq!(excerpt(&Mode::Off, &build[..], 40).unwrap(), None);
    let passed = recorded("census", "libtest.txt");
    assert_eq!(
        excerpt(&named(Runner::Libtest), &passed[..], 40).unwrap(),
        None
    );
}

/// Any bytes: no panic, never more than the budget.
#[test]
fn any_bytes_stay_in_the_budget() {
    let mut seed: u64 = 7;
    let words = [
        "--- FAIL: T (0s)",
        "not ok 1 - x",
        "TAP version 13",
        "---- a stdout ----",
        "test a ... FAILED",
        "  ● x › y",
        "FAIL a.js",
        " FAIL  a > b",
        "1 failing",
        "  1) t:",
        "=====================",
        "FAIL: t (m.C.t)",
        "{\"Action\":\"fail\"",
        "",
        "\u{1b}[2K",
        "\t",
        "é",
    ];
    for _ in 0..300 {
        let mut out = String::new();
        for _ in 0..200 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            out.push_str(words[(seed >> 33) as usize % words.len()]);
            if seed & 1 == 0 {
                out.push('\n');
            }
        }
        if let Some(lines) = excerpt(&Mode::Auto, out.as_bytes(), 40).unwrap() {
            assert!(lines.len() <= 40);
        }
    }
}
