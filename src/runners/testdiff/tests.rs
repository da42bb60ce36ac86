//! Cross-language tests of the reader: unreadable input, the cross-file rules, the property
//! that a file compared with itself yields nothing, and the cost of a 1,000-line diff.

use super::*;

/// The edits of one file edited from `old` to `new`, as (test, kind, detail).
pub(super) fn edits(
    path: &str,
    old: Option<&str>,
    new: Option<&str>,
) -> Vec<(String, &'static str, String)> {
    let file = FileDiff {
        path: path.as_bytes(),
        old: old.map(str::as_bytes),
        new: new.map(str::as_bytes),
    };
    let result = read(&[file]);
    let edits = result[0]
        .outcome
        .clone()
        .unwrap_or_else(|why| panic!("{path} unreadable: {why}"));
    edits
        .into_iter()
        .map(|e| (e.test, e.kind.as_str(), e.detail))
        .collect()
}

/// The (test, kind) pairs of one file's edit.
pub(super) fn kinds(path: &str, old: &str, new: &str) -> Vec<(String, &'static str)> {
    edits(path, Some(old), Some(new))
        .into_iter()
        .map(|(t, k, _)| (t, k))
        .collect()
}

/// Asserts that the edit gives exactly `want` and returns the details.
pub(super) fn expect(path: &str, old: &str, new: &str, want: &[(&str, &str)]) -> Vec<String> {
    let got = edits(path, Some(old), Some(new));
    let pairs: Vec<(&str, &str)> = got.iter().map(|(t, k, _)| (t.as_str(), *k)).collect();
    assert_eq!(pairs, want, "details: {got:?}");
    got.into_iter().map(|(_, _, d)| d).collect()
}

fn file<'a>(path: &'a str, old: Option<&'a str>, new: Option<&'a str>) -> FileDiff<'a> {
    FileDiff {
        path: path.as_bytes(),
        old: old.map(str::as_bytes),
        new: new.map(str::as_bytes),
    }
}

#[test]
fn kinds_are_named_as_the_report_names_them() {
    let all = [
        (Kind::Added, "added"),
        (Kind::Strengthened, "strengthened"),
        (Kind::Reworded, "reworded"),
        (Kind::Moved, "moved"),
        (Kind::Fixture, "fixture"),
        (Kind::Weakened, "weakened"),
        (Kind::Dropped, "dropped"),
    ];
    for (kind, name) in all {
        assert_eq!(kind.as_str(), name);
        assert_eq!(
            kind.weakens(),
            matches!(kind, Kind::Weakened | Kind::Dropped)
        );
    }
}

#[test]
fn each_language_has_its_reader() {
    let readers = [
        ("src/lib.rs", Some(Reader::Rust)),
        ("tests/test_a.py", Some(Reader::Python)),
        ("a.test.ts", Some(Reader::Js)),
        ("a.spec.mjs", Some(Reader::Js)),
        ("a_test.go", Some(Reader::Go)),
        ("test/tests.c", Some(Reader::C)),
        ("test/a.cpp", Some(Reader::C)),
        ("test/a.hh", Some(Reader::C)),
        ("t/basic.t", None),
        ("testdata/case.json", None),
    ];
    for (path, want) in readers {
        assert_eq!(reader_for(path.as_bytes()), want, "{path}");
    }
}

#[test]
fn an_assertion_moved_to_another_file_is_not_weakened() {
    let old = "#[test]\nfn a() {\n    assert_eq!(f(1), 2);\n    assert_eq!(f(2), 3);\n}\n";
    let new = "#[test]\nfn a() {\n    assert_eq!(f(1), 2);\n}\n";
    let other = "#[test]\nfn b() {\n    assert_eq!(f(2), 3);\n}\n";
    let got = read(&[
        file("tests/a.rs", Some(old), Some(new)),
        file("tests/b.rs", None, Some(other)),
    ]);
    let a = got[0].outcome.as_ref().unwrap();
    assert!(a.iter().all(|e| !e.kind.weakens()), "{a:?}");
    let b = got[1].outcome.as_ref().unwrap();
    assert_eq!((b[0].test.as_str(), b[0].kind), ("b", Kind::Added));
    // Alone, the same edit removes the assertion.
    let alone = read(&[file("tests/a.rs", Some(old), Some(new))]);
    let a = alone[0].outcome.as_ref().unwrap();
    assert_eq!(a[0].kind, Kind::Weakened, "{a:?}");
}

