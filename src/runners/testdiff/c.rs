//! C and C++ tests (no runner `Language` of their own: picked by extension). A test is a harness
//! macro's body — `TEST(Suite, Name)` and its `_F`/`_P`/typed kin named `Suite.Name`,
//! `TEST_CASE("name")`/`SCENARIO`, `START_TEST(name)` — or a function named `test*`, or any
//! function whose body asserts (the harnesses that call plain functions: jsmn, minunit, Unity,
//! cmocka, greatest). Assertions are calls of `assert*`, `ASSERT_*`, `EXPECT_*`, `CHECK*`,
//! `check`, `ck_assert*`, `TEST_ASSERT*`, `CU_ASSERT*`, `g_assert*`, `munit_assert*`,
//! `REQUIRE*`, `zassert*`, `cr_assert*`/`cr_expect*`; `GTEST_SKIP`, `SKIP`, `TEST_IGNORE*`,
//! `exit`, a `DISABLED_` name, `#if 0`, `|| true`/`|| 1` and a `catch` that swallows an assertion
//! are markers.

use std::ops::Range;

use super::lex::{Flavor, lex};
use super::tokens::Src;
use super::unit::{Form, Found, Lang, Marker, Parts, build, expr_form, last_number, outside};
use super::{OUTSIDE, Parsed};

/// C-family extensions.
const C_FILES: [&str; 9] = [
    ".c", ".h", ".cc", ".cpp", ".hpp", ".cxx", ".hh", ".c++", ".hxx",
];

/// Harness macros named by their arguments joined with `.`.
const NAMED_BY_ARGS: [&str; 8] = [
    "TEST",
    "TEST_F",
    "TEST_P",
    "TYPED_TEST",
    "TYPED_TEST_P",
    "START_TEST",
    "CTEST",
    "Test",
];

/// Harness macros named by their first (string) argument.
const NAMED_BY_STRING: [&str; 3] = ["TEST_CASE", "SCENARIO", "TEST_CASE_METHOD"];

/// Words followed by `(…) {` that are not functions.
const KEYWORDS: [&str; 8] = [
    "if", "while", "for", "switch", "catch", "sizeof", "return", "do",
];

/// Assertion name prefixes.
const ASSERTS: [&str; 15] = [
    "assert",
    "ASSERT",
    "EXPECT_",
    "CHECK",
    "ck_assert",
    "TEST_ASSERT",
    "CU_ASSERT",
    "g_assert",
    "munit_assert",
    "REQUIRE",
    "zassert",
    "cr_assert",
    "cr_expect",
    "mu_assert",
    "check_",
];

struct C;

/// Whether `path` is a C or C++ file.
pub(crate) fn is_c(path: &[u8]) -> bool {
    C_FILES.iter().any(|e| path.ends_with(e.as_bytes()))
}

/// Reads a C or C++ file's tests.
pub(crate) fn parse(text: &str) -> Result<Parsed, String> {
    let s = Src::new(text, lex(text, Flavor::C)?)?;
    let mut found = Vec::new();
    walk(&s, 0..s.toks.len(), &mut found);
    let taken: Vec<Range<usize>> = found.iter().map(|p| p.spans[0].clone()).collect();
    let rest = Parts::new(OUTSIDE, outside(s.toks.len(), &taken));
    Ok(Parsed {
        outside: build(&s, &C, rest),
        tests: found.into_iter().map(|p| build(&s, &C, p)).collect(),
    })
}

/// Finds the tests in `r`, entering `namespace` and `extern "C"` blocks.
fn walk(s: &Src, r: Range<usize>, found: &mut Vec<Parts>) {
    let mut i = r.start;
    while i < r.end {
        if s.is(i, "{") {
            let container =
                (1..=2).any(|b| matches!(s.t(i.wrapping_sub(b)), "namespace" | "extern"));
            if container {
                walk(s, i + 1..s.end_of(i), found);
            }
            i = s.end_of(i) + 1;
            continue;
        }
        if let Some(p) = function_at(s, i) {
            i = p.spans[0].end;
            found.push(p);
            continue;
        }
        i += 1;
    }
}

