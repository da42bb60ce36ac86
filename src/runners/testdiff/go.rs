//! Go tests: `func TestX`, `ExampleX` and `FuzzX` (a method `Suite.TestX` too, as testify's
//! suites run them). An assertion is an `if` whose block reports a failure (`t.Errorf`,
//! `t.Fatal`, …: its condition says when to fail, so `got != want` is exact), a failure report on
//! its own, or a testify `assert.*`/`require.*` call; `t.Skip*`, `os.Exit`, `runtime.Goexit`,
//! `recover()` and `|| true` are markers; table rows are the elements of a composite literal of
//! bracketed or keyed elements.

use std::ops::Range;

use super::lex::{Flavor, lex};
use super::tokens::Src;
use super::unit::{Form, Found, Lang, Marker, Parts, build, expr_form, last_number, outside};
use super::{OUTSIDE, Parsed};

const FAILS: [&str; 6] = ["Error", "Errorf", "Fatal", "Fatalf", "Fail", "FailNow"];

struct Go;

/// Reads a Go file's tests.
pub(crate) fn parse(text: &str) -> Result<Parsed, String> {
    let s = Src::new(text, lex(text, Flavor::Go)?)?;
    let mut found = Vec::new();
    let mut i = 0;
    while i < s.toks.len() {
        if let Some(p) = s.is(i, "func").then(|| test_at(&s, i)).flatten() {
            i = p.spans[0].end;
            found.push(p);
            continue;
        }
        i = if s.is(i, "{") { s.end_of(i) + 1 } else { i + 1 };
    }
    let taken: Vec<Range<usize>> = found.iter().map(|p| p.spans[0].clone()).collect();
    let rest = Parts::new(OUTSIDE, outside(s.toks.len(), &taken));
    Ok(Parsed {
        outside: build(&s, &Go, rest),
        tests: found.into_iter().map(|p| build(&s, &Go, p)).collect(),
    })
}

/// Whether `name` is one `go test` runs: `Test`, `Example` or `Fuzz`, then not a lowercase letter.
fn is_test_name(name: &str) -> bool {
    ["Test", "Example", "Fuzz"].iter().any(|p| {
        name.strip_prefix(p)
            .is_some_and(|rest| !rest.starts_with(|c: char| c.is_ascii_lowercase()))
    })
}

/// The test whose `func` is at `i`, if it is one.
fn test_at(s: &Src, i: usize) -> Option<Parts> {
    let (recv, name_at) = if s.is(i + 1, "(") {
        let close = s.end_of(i + 1);
        let ty = (i + 2..close).rev().find(|&k| s.ident(k)).map(|k| s.t(k));
        (ty, close + 1)
    } else {
        (None, i + 1)
    };
    if !s.ident(name_at) || !is_test_name(s.t(name_at)) || !s.is(name_at + 1, "(") {
        return None;
    }
    let mut k = s.end_of(name_at + 1) + 1;
    while k < s.toks.len() && !s.is(k, "{") {
        k = s.end_of(k) + 1;
    }
    let close = s.end_of(k);
    (close > k).then_some(())?;
    let name = match recv {
        Some(ty) => format!("{ty}.{}", s.t(name_at)),
        None => s.t(name_at).to_string(),
    };
    Some(Parts {
        name,
        spans: std::iter::once(i..close + 1).collect(),
        skip: vec![name_at],
        markers: Vec::new(),
        rows: Vec::new(),
    })
}

/// Whether a failure report (`t.Errorf(…)`) starts at `i`.
fn reports_failure(s: &Src, i: usize) -> bool {
    s.ident(i) && s.is(i + 1, ".") && FAILS.contains(&s.t(i + 2)) && s.is(i + 3, "(")
}

/// An `if` at `i` whose block reports a failure: its end, and its condition's form.
fn failing_if(s: &Src, i: usize) -> Option<Found> {
    let mut k = i + 1;
    let mut cond = k;
    while k < s.toks.len() && !s.is(k, "{") {
        if s.is(k, ";") {
            cond = k + 1;
        }
        k = s.end_of(k) + 1;
    }
    let close = s.end_of(k);
    if !(k + 1..close).any(|j| reports_failure(s, j)) {
        return None;
    }
    Some(Found {
        end: close + 1,
        ..expr_form(s, cond..k, true)
    })
}

