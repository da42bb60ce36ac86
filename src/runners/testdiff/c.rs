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

use super::lex::{Flavor, Src, lex};
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
        && args.clone().any(|a| s.toks[a].kind == super::lex::Tk::Str)
    {
        let lit = args
            .clone()
            .find(|&a| s.toks[a].kind == super::lex::Tk::Str)
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
    Some(Parts {
        name: plain,
        spans: std::iter::once(i..close + 1).collect(),
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
