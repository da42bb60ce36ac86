//! Go tests: `func TestX`, `ExampleX` and `FuzzX` (a method `Suite.TestX` too, as testify's
//! suites run them). An assertion is an `if` whose block reports a failure (`t.Errorf`,
//! `t.Fatal`, …: its condition says when to fail, so `got != want` is exact), a failure report on
//! its own, or a testify `assert.*`/`require.*` call; `t.Skip*`, `os.Exit`, `runtime.Goexit`,
//! `recover()` and `|| true` are markers; table rows are the elements of a composite literal of
//! bracketed or keyed elements.

use std::ops::Range;

use super::lex::{Flavor, Src, lex};
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
