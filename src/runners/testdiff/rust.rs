//! Rust tests: a `fn` under an attribute whose last path segment is `test` (`#[test]`,
//! `#[tokio::test]`), `rstest`, `test_case`, `case` or `quickcheck`, at any depth, named by its
//! `mod` path (`tests::adds`). Assertions are the macros whose name holds `assert` (`assert*!`,
//! `debug_assert*!`, `prop_assert*!`, `assert_data_eq!`), googletest's `expect_*!` and
//! `verify_*!`, `panic!` and `unreachable!`, and a call of a function or method whose name holds
//! `assert` (`expect![…].assert_eq(&x)`); `#[ignore]`, `#[should_panic]`, `catch_unwind`,
//! `process::exit` and `|| true` are markers; `#[case(…)]`/`#[test_case(…)]` are rows.

use std::ops::Range;

use super::lex::{Flavor, lex};
use super::tokens::Src;
use super::unit::{Form, Found, Lang, Marker, Parts, build, expr_form, last_number, outside};
use super::{OUTSIDE, Parsed};

/// Attribute names that make a `fn` a test.
const TEST_ATTRS: [&str; 6] = [
    "test",
    "rstest",
    "test_case",
    "case",
    "quickcheck",
    "proptest",
];

/// Words that may stand between a `fn`'s attributes and the `fn` itself.
const QUALIFIERS: [&str; 6] = ["pub", "async", "unsafe", "const", "extern", "crate"];

struct Rust;

/// Reads a Rust file's tests.
pub(crate) fn parse(text: &str) -> Result<Parsed, String> {
    let s = Src::new(text, lex(text, Flavor::Rust)?)?;
    let mut found = Vec::new();
    walk(&s, 0..s.toks.len(), &mut Vec::new(), &mut found);
    let taken: Vec<Range<usize>> = found.iter().map(|p| p.spans[0].clone()).collect();
    let rest = Parts::new(OUTSIDE, outside(s.toks.len(), &taken));
    Ok(Parsed {
        outside: build(&s, &Rust, rest),
        tests: found.into_iter().map(|p| build(&s, &Rust, p)).collect(),
    })
}

/// Finds the tests in `r`, `path` being the enclosing modules.
fn walk(s: &Src, r: Range<usize>, path: &mut Vec<String>, found: &mut Vec<Parts>) {
    let mut i = r.start;
    while i < r.end {
        if s.is(i, "mod") && s.ident(i + 1) && s.is(i + 2, "{") {
            path.push(s.t(i + 1).to_string());
            walk(s, i + 3..s.end_of(i + 2), path, found);
            path.pop();
            i = s.end_of(i + 2) + 1;
            continue;
        }
        let test = (s.is(i, "fn") && s.ident(i + 1)).then(|| test_at(s, i, path));
        if let Some(parts) = test.flatten() {
            i = parts.spans[0].end;
            found.push(parts);
            continue;
        }
        i += 1;
    }
}

/// The test whose `fn` is at `i`, if it is one.
fn test_at(s: &Src, i: usize, path: &[String]) -> Option<Parts> {
    let attrs = attributes(s, i);
    if !attrs
        .iter()
        .any(|a| TEST_ATTRS.contains(&attr_name(s, a.clone())))
    {
        return None;
    }
    let mut k = i + 2;
    while k < s.toks.len() && !s.is(k, "{") {
        if s.is(k, ";") {
            return None;
        }
        k = s.end_of(k) + 1;
    }
    let close = s.end_of(k);
    (close > k).then_some(())?;
    let start = attrs.first().map_or(i, |a| a.start);
    let mut markers = Vec::new();
    let mut rows = Vec::new();
    for a in &attrs {
        match attr_name(s, a.clone()) {
            "ignore" | "should_panic" => {
                markers.push(Marker::new(format!("`{}`", s.shown(a.clone()))))
            }
            "case" | "test_case" if s.is(a.start + 3, "(") => {
                rows.push(a.start + 4..s.end_of(a.start + 3));
            }
            _ => {}
        }
    }
    let name = path
        .iter()
        .map(String::as_str)
        .chain([s.t(i + 1)])
        .collect::<Vec<_>>()
        .join("::");
    Some(Parts {
        name,
        spans: std::iter::once(start..close + 1).collect(),
        skip: vec![i + 1],
        markers,
        rows,
    })
}

