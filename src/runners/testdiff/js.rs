//! JavaScript and TypeScript tests: an `it`/`test`/`specify` call (`xit`, `fit`, `.only`,
//! `.skip`, `.each(…)` too) whose first argument is a string, named by its `describe`/`context`/
//! `suite` path joined with ` > ` as the census names it. Assertions are `expect(…)` chains (Jest,
//! Vitest, chai), node's and chai's `assert`, and tape/ava's `t.*`; skips and focus (also
//! inherited from a `describe`), `this.skip()`, `process.exit`, `|| true` and a `catch` that
//! swallows an assertion are markers; `.each` tables are rows.

use std::ops::Range;

use super::lex::{Flavor, lex};
use super::tokens::{Src, Tk};
use super::unit::{self, Form, Found, Lang, Marker, Parts, build, expr_form, last_number, outside};
use super::{OUTSIDE, Parsed};

const SUITES: [&str; 5] = ["describe", "context", "suite", "xdescribe", "fdescribe"];
const TESTS: [&str; 6] = ["it", "test", "specify", "xit", "fit", "xtest"];

struct Js;

/// Reads a JavaScript or TypeScript file's tests.
pub(crate) fn parse(text: &str) -> Result<Parsed, String> {
    let s = Src::new(text, lex(text, Flavor::Js)?)?;
    let mut found = Vec::new();
    walk(&s, 0..s.toks.len(), &mut Vec::new(), &[], &mut found);
    let taken: Vec<Range<usize>> = found.iter().map(|p| p.spans[0].clone()).collect();
    let rest = Parts::new(OUTSIDE, outside(s.toks.len(), &taken));
    Ok(Parsed {
        outside: build(&s, &Js, rest),
        tests: found.into_iter().map(|p| build(&s, &Js, p)).collect(),
    })
}

/// A call of a test function: `describe.skip.each([…])("name", fn)`.
struct Call {
    /// The callee's names: `["describe", "skip", "each"]`.
    names: Vec<String>,
    /// The `(` of the `.each` table, if any.
    each: Option<usize>,
    /// The `(` of the call itself.
    open: usize,
}

/// The call of a test or suite function at `i`, if one starts there.
fn call_at(s: &Src, i: usize) -> Option<Call> {
    let first = s.t(i);
    if !s.ident(i) || s.is(i.wrapping_sub(1), ".") {
        return None;
    }
    if !(SUITES.contains(&first) || TESTS.contains(&first)) {
        return None;
    }
    let mut names = vec![first.to_string()];
    let mut k = i + 1;
    while s.is(k, ".") && s.ident(k + 1) {
        names.push(s.t(k + 1).to_string());
        k += 2;
    }
    let mut each = None;
    if names.last().is_some_and(|n| n == "each") && s.is(k, "(") {
        each = Some(k);
        k = s.end_of(k) + 1;
    }
    s.is(k, "(").then_some(Call {
        names,
        each,
        open: k,
    })
}

/// The markers a callee's names carry: `skip`, `only`, `x`/`f` prefixes, `failing`.
fn call_markers(call: &Call) -> Vec<Marker> {
    let shown = format!("`{}`", call.names.join("."));
    let first = call.names[0].as_str();
    let modifiers = call.names[1..].iter().map(String::as_str);
    let mut out = Vec::new();
    if first.starts_with('x') || modifiers.clone().any(|m| m == "skip" || m == "failing") {
        out.push(Marker::new(shown.clone()));
    }
    if first.starts_with('f') || modifiers.clone().any(|m| m == "only") {
        out.push(Marker::focus(shown));
    }
    out
}

