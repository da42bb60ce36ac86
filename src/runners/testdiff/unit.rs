//! What one test holds — its assertions, the weakening constructs in it, its table rows, its
//! text — read the same way in every language: each language says where an assertion or a
//! marker starts ([`Lang`]); the walk over a test's tokens, the early `return`, the table rows
//! and the strength of a comparison are language-neutral and live here.

use std::ops::Range;

use super::tokens::{Src, Tk};

/// How much an assertion pins down, weakest first; a change to a lower rank loosens it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Form {
    /// Truthiness: `assert!(x)`, `toBeTruthy()`, `assertTrue(x)`.
    Truthy,
    /// A bound or inequality: `a <= b`, `toBeGreaterThan`, `assert_ne!`.
    Bound,
    /// Equal within a tolerance, its width (`NaN` when it cannot be read).
    Tolerance(f64),
    /// Exactly equal.
    Exact,
}

impl Form {
    fn rank(self) -> u8 {
        match self {
            Form::Truthy => 1,
            Form::Bound => 2,
            Form::Tolerance(_) => 3,
            Form::Exact => 4,
        }
    }

    /// `Less` when `new` is weaker than `self`, `Greater` when stronger, `None` when neither.
    pub fn compare(self, new: Form) -> Option<std::cmp::Ordering> {
        use std::cmp::Ordering::*;
        match (self, new) {
            (Form::Tolerance(a), Form::Tolerance(b)) => match b.partial_cmp(&a)? {
                Greater => Some(Less),
                Less => Some(Greater),
                Equal => None,
            },
            _ => match new.rank().cmp(&self.rank()) {
                Equal => None,
                o => Some(o),
            },
        }
    }
}

/// One assertion.
#[derive(Debug, Clone)]
pub(crate) struct Assertion {
    /// Its tokens, whitespace folded: what "present unchanged elsewhere" compares.
    pub norm: String,
    /// The same with every string literal blanked: equal when only a message changed.
    pub plain: String,
    pub shown: String,
    /// What it is about (the first operand), to pair a changed assertion with its old self.
    pub subject: String,
    /// What the subject is compared with.
    pub object: String,
    /// The object's text when it is a string literal, bare or in a literal's wrapper (snapbox's
    /// `str![[r#"…"#]]`, `indoc!`, `.to_string()`): unescaped, each line's trailing blanks
    /// and the text's leading and trailing blank lines dropped, as those wrappers compare.
    pub value: Option<String>,
    pub form: Form,
}

/// Where an assertion starts: its end (exclusive), its form, and the tokens of its subject
/// (what it is about) and object (what it is compared with).
pub(crate) struct Found {
    pub end: usize,
    pub form: Form,
    pub subject: Range<usize>,
    pub object: Range<usize>,
}

impl Found {
    /// An assertion ending at `end` of form `form` whose operands are `args[at]` and
    /// `args[at + 1]` (empty when absent).
    pub fn call(end: usize, form: Form, args: &[Range<usize>], at: usize) -> Found {
        let arg = |k: usize| args.get(k).cloned().unwrap_or(end..end);
        Found {
            end,
            form,
            subject: arg(at),
            object: arg(at + 1),
        }
    }
}

/// A construct that keeps a test from failing: a skip, a focus, an early exit, a catch-all.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Marker {
    pub shown: String,
    /// `only`/focus: it keeps the file's other tests from running.
    pub focus: bool,
}

impl Marker {
    pub fn new(shown: impl Into<String>) -> Marker {
        Marker {
            shown: shown.into(),
            focus: false,
        }
    }

    pub fn focus(shown: impl Into<String>) -> Marker {
        Marker {
            shown: shown.into(),
            focus: true,
        }
    }
}

/// One case of a table: a parametrize, `test.each`, Go or Rust table row.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub norm: String,
    pub plain: String,
    pub shown: String,
    /// The row's elements, each normalised, when it is one bracketed group (`{a: 1, b: 2}`).
    pub parts: Vec<String>,
}

/// A test (or the code of a file outside its tests) as the classifier compares it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Unit {
    pub name: String,
    pub asserts: Vec<Assertion>,
    pub markers: Vec<Marker>,
    pub rows: Vec<Row>,
    /// Every token but the name, whitespace folded.
    pub body: String,
    /// The same with every string literal blanked.
    pub plain: String,
}

/// What a language says about its tokens.
pub(crate) trait Lang {
    /// The assertion starting at token `i`, if one does.
    fn assertion(&self, s: &Src, i: usize) -> Option<Found>;
    /// The weakening construct at token `i`; `asserts` are the unit's assertion starts.
    fn marker(&self, s: &Src, i: usize, asserts: &[usize]) -> Option<Marker>;
    /// Whether `=> {` opens a function's body (JavaScript's arrow functions; in Rust it is a
    /// `match` arm's block, which a `return` leaves with the whole test).
    fn arrows(&self) -> bool {
        false
    }
}