#[test]
fn a_deleted_file_whose_tests_reappear_elsewhere_drops_nothing() {
    let old = "def test_a():\n    assert f(1) == 2\n\n\ndef test_b():\n    assert f(2) == 3\n";
    let moved = "import m\n\n\ndef test_a():\n    assert f(1) == 2\n";
    let got = read(&[
        file("tests/test_old.py", Some(old), None),
        file("tests/test_new.py", None, Some(moved)),
    ]);
    let gone = got[0].outcome.as_ref().unwrap();
    let kinds: Vec<_> = gone.iter().map(|e| (e.test.as_str(), e.kind)).collect();
    assert_eq!(kinds, [("test_a", Kind::Moved), ("test_b", Kind::Dropped)]);
    assert_eq!(gone[0].detail, "moved to `tests/test_new.py`");
    assert!(got[1].outcome.as_ref().unwrap().is_empty(), "{got:?}");
}

#[test]
fn unreadable_files_are_errors_naming_why() {
    /// A path, its new side, and a word of why it cannot be read.
    type Case<'a> = (&'a [u8], Option<&'a [u8]>, &'a str);
    let cases: [Case; 5] = [
        (b"data/case.json", Some(b"{}"), "no test reader"),
        (b"t.rs", Some(b"fn a() {\0}"), "NUL"),
        (b"t.rs", Some(b"fn a() { \xff }"), "not UTF-8"),
        (b"t\xff.rs", Some(b"fn a() {}"), "name that is not UTF-8"),
        (
            b"t.rs",
            Some(b"#[test]\nfn a() { assert!(x); "),
            "never closed",
        ),
    ];
    for (path, new, why) in cases {
        let got = read(&[FileDiff {
            path,
            old: None,
            new,
        }]);
        let err = got[0].outcome.as_ref().unwrap_err();
        assert!(err.contains(why), "{err}");
        assert_eq!(got[0].path, path);
    }
    let unterminated = read(&[file("t.go", Some("package x\nvar s = \"abc\n"), None)]);
    assert!(unterminated[0].outcome.is_err());
}

/// Fragments that make the readers' structure: brackets, quotes, comments, markers.
const FRAGMENTS: [&str; 77] = [
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "\"",
    "'",
    "`",
    "/",
    "*",
    "#",
    "\n",
    "    ",
    "\t",
    ";",
    ",",
    ":",
    "=",
    "==",
    "<",
    ">",
    "||",
    "!",
    "@",
    ".",
    "\\",
    "$",
    "r#\"",
    "\"\"\"",
    "0",
    "1e-3",
    "x",
    "t",
    "fn",
    "def",
    "test_a",
    "func",
    "TestA",
    "#[test]",
    "#[ignore]",
    "mod",
    "class",
    "it",
    "describe",
    "expect",
    "toBe",
    "skip",
    "only",
    "assert",
    "assert_eq!",
    "return",
    "if",
    "try",
    "catch",
    "except",
    "pass",
    "t.Skip()",
    "TEST",
    "check",
    "#if 0",
    "//",
    "/*",
    "*/",
    "${",
    "pytest",
    "mark",
    "parametrize",
    "END_TEST",
    "true",
    "True",
    "or",
    "each",
    "it.skip",
    "test_b",
    "Test",
    "0.5",
];

fn fragment() -> impl proptest::strategy::Strategy<Value = &'static str> {
    proptest::sample::select(FRAGMENTS.to_vec())
}

const PATHS: [&str; 5] = ["t.rs", "test_t.py", "t.test.ts", "t_test.go", "t.c"];