/// The attributes (`#[…]`, each from its `#` to its `]`) before the `fn` at `i`.
fn attributes(s: &Src, i: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut j = i;
    while j > 0 {
        let prev = j - 1;
        if QUALIFIERS.contains(&s.t(prev)) || s.toks[prev].kind == super::tokens::Tk::Str {
            j = prev;
        } else if s.is(prev, "]") && s.start_of(prev) > 0 && s.is(s.start_of(prev) - 1, "#") {
            j = s.start_of(prev) - 1;
            out.push(j..prev + 1);
        } else if s.is(prev, ")") && s.is(s.start_of(prev).wrapping_sub(1), "pub") {
            j = s.start_of(prev);
        } else {
            break;
        }
    }
    out.reverse();
    out
}

/// The last path segment of the attribute at `a` (`#[tokio::test]` → `test`).
fn attr_name<'a>(s: &Src<'a>, a: Range<usize>) -> &'a str {
    let mut k = a.start + 2;
    let mut name = "";
    while k < a.end && s.ident(k) {
        name = s.t(k);
        if !s.is(k + 1, "::") {
            break;
        }
        k += 2;
    }
    name
}

impl Lang for Rust {
    fn assertion(&self, s: &Src, i: usize) -> Option<Found> {
        let name = s.t(i);
        if !s.ident(i) || s.is(i.wrapping_sub(1), "fn") {
            return None;
        }
        let (open, is_assert) = if s.is(i + 1, "!") && is_assert_macro(name) {
            (i + 2, !matches!(name, "panic" | "unreachable"))
        } else if s.is(i + 1, "(") && name.contains("assert") {
            // A function or method that asserts: `assert_parses(x)`, expect-test's
            // `expect![[…]].assert_eq(&got)`, assert_cmd's `.assert()`.
            (i + 1, true)
        } else {
            return None;
        };
        if !matches!(s.t(open), "(" | "[" | "{") {
            return None;
        }
        let end = s.end_of(open) + 1;
        let args = s.elements(open);
        let first = args.first().cloned().unwrap_or(open + 1..open + 1);
        let form = if ["relative_eq", "abs_diff_eq", "ulps_eq", "approx_eq"]
            .iter()
            .any(|t| name.contains(t))
        {
            let width = last_number(s, open..end);
            Form::Tolerance(if width.is_nan() { f64::EPSILON } else { width })
        } else if ["_eq", "_matches", "_that"]
            .iter()
            .any(|e| name.ends_with(e))
            || !is_assert
        {
            Form::Exact
        } else if name.ends_with("_ne") {
            Form::Bound
        } else if !s.is(i + 1, "!") {
            Form::Truthy
        } else {
            return Some(Found {
                end,
                ..expr_form(s, first, false)
            });
        };
        Some(Found::call(end, form, &args, 0))
    }

    fn marker(&self, s: &Src, i: usize, _: &[usize]) -> Option<Marker> {
        if s.is(i, "catch_unwind") {
            Some(Marker::new("`catch_unwind`"))
        } else if s.is(i, "exit") && s.is(i + 1, "(") && s.is(i.wrapping_sub(1), "::") {
            Some(Marker::new("`process::exit`"))
        } else if s.is(i, "||") && s.is(i + 1, "true") {
            Some(Marker::new("`|| true`"))
        } else {
            None
        }
    }
}

/// Whether a macro named `name` asserts: any `*assert*!` (`assert_eq!`, `debug_assert!`,
/// `prop_assert!`, snapbox's `assert_data_eq!`, insta's `assert_snapshot!`), googletest's
/// `expect_*!`/`verify_*!`, `panic!` and `unreachable!`.
fn is_assert_macro(name: &str) -> bool {
    name.contains("assert")
        || name.starts_with("expect_")
        || name.starts_with("verify_")
        || name == "panic"
        || name == "unreachable"
}