/// A test's tokens: the spans it covers and the tokens (its name) left out of its text.
pub(crate) struct Parts {
    pub name: String,
    pub spans: Vec<Range<usize>>,
    pub skip: Vec<usize>,
    pub markers: Vec<Marker>,
    /// Rows its structure names (a parametrize list, a `test.each` table, `#[case]`s).
    pub rows: Vec<Range<usize>>,
}

impl Parts {
    /// A unit called `name` over `spans`, nothing left out, marked or tabled yet.
    pub fn new(name: impl Into<String>, spans: Vec<Range<usize>>) -> Parts {
        Parts {
            name: name.into(),
            spans,
            skip: Vec::new(),
            markers: Vec::new(),
            rows: Vec::new(),
        }
    }
}

/// Reads one unit from its parts.
pub(crate) fn build(s: &Src, lang: &dyn Lang, parts: Parts) -> Unit {
    let Parts {
        name,
        spans,
        skip,
        mut markers,
        rows,
    } = parts;
    let mut unit = Unit {
        name,
        ..Unit::default()
    };
    let tokens = || {
        spans
            .iter()
            .flat_map(|r| r.clone())
            .filter(|i| !skip.contains(i))
    };
    unit.body = tokens().map(|i| s.t(i)).collect::<Vec<_>>().join(" ");
    unit.plain = tokens().map(|i| blank(s, i)).collect::<Vec<_>>().join(" ");
    let mut starts = Vec::new();
    let mut extents = Vec::new();
    for span in &spans {
        let mut i = span.start;
        while i < span.end {
            let Some(found) = lang.assertion(s, i) else {
                i += 1;
                continue;
            };
            let end = found.end.clamp(i + 1, span.end.max(i + 1));
            unit.asserts.push(assertion(s, i..end, &found));
            starts.push(i);
            extents.push(i..end);
            i = end;
        }
    }
    for i in spans.iter().flat_map(|r| r.clone()) {
        markers.extend(lang.marker(s, i, &starts));
        let inside = extents.iter().any(|e| e.contains(&i));
        if s.is(i, "return") && !inside && early(s, lang, i, &starts) {
            markers.push(Marker::new("early `return`"));
        }
        if is_table(s, i) {
            unit.rows
                .extend(s.elements(i).into_iter().map(|r| row(s, r)));
        }
    }
    unit.rows.extend(rows.into_iter().map(|r| row(s, r)));
    markers.sort();
    unit.markers = markers;
    unit
}

/// The text of token `i`, a string literal blanked.
fn blank<'a>(s: &Src<'a>, i: usize) -> &'a str {
    if s.toks[i].kind == Tk::Str {
        "\"\""
    } else {
        s.t(i)
    }
}

fn assertion(s: &Src, r: Range<usize>, found: &Found) -> Assertion {
    Assertion {
        norm: s.norm(r.clone()),
        plain: r.clone().map(|i| blank(s, i)).collect::<Vec<_>>().join(" "),
        shown: s.shown(r),
        subject: s.norm(found.subject.clone()),
        object: s.norm(found.object.clone()),
        value: literal_value(s, found.object.clone()),
        form: found.form,
    }
}

/// Words that wrap a string literal without changing what it says.
const WRAPPERS: [&str; 12] = [
    "str",
    "snapbox",
    "indoc",
    "formatdoc",
    "dedent",
    "textwrap",
    "String",
    "from",
    "to_string",
    "to_owned",
    "into",
    "as_str",
];

/// The text of the string literal `r` holds, if it holds one and only wrappers around it.
fn literal_value(s: &Src, r: Range<usize>) -> Option<String> {
    let mut text = None;
    for i in r {
        let t = s.toks[i];
        match t.kind {
            Tk::Str if text.is_none() => text = Some(unquote(t.text)?),
            Tk::Punct if matches!(t.text, "!" | "[" | "]" | "(" | ")" | "&" | "." | "::") => {}
            Tk::Ident if WRAPPERS.contains(&t.text) => {}
            _ => return None,
        }
    }
    let text = text?;
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    Some(lines.join("\n").trim_matches('\n').to_string())
}

/// The content of a string literal token: its prefix (`r`, `b`, `f`, `u`), hashes and quotes
/// taken off, a non-raw one's escapes read. `None` for what is not a plain string literal.
fn unquote(tok: &str) -> Option<String> {
    let body = tok.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let raw = tok[..tok.len() - body.len()].contains(['r', 'R']);
    let hashes = body.len() - body.trim_start_matches('#').len();
    let body = body.get(hashes..body.len().checked_sub(hashes)?)?;
    let q = ["\"\"\"", "'''", "\"", "'", "`"]
        .into_iter()
        .find(|q| body.len() >= 2 * q.len() && body.starts_with(q) && body.ends_with(q))?;
    let inner = &body[q.len()..body.len() - q.len()];
    if raw {
        return Some(inner.to_string());
    }
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0' => out.push('\0'),
            '\n' => chars = chars.as_str().trim_start().chars(),
            c @ ('\\' | '"' | '\'' | '`') => out.push(c),
            _ => return None,
        }
    }
    Some(out)
}