mod property {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Any text, read against itself, changes no test; read against other text, never
        /// panics.
        #[test]
        fn a_file_against_itself_weakens_nothing(
            a in proptest::collection::vec(fragment(), 0..80),
            b in proptest::collection::vec(fragment(), 0..80),
            raw in proptest::collection::vec(any::<u8>(), 0..200),
        ) {
            let (a, b) = (a.concat(), b.concat());
            for path in PATHS {
                for text in [a.as_bytes(), raw.as_slice()] {
                    let same = FileDiff { path: path.as_bytes(), old: Some(text), new: Some(text) };
                    if let Ok(edits) = &read(&[same])[0].outcome {
                        prop_assert!(edits.is_empty(), "{path}: {edits:?}");
                    }
                }
                let _ = read(&[file(path, Some(&a), Some(&b))]);
                let _ = read(&[file(path, Some(&a), None), file(path, None, Some(&b))]);
            }
        }
    }
}

/// A 1,000-line test diff (both sides of a 1,000-line file of 100 Rust tests, every test
/// edited) timed; it prints the figure and asserts nothing about it (`--nocapture` shows it).
#[test]
fn cost_of_a_thousand_line_diff() {
    let test = |k: usize, want: usize| {
        format!(
            "#[test]\nfn case_{k}() {{\n    let a = {k};\n    let b = a + 1;\n    let got = sum(a, b);\n    \
             assert_eq!(got, {want}, \"sum of {k}\");\n    assert!(got > 0);\n    for (x, y) in [(1, 2), (3, 4)] {{ assert_eq!(sum(x, y), x + y); }}\n}}\n\n"
        )
    };
    let old: String = (0..100).map(|k| test(k, 2 * k + 1)).collect();
    let new: String = (0..100).map(|k| test(k, 2 * k + 2)).collect();
    assert_eq!(old.lines().count(), 1000);
    let files = [file("tests/sum.rs", Some(&old), Some(&new))];
    let start = std::time::Instant::now();
    let runs = 20;
    for _ in 0..runs {
        let got = read(&files);
        assert_eq!(got[0].outcome.as_ref().map(Vec::len), Ok(100));
    }
    let ms = start.elapsed().as_secs_f64() * 1000.0 / f64::from(runs);
    println!("test-diff reader: {ms:.2} ms for a 1,000-line diff (both sides, 100 tests)");
}

/// The weakening edits `scripts/real-projects.sh` plays on the corpus, each read as it is
/// written there: every one is `weakened` or `dropped`, so none can pass under `integrity`
/// whatever the overlay says.
#[test]
fn the_corpus_weakenings_are_each_caught_by_the_reader() {
    let held = |path: &str, old: &str, new: &str| {
        let got = edits(path, Some(old), Some(new));
        assert!(
            got.iter()
                .any(|(_, k, _)| matches!(*k, "weakened" | "dropped")),
            "{path}: {got:?}"
        );
    };
    // itoa, termtree: `#[test]` → `#[allow(dead_code)]` (the test is no test any more).
    held(
        "tests/test.rs",
        "#[test]\nfn test_u64() {\n    assert_eq!(itoa(1), \"1\");\n}\n",
        "#[allow(dead_code)]\nfn test_u64() {\n    assert_eq!(itoa(1), \"1\");\n}\n",
    );
    // itsdangerous: an assertion line deleted.
    held(
        "tests/test_encoding.py",
        "def test_base64(value):\n    enc = encode(value)\n    dec = decode(enc)\n    assert dec == want_bytes(value)\n",
        "def test_base64(value):\n    enc = encode(value)\n    dec = decode(enc)\n",
    );
    // idna: `def test…` → `def off…`.
    held(
        "tests/test_idna_codec.py",
        "class IDNACodecTests(unittest.TestCase):\n    def testCodec(self):\n        self.assertEqual(f(1), 2)\n",
        "class IDNACodecTests(unittest.TestCase):\n    def offCodec(self):\n        self.assertEqual(f(1), 2)\n",
    );
    // is-number: `assert(isNumber(num)` → `assert(true || isNumber(num)`.
    held(
        "test.js",
        "describe('isNumber', function() {\n  it('should return true', function() {\n    fixtures.forEach(function(num) {\n      assert(isNumber(num), JSON.stringify(num));\n    });\n  });\n});\n",
        "describe('isNumber', function() {\n  it('should return true', function() {\n    fixtures.forEach(function(num) {\n      assert(true || isNumber(num), JSON.stringify(num));\n    });\n  });\n});\n",
    );
    // dataloader: `it(` → `it.skip(`.
    held(
        "src/__tests__/abuse.test.js",
        "describe('Provides', () => {\n  it('requires a function', () => {\n    expect(() => x()).toThrow();\n  });\n});\n",
        "describe('Provides', () => {\n  it.skip('requires a function', () => {\n    expect(() => x()).toThrow();\n  });\n});\n",
    );
    // uuid: `func Test…` → `func off…`.
    held(
        "uuid_test.go",
        "package uuid\n\nfunc TestUUID(t *testing.T) {\n\tif New() == Nil {\n\t\tt.Error(\"nil\")\n\t}\n}\n",
        "package uuid\n\nfunc offUUID(t *testing.T) {\n\tif New() == Nil {\n\t\tt.Error(\"nil\")\n\t}\n}\n",
    );
    // jsmn: the harness's `check(` → `(void)(`.
    held(
        "test/tests.c",
        "int test_empty(void) {\n  check(parse(\"{}\", 1, 1, JSMN_OBJECT, 0, 2, 0));\n  return 0;\n}\n",
        "int test_empty(void) {\n  (void)(parse(\"{}\", 1, 1, JSMN_OBJECT, 0, 2, 0));\n  return 0;\n}\n",
    );
    // commander: `test(` → `test.skip(`.
    held(
        "tests/a.test.js",
        "test('parses', () => {\n  assert.equal(parse('-x'), 1);\n});\n",
        "test.skip('parses', () => {\n  assert.equal(parse('-x'), 1);\n});\n",
    );
}