/// The test defined at `i` (`NAME (…) qualifiers {…}`), if one is.
fn function_at(s: &Src, i: usize) -> Option<Parts> {
    let name = s.t(i);
    if !s.ident(i) || !s.is(i + 1, "(") || KEYWORDS.contains(&name) {
        return None;
    }
    let mut k = s.end_of(i + 1) + 1;
    while s.ident(k) || s.is(k, "&") {
        k += 1;
    }
    if !s.is(k, "{") {
        return None;
    }
    let close = s.end_of(k);
    let args = i + 2..s.end_of(i + 1);
    let (test, skip): (String, Vec<usize>) = if NAMED_BY_ARGS.contains(&name) {
        let parts: Vec<&str> = args
            .clone()
            .filter(|&a| s.ident(a))
            .map(|a| s.t(a))
            .collect();
        (parts.join("."), args.collect())
    } else if NAMED_BY_STRING.contains(&name)
        && args
            .clone()
            .any(|a| s.toks[a].kind == super::tokens::Tk::Str)
    {
        let lit = args
            .clone()
            .find(|&a| s.toks[a].kind == super::tokens::Tk::Str)
            .map_or("", |a| s.t(a));
        (lit.trim_matches('"').to_string(), args.collect())
    } else {
        let asserts = (k..close).any(|j| C.assertion(s, j).is_some());
        let named = name.to_ascii_lowercase().starts_with("test");
        (asserts || named).then_some(())?;
        (name.to_string(), vec![i])
    };
    let mut markers = Vec::new();
    let plain = test.replace("DISABLED_", "");
    if plain != test {
        markers.push(Marker::new("a `DISABLED_` name"));
    }
    // The declaration's specifiers (`static int`) and a closing `END_TEST` belong to the test.
    let mut start = i;
    while start > 0 && (s.ident(start - 1) || s.is(start - 1, "*")) {
        start -= 1;
    }
    let end = close + 1 + usize::from(s.is(close + 1, "END_TEST"));
    Some(Parts {
        name: plain,
        spans: std::iter::once(start..end).collect(),
        skip,
        markers,
        rows: Vec::new(),
    })
}

/// The form of an assertion macro or function called `name`, its `(` at `open`.
fn form(s: &Src, name: &str, open: usize) -> Found {
    let upper = name.to_ascii_uppercase();
    let has = |w: &[&str]| w.iter().any(|x| upper.contains(x));
    let args = s.elements(open);
    let end = s.end_of(open) + 1;
    let form = if has(&["NEAR", "_TOL", "WITHIN", "DOUBLE_EQ", "FLOAT_EQ", "APPROX"]) {
        let width = last_number(s, open..s.end_of(open));
        Form::Tolerance(if width.is_nan() { 1e-15 } else { width })
    } else if has(&["NOT_EQUAL", "_NE", "_LT", "_LE", "_GT", "_GE", "NOT"]) {
        Form::Bound
    } else if has(&["_EQ", "EQUAL", "STREQ", "_STR_EQ", "MEMEQ"]) {
        Form::Exact
    } else if has(&["TRUE", "FALSE", "NULL", "_PTR"]) {
        Form::Truthy
    } else {
        let first = args.first().cloned().unwrap_or(open + 1..open + 1);
        return Found {
            end,
            ..expr_form(s, first, false)
        };
    };
    Found::call(end, form, &args, 0)
}

impl Lang for C {
    fn assertion(&self, s: &Src, i: usize) -> Option<Found> {
        let name = s.t(i);
        let asserting = name == "check" || ASSERTS.iter().any(|p| name.starts_with(p));
        if !(s.ident(i) && asserting && s.is(i + 1, "("))
            || matches!(s.t(i.wrapping_sub(1)), "." | "->")
        {
            return None;
        }
        Some(form(s, name, i + 1))
    }