fn row(s: &Src, r: Range<usize>) -> Row {
    let grouped =
        ["{", "[", "("].iter().any(|b| s.is(r.start, b)) && s.end_of(r.start) + 1 == r.end;
    let parts = match grouped {
        true => s.elements(r.start).into_iter().map(|e| s.norm(e)).collect(),
        false => Vec::new(),
    };
    Row {
        parts,
        norm: s.norm(r.clone()),
        plain: r.clone().map(|i| blank(s, i)).collect::<Vec<_>>().join(" "),
        shown: s.shown(r),
    }
}

/// Whether the `return` at `i` stops a test before an assertion: one follows its statement,
/// and none precedes it in its own block (a `return` after a failure report stops nothing, and
/// neither does one inside an assertion: Go's `if err != nil { t.Error(err); return }`).
///
/// A `return` inside a function literal within the test (Go's `func() any { …; return v }()`,
/// a JS arrow or `function`, a Rust closure) leaves only that function: it is early only when
/// an assertion follows it within that function's body (a `t.Run` subtest's body is one).
fn early(s: &Src, lang: &dyn Lang, i: usize, starts: &[usize]) -> bool {
    let end = statement_end(s, i);
    let limit = enclosing_function(s, lang, i).map_or(usize::MAX, |b| s.end_of(b));
    if !starts.iter().any(|&a| a >= end && a < limit) {
        return false;
    }
    let open = s.block_of(i).unwrap_or(0);
    !starts.iter().any(|&a| a > open && a < i)
}

/// The `{` of the innermost function literal's body around token `i`, if one is.
fn enclosing_function(s: &Src, lang: &dyn Lang, i: usize) -> Option<usize> {
    let mut at = i;
    while let Some(b) = s.block_of(at) {
        if function_body(s, lang, b) {
            return Some(b);
        }
        at = b;
    }
    None
}

/// Whether the `{` at `b` opens a function literal's body: `func(…) T {`, `function f(…) {`,
/// `(…) => {` (where [`Lang::arrows`]), `|…| {` (a few tokens of result type allowed between
/// the parameters and `{`).
fn function_body(s: &Src, lang: &dyn Lang, b: usize) -> bool {
    let Some(mut j) = b.checked_sub(1) else {
        return false;
    };
    if (lang.arrows() && s.is(j, "=>")) || s.is(j, "|") || s.is(j, "||") {
        return true;
    }
    for _ in 0..8 {
        match s.t(j) {
            ")" => {
                let Some(k) = s.start_of(j).checked_sub(1) else {
                    return false;
                };
                let named = k > 0 && s.is(k - 1, "function") && s.ident(k);
                if s.is(k, "func") || s.is(k, "function") || named {
                    return true;
                }
                j = k;
                continue;
            }
            "]" => j = s.start_of(j),
            "*" | "." | "->" | "&" => {}
            _ if s.ident(j) => {}
            _ => return false,
        }
        let Some(k) = j.checked_sub(1) else {
            return false;
        };
        j = k;
    }
    false
}

/// The end of the statement at `i`: its `;`, the `}` closing its block, or a line break not
/// followed by a `.` (a chained call goes on).
fn statement_end(s: &Src, i: usize) -> usize {
    let mut k = i + 1;
    while k < s.toks.len() && !s.is(k, ";") && !s.is(k, "}") {
        let gap = s.text.get(s.toks[k - 1].end..s.toks[k].start).unwrap_or("");
        if gap.contains('\n') && !s.is(k, ".") {
            break;
        }
        k = s.end_of(k) + 1;
    }
    k
}

/// Whether the `[` or `{` at `i` is a table: two or more elements, each a bracketed group
/// (a tuple, a struct literal, an inner list) or `key: {…}`.
pub(crate) fn is_table(s: &Src, i: usize) -> bool {
    if !(s.is(i, "[") || s.is(i, "{")) {
        return false;
    }
    let elements = s.elements(i);
    if inline_literal(s, i, &elements) {
        return false;
    }
    // A `{` block holding one bracketed expression is no table; one row with a trailing comma
    // (Go's and C's tables) is.
    let trailing = s.is(s.end_of(i).saturating_sub(1), ",");
    let enough = if s.is(i, "[") || trailing { 1 } else { 2 };
    elements.len() >= enough
        && elements.iter().all(|e| {
            let first = e.start;
            let keyed = s.toks.get(first).is_some_and(|t| t.kind == Tk::Str)
                && s.is(first + 1, ":")
                && s.is(first + 2, "{");
            keyed
                || matches!(s.t(first), "(" | "[" | "{") && s.toks[first].kind == Tk::Punct
                || s.ident(first) && s.is(first + 1, "{")
        })
}

