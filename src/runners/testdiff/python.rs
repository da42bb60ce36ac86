//! Python tests: a `def test*` at module level or in a class named `Test*` or deriving from a
//! `*TestCase`, named `Class::test_x`. The lexer turns indentation into synthetic `{`/`}` tokens
//! and logical line ends into `;` (brackets, backslashes and triple-quoted strings joining lines),
//! so blocks are matched like braces; a dedent to no outer level is a syntax error. Assertions
//! are `assert` statements, `self.assert*(…)` calls and `pytest.raises`; skips, `xfail`,
//! `expectedFailure`, `exit`, `or True`, `suppress(…)` and an `except` that swallows an
//! assertion are markers; `parametrize` lists are rows.

use std::ops::Range;

use super::lex_python::lex;
use super::tokens::Src;
use super::unit::{self, Form, Found, Lang, Marker, Parts, build, expr_form, number, outside};
use super::{OUTSIDE, Parsed};

struct Python;

/// Reads a Python file's tests.
pub(crate) fn parse(text: &str) -> Result<Parsed, String> {
    let s = Src::new(text, lex(text)?)?;
    let mut found = Vec::new();
    let mut decorators: Vec<Range<usize>> = Vec::new();
    for st in statements(&s, 0..s.toks.len()) {
        let head = skip_async(&s, st.start);
        if s.is(st.start, "@") {
            decorators.push(st);
            continue;
        }
        let decorated = std::mem::take(&mut decorators);
        if s.is(head, "def") && s.t(head + 1).starts_with("test") {
            found.push(test(&s, st, &decorated, "", Vec::new()));
        } else if s.is(head, "class") && is_test_class(&s, head) {
            let markers: Vec<Marker> = decorated
                .iter()
                .filter_map(|d| decorator_marker(&s, d.clone()))
                .collect();
            methods(&s, head, st, &markers, &mut found);
        }
    }
    let taken: Vec<Range<usize>> = found.iter().map(|p| p.spans[0].clone()).collect();
    let rest = Parts::new(OUTSIDE, outside(s.toks.len(), &taken));
    Ok(Parsed {
        outside: build(&s, &Python, rest),
        tests: found.into_iter().map(|p| build(&s, &Python, p)).collect(),
    })
}

/// The index past an `async` at `i`.
fn skip_async(s: &Src, i: usize) -> usize {
    if s.is(i, "async") { i + 1 } else { i }
}

/// The test methods of the class whose `class` is at `head`, its statement `st`.
fn methods(s: &Src, head: usize, st: Range<usize>, inherited: &[Marker], found: &mut Vec<Parts>) {
    let Some(open) = (head..st.end).find(|&k| s.is(k, "{") && s.toks[k].start == s.toks[k].end)
    else {
        return;
    };
    let class = s.t(head + 1);
    let mut decorators = Vec::new();
    for m in statements(s, open + 1..s.end_of(open)) {
        if s.is(m.start, "@") {
            decorators.push(m);
            continue;
        }
        let decorated = std::mem::take(&mut decorators);
        let def = skip_async(s, m.start);
        if s.is(def, "def") && s.t(def + 1).starts_with("test") {
            found.push(test(s, m, &decorated, class, inherited.to_vec()));
        }
    }
}

/// Whether the class at `head` holds tests.
fn is_test_class(s: &Src, head: usize) -> bool {
    let name = s.t(head + 1);
    let bases = if s.is(head + 2, "(") {
        head + 3..s.end_of(head + 2)
    } else {
        0..0
    };
    name.starts_with("Test")
        || bases
            .clone()
            .any(|k| s.ident(k) && s.t(k).ends_with("TestCase"))
}

/// The parts of the test whose statement is `st`, with its decorators.
fn test(
    s: &Src,
    st: Range<usize>,
    decorators: &[Range<usize>],
    class: &str,
    markers: Vec<Marker>,
) -> Parts {
    let def = skip_async(s, st.start);
    let start = decorators.first().map_or(st.start, |d| d.start);
    let rows = decorators
        .iter()
        .flat_map(|d| parametrized(s, d.clone()))
        .collect();
    let name = s.t(def + 1);
    Parts {
        name: if class.is_empty() {
            name.to_string()
        } else {
            format!("{class}::{name}")
        },
        spans: std::iter::once(start..st.end).collect(),
        skip: vec![def + 1],
        markers,
        rows,
    }
}