/// The form of a testify assertion.
fn testify_form(s: &Src, name: &str, open: usize) -> Form {
    match name {
        "Equal" | "EqualValues" | "Exactly" | "Same" | "JSONEq" | "YAMLEq" | "Len" | "Nil"
        | "NoError" | "EqualError" | "ErrorIs" | "Zero" | "Empty" | "ElementsMatch" | "Panics" => {
            Form::Exact
        }
        "True" | "False" | "NotNil" | "NotEmpty" | "NotZero" | "Error" | "Condition" => {
            Form::Truthy
        }
        "InDelta" | "InEpsilon" | "WithinDuration" | "InDeltaSlice" => {
            Form::Tolerance(last_number(s, open..s.end_of(open)))
        }
        _ => Form::Bound,
    }
}

impl Lang for Go {
    fn assertion(&self, s: &Src, i: usize) -> Option<Found> {
        if s.is(i, "if") {
            return failing_if(s, i);
        }
        if reports_failure(s, i) {
            let end = s.end_of(i + 3) + 1;
            return Some(Found::call(end, Form::Exact, &[], 0));
        }
        let testify = matches!(s.t(i), "assert" | "require") && !s.is(i.wrapping_sub(1), ".");
        if !(testify && s.is(i + 1, ".") && s.ident(i + 2) && s.is(i + 3, "(")) {
            return None;
        }
        let open = i + 3;
        let args = s.elements(open);
        let form = testify_form(s, s.t(i + 2), open);
        Some(Found::call(s.end_of(open) + 1, form, &args, 1))
    }