/// Finds the tests in `r`, inside the suites `path` (their markers `inherited`).
fn walk(
    s: &Src,
    r: Range<usize>,
    path: &mut Vec<String>,
    inherited: &[Marker],
    found: &mut Vec<Parts>,
) {
    let mut i = r.start;
    while i < r.end {
        let Some(call) = call_at(s, i) else {
            i += 1;
            continue;
        };
        let close = s.end_of(call.open);
        let name_at = call.open + 1;
        if s.toks.get(name_at).is_none_or(|t| t.kind != Tk::Str) {
            i = call.open + 1;
            continue;
        }
        let name = unquote(s.t(name_at));
        let mut markers = inherited.to_vec();
        markers.extend(call_markers(&call));
        if SUITES.contains(&call.names[0].as_str()) {
            path.push(name);
            walk(s, name_at + 1..close, path, &markers, found);
            path.pop();
        } else {
            let rows = match call.each {
                Some(e) if s.is(e + 1, "[") && !unit::is_table(s, e + 1) => s.elements(e + 1),
                _ => Vec::new(),
            };
            let mut full = path.clone();
            full.push(name);
            let end = close + 1 + usize::from(s.is(close + 1, ";"));
            found.push(Parts {
                name: full.join(" > "),
                spans: std::iter::once(i..end).collect(),
                skip: vec![name_at],
                markers,
                rows,
            });
        }
        i = close + 1 + usize::from(s.is(close + 1, ";"));
    }
}

/// A string literal's text without its quotes.
fn unquote(lit: &str) -> String {
    let inner = lit.get(1..lit.len().saturating_sub(1)).unwrap_or("");
    inner.to_string()
}

/// Jest, Vitest and chai matchers that pin a value down exactly.
const EXACT: [&str; 23] = [
    "toBe",
    "toEqual",
    "toStrictEqual",
    "toHaveLength",
    "toMatchSnapshot",
    "toMatchInlineSnapshot",
    "toHaveBeenCalledWith",
    "toHaveBeenCalledTimes",
    "toHaveBeenLastCalledWith",
    "toHaveBeenNthCalledWith",
    "toBeNull",
    "toBeUndefined",
    "toBeNaN",
    "toHaveReturnedWith",
    "equal",
    "equals",
    "eql",
    "strictEqual",
    "deepEqual",
    "deepStrictEqual",
    "is",
    "same",
    "assertions",
];

/// Matchers that only ask for truthiness.
const TRUTHY: [&str; 8] = [
    "toBeTruthy",
    "toBeFalsy",
    "toBeDefined",
    "ok",
    "exist",
    "truthy",
    "falsy",
    "notOk",
];

/// The form of a matcher (`negated` by a `.not`), its arguments at `args` (a `(`, if called).
fn matcher_form(s: &Src, name: &str, args: Option<usize>, negated: bool) -> Form {
    if negated {
        return Form::Bound;
    }
    match name {
        "toBeCloseTo" => {
            let digits = args.and_then(|a| s.elements(a).get(1).map(|r| last_number(s, r.clone())));
            Form::Tolerance(10f64.powf(-digits.filter(|d| !d.is_nan()).unwrap_or(2.0)))
        }
        "closeTo" | "approximately" | "inDelta" => {
            Form::Tolerance(args.map_or(f64::NAN, |a| last_number(s, a..s.end_of(a))))
        }
        n if EXACT.contains(&n) || matches!(n, "true" | "false" | "null" | "undefined" | "NaN") => {
            Form::Exact
        }
        n if TRUTHY.contains(&n) => Form::Truthy,
        _ => Form::Bound,
    }
}

/// An `expect(…)` chain at `i`: its end, matcher and the matcher's arguments.
fn expect_chain(s: &Src, i: usize) -> Option<Found> {
    let mut k = if s.is(i + 1, "(") {
        s.end_of(i + 1) + 1
    } else {
        i + 1
    };
    let subject = if s.is(i + 1, "(") {
        s.elements(i + 1).first().cloned()
    } else {
        None
    };
    let mut object = None;
    let (mut matcher, mut args, mut negated) = ("", None, false);
    while s.is(k, ".") && s.ident(k + 1) {
        matcher = s.t(k + 1);
        negated |= matcher == "not";
        k += 2;
        args = None;
        if s.is(k, "(") {
            args = Some(k);
            object = s.elements(k).first().cloned();
            k = s.end_of(k) + 1;
        }
    }
    Some(Found {
        end: k,
        form: matcher_form(s, matcher, args, negated),
        subject: subject.unwrap_or(i..i),
        object: object.unwrap_or(k..k),
    })
}

