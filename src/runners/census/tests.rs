//! Each parser on real output recorded from its runner (`testdata/census/`, made by running
//! the runner on a small suite with a passing, failing, skipped and nested test), and the
//! properties every parser holds on any bytes.

use super::*;

fn recorded(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/census")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn census(mode: &Mode, bytes: &[u8]) -> Tally {
    read(mode, bytes).unwrap().expect("a mode that reads")
}

fn named(runner: Runner) -> Mode {
    Mode::Named(vec![runner])
}

/// The one count of `runner`, with its ids (which must be named).
fn ids(tally: &Tally, runner: Runner) -> Vec<String> {
    let count = tally
        .get(runner)
        .unwrap_or_else(|| panic!("no {runner:?} in {tally:?}"));
    let ids: Vec<String> = count
        .ids
        .as_deref()
        .map(<[String]>::to_vec)
        .unwrap_or_else(|| panic!("unnamed: {tally:?}"));
    assert_eq!(count.passed, ids.len() as u64);
    ids
}

fn strings(ids: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

/// Each recorded output and the ids it names, read for its own runner.
const RECORDED: &[(&str, Runner, &[&str])] = &[
    (
        "libtest.txt",
        Runner::Libtest,
        &[
            "rs::tests::fails",
            "rs::tests::it_works",
            "rs::tests::prints",
            "integ::outside",
            "rs doc src/lib.rs - S",
            "rs doc src/lib.rs - add",
            "rs doc src/lib.rs - add #2",
        ],
    ),
    (
        "pytest-v.txt",
        Runner::Pytest,
        &[
            "tests/test_a.py::test_one",
            "tests/test_a.py::test_two",
            "tests/test_a.py::test_param[1]",
            "tests/test_a.py::test_param[2]",
            "tests/test_a.py::test_param[a b]",
            "tests/test_a.py::test_param[\\xfc]",
            "tests/test_a.py::TestK::test_m",
            "tests/test_a.py::U::test_sub",
            "tests/test_a.py::U::test_u",
            "tests/test_b.py::B::test_doc",
            // pytest calls a test whose subtest failed PASSED (and SUBFAILED in its summary).
            "tests/test_b.py::B::test_subfail",
        ],
    ),
    (
        "unittest-v.txt",
        Runner::Unittest,
        &["tests.test_b.B.test_doc"],
    ),
    (
        "go-json.txt",
        Runner::Go,
        &[
            "example.com/g::TestA",
            "example.com/g::TestFake",
            "example.com/g::TestSub",
            "example.com/g::TestSub/one",
            "example.com/g::TestSub/two_words",
            "example.com/g/sub::TestB",
        ],
    ),
    (
        "go-v.txt",
        Runner::Go,
        &[
            "example.com/g::TestA",
            "example.com/g::TestFake",
            "example.com/g::TestSub",
            "example.com/g::TestSub/one",
            "example.com/g::TestSub/two_words",
            "example.com/g/sub::TestB",
        ],
    ),
    ("go-plain.txt", Runner::Go, &["example.com/g"]),
    (
        "node-tap.txt",
        Runner::Node,
        &[
            "top one",
            "suite A > inner x",
            "suite A > deeper > inner y",
            "with sub",
            "with sub > sub 1",
            "b test",
        ],
    ),
    (
        "node-spec.txt",
        Runner::Node,
        &[
            "top one",
            "suite A > inner x",
            "suite A > deeper > inner y",
            "with sub > sub 1",
            "b test",
        ],
    ),
    (
        "mocha-spec.txt",
        Runner::Mocha,
        &["top level", "outer > passes", "outer > inner > deep passes"],
    ),
    (
        "jest-verbose.txt",
        Runner::Jest,
        &[
            "jt/a.test.js > top",
            "jt/a.test.js > outer > passes",
            "jt/a.test.js > outer > inner > deep",
            "jt/b.test.js > b one",
        ],
    ),
    (
        "vitest-verbose.txt",
        Runner::Vitest,
        &[
            "vt/a.test.js > outer > passes",
            "vt/a.test.js > outer > inner > deep",
            "vt/a.test.js > top",
            "vt/b.test.js > b one",
        ],
    ),
    (
        "tape.txt",
        Runner::Tap,
        &[
            "first test > should be strictly equal",
            "first test > named assert",
            "second > should be strictly equal",
            "child > should be truthy",
        ],
    ),
    ("prove.txt", Runner::Prove, &["t/a.t"]),
    (
        "prove-v.txt",
        Runner::Prove,
        &[
            "t/a.t",
            "t/a.t > one",
            "t/a.t > two",
            "t/a.t > 3",
            "t/b.t > x",
        ],
    ),
];

/// Each recorded output, read for its own runner and under `auto`, names exactly these ids.
#[test]
fn recorded_outputs_name_their_passing_tests() {
    for &(file, runner, want) in RECORDED {
        let bytes = recorded(file);
        let got = ids(&census(&named(runner), &bytes), runner);
        assert_eq!(got, strings(want), "{file}");
        // Under `auto` the same runner is seen, with the same ids.
        let auto = census(&Mode::Auto, &bytes);
        assert_eq!(
            ids(&auto, runner),
            strings(want),
            "{file} under auto: {auto:?}"
        );
    }
}

/// Runners that print only counts without their naming flag: the count, no ids.
#[test]
fn quiet_outputs_give_counts_only() {
    use Runner::*;
    let cases = [
        ("libtest-q.txt", Libtest, 7),
        ("pytest-q.txt", Pytest, 11),
        ("unittest-plain.txt", Unittest, 1),
        ("jest.txt", Jest, 4),
        ("vitest.txt", Vitest, 4),
    ];
    for (file, runner, passed) in cases {
        let tally = census(&named(runner), &recorded(file));
        let count = tally.get(runner).unwrap();
        assert_eq!(
            (count.passed, count.ids.is_none()),
            (passed, true),
            "{file}: {tally:?}"
        );
    }
    // -rA names every passing test in its summary.
    let tally = census(&named(Pytest), &recorded("pytest-rA.txt"));
    assert_eq!(ids(&tally, Pytest).len(), 11);
}

/// TAP from mocha and vitest names its tests as those runners' TAP does.
#[test]
fn tap_of_mocha_and_vitest() {
    let tally = census(&named(Runner::Mocha), &recorded("mocha-tap.txt"));
    assert_eq!(
        ids(&tally, Runner::Mocha),
        strings(&["top level", "outer passes", "outer inner deep passes"])
    );
    let tally = census(&named(Runner::Vitest), &recorded("vitest-tap.txt"));
    assert_eq!(
        ids(&tally, Runner::Vitest),
        strings(&[
            "vt/a.test.js > outer > passes",
            "vt/a.test.js > outer > inner > deep",
            "vt/a.test.js > top",
            "vt/b.test.js > b one",
        ])
    );
}

/// Under `auto` an output is attributed to its runner only: no other parser claims it.
#[test]
fn auto_sees_one_runner_per_recorded_output() {
    for entry in
        std::fs::read_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/census"))
            .unwrap()
    {
        let path = entry.unwrap().path();
        let tally = census(&Mode::Auto, &std::fs::read(&path).unwrap());
        assert_eq!(tally.counts.len(), 1, "{}: {tally:?}", path.display());
    }
}

#[test]
fn a_named_runner_that_printed_nothing_passed_nothing() {
    let tally = census(&named(Runner::Libtest), b"error: could not compile `x`\n");
    assert_eq!(tally.counts.len(), 1);
    assert_eq!(tally.counts[0].passed, 0);
    // Under auto nothing was seen: no runner.
    assert!(
        census(&Mode::Auto, b"PASSED: 16\nFAILED: 0\n")
            .counts
            .is_empty()
    );
}

#[test]
fn libtest_with_mod_tests_removed_names_nothing() {
    let out = b"     Running unittests src/lib.rs (target/debug/deps/t-0123456789abcdef)\n\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
    let tally = census(&named(Runner::Libtest), out);
    assert_eq!(
        tally.counts[0],
        Count {
            runner: Runner::Libtest,
            passed: 0,
            ids: Some(Vec::new().into())
        }
    );
}

#[test]
fn pytest_output_quoted_in_failures_is_not_read() {
    let out = "============================= test session starts ==============================\n\
               tests/t.py::test_a PASSED [ 50%]\n\
               tests/t.py::test_b FAILED [100%]\n\
               =================================== FAILURES ===================================\n\
               ----------------------------- Captured stdout call -----------------------------\n\
               tests/t.py::test_gone PASSED [ 10%]\n\
               5 passed in 0.01s\n\
               =========================== short test summary info ============================\n\
               FAILED tests/t.py::test_b - assert 0\n\
               ========================= 1 failed, 1 passed in 0.05s ==========================\n";
    let tally = census(&named(Runner::Pytest), out.as_bytes());
    assert_eq!(ids(&tally, Runner::Pytest), ["tests/t.py::test_a"]);
}

#[test]
fn repeated_names_are_numbered_and_each_counts() {
    let out = b"TAP version 13\n# t\nok 1 should be equal\nok 2 should be equal\nok 3 should be equal # SKIP\n1..3\n";
    let tally = census(&named(Runner::Tap), out);
    assert_eq!(
        ids(&tally, Runner::Tap),
        ["t > should be equal", "t > should be equal #2"]
    );
}

#[test]
fn past_the_id_cap_a_run_is_a_count() {
    let mut out = String::from("TAP version 13\n");
    for i in 0..IDS_MAX + 5 {
        out.push_str(&format!("ok {i} - t{i}\n"));
    }
    let tally = census(&named(Runner::Tap), out.as_bytes());
    let count = tally.get(Runner::Tap).unwrap();
    assert_eq!(
        (count.passed, count.ids.is_none()),
        (IDS_MAX as u64 + 5, true)
    );
}

fn count(runner: Runner, ids: Option<&[&str]>, passed: u64) -> Count {
    Count {
        runner,
        passed,
        ids: ids.map(|ids| strings(ids).into()),
    }
}

fn tally(counts: Vec<Count>) -> Tally {
    Tally { counts }
}

#[test]
fn comparison_names_the_missing_and_counts_where_unnamed() {
    let mode = named(Runner::Pytest);
    let base = tally(vec![count(Runner::Pytest, Some(&["a", "b", "c"]), 3)]);
    // One renamed, one added: the renamed one is missing.
    let commit = tally(vec![count(Runner::Pytest, Some(&["a", "b2", "c", "d"]), 4)]);
    let c = compare(&mode, &base, &commit).unwrap();
    assert_eq!(
        (c.base, c.commit, c.missing.as_slice(), c.missing_count),
        (3, 4, &["b".to_string()][..], 1)
    );
    // An honest return adding a test: nothing missing.
    let commit = tally(vec![count(Runner::Pytest, Some(&["a", "b", "c", "d"]), 4)]);
    assert_eq!(compare(&mode, &base, &commit).unwrap().missing_count, 0);
    // The commit names nothing and counts fewer: counted, not named.
    let commit = tally(vec![count(Runner::Pytest, None, 2)]);
    let c = compare(&mode, &base, &commit).unwrap();
    assert_eq!((c.missing.len(), c.missing_count), (0, 1));
    // Zero tests on the commit: every base test is missing, named.
    let commit = tally(vec![count(Runner::Pytest, None, 0)]);
    let c = compare(&mode, &base, &commit).unwrap();
    assert_eq!((c.missing.len(), c.missing_count), (3, 3));
    // The runner's output is gone from the commit's run altogether.
    let c = compare(&mode, &base, &Tally::default()).unwrap();
    assert_eq!((c.commit, c.missing_count), (0, 3));
}

/// SPEC §27.1: ids are paired by identity only, never by their shape. A name whose numbers
/// change each run (is-number's `Math.random()` titles) is missing here; the checks gate sets
/// such ids aside only when a second run of the base's own tree does not pass them again
/// (`gates::census::Evidence::unstable`). This test was `a_name_whose_numbers_change_each_run_is_
/// the_same_test`, which asserted the shape pairing SPEC §27.1 now forbids.
#[test]
fn ids_are_paired_by_identity_never_by_shape() {
    let mode = named(Runner::Mocha);
    let base = tally(vec![count(
        Runner::Mocha,
        Some(&["TestIssue1234567", "a > 0.5159 should be a number", "c"]),
        3,
    )]);
    let commit = tally(vec![count(
        Runner::Mocha,
        Some(&["TestIssue7654321", "a > 0.2406 should be a number", "c"]),
        3,
    )]);
    let c = compare(&mode, &base, &commit).unwrap();
    assert_eq!(
        c.missing,
        ["TestIssue1234567", "a > 0.5159 should be a number"]
    );
    // A test renamed from t2 to t3 is a test gone (the diff, not the census, shows a rename).
    let base = tally(vec![count(Runner::Mocha, Some(&["t1", "t2"]), 2)]);
    let commit = tally(vec![count(Runner::Mocha, Some(&["t1", "t3"]), 2)]);
    assert_eq!(compare(&mode, &base, &commit).unwrap().missing, ["t2"]);
}

#[test]
fn auto_compares_the_runners_the_base_showed() {
    let base = tally(vec![count(Runner::Mocha, Some(&["x"]), 1)]);
    let c = compare(&Mode::Auto, &base, &Tally::default()).unwrap();
    assert_eq!((c.runner(), c.missing_count), ("mocha".to_string(), 1));
    assert!(compare(&Mode::Auto, &Tally::default(), &base).is_none());
    assert!(compare(&Mode::Off, &base, &base).is_none());
}

#[test]
fn the_stored_form_round_trips_and_refuses_damage() {
    let ids = strings(&[
        "tests/a.py::test_x",
        "tests/a.py::test_y",
        "tests/b.py::té",
        "u",
    ]);
    let text = encode(&ids);
    assert_eq!(decode(&text), Some(ids.clone()));
    assert!(text.len() < ids.iter().map(String::len).sum::<usize>() + ids.len() * 2);
    for bad in [
        "0:b\n0:a\n",
        "0:a\n0:a\n",
        "5:a\n",
        "0:a",
        "x:a\n",
        "0:\n",
        "0:a\u{7}\n",
    ] {
        assert_eq!(decode(bad), None, "{bad:?}");
    }
    let t = tally(vec![
        count(Runner::Libtest, Some(&["a", "b"]), 2),
        count(Runner::Pytest, None, 7),
    ]);
    let json = serde_json::to_string(&Stored::of(&t)).unwrap();
    assert_eq!(serde_json::from_str::<Stored>(&json).unwrap().tally(), t);
    // A count that disagrees with its ids, an unknown runner, runners out of order: no census.
    for bad in [
        r#"{"counts":[{"runner":"pytest","passed":3,"ids":"0:a\n"}]}"#,
        r#"{"counts":[{"runner":"rspec","passed":0,"ids":null}]}"#,
        r#"{"counts":[{"runner":"pytest","passed":0,"ids":null},{"runner":"libtest","passed":0,"ids":null}]}"#,
    ] {
        assert!(serde_json::from_str::<Stored>(bad).is_err(), "{bad}");
    }
}

/// Feeding the output in pieces of any size gives the census of feeding it whole.
#[test]
fn pieces_read_as_the_whole() {
    let bytes = recorded("node-tap.txt");
    let whole = census(&Mode::Auto, &bytes);
    for size in [1, 2, 7, 64] {
        let mut reader = Reader::new(&Mode::Auto).unwrap();
        for piece in bytes.chunks(size) {
            reader.feed(piece);
        }
        assert_eq!(reader.finish(), whole, "pieces of {size}");
    }
}

mod props {
    use proptest::prelude::*;

    use super::super::*;

    /// Lines built from the tokens the parsers look for, so the properties reach deep states.
    fn line() -> impl Strategy<Value = String> {
        let tokens = prop::sample::select(vec![
            "test ",
            " ... ok",
            "ok ",
            "not ok ",
            "1..",
            "# ",
            "Subtest: ",
            "TAP version 13",
            "PASS ",
            "FAIL ",
            "✓ ",
            "✔ ",
            "▶ ",
            "ℹ tests ",
            "::",
            " PASSED",
            "[ 50%]",
            "== ",
            " passed in 0.1s",
            "Ran 3 tests in 0.1s",
            "OK",
            "FAILED (failures=1)",
            " (",
            ")",
            "{\"Action\":\"pass\",\"Package\":\"p\",\"Test\":\"T\"}",
            "ok  \tpkg\t0.1s",
            "--- PASS: T (0.00s)",
            "Running unittests src/lib.rs (x-0123456789abcdef)",
            "Doc-tests x",
            " (line 3)",
            "test result: ok. 2 passed; 0 failed",
            "  ",
            "    ",
            "---",
            "...",
            "type: 'suite'",
            " {",
            "}",
            "Tests:  2 passed, 2 total",
            "Tests  2 passed (2)",
            " > ",
            "3 passing (2ms)",
            "t/a.t .. ",
            "ok",
            "\x1b[32m",
            "\r",
            "é",
            "\t",
            "a",
            "1",
            "-",
        ]);
        prop::collection::vec(tokens, 0..8).prop_map(|t| t.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Any bytes: no panic, and every id kept is clean, unique and sorted, with `passed`
        /// equal to their number; the stored form round-trips.
        #[test]
        fn any_bytes_give_a_clean_census(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
            check_clean(&Mode::Auto, &bytes);
        }

        #[test]
        fn token_soup_gives_a_clean_census(lines in prop::collection::vec(line(), 0..40)) {
            let text = lines.join("\n");
            check_clean(&Mode::Auto, text.as_bytes());
            for runner in Runner::with_census() {
                check_clean(&Mode::Named(vec![runner]), text.as_bytes());
            }
        }
    }

    fn check_clean(mode: &Mode, bytes: &[u8]) {
        let tally = read(mode, bytes).unwrap().unwrap();
        for count in &tally.counts {
            if let Some(ids) = &count.ids {
                assert_eq!(count.passed, ids.len() as u64);
                assert!(ids.windows(2).all(|w| w[0] < w[1]));
                for id in ids.iter() {
                    assert!(!id.is_empty() && id.len() <= ID_MAX && id.trim() == id);
                    assert!(!id.chars().any(char::is_control), "{id:?}");
                }
            }
        }
        let json = serde_json::to_string(&Stored::of(&tally)).unwrap();
        assert_eq!(
            serde_json::from_str::<Stored>(&json).unwrap().tally(),
            tally
        );
    }
}

/// A title that repeats in one run is told apart by its place (jest, mocha, node --test): a test
/// renamed onto another's title cannot hide that one of the two is gone.
#[test]
fn a_repeated_id_is_numbered_from_its_second_occurrence() {
    let mut repeats = Repeats::default();
    let ids: Vec<String> = ["a > t", "a > t", "a > u", "a > t"]
        .into_iter()
        .map(|id| repeats.numbered(id.to_string()))
        .collect();
    assert_eq!(ids, ["a > t", "a > t #2", "a > u", "a > t #3"]);
}

/// A node test's `console.log` lines come out as TAP comments before its `# Subtest:` line
/// (recorded with node 20, `--test-reporter=tap`); they name no tape group, so the ids are the
/// tests' own names, the same run after run whatever the tests print.
#[test]
fn node_console_output_is_not_part_of_an_id() {
    let bytes = recorded("node-tap-console.txt");
    for mode in [named(Runner::Node), named(Runner::Tap), Mode::Auto] {
        let tally = census(&mode, &bytes);
        let runner = tally.counts[0].runner;
        assert_eq!(ids(&tally, runner), strings(&["adds", "subs"]), "{mode:?}");
    }
}