/// The rows of a `parametrize` decorator at `d` whose list is not already read as a table.
fn parametrized(s: &Src, d: Range<usize>) -> Vec<Range<usize>> {
    let Some(p) = d
        .clone()
        .find(|&k| s.is(k, "parametrize") && s.is(k + 1, "("))
    else {
        return Vec::new();
    };
    let args = s.elements(p + 1);
    match args.get(1) {
        Some(list) if matches!(s.t(list.start), "[" | "(") && !unit::is_table(s, list.start) => {
            s.elements(list.start)
        }
        _ => Vec::new(),
    }
}

/// The marker a class decorator at `d` carries.
fn decorator_marker(s: &Src, d: Range<usize>) -> Option<Marker> {
    d.clone().find_map(|k| Python.marker(s, k, &[]))
}

/// The statements in `r`: each to its `;`, a block following it included.
fn statements(s: &Src, r: Range<usize>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = r.start;
    while i < r.end {
        let start = i;
        while i < r.end && !s.is(i, ";") {
            i = s.end_of(i) + 1;
        }
        i += 1;
        if i < r.end && s.is(i, "{") && s.toks[i].start == s.toks[i].end {
            i = s.end_of(i) + 1;
        }
        out.push(start..i.min(r.end));
    }
    out
}

/// The end of the statement at `i` (its `;`).
fn statement_end(s: &Src, mut i: usize) -> usize {
    while i < s.toks.len() && !s.is(i, ";") {
        i = s.end_of(i) + 1;
    }
    i
}

/// Exact comparisons of `unittest`.
const EXACT: [&str; 13] = [
    "assertEqual",
    "assertEquals",
    "assertIs",
    "assertIsNone",
    "assertListEqual",
    "assertDictEqual",
    "assertTupleEqual",
    "assertSetEqual",
    "assertSequenceEqual",
    "assertMultiLineEqual",
    "assertCountEqual",
    "assertRaises",
    "assertRaisesRegex",
];

impl Lang for Python {
    fn assertion(&self, s: &Src, i: usize) -> Option<Found> {
        if s.is(i, "assert") && (i == 0 || matches!(s.t(i - 1), ";" | "{" | "}" | ":")) {
            let end = statement_end(s, i);
            let mut expr_end = i + 1;
            while expr_end < end && !s.is(expr_end, ",") {
                expr_end = s.end_of(expr_end) + 1;
            }
            return Some(Found {
                end,
                ..expr_form(s, i + 1..expr_end.min(end), false)
            });
        }
        let call = if s.ident(i) && s.is(i + 1, ".") && is_assert_name(s.t(i + 2)) {
            i + 2
        } else if s.ident(i) && is_assert_name(s.t(i)) && !s.is(i.wrapping_sub(1), ".") {
            i
        } else if s.is(i, "pytest") && s.is(i + 1, ".") && s.is(i + 2, "raises") {
            i + 2
        } else {
            return None;
        };
        s.is(call + 1, "(").then_some(())?;
        let args = s.elements(call + 1);
        let first = args.first().cloned().unwrap_or(call + 2..call + 2);
        let name = s.t(call);
        let form = if name.starts_with("assertAlmostEqual") || name == "assertAlmostEquals" {
            Form::Tolerance(almost_width(s, &args))
        } else if EXACT.contains(&name) || name == "raises" {
            Form::Exact
        } else if matches!(
            name,
            "assertTrue" | "assertFalse" | "assert_" | "failUnless" | "failIf"
        ) {
            return Some(Found {
                end: s.end_of(call + 1) + 1,
                ..expr_form(s, first, false)
            });
        } else if name == "assertIsNotNone" {
            Form::Truthy
        } else {
            Form::Bound
        };
        Some(Found::call(s.end_of(call + 1) + 1, form, &args, 0))
    }