    fn marker(&self, s: &Src, i: usize, starts: &[usize]) -> Option<Marker> {
        let t = s.t(i);
        let called = s.ident(i) && s.is(i + 1, "(");
        let shown = match t {
            "GTEST_SKIP"
            | "SKIP"
            | "TEST_IGNORE"
            | "TEST_IGNORE_MESSAGE"
            | "skip"
            | "tcase_skip_broken_test"
                if called =>
            {
                format!("`{t}()`")
            }
            "exit" | "_exit" if called && !s.is(i.wrapping_sub(1), ".") => format!("`{t}()`"),
            "||" if matches!(s.t(i + 1), "true" | "1") => format!("`|| {}`", s.t(i + 1)),
            "catch" if super::js::swallows(s, i, starts) => {
                "catch-all `catch` around an assertion".to_string()
            }
            _ if is_disabling_directive(t) => {
                format!("`{}`", t.split_whitespace().collect::<Vec<_>>().join(" "))
            }
            _ => return None,
        };
        Some(Marker::new(shown))
    }
}

/// Whether a preprocessor line turns the code after it off (`#if 0`).
fn is_disabling_directive(t: &str) -> bool {
    let folded: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
    folded.starts_with('#') && matches!(folded.trim_start_matches('#').trim(), "if 0" | "if false")
}

#[cfg(test)]
mod tests {
    use super::super::tests::{edits, expect, kinds};

    const BASE: &str = r#"#include "jsmn.h"
#define check(x) do { if (!(x)) { fail(__LINE__); } } while (0)

static const struct { int a, b, want; } cases[] = {
    {1, 2, 3},
    {2, 3, 5},
};

static int twice(int x) { return x * 2; }

int test_sum(void) {
    int got = sum(1, 2);
    check(got == 3);
    return 0;
}

TEST(Sum, Negative) {
    EXPECT_EQ(sum(-1, -2), -3) << "negatives";
    EXPECT_NEAR(div(1, 3), 0.333, 0.001);
}

int main(void) {
    test(test_sum, "sums");
    return 0;
}
"#;

    fn edit(from: &str, to: &str) -> String {
        assert!(BASE.contains(from), "{from}");
        BASE.replacen(from, to, 1)
    }

    #[test]
    fn harness_functions_are_tests() {
        let names: Vec<_> = edits("test/tests.c", None, Some(BASE))
            .into_iter()
            .map(|e| e.0)
            .collect();
        assert_eq!(names, ["test_sum", "Sum.Negative"]);
        assert!(kinds("test/tests.c", BASE, BASE).is_empty());
        let more = "START_TEST(test_a) { ck_assert_int_eq(f(), 1); } END_TEST\nTEST_CASE(\"b works\", \"[b]\") { REQUIRE(b() == 2); }\nstatic void helper_checks(void) { assert(ok()); }\n";
        let names: Vec<_> = edits("t.cpp", None, Some(more))
            .into_iter()
            .map(|e| e.0)
            .collect();
        assert_eq!(names, ["test_a", "b works", "helper_checks"]);
    }

    #[test]
    fn added_strengthened_reworded_moved_fixture() {
        let new = format!("{BASE}\nint test_zero(void) {{ check(sum(0, 0) == 0); return 0; }}\n");
        expect("t.c", BASE, &new, &[("test_zero", "added")]);
        let more = edit(
            "    check(got == 3);\n",
            "    check(got == 3);\n    check(got > 0);\n",
        );
        expect("t.c", BASE, &more, &[("test_sum", "strengthened")]);
        let row = edit("    {2, 3, 5},\n", "    {2, 3, 5},\n    {0, 0, 0},\n");
        expect("t.c", BASE, &row, &[("(outside tests)", "strengthened")]);
        let msg = edit("\"negatives\"", "\"sum of negatives\"");
        expect("t.c", BASE, &msg, &[("Sum.Negative", "reworded")]);
        let renamed = edit("int test_sum(void)", "int test_sum_small(void)");
        let got = kinds("t.c", BASE, &renamed);
        assert!(got.contains(&("test_sum".to_string(), "moved")), "{got:?}");
        let setup = edit("int got = sum(1, 2);", "int got = sum(2, 1);");
        expect("t.c", BASE, &setup, &[("test_sum", "fixture")]);
        let helper = edit("return x * 2;", "return x + x;");
        expect("t.c", BASE, &helper, &[("(outside tests)", "fixture")]);
    }