#[cfg(test)]
mod tests {
    use super::super::tests::{edits, expect, kinds};

    const BASE: &str = r#"
fn sum(a: i32, b: i32) -> i32 { a + b }

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        let got = sum(1, 2);
        assert_eq!(got, 3, "one and two");
    }

    #[test]
    fn adds_negative() {
        assert_eq!(sum(-1, -2), -3);
    }
}
"#;

    fn edit(from: &str, to: &str) -> String {
        assert!(BASE.contains(from), "{from}");
        BASE.replacen(from, to, 1)
    }

    #[test]
    fn unchanged_is_no_edit() {
        assert!(kinds("src/lib.rs", BASE, BASE).is_empty());
    }

    #[test]
    fn a_new_test_is_added() {
        let new = edit(
            "    #[test]\n    fn adds_negative",
            "    #[test]\n    fn zero() { assert_eq!(sum(0, 0), 0); }\n\n    #[test]\n    fn adds_negative",
        );
        expect("src/lib.rs", BASE, &new, &[("tests::zero", "added")]);
    }

    #[test]
    fn an_added_assertion_strengthens() {
        let new = edit(
            "assert_eq!(got, 3, \"one and two\");",
            "assert_eq!(got, 3, \"one and two\");\n        assert!(got > 0);",
        );
        let d = expect("src/lib.rs", BASE, &new, &[("tests::adds", "strengthened")]);
        assert_eq!(d, ["added `assert!(got > 0)`"]);
    }

    #[test]
    fn a_changed_message_is_reworded() {
        let new = edit("\"one and two\"", "\"1 + 2\"");
        expect("src/lib.rs", BASE, &new, &[("tests::adds", "reworded")]);
    }

    #[test]
    fn a_renamed_test_with_the_same_body_is_moved() {
        let new = edit("fn adds_negative()", "fn sums_negatives()");
        let d = expect(
            "src/lib.rs",
            BASE,
            &new,
            &[("tests::adds_negative", "moved")],
        );
        assert!(d[0].contains("tests::sums_negatives"), "{d:?}");
    }

    #[test]
    fn changed_setup_is_fixture() {
        let new = edit("let got = sum(1, 2);", "let got = sum(2, 1);");
        expect("src/lib.rs", BASE, &new, &[("tests::adds", "fixture")]);
        let helper = edit("{ a + b }", "{ b + a }");
        expect(
            "src/lib.rs",
            BASE,
            &helper,
            &[("(outside tests)", "fixture")],
        );
    }

    #[test]
    fn a_removed_assertion_weakens() {
        let new = edit("assert_eq!(sum(-1, -2), -3);", "let _ = sum(-1, -2);");
        let d = expect(
            "src/lib.rs",
            BASE,
            &new,
            &[("tests::adds_negative", "weakened")],
        );
        assert_eq!(d, ["removed `assert_eq!(sum(-1, -2), -3)`"]);
    }

    #[test]
    fn a_changed_expected_value_weakens() {
        let new = edit(
            "assert_eq!(sum(-1, -2), -3);",
            "assert_eq!(sum(-1, -2), -4);",
        );
        expect(
            "src/lib.rs",
            BASE,
            &new,
            &[("tests::adds_negative", "weakened")],
        );
    }

    #[test]
    fn ignore_and_should_panic_weaken() {
        for attr in ["#[ignore]", "#[ignore = \"flaky\"]", "#[should_panic]"] {
            let new = edit(
                "    #[test]\n    fn adds()",
                &format!("    #[test]\n    {attr}\n    fn adds()"),
            );
            let d = expect("src/lib.rs", BASE, &new, &[("tests::adds", "weakened")]);
            assert_eq!(d, [format!("added `{attr}`")]);
        }
    }

    #[test]
    fn an_early_return_weakens() {
        let new = edit(
            "let got = sum(1, 2);",
            "let got = sum(1, 2);\n        if got != 3 { return; }",
        );
        let d = expect("src/lib.rs", BASE, &new, &[("tests::adds", "weakened")]);
        assert_eq!(d, ["added early `return`"]);
    }

    /// A `return` in a `match` arm's block (`=> {`) leaves the whole test (no arrow function in
    /// Rust): early; one in a closure's body with no assertion after it in that body is not.
    #[test]
    fn a_return_in_a_match_arm_is_early_one_in_a_closure_is_not() {
        let arm = edit(
            "let got = sum(1, 2);",
            "let got = sum(1, 2);\n        match got { 3 => { return; } _ => {} }",
        );
        let d = expect("src/lib.rs", BASE, &arm, &[("tests::adds", "weakened")]);
        assert_eq!(d, ["added early `return`"]);
        let closure = edit(
            "let got = sum(1, 2);",
            "let pick = |x: i32| { if x > 0 { return x; } 0 };\n        let got = sum(pick(1), 2);",
        );
        let got = edits("src/lib.rs", Some(BASE), Some(&closure));
        assert!(
            !got.iter().any(|(_, _, d)| d.contains("early `return`")),
            "{got:?}"
        );
    }

    #[test]
    fn exit_or_true_and_catch_unwind_weaken() {
        let cases = [
            (
                "let got = sum(1, 2);",
                "let got = sum(1, 2);\n        std::process::exit(0);",
                "`process::exit`",
            ),
            (
                "assert_eq!(sum(-1, -2), -3);",
                "assert!(sum(-1, -2) == -3 || true);",
                "`|| true`",
            ),
            (
                "assert_eq!(sum(-1, -2), -3);",
                "let _ = std::panic::catch_unwind(|| assert_eq!(sum(-1, -2), -3));",
                "`catch_unwind`",
            ),
        ];
        for (from, to, what) in cases {
            let got = edits("src/lib.rs", Some(BASE), Some(&edit(from, to)));
            assert!(
                got.iter()
                    .any(|(_, k, d)| *k == "weakened" && d.contains(what)),
                "{what}: {got:?}"
            );
        }
    }

    #[test]
    fn assert_eq_to_a_weaker_assert_is_loosened() {
        let new = edit(
            "assert_eq!(got, 3, \"one and two\");",
            "assert!(got > 0, \"one and two\");",
        );
        let d = expect("src/lib.rs", BASE, &new, &[("tests::adds", "weakened")]);
        assert_eq!(
            d,
            [
                "`assert_eq!(got, 3, \"one and two\")` loosened to `assert!(got > 0, \"one and two\")`"
            ]
        );
        let eq_to_le = edit("assert_eq!(got, 3, \"one and two\");", "assert!(got == 3);");
        let d = expect(
            "src/lib.rs",
            BASE,
            &eq_to_le,
            &[("tests::adds", "reworded")],
        );
        assert!(d[0].contains("rewritten as"), "{d:?}");
        let le = edit("assert_eq!(got, 3, \"one and two\");", "assert!(got <= 3);");
        expect("src/lib.rs", BASE, &le, &[("tests::adds", "weakened")]);
    }

    #[test]
    fn a_wider_tolerance_is_loosened_and_a_narrower_one_strengthens() {
        let base = "#[test]\nfn close() {\n    assert!((area(1.0) - 3.14159).abs() < 1e-4);\n    assert_relative_eq!(x(), 1.0, epsilon = 1e-9);\n}\n";
        let wider = base.replace("1e-4", "0.5");
        let d = expect("t.rs", base, &wider, &[("close", "weakened")]);
        assert!(d[0].contains("loosened"), "{d:?}");
        let eps = base.replace("1e-9", "1e-3");
        expect("t.rs", base, &eps, &[("close", "weakened")]);
        let narrower = base.replace("1e-4", "1e-6");
        expect("t.rs", base, &narrower, &[("close", "strengthened")]);
    }

    #[test]
    fn a_removed_test_is_dropped_and_a_deleted_file_drops_its_tests() {
        let new = edit(
            "    #[test]\n    fn adds_negative() {\n        assert_eq!(sum(-1, -2), -3);\n    }\n",
            "",
        );
        expect(
            "src/lib.rs",
            BASE,
            &new,
            &[("tests::adds_negative", "dropped")],
        );
        let gone = edits("tests/sum.rs", Some(BASE), None);
        let k: Vec<_> = gone.iter().map(|(t, k, _)| (t.as_str(), *k)).collect();
        let want = [
            ("(outside tests)", "fixture"),
            ("tests::adds", "dropped"),
            ("tests::adds_negative", "dropped"),
        ];
        assert_eq!(k, want);
    }

    #[test]
    fn table_rows_dropped_added_and_rstest_cases() {
        let base = "#[test]\nfn table() {\n    for (a, b, c) in [(1, 2, 3), (2, 3, 5)] {\n        assert_eq!(sum(a, b), c);\n    }\n}\n\n#[rstest]\n#[case(1, 1)]\n#[case(2, 4)]\nfn square(#[case] x: i32, #[case] y: i32) { assert_eq!(x * x, y); }\n";
        let d = expect(
            "t.rs",
            base,
            &base.replace(", (2, 3, 5)", ""),
            &[("table", "dropped")],
        );
        assert_eq!(d, ["case `(2, 3, 5)` dropped"]);
        expect(
            "t.rs",
            base,
            &base.replace("(2, 3, 5)]", "(2, 3, 5), (0, 0, 0)]"),
            &[("table", "strengthened")],
        );
        expect(
            "t.rs",
            base,
            &base.replace("#[case(2, 4)]\n", ""),
            &[("square", "dropped")],
        );
    }

    #[test]
    fn strings_and_comments_holding_structure_are_not_structure() {
        let base = "#[test]\nfn braces() {\n    let s = \"}#[ignore]{\";\n    assert_eq!(s.len(), 11);\n}\n";
        let new = base.replace("\"}#[ignore]{\"", "r#\"}} #[ignore] \"#")
            + "// #[ignore] fn x() {\n/* } */\n";
        let got = kinds("t.rs", base, &new);
        assert!(got.iter().all(|(_, k)| *k != "weakened"), "{got:?}");
        assert!(edits("t.rs", Some(base), Some(&format!("{base}\n// }}\n"))).is_empty());
    }

    /// termtree 948af2951a: `assert_eq!` ported to snapbox's `assert_data_eq!` with the same
    /// expected text in a `str![[r#"…"#]]` is one assertion rewritten, not four removed.
    #[test]
    fn an_assertion_macro_swapped_for_another_is_not_removed() {
        let base = "#[test]\nfn root() {\n    let tree = Tree::new(\"foo\");\n    assert_eq!(format!(\"{}\", tree), \"foo\\n\");\n}\n\n#[test]\nfn leaves() {\n    assert_eq!(\n        format!(\"{}\", tree()),\n        r#\"foo\n└── bar\n\"#\n    );\n}\n";
        let new = "#[test]\nfn root() {\n    let tree = Tree::new(\"foo\");\n    assert_data_eq!(\n        format!(\"{}\", tree),\n        str![[r#\"\nfoo\n\n\"#]]\n    );\n}\n\n#[test]\nfn leaves() {\n    snapbox::assert_data_eq!(\n        format!(\"{}\", tree()),\n        str![[r#\"\nfoo\n└── bar\n\n\"#]]\n    );\n}\n";
        let got = kinds("src/tests.rs", base, new);
        assert_eq!(
            got,
            [
                ("root".to_string(), "reworded"),
                ("leaves".to_string(), "reworded")
            ]
        );
        // pretty_assertions, similar_asserts, expect-test and googletest are assertions too.
        for to in [
            "pretty_assertions::assert_eq!(got, 3);",
            "similar_asserts::assert_eq!(got, 3);",
            "expect_eq!(got, 3);",
            "assert_that!(got, eq(3));",
        ] {
            let new = edit("assert_eq!(got, 3, \"one and two\");", to);
            let got = kinds("src/lib.rs", BASE, &new);
            assert!(got.iter().all(|(_, k)| *k != "weakened"), "{to}: {got:?}");
        }
    }

    /// Attacks on the swap: the text changed, the assertion made vacuous or replaced by a
    /// call that asserts nothing, a snapshot's value changed, an asserting helper's call
    /// removed, a matcher loosened — each still weakens.
    #[test]
    fn a_swap_that_changes_what_is_checked_still_weakens() {
        let cases = [
            (
                "assert_eq!(got, 3, \"one and two\");",
                "assert_data_eq!(got, str![[\"4\"]]);",
            ),
            (
                "assert_eq!(got, 3, \"one and two\");",
                "println!(\"{got} one and two\");",
            ),
            (
                "assert_eq!(got, 3, \"one and two\");",
                "dbg!(got, 3, \"one and two\");",
            ),
            (
                "assert_eq!(got, 3, \"one and two\");",
                "assert!(true, \"one and two\");",
            ),
            ("assert_eq!(sum(-1, -2), -3);", "assert!(true);"),
            ("assert_eq!(sum(-1, -2), -3);", "let _ = (sum(-1, -2), -3);"),
            (
                "assert_eq!(sum(-1, -2), -3);",
                "assert_that!(sum(-1, -2), anything());",
            ),
        ];
        for (from, to) in cases {
            let got = kinds("src/lib.rs", BASE, &edit(from, to));
            assert!(got.iter().any(|(_, k)| *k == "weakened"), "{to}: {got:?}");
        }
        let snap = "#[test]\nfn s() {\n    assert_data_eq!(render(), str![[\"foo\"]]);\n}\n";
        let got = kinds("t.rs", snap, &snap.replace("\"foo\"", "\"\""));
        assert_eq!(got, [("s".to_string(), "weakened")]);
        let helper = "#[test]\nfn h() {\n    let x = parse(\"1\");\n    assert_parses(&x);\n    expect![[\"1\"]].assert_eq(&x.to_string());\n}\n";
        for gone in [
            "    assert_parses(&x);\n",
            "    expect![[\"1\"]].assert_eq(&x.to_string());\n",
        ] {
            let got = kinds("t.rs", helper, &helper.replace(gone, ""));
            assert_eq!(got, [("h".to_string(), "weakened")], "{gone}");
        }
        let rows = "#[test]\nfn r() {\n    for (a, b) in vec![(1, 2)] {\n        assert_eq!(f(a), b);\n    }\n}\n";
        let got = kinds("t.rs", rows, &rows.replace("vec![(1, 2)]", "vec![]"));
        assert_eq!(got, [("r".to_string(), "dropped")]);
        {}
    }

    /// A string inside what an assertion compares is not its message: changing it changes the
    /// assertion (`contains("foo")` → `contains("")` passes whatever the code does).
    #[test]
    fn a_string_in_the_compared_expression_is_no_message() {
        let base = "#[test]\nfn c() {\n    assert!(out().contains(\"foo\"), \"says foo\");\n}\n";
        let vacuous = base.replace("contains(\"foo\")", "contains(\"\")");
        assert_eq!(
            kinds("t.rs", base, &vacuous),
            [("c".to_string(), "weakened")]
        );
        let message = base.replace("\"says foo\"", "\"it says foo\"");
        assert_eq!(
            kinds("t.rs", base, &message),
            [("c".to_string(), "reworded")]
        );
    }

    #[test]
    fn tokio_tests_and_nested_modules_are_named_by_path() {
        let src = "mod a {\n    mod b {\n        #[tokio::test]\n        async fn t() { assert!(ok().await); }\n    }\n}\n";
        let got = edits("t.rs", None, Some(src));
        assert_eq!(got[0].0, "a::b::t");
        assert_eq!(got[0].1, "added");
    }
}