    fn marker(&self, s: &Src, i: usize, starts: &[usize]) -> Option<Marker> {
        let t = s.t(i);
        let next2 = s.t(i + 2);
        let dotted = s.is(i + 1, ".");
        let shown = match t {
            "mark" if dotted && matches!(next2, "skip" | "skipif" | "xfail") => {
                format!("`pytest.mark.{next2}`")
            }
            "unittest" if dotted && (next2.starts_with("skip") || next2 == "expectedFailure") => {
                format!("`unittest.{next2}`")
            }
            "pytest" if dotted && matches!(next2, "skip" | "xfail" | "exit") => {
                format!("`pytest.{next2}()`")
            }
            "skipTest" | "SkipTest" | "expectedFailure" => format!("`{t}`"),
            "sys" if dotted && next2 == "exit" => "`sys.exit`".to_string(),
            "os" if dotted && next2 == "_exit" => "`os._exit`".to_string(),
            "exit" | "quit" if s.is(i + 1, "(") && !s.is(i.wrapping_sub(1), ".") => {
                format!("`{t}()`")
            }
            "or" if s.is(i + 1, "True") => "`or True`".to_string(),
            "suppress" if s.is(i + 1, "(") => "`suppress(…)`".to_string(),
            "except" if swallows(s, i, starts) => {
                "catch-all `except` around an assertion".to_string()
            }
            _ => return None,
        };
        Some(Marker::new(shown))
    }
}

/// Whether `name` is a `unittest` assertion.
fn is_assert_name(name: &str) -> bool {
    name.starts_with("assert") && name.len() > 6 || matches!(name, "failUnless" | "failIf")
}

/// The width of an `assertAlmostEqual`: `delta=`, else 10^-`places` (7 by default).
fn almost_width(s: &Src, args: &[Range<usize>]) -> f64 {
    let value = |kw: &str| {
        args.iter()
            .find(|a| s.is(a.start, kw) && s.is(a.start + 1, "="))
            .and_then(|a| number(s.t(a.start + 2)))
    };
    if let Some(delta) = value("delta") {
        return delta;
    }
    let places = value("places").or_else(|| args.get(2).and_then(|a| number(s.t(a.start))));
    10f64.powf(-places.unwrap_or(7.0))
}

/// Whether the `except` at `i` catches everything an assertion raises after a `try` block that
/// asserts, and neither re-raises nor asserts itself.
fn swallows(s: &Src, i: usize, starts: &[usize]) -> bool {
    let Some(prev) = i.checked_sub(1) else {
        return false;
    };
    let open = s.start_of(prev);
    let tried =
        s.is(prev, "}") && open >= 3 && s.is(open - 3, "try") && unit::guards(s, open, starts);
    let colon = (i + 1..s.toks.len())
        .find(|&k| s.is(k, ":"))
        .unwrap_or(s.toks.len());
    let caught = i + 1..colon;
    let all = caught.is_empty()
        || caught
            .clone()
            .any(|k| matches!(s.t(k), "Exception" | "BaseException" | "AssertionError"));
    let body_end = if s.is(colon + 2, "{") {
        s.end_of(colon + 2)
    } else {
        statement_end(s, colon)
    };
    let reraises = (colon..body_end).any(|k| s.is(k, "raise") || starts.contains(&k));
    tried && all && !reraises
}

#[cfg(test)]
mod tests {
    use super::super::tests::{edits, expect, kinds};

    const BASE: &str = r#"import pytest
import unittest


def helper(x):
    return x * 2


def test_double():
    got = helper(2)
    assert got == 4, "two doubled"


@pytest.mark.parametrize("a,b", [(1, 2), (2, 4)])
def test_table(a, b):
    assert helper(a) == b


class TestMath(unittest.TestCase):
    def test_eq(self):
        self.assertEqual(helper(3), 6)

    def test_close(self):
        self.assertAlmostEqual(helper(0.1), 0.2, places=7)
"#;

    fn edit(from: &str, to: &str) -> String {
        assert!(BASE.contains(from), "{from}");
        BASE.replacen(from, to, 1)
    }

    #[test]
    fn unchanged_is_no_edit_and_names_carry_the_class() {
        assert!(kinds("tests/test_m.py", BASE, BASE).is_empty());
        let names: Vec<_> = edits("t.py", None, Some(BASE))
            .into_iter()
            .map(|e| e.0)
            .collect();
        assert_eq!(
            names,
            [
                "test_double",
                "test_table",
                "TestMath::test_eq",
                "TestMath::test_close"
            ]
        );
    }