impl Lang for Js {
    fn assertion(&self, s: &Src, i: usize) -> Option<Found> {
        let t = s.t(i);
        if !s.ident(i) || s.is(i.wrapping_sub(1), ".") {
            return None;
        }
        if t == "expect" && (s.is(i + 1, "(") || s.is(i + 1, ".")) {
            return expect_chain(s, i);
        }
        let asserting = t == "assert" || (t == "t" && s.is(i + 1, "."));
        if !asserting {
            return None;
        }
        let (call, method) = if s.is(i + 1, ".") {
            (i + 3, s.t(i + 2))
        } else {
            (i + 1, "ok")
        };
        s.is(call, "(").then_some(())?;
        let args = s.elements(call);
        let end = s.end_of(call) + 1;
        if matches!(
            method,
            "ok" | "true" | "isTrue" | "isOk" | "truthy" | "assert"
        ) {
            let first = args.first().cloned().unwrap_or(call + 1..call + 1);
            return Some(Found {
                end,
                ..expr_form(s, first, false)
            });
        }
        Some(Found::call(
            end,
            matcher_form(s, method, Some(call), false),
            &args,
            0,
        ))
    }

    fn marker(&self, s: &Src, i: usize, starts: &[usize]) -> Option<Marker> {
        let t = s.t(i);
        let shown = match t {
            "skip"
                if s.is(i.wrapping_sub(1), ".")
                    && s.is(i + 1, "(")
                    && matches!(s.t(i.wrapping_sub(2)), "this" | "t" | "ctx" | "context") =>
            {
                format!("`{}.skip()`", s.t(i - 2))
            }
            "process" if s.is(i + 1, ".") && s.is(i + 2, "exit") => "`process.exit`".to_string(),
            "||" if s.is(i + 1, "true") => "`|| true`".to_string(),
            "catch" if swallows(s, i, starts) => {
                "catch-all `catch` around an assertion".to_string()
            }
            _ => return None,
        };
        Some(Marker::new(shown))
    }

    fn arrows(&self) -> bool {
        true
    }
}