/// Whether the `[` at `i` is a macro's inline literal, `str![["…"]]` or `expect![["…"]]`: one
/// bracketed string, no case of a table.
fn inline_literal(s: &Src, i: usize, elements: &[Range<usize>]) -> bool {
    let [only] = elements else {
        return false;
    };
    s.is(i.wrapping_sub(1), "!")
        && s.is(only.start, "[")
        && s.end_of(only.start) + 1 == only.end
        && (only.start + 1..only.end - 1).all(|k| s.toks[k].kind == Tk::Str)
}

/// The form of a comparison expression over `r`, its subject and object. `negated`: the
/// expression says when to fail (Go's `if got != want { t.Errorf(…) }`).
pub(crate) fn expr_form(s: &Src, r: Range<usize>, negated: bool) -> Found {
    let mut start = r.start;
    while start < r.end && matches!(s.t(start), "!" | "not") {
        start += 1;
    }
    let mut op = None;
    let mut i = start;
    while i < r.end {
        if s.toks[i].kind == Tk::Punct || s.ident(i) {
            let t = s.t(i);
            if matches!(
                t,
                "==" | "===" | "!=" | "!==" | "<" | ">" | "<=" | ">=" | "is" | "in"
            ) {
                op = Some(i);
                break;
            }
        }
        i = s.end_of(i) + 1;
    }
    let found = |form, subject, object| Found {
        end: r.end,
        form,
        subject,
        object,
    };
    let Some(op) = op else {
        return found(Form::Truthy, start..r.end, r.end..r.end);
    };
    let (subject, object) = (start..op, op + 1..r.end);
    if let Some(width) = tolerance(s, r.clone(), op) {
        return found(Form::Tolerance(width), subject, object);
    }
    let exact = match s.t(op) {
        "==" | "===" => !negated,
        "is" => !s.is(op + 1, "not"),
        "!=" | "!==" => negated,
        _ => false,
    };
    let form = if exact { Form::Exact } else { Form::Bound };
    found(form, subject, object)
}

/// The width of a tolerance comparison (`abs(a - b) < eps`, `== approx(x, rel=…)`), if it is one.
fn tolerance(s: &Src, r: Range<usize>, op: usize) -> Option<f64> {
    let names = ["approx", "isclose", "abs", "fabs", "Abs", "abs_diff"];
    let named = r.clone().find(|&i| s.ident(i) && names.contains(&s.t(i)))?;
    if s.t(named) == "approx" || s.t(named) == "isclose" {
        let kw = r.clone().filter(|&i| {
            matches!(s.t(i), "rel" | "abs" | "rel_tol" | "abs_tol") && s.is(i + 1, "=")
        });
        let widths: Vec<f64> = kw.filter_map(|i| number(s.t(i + 2))).collect();
        return Some(widths.into_iter().fold(1e-6, f64::max));
    }
    let last = (op + 1..r.end).rev().find(|&i| s.toks[i].kind == Tk::Num);
    Some(last.and_then(|i| number(s.t(i))).unwrap_or(f64::NAN))
}

/// The value of a numeric literal (`1e-6`, `0.5f64`, `1_000`), if it has one.
pub(crate) fn number(text: &str) -> Option<f64> {
    let t: String = text.chars().filter(|c| *c != '_').collect();
    if t.starts_with("0x") || t.starts_with("0X") {
        return None;
    }
    (1..=t.len())
        .rev()
        .find_map(|k| t.get(..k).and_then(|p| p.parse::<f64>().ok()))
}

/// The last numeric literal in `r` (a tolerance's width), `NaN` when there is none.
pub(crate) fn last_number(s: &Src, r: Range<usize>) -> f64 {
    r.rev()
        .find(|&i| s.toks[i].kind == Tk::Num)
        .and_then(|i| number(s.t(i)))
        .unwrap_or(f64::NAN)
}

/// Whether an assertion starts inside the bracket at `open`.
pub(crate) fn guards(s: &Src, open: usize, starts: &[usize]) -> bool {
    let close = s.end_of(open);
    starts.iter().any(|&a| a > open && a < close)
}

/// The spans of `0..len` outside every span of `taken` (sorted, disjoint).
pub(crate) fn outside(len: usize, taken: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut at = 0;
    for r in taken {
        if r.start > at {
            out.push(at..r.start);
        }
        at = at.max(r.end);
    }
    if at < len {
        out.push(at..len);
    }
    out
}