    #[test]
    fn added_strengthened_reworded_fixture() {
        let new = format!("{BASE}\n\ndef test_new():\n    assert helper(0) == 0\n");
        expect("t.py", BASE, &new, &[("test_new", "added")]);
        let more = edit(
            "    assert got == 4, \"two doubled\"\n",
            "    assert got == 4, \"two doubled\"\n    assert got > 0\n",
        );
        expect("t.py", BASE, &more, &[("test_double", "strengthened")]);
        let row = edit("(2, 4)]", "(2, 4), (3, 6)]");
        expect("t.py", BASE, &row, &[("test_table", "strengthened")]);
        let msg = edit("\"two doubled\"", "\"2 * 2\"");
        expect("t.py", BASE, &msg, &[("test_double", "reworded")]);
        let setup = edit("got = helper(2)", "got = helper(1 + 1)");
        expect("t.py", BASE, &setup, &[("test_double", "fixture")]);
        let helper = edit("return x * 2", "return x + x");
        expect("t.py", BASE, &helper, &[("(outside tests)", "fixture")]);
    }

    #[test]
    fn moved_to_another_file_is_moved_not_weakened() {
        let without = edit(
            "class TestMath(unittest.TestCase):\n    def test_eq(self):\n        self.assertEqual(helper(3), 6)\n\n",
            "class TestMath(unittest.TestCase):\n",
        );
        let other = "import unittest\nfrom m import helper\n\nclass TestMath(unittest.TestCase):\n    def test_eq(self):\n        self.assertEqual(helper(3), 6)\n";
        let files = [
            super::super::FileDiff {
                path: b"tests/test_m.py",
                old: Some(BASE.as_bytes()),
                new: Some(without.as_bytes()),
            },
            super::super::FileDiff {
                path: b"tests/test_eq.py",
                old: None,
                new: Some(other.as_bytes()),
            },
        ];
        let got = super::super::read(&files);
        let first = got[0].outcome.as_ref().unwrap();
        assert_eq!(first.len(), 1, "{first:?}");
        assert_eq!(
            (first[0].test.as_str(), first[0].kind.as_str()),
            ("TestMath::test_eq", "moved")
        );
        assert_eq!(first[0].detail, "moved to `tests/test_eq.py`");
        assert!(got[1].outcome.as_ref().unwrap().is_empty(), "{got:?}");
    }

    #[test]
    fn an_assertion_moved_into_another_test_is_not_weakened() {
        let new = edit("    assert got == 4, \"two doubled\"\n", "    assert got\n").replace(
            "    assert helper(a) == b\n",
            "    assert helper(a) == b\n    assert got == 4, \"two doubled\"\n",
        );
        let got = kinds("t.py", BASE, &new);
        assert!(
            !got.contains(&("test_double".to_string(), "weakened")),
            "{got:?}"
        );
    }

    #[test]
    fn removed_and_loosened_assertions_weaken() {
        let gone = edit("    assert got == 4, \"two doubled\"\n", "    print(got)\n");
        let d = expect("t.py", BASE, &gone, &[("test_double", "weakened")]);
        assert_eq!(d, ["removed `assert got == 4, \"two doubled\"`"]);
        let bound = edit("assert got == 4", "assert got >= 4");
        let d = expect("t.py", BASE, &bound, &[("test_double", "weakened")]);
        assert!(d[0].contains("loosened"), "{d:?}");
        let truthy = edit(
            "self.assertEqual(helper(3), 6)",
            "self.assertTrue(helper(3))",
        );
        expect("t.py", BASE, &truthy, &[("TestMath::test_eq", "weakened")]);
        let places = edit("places=7", "places=1");
        expect(
            "t.py",
            BASE,
            &places,
            &[("TestMath::test_close", "weakened")],
        );
        let tighter = edit("places=7", "places=9");
        expect(
            "t.py",
            BASE,
            &tighter,
            &[("TestMath::test_close", "strengthened")],
        );
        let approx = "def test_a():\n    assert f() == pytest.approx(1.0, rel=1e-6)\n";
        let wide = approx.replace("1e-6", "0.5");
        expect("t.py", approx, &wide, &[("test_a", "weakened")]);
    }