    #[test]
    fn removed_and_loosened_assertions_weaken() {
        let gone = edit("    check(got == 3);\n", "");
        let d = expect("t.c", BASE, &gone, &[("test_sum", "weakened")]);
        assert_eq!(d, ["removed `check(got == 3)`"]);
        let bound = edit("check(got == 3)", "check(got >= 3)");
        expect("t.c", BASE, &bound, &[("test_sum", "weakened")]);
        let truthy = edit("EXPECT_EQ(sum(-1, -2), -3)", "EXPECT_TRUE(sum(-1, -2))");
        expect("t.c", BASE, &truthy, &[("Sum.Negative", "weakened")]);
        let wider = edit("0.333, 0.001)", "0.333, 0.1)");
        expect("t.c", BASE, &wider, &[("Sum.Negative", "weakened")]);
    }

    #[test]
    fn skips_disabled_exit_and_if_zero_weaken() {
        let cases = [
            (
                "    int got = sum(1, 2);\n",
                "    int got = sum(1, 2);\n    if (got) return 0;\n",
                "early `return`",
            ),
            (
                "    EXPECT_EQ(sum(-1, -2), -3)",
                "    GTEST_SKIP();\n    EXPECT_EQ(sum(-1, -2), -3)",
                "`GTEST_SKIP()`",
            ),
            (
                "TEST(Sum, Negative)",
                "TEST(Sum, DISABLED_Negative)",
                "`DISABLED_`",
            ),
            (
                "    int got = sum(1, 2);\n",
                "    int got = sum(1, 2);\n    exit(0);\n",
                "`exit()`",
            ),
            ("check(got == 3)", "check(got == 3 || 1)", "`|| 1`"),
            (
                "int test_sum(void) {\n",
                "int test_sum(void) {\n#if 0\n",
                "`#if 0`",
            ),
        ];
        for (from, to, what) in cases {
            let new = edit(from, to);
            let new = if what == "`#if 0`" {
                new.replace(
                    "    return 0;\n}\n\nTEST",
                    "#endif\n    return 0;\n}\n\nTEST",
                )
            } else {
                new
            };
            let got = edits("t.c", Some(BASE), Some(&new));
            assert!(
                got.iter()
                    .any(|(_, k, d)| *k == "weakened" && d.contains(what)),
                "{what}: {got:?}"
            );
        }
        let cpp = "TEST(A, B) {\n  EXPECT_EQ(f(), 1);\n}\n";
        let swallowed = "TEST(A, B) {\n  try { EXPECT_EQ(f(), 1); } catch (...) {}\n}\n";
        let got = edits("t.cc", Some(cpp), Some(swallowed));
        assert!(
            got.iter()
                .any(|(_, k, d)| *k == "weakened" && d.contains("catch-all")),
            "{got:?}"
        );
    }

    #[test]
    fn dropped_rows_and_tests() {
        let row = edit("    {2, 3, 5},\n", "");
        let d = expect("t.c", BASE, &row, &[("(outside tests)", "dropped")]);
        assert_eq!(d, ["case `{2, 3, 5}` dropped"]);
        let gone = edit(
            "TEST(Sum, Negative) {\n    EXPECT_EQ(sum(-1, -2), -3) << \"negatives\";\n    EXPECT_NEAR(div(1, 3), 0.333, 0.001);\n}\n",
            "",
        );
        expect("t.c", BASE, &gone, &[("Sum.Negative", "dropped")]);
    }

    #[test]
    fn strings_comments_and_macros_are_not_structure() {
        let base = "int test_s(void) {\n  const char *s = \"}{ GTEST_SKIP(); \";\n  check(s[0] == '}');\n  return 0;\n}\n";
        let new = base.replace("  return 0;", "  // exit(0);\n  /* } */\n  return 0;");
        assert!(
            edits("t.c", Some(base), Some(&new))
                .iter()
                .all(|(_, k, _)| *k != "weakened")
        );
        let unbalanced = super::super::FileDiff {
            path: b"t.c",
            old: None,
            new: Some(b"int test_a(void) { check(1);"),
        };
        assert!(super::super::read(&[unbalanced])[0].outcome.is_err());
    }
}