/// Whether the `catch` at `i` follows a `try` block that asserts and neither rethrows nor
/// asserts itself (also C++'s `catch (...)`).
pub(crate) fn swallows(s: &Src, i: usize, starts: &[usize]) -> bool {
    let Some(prev) = i.checked_sub(1) else {
        return false;
    };
    let open = s.start_of(prev);
    if !(s.is(prev, "}") && open >= 1 && s.is(open - 1, "try") && unit::guards(s, open, starts)) {
        return false;
    }
    let mut body = i + 1;
    if s.is(body, "(") {
        body = s.end_of(body) + 1;
    }
    if !s.is(body, "{") {
        return false;
    }
    let end = s.end_of(body);
    !(body..end).any(|k| {
        s.is(k, "throw") || starts.contains(&k) || s.toks[k].kind == Tk::Ident && s.t(k) == "fail"
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{edits, expect, kinds};

    const BASE: &str = r#"import { sum } from "../src/sum";

const twice = (x) => x * 2;

describe("sum", () => {
  it("adds", () => {
    const got = sum(1, 2);
    expect(got).toBe(3);
  });

  test.each([[1, 1, 2], [2, 3, 5]])("adds %i and %i", (a, b, c) => {
    expect(sum(a, b)).toEqual(c);
  });

  it("is close", () => {
    expect(sum(0.1, 0.2)).toBeCloseTo(0.3, 5);
  });
});
"#;

    fn edit(from: &str, to: &str) -> String {
        assert!(BASE.contains(from), "{from}");
        BASE.replacen(from, to, 1)
    }

    #[test]
    fn names_follow_the_describe_path() {
        let names: Vec<_> = edits("a.test.ts", None, Some(BASE))
            .into_iter()
            .map(|e| e.0)
            .collect();
        assert_eq!(
            names,
            ["sum > adds", "sum > adds %i and %i", "sum > is close"]
        );
        assert!(kinds("a.test.ts", BASE, BASE).is_empty());
    }

    #[test]
    fn added_strengthened_reworded_moved_fixture() {
        let cut = BASE.rfind("});").unwrap();
        let new = format!(
            "{}  it(\"zero\", () => {{ expect(sum(0, 0)).toBe(0); }});\n}});\n",
            &BASE[..cut]
        );
        expect("a.test.js", BASE, &new, &[("sum > zero", "added")]);
        let more = edit(
            "expect(got).toBe(3);",
            "expect(got).toBe(3);\n    expect(got).toBeGreaterThan(0);",
        );
        expect("a.test.js", BASE, &more, &[("sum > adds", "strengthened")]);
        let row = edit("[2, 3, 5]]", "[2, 3, 5], [0, 0, 0]]");
        expect(
            "a.test.js",
            BASE,
            &row,
            &[("sum > adds %i and %i", "strengthened")],
        );
        let renamed = edit("it(\"adds\"", "it(\"adds two numbers\"");
        let d = expect("a.test.js", BASE, &renamed, &[("sum > adds", "moved")]);
        assert_eq!(d, ["renamed to `sum > adds two numbers`, body unchanged"]);
        let setup = edit("const got = sum(1, 2);", "const got = sum(2, 1);");
        expect("a.test.js", BASE, &setup, &[("sum > adds", "fixture")]);
        let helper = edit("x * 2", "x + x");
        expect(
            "a.test.js",
            BASE,
            &helper,
            &[("(outside tests)", "fixture")],
        );
        let msg = "it(\"m\", () => { assert.equal(f(), 1, \"one\"); });\n";
        expect(
            "a.test.js",
            msg,
            &msg.replace("\"one\"", "\"uno\""),
            &[("m", "reworded")],
        );
    }

    #[test]
    fn loosened_matchers_and_tolerances_weaken() {
        let truthy = edit("expect(got).toBe(3);", "expect(got).toBeTruthy();");
        let d = expect("a.test.js", BASE, &truthy, &[("sum > adds", "weakened")]);
        assert_eq!(
            d,
            ["`expect(got).toBe(3)` loosened to `expect(got).toBeTruthy()`"]
        );
        let defined = edit("expect(got).toBe(3);", "expect(got).toBeDefined();");
        expect("a.test.js", BASE, &defined, &[("sum > adds", "weakened")]);
        let wider = edit("toBeCloseTo(0.3, 5)", "toBeCloseTo(0.3, 1)");
        expect("a.test.js", BASE, &wider, &[("sum > is close", "weakened")]);
        let narrower = edit("toBeCloseTo(0.3, 5)", "toBeCloseTo(0.3, 8)");
        expect(
            "a.test.js",
            BASE,
            &narrower,
            &[("sum > is close", "strengthened")],
        );
        let gone = edit("    expect(got).toBe(3);\n", "");
        expect("a.test.js", BASE, &gone, &[("sum > adds", "weakened")]);
    }

    /// A helper arrow inside a test that returns leaves the helper only: no early return; a
    /// `return` in the test's own arrow before its `expect` is one (the attack, still held).
    #[test]
    fn a_return_in_a_helper_arrow_is_no_early_return() {
        let helper = edit(
            "    const got = sum(1, 2);\n",
            "    const pick = (x) => {\n      if (x) { return x; }\n      return 0;\n    };\n    const got = sum(pick(1), 2);\n",
        );
        let got = edits("a.test.js", Some(BASE), Some(&helper));
        assert!(
            !got.iter().any(|(_, _, d)| d.contains("early `return`")),
            "{got:?}"
        );
        let early = edit(
            "    const got = sum(1, 2);\n",
            "    const got = sum(1, 2);\n    if (got) { return; }\n",
        );
        let got = edits("a.test.js", Some(BASE), Some(&early));
        assert!(
            got.iter()
                .any(|(_, k, d)| *k == "weakened" && d.contains("early `return`")),
            "{got:?}"
        );
    }

    #[test]
    fn skips_focus_early_returns_and_catch_alls_weaken() {
        let cases = [
            ("it(\"adds\"", "it.skip(\"adds\"", "`it.skip`"),
            ("it(\"adds\"", "xit(\"adds\"", "`xit`"),
            ("it(\"adds\"", "it.only(\"adds\"", "`it.only`"),
            ("it(\"adds\"", "fit(\"adds\"", "`fit`"),
            (
                "describe(\"sum\"",
                "describe.skip(\"sum\"",
                "`describe.skip`",
            ),
            (
                "const got = sum(1, 2);",
                "const got = sum(1, 2);\n    if (got) return;",
                "early `return`",
            ),
            (
                "const got = sum(1, 2);",
                "const got = sum(1, 2);\n    process.exit(0);",
                "`process.exit`",
            ),
            (
                "expect(got).toBe(3);",
                "expect(got === 3 || true).toBe(true);",
                "`|| true`",
            ),
            (
                "expect(got).toBe(3);",
                "try { expect(got).toBe(3); } catch (e) {}",
                "catch-all `catch`",
            ),
            (
                "const got = sum(1, 2);",
                "const got = sum(1, 2);\n    this.skip();",
                "`this.skip()`",
            ),
        ];
        for (from, to, what) in cases {
            let got = edits("a.test.js", Some(BASE), Some(&edit(from, to)));
            assert!(
                got.iter()
                    .any(|(_, k, d)| *k == "weakened" && d.contains(what)),
                "{what}: {got:?}"
            );
        }
        let focus = "it(\"a\", () => { expect(1).toBe(1); });\n";
        let added = format!("{focus}test.only(\"b\", () => {{ expect(2).toBe(2); }});\n");
        expect("a.test.js", focus, &added, &[("b", "weakened")]);
        let ret = "it(\"r\", () => {\n  return expect(f()).resolves.toBe(1);\n});\n";
        // `return expect(…)` is no early return; an assertion after it never runs, so is one.
        let before = ret.replace("  return", "  expect(g()).toBe(2);\n  return");
        expect("a.test.js", ret, &before, &[("r", "strengthened")]);
        let after = ret.replace("toBe(1);", "toBe(1);\n  expect(g()).toBe(2);");
        expect("a.test.js", ret, &after, &[("r", "weakened")]);
    }

    #[test]
    fn dropped_tests_and_each_rows() {
        let row = edit("[[1, 1, 2], [2, 3, 5]]", "[[1, 1, 2]]");
        let d = expect(
            "a.test.js",
            BASE,
            &row,
            &[("sum > adds %i and %i", "dropped")],
        );
        assert_eq!(d, ["case `[2, 3, 5]` dropped"]);
        let gone = edit(
            "  it(\"is close\", () => {\n    expect(sum(0.1, 0.2)).toBeCloseTo(0.3, 5);\n  });\n",
            "",
        );
        expect("a.test.js", BASE, &gone, &[("sum > is close", "dropped")]);
    }

    #[test]
    fn strings_templates_regexes_and_comments_are_not_structure() {
        let base = "it(\"s\", () => {\n  const a = \"}it.skip(\";\n  const b = `${\"}\"} } ${x}`;\n  const c = /[}]\\//g;\n  expect(a + b).toMatch(c);\n});\n";
        let new = base.replace(
            "  expect",
            "  // it.only(\"x\", () => {})\n  /* return; } */\n  expect",
        );
        assert!(
            kinds("a.test.js", base, &new)
                .iter()
                .all(|(_, k)| *k != "weakened")
        );
        let names: Vec<_> = edits("a.test.js", None, Some(base))
            .into_iter()
            .map(|e| e.0)
            .collect();
        assert_eq!(names, ["s"]);
        let open = super::super::FileDiff {
            path: b"a.test.js",
            old: None,
            new: Some(b"it(\"x\", () => {"),
        };
        assert!(super::super::read(&[open])[0].outcome.is_err());
    }
}