    #[test]
    fn skips_xfail_exit_or_true_and_swallowed_asserts_weaken() {
        let cases = [
            (
                "def test_double():",
                "@pytest.mark.skip(reason=\"later\")\ndef test_double():",
                "pytest.mark.skip",
            ),
            (
                "def test_double():",
                "@pytest.mark.xfail\ndef test_double():",
                "pytest.mark.xfail",
            ),
            (
                "def test_eq(self):",
                "@unittest.skip(\"x\")\n    def test_eq(self):",
                "unittest.skip",
            ),
            (
                "    got = helper(2)\n",
                "    got = helper(2)\n    if got:\n        return\n",
                "early `return`",
            ),
            (
                "    got = helper(2)\n",
                "    got = helper(2)\n    pytest.skip(\"no\")\n",
                "pytest.skip",
            ),
            (
                "    got = helper(2)\n",
                "    got = helper(2)\n    sys.exit(0)\n",
                "sys.exit",
            ),
            (
                "assert got == 4, \"two doubled\"",
                "assert got == 4 or True, \"two doubled\"",
                "or True",
            ),
            (
                "    got = helper(2)\n    assert got == 4, \"two doubled\"\n",
                "    got = helper(2)\n    try:\n        assert got == 4, \"two doubled\"\n    except:\n        pass\n",
                "catch-all `except`",
            ),
            (
                "    got = helper(2)\n    assert got == 4, \"two doubled\"\n",
                "    got = helper(2)\n    try:\n        assert got == 4, \"two doubled\"\n    except AssertionError:\n        pass\n",
                "catch-all `except`",
            ),
        ];
        for (from, to, what) in cases {
            let got = edits("t.py", Some(BASE), Some(&edit(from, to)));
            assert!(
                got.iter()
                    .any(|(_, k, d)| *k == "weakened" && d.contains(what)),
                "{what}: {got:?}"
            );
        }
    }

    #[test]
    fn a_skip_on_the_class_weakens_its_tests() {
        let class_skip = edit("class TestMath", "@unittest.skip(\"all\")\nclass TestMath");
        let got = kinds("t.py", BASE, &class_skip);
        assert!(
            got.contains(&("TestMath::test_eq".to_string(), "weakened")),
            "{got:?}"
        );
    }

    #[test]
    fn dropped_tests_and_parametrize_rows() {
        let row = edit("[(1, 2), (2, 4)]", "[(1, 2)]");
        let d = expect("t.py", BASE, &row, &[("test_table", "dropped")]);
        assert_eq!(d, ["case `(2, 4)` dropped"]);
        let scalar =
            "@pytest.mark.parametrize(\"x\", [1, 2, 3])\ndef test_x(x):\n    assert f(x)\n";
        expect(
            "t.py",
            scalar,
            &scalar.replace(", 3]", "]"),
            &[("test_x", "dropped")],
        );
        let gone = edit(
            "def test_double():\n    got = helper(2)\n    assert got == 4, \"two doubled\"\n",
            "",
        );
        expect("t.py", BASE, &gone, &[("test_double", "dropped")]);
    }

    #[test]
    fn strings_and_comments_are_not_structure() {
        let base = "def test_s():\n    s = \"\"\"\n@pytest.mark.skip\ndef test_fake():\n    pass\n\"\"\"\n    assert len(s) > 3\n";
        let new = base.replace(
            "    assert len",
            "    # pytest.skip()\n    # return\n    assert len",
        );
        assert!(
            kinds("t.py", base, &new)
                .iter()
                .all(|(_, k)| *k != "weakened")
        );
        let names: Vec<_> = edits("t.py", None, Some(base))
            .into_iter()
            .map(|e| e.0)
            .collect();
        assert_eq!(names, ["test_s"]);
    }

    #[test]
    fn a_bad_indentation_or_an_open_string_is_unreadable() {
        for bad in [
            "def test_a():\n        x = 1\n    y = 2\n",
            "def test_a():\n    s = '''\n",
            "x = (1,\n",
        ] {
            let file = super::super::FileDiff {
                path: b"t.py",
                old: None,
                new: Some(bad.as_bytes()),
            };
            assert!(super::super::read(&[file])[0].outcome.is_err(), "{bad}");
        }
    }
}
