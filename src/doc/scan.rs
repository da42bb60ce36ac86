//! The line-level shape of the document body (SPEC §2): header items, their continuation
//! lines, close-line candidates and stray lines. Keys are not judged here, only found.

use super::close_line;
use super::text::snippet;
use crate::catalog::Code;
use crate::finding::Finding;

/// One line of the document with its 1-based number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    pub no: usize,
    pub text: &'a str,
}

/// A header item `- KEY: VALUE` and the non-blank lines that continue it.
#[derive(Debug, Clone)]
pub struct Item<'a> {
    pub key: &'a str,
    pub line: usize,
    /// The text after `KEY:`, trimmed.
    pub value: &'a str,
    /// Continuation lines as written (indentation kept); blank lines are left out.
    pub cont: Vec<Line<'a>>,
}

impl Item<'_> {
    /// The item's text lines: the value when not empty, then each continuation line trimmed.
    pub fn text_lines(&self) -> impl Iterator<Item = Line<'_>> {
        let first = (!self.value.is_empty()).then_some(Line {
            no: self.line,
            text: self.value,
        });
        let rest = self.cont.iter().map(|l| Line {
            no: l.no,
            text: l.text.trim(),
        });
        first.into_iter().chain(rest)
    }
}

/// The body of the document split into items and close-line candidates.
#[derive(Debug, Default)]
pub struct Scan<'a> {
    pub items: Vec<Item<'a>>,
    pub candidates: Vec<Line<'a>>,
    pub findings: Vec<Finding>,
}

enum Kind<'a> {
    Item(&'a str, &'a str),
    Candidate,
    Continuation,
    Stray,
}

/// Split the body (the lines after the H1) into items, candidates and stray lines.
pub fn scan<'a>(lines: impl Iterator<Item = Line<'a>>) -> Scan<'a> {
    let mut s = Scan::default();
    let mut in_item = false;
    let mut first_close: Option<usize> = None;
    let mut not_last_reported = false;
    for line in lines.filter(|l| !l.text.trim().is_empty()) {
        let kind = classify(line.text, in_item);
        if let (Some(close), false, false) = (
            first_close,
            matches!(kind, Kind::Candidate),
            not_last_reported,
        ) {
            s.findings.push(not_last(close, line));
            not_last_reported = true;
        }
        match kind {
            Kind::Item(key, value) => {
                s.items.push(Item {
                    key,
                    line: line.no,
                    value,
                    cont: Vec::new(),
                });
                in_item = true;
            }
            Kind::Candidate => {
                s.candidates.push(line);
                first_close.get_or_insert(line.no);
                in_item = false;
            }
            Kind::Continuation => {
                if let Some(item) = s.items.last_mut() {
                    item.cont.push(line);
                }
            }
            Kind::Stray if first_close.is_none() => s.findings.push(stray(line)),
            Kind::Stray => {}
        }
    }
    s
}

/// Decide what a non-blank body line is. A column-0 `- KEY:` line is a header item even when
/// its value contains ` · commit ` (a claim may mention a commit); an indented line inside an
/// item continues it unless it starts with the `CLOSE` marker.
fn classify(text: &str, in_item: bool) -> Kind<'_> {
    if let Some((key, value)) = header_item(text) {
        return Kind::Item(key, value);
    }
    if close_line::starts_with_marker(text) {
        return Kind::Candidate;
    }
    if in_item && is_indented(text) {
        return Kind::Continuation;
    }
    if close_line::is_candidate(text) {
        return Kind::Candidate;
    }
    Kind::Stray
}

/// `- KEY: VALUE` at column 0: the key ends at the first `:` followed by a space, a tab or
/// the end of the line (so `http://` inside a key does not end it).
pub fn header_item(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("- ")?;
    let bytes = rest.as_bytes();
    let colon = bytes.iter().enumerate().position(|(i, b)| {
        *b == b':' && matches!(bytes.get(i + 1), None | Some(b' ') | Some(b'\t'))
    })?;
    let key = &rest[..colon];
    if key.trim().is_empty() {
        return None;
    }
    Some((key, rest[colon + 1..].trim()))
}

/// Indented by at least two spaces or a tab.
fn is_indented(text: &str) -> bool {
    text.starts_with("  ") || text.starts_with('\t')
}

fn stray(line: Line<'_>) -> Finding {
    Finding::new(
        Code::DocStrayLine,
        format!(
            "expected a header item `- KEY: VALUE` or a line indented by two spaces continuing one, \
             found `{}`; the line is ignored",
            snippet(line.text)
        ),
    )
    .at_line(line.no)
}

fn not_last(close: usize, line: Line<'_>) -> Finding {
    Finding::new(
        Code::DocCloseNotLast,
        format!(
            "expected the close line (line {close}) to be the last non-blank line, found `{}` after it",
            snippet(line.text)
        ),
    )
    .at_line(line.no)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_items() {
        assert_eq!(
            header_item("- state: close-ok"),
            Some(("state", "close-ok"))
        );
        assert_eq!(header_item("- artifacts:"), Some(("artifacts", "")));
        assert_eq!(
            header_item("- note: see http://x: y"),
            Some(("note", "see http://x: y"))
        );
        assert_eq!(
            header_item("- next / blocked-on: none"),
            Some(("next / blocked-on", "none"))
        );
        assert_eq!(header_item("-state: x"), None);
        assert_eq!(header_item("  - state: x"), None);
        assert_eq!(header_item("- just prose"), None);
        assert_eq!(header_item("- : x"), None);
    }
}