/// Attack: a test dropped and another renamed in the same diff — the rename is `moved` (with
/// where it went), the drop still `dropped`; two tests of one body renamed into one are one
/// move and one drop.
#[test]
fn a_drop_hides_behind_no_rename() {
    let old = "package p\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tif f() != 1 {\n\t\tt.Error(\"a\")\n\t}\n}\n\nfunc TestB(t *testing.T) {\n\tif g() != 2 {\n\t\tt.Error(\"b\")\n\t}\n}\n";
    let new = "package p\n\nimport \"testing\"\n\nfunc TestRenamed(t *testing.T) {\n\tif f() != 1 {\n\t\tt.Error(\"a\")\n\t}\n}\n";
    let got = read(&[file("p/a_test.go", Some(old), Some(new))]);
    let edits = got[0].outcome.clone().unwrap();
    let k: Vec<_> = edits.iter().map(|e| (e.test.as_str(), e.kind)).collect();
    assert_eq!(k, [("TestA", Kind::Moved), ("TestB", Kind::Dropped)]);
    assert_eq!(
        edits[0].to,
        Some((b"p/a_test.go".to_vec(), "TestRenamed".to_string()))
    );
    assert_eq!(edits[1].to, None);
    let twins = old
        .replace("g() != 2", "f() != 1")
        .replace("\"b\"", "\"a\"");
    let got = read(&[file("p/a_test.go", Some(&twins), Some(new))]);
    let kinds: Vec<_> = got[0]
        .outcome
        .clone()
        .unwrap()
        .iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(kinds, [Kind::Moved, Kind::Dropped]);
}

/// A test moved to another file says where it went (the census pairs its ids by that).
#[test]
fn a_move_to_another_file_names_the_file_and_the_name() {
    let old = "def test_a():\n    assert f() == 1\n\n\ndef test_b():\n    assert g() == 2\n";
    let kept = "def test_a():\n    assert f() == 1\n";
    let moved = "def test_b_elsewhere():\n    assert g() == 2\n";
    let got = read(&[
        file("tests/test_x.py", Some(old), Some(kept)),
        file("tests/test_y.py", None, Some(moved)),
    ]);
    let edits = got[0].outcome.clone().unwrap();
    assert_eq!(edits[0].kind, Kind::Moved, "{edits:?}");
    assert_eq!(
        edits[0].to,
        Some((b"tests/test_y.py".to_vec(), "test_b_elsewhere".to_string()))
    );
}