    fn marker(&self, s: &Src, i: usize, _: &[usize]) -> Option<Marker> {
        let next = s.t(i + 2);
        let dotted = s.ident(i) && s.is(i + 1, ".") && s.is(i + 3, "(");
        let shown = match s.t(i) {
            _ if dotted && matches!(next, "Skip" | "Skipf" | "SkipNow") => {
                format!("`{}.{next}()`", s.t(i))
            }
            "os" if dotted && next == "Exit" => "`os.Exit`".to_string(),
            "runtime" if dotted && next == "Goexit" => "`runtime.Goexit`".to_string(),
            "recover" if s.is(i + 1, "(") => "`recover()`".to_string(),
            "||" if s.is(i + 1, "true") => "`|| true`".to_string(),
            _ => return None,
        };
        Some(Marker::new(shown))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{edits, expect, kinds};

    const BASE: &str = r#"package sum

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func double(x int) int { return x * 2 }

func TestSum(t *testing.T) {
	got := Sum(1, 2)
	if got != 3 {
		t.Errorf("Sum(1, 2) = %d, want 3", got)
	}
}

func TestTable(t *testing.T) {
	cases := []struct {
		a, b, want int
	}{
		{1, 2, 3},
		{2, 3, 5},
	}
	for _, c := range cases {
		if got := Sum(c.a, c.b); got != c.want {
			t.Fatalf("got %d", got)
		}
	}
}

func TestClose(t *testing.T) {
	assert.InDelta(t, 0.3, Div(1, 3), 0.001)
	assert.Equal(t, 4, double(2))
}
"#;

    fn edit(from: &str, to: &str) -> String {
        assert!(BASE.contains(from), "{from}");
        BASE.replacen(from, to, 1)
    }

    #[test]
    fn tests_examples_and_suite_methods_are_found() {
        let src = "package x\nfunc TestA(t *testing.T) {}\nfunc Testing() {}\nfunc ExampleA() {}\nfunc FuzzA(f *testing.F) {}\nfunc (s *Suite) TestB() { s.Equal(1, 1) }\nfunc helper() {}\n";
        let names: Vec<_> = edits("a_test.go", None, Some(src))
            .into_iter()
            .map(|e| e.0)
            .collect();
        assert_eq!(names, ["TestA", "ExampleA", "FuzzA", "Suite.TestB"]);
        assert!(kinds("a_test.go", BASE, BASE).is_empty());
    }

    #[test]
    fn added_strengthened_reworded_moved_fixture() {
        let new = format!(
            "{BASE}\nfunc TestZero(t *testing.T) {{\n\tif Sum(0, 0) != 0 {{\n\t\tt.Error(\"zero\")\n\t}}\n}}\n"
        );
        expect("s_test.go", BASE, &new, &[("TestZero", "added")]);
        let more = edit(
            "\tassert.Equal(t, 4, double(2))\n",
            "\tassert.Equal(t, 4, double(2))\n\tassert.Equal(t, 6, double(3))\n",
        );
        expect("s_test.go", BASE, &more, &[("TestClose", "strengthened")]);
        let row = edit("\t\t{2, 3, 5},\n", "\t\t{2, 3, 5},\n\t\t{0, 0, 0},\n");
        expect("s_test.go", BASE, &row, &[("TestTable", "strengthened")]);
        let msg = edit("\"Sum(1, 2) = %d, want 3\"", "\"sum: got %d, want 3\"");
        expect("s_test.go", BASE, &msg, &[("TestSum", "reworded")]);
        let renamed = edit("func TestSum(", "func TestSumSmall(");
        expect("s_test.go", BASE, &renamed, &[("TestSum", "moved")]);
        let setup = edit("got := Sum(1, 2)", "got := Sum(2, 1)");
        expect("s_test.go", BASE, &setup, &[("TestSum", "fixture")]);
    }

    #[test]
    fn removed_and_loosened_assertions_weaken() {
        let gone = edit(
            "\tif got != 3 {\n\t\tt.Errorf(\"Sum(1, 2) = %d, want 3\", got)\n\t}\n",
            "\t_ = got\n",
        );
        let d = expect("s_test.go", BASE, &gone, &[("TestSum", "weakened")]);
        assert_eq!(
            d,
            ["removed `if got != 3 { t.Errorf(\"Sum(1, 2) = %d, want 3\", got) }`"]
        );
        let bound = edit("if got != 3 {", "if got > 3 {");
        let d = expect("s_test.go", BASE, &bound, &[("TestSum", "weakened")]);
        assert!(d[0].contains("loosened"), "{d:?}");
        let truthy = edit(
            "assert.Equal(t, 4, double(2))",
            "assert.NotZero(t, double(2))",
        );
        expect("s_test.go", BASE, &truthy, &[("TestClose", "weakened")]);
        let wider = edit("0.001)", "0.5)");
        expect("s_test.go", BASE, &wider, &[("TestClose", "weakened")]);
    }

    #[test]
    fn skips_exits_recover_and_or_true_weaken() {
        let cases = [
            (
                "\tgot := Sum(1, 2)\n",
                "\tt.Skip(\"later\")\n\tgot := Sum(1, 2)\n",
                "`t.Skip()`",
            ),
            (
                "\tgot := Sum(1, 2)\n",
                "\tgot := Sum(1, 2)\n\tif got == 3 {\n\t\treturn\n\t}\n",
                "early `return`",
            ),
            (
                "\tgot := Sum(1, 2)\n",
                "\tdefer func() { recover() }()\n\tgot := Sum(1, 2)\n",
                "`recover()`",
            ),
            (
                "\tgot := Sum(1, 2)\n",
                "\tgot := Sum(1, 2)\n\tos.Exit(0)\n",
                "`os.Exit`",
            ),
            (
                "if got != 3 {",
                "if got != 3 && !(true || true) {",
                "`|| true`",
            ),
        ];
        for (from, to, what) in cases {
            let got = edits("s_test.go", Some(BASE), Some(&edit(from, to)));
            assert!(
                got.iter()
                    .any(|(_, k, d)| *k == "weakened" && d.contains(what)),
                "{what}: {got:?}"
            );
        }
    }

    /// A `return` inside a function literal leaves that function only (logr's table rows built
    /// by `func() any { …; return v }()`): no early return. One in a `t.Run` body with an
    /// assertion after it in that body still stops the subtest (the attack): early.
    #[test]
    fn a_return_in_a_function_literal_is_early_only_within_it() {
        let built = edit(
            "		{2, 3, 5},
",
            "		{2, 3, 5},
		{func() int { v := 1; return v }(), 1, 2},
",
        );
        expect("s_test.go", BASE, &built, &[("TestTable", "strengthened")]);
        let deferred = edit(
            "	got := Sum(1, 2)
",
            "	defer func() {
		if x := recover2(); x == nil {
			return
		}
	}()
	got := Sum(1, 2)
",
        );
        let got = edits("s_test.go", Some(BASE), Some(&deferred));
        assert!(
            !got.iter().any(|(_, _, d)| d.contains("early `return`")),
            "{got:?}"
        );
        let subtest = edit(
            "	for _, c := range cases {
		if got",
            "	for _, c := range cases {
		t.Run(\"c\", func(t *testing.T) {
			if c.a > 0 {
				return
			}
			assert.Equal(t, c.want, Sum(c.a, c.b))
		})
		if got",
        );
        let got = edits("s_test.go", Some(BASE), Some(&subtest));
        assert!(
            got.iter()
                .any(|(_, k, d)| *k == "weakened" && d.contains("early `return`")),
            "{got:?}"
        );
    }

    /// A keyed row that gains a named field (logr's `line: line(),` in every case) is the same
    /// case extended: strengthened, not dropped. The attacks stay dropped: a field whose name
    /// turns the case off or inverts it (`skip`, `wantErr`), a positional element added (its
    /// meaning is the struct's), and a row whose own value changed as it gained one.
    #[test]
    fn a_row_that_gains_a_named_field_is_extended_not_dropped() {
        let base = "package x\nfunc TestT(t *testing.T) {\n\tcases := []struct {\n\t\tval  any\n\t\tline string\n\t}{{\n\t\tval: 1,\n\t}, {\n\t\tval: 2,\n\t}}\n\tfor _, c := range cases {\n\t\tassert.Equal(t, c.val, f(c.val))\n\t}\n}\n";
        let with =
            |field: &str| base.replace("\t\tval: 2,\n", &format!("\t\t{field}\n\t\tval: 2,\n"));
        let d = expect(
            "x_test.go",
            base,
            &with("line: line(),"),
            &[("TestT", "strengthened")],
        );
        assert!(d[0].contains("extended with `line : line ( )`"), "{d:?}");
        for attack in ["skip: true,", "wantErr: true,", "SkipOnCI: true,", "true,"] {
            expect("x_test.go", base, &with(attack), &[("TestT", "dropped")]);
        }
        let changed = with("line: line(),").replace("val: 2,", "val: 3,");
        expect("x_test.go", base, &changed, &[("TestT", "dropped")]);
    }

    #[test]
    fn a_return_after_a_failure_report_is_no_early_return() {
        let base = "package x\nfunc TestA(t *testing.T) {\n\tv, err := f()\n\tif v != 1 {\n\t\tt.Error(v)\n\t}\n}\n";
        let new = base.replace(
            "\tv, err := f()\n",
            "\tv, err := f()\n\tif err != nil {\n\t\tt.Error(err)\n\t\treturn\n\t}\n",
        );
        expect("a_test.go", base, &new, &[("TestA", "strengthened")]);
    }

    #[test]
    fn dropped_rows_and_tests() {
        let row = edit("\t\t{2, 3, 5},\n", "");
        let d = expect("s_test.go", BASE, &row, &[("TestTable", "dropped")]);
        assert_eq!(d, ["case `{2, 3, 5}` dropped"]);
        let changed = edit("{2, 3, 5}", "{2, 3, 6}");
        expect("s_test.go", BASE, &changed, &[("TestTable", "dropped")]);
        let gone = edit(
            "func TestClose(t *testing.T) {\n\tassert.InDelta(t, 0.3, Div(1, 3), 0.001)\n\tassert.Equal(t, 4, double(2))\n}\n",
            "",
        );
        expect("s_test.go", BASE, &gone, &[("TestClose", "dropped")]);
    }

    #[test]
    fn comments_and_raw_strings_are_not_structure() {
        let base = "package x\nfunc TestA(t *testing.T) {\n\ts := `}\nt.Skip()`\n\tif s == \"\" {\n\t\tt.Fatal(\"empty\")\n\t}\n}\n";
        let new = base.replace("\tif s", "\t// t.Skip()\n\t/* return } */\n\tif s");
        assert!(
            edits("a_test.go", Some(base), Some(&new))
                .iter()
                .all(|(_, k, _)| *k != "weakened")
        );
    }
}
