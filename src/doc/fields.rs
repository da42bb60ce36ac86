//! The prose and atomic keys (SPEC §2): `abstract`, `next / blocked-on`, `note`,
//! `last commit` and `updated`.

use super::LastCommit;
use super::scan::Item;
use super::text::{describe, is_dash_like, snippet};
use crate::catalog::Code;
use crate::date::is_iso8601;
use crate::finding::Finding;

/// Lines an abstract may have before the rest is rendered nowhere.
const ABSTRACT_MAX_LINES: usize = 5;

/// The text of a prose key, lines joined with `\n`; reports `doc-prose-key-empty`.
pub fn prose(item: &Item<'_>, out: &mut Vec<Finding>) -> Option<String> {
    let lines: Vec<&str> = item.text_lines().map(|l| l.text).collect();
    if lines.is_empty() {
        let msg = format!("expected text after `- {}:`, found nothing", item.key);
        out.push(Finding::new(Code::DocProseKeyEmpty, msg).at_line(item.line));
        return None;
    }
    Some(lines.join("\n"))
}

/// `abstract`: prose of at most five lines.
pub fn abstract_text(item: &Item<'_>, out: &mut Vec<Finding>) -> Option<String> {
    let text = prose(item, out)?;
    let count = item.text_lines().count();
    if let Some(sixth) = item.text_lines().nth(ABSTRACT_MAX_LINES) {
        let msg = format!(
            "expected `abstract` to be at most {ABSTRACT_MAX_LINES} lines, found {count}; line {} \
             and beyond are rendered nowhere",
            sixth.no
        );
        out.push(Finding::new(Code::DocAbstractOverflow, msg).at_line(item.line));
    }
    Some(text)
}

/// Whether `next / blocked-on` is the literal `none` (text may follow after ` — `).
pub fn is_none(text: &str) -> bool {
    text == "none" || text.starts_with("none \u{2014}")
}

/// `last commit`: `<hex sha, 7–64> — <subject>` on one line.
pub fn last_commit(item: &Item<'_>, out: &mut Vec<Finding>) -> Option<LastCommit> {
    let fault = if item.cont.is_empty() {
        match split_last_commit(item.value) {
            Ok((sha, subject)) => {
                let (sha, subject) = (sha.to_string(), subject.to_string());
                return Some(LastCommit {
                    sha,
                    subject,
                    line: item.line,
                });
            }
            Err(fault) => fault,
        }
    } else {
        format!(
            "{} continuation line(s); the key is one line",
            item.cont.len()
        )
    };
    let msg = format!(
        "expected `<sha> — <subject>` (7–64 hex digits, space, U+2014 EM DASH, space, subject), \
         found `{}`: {fault}",
        snippet(item.value)
    );
    out.push(Finding::new(Code::DocLastCommitMalformed, msg).at_line(item.line));
    None
}

fn split_last_commit(value: &str) -> Result<(&str, &str), String> {
    if value.is_empty() {
        return Err("the value is empty".to_string());
    }
    let end = value.find(char::is_whitespace).unwrap_or(value.len());
    let (sha, rest) = value.split_at(end);
    let hex = sha.bytes().all(|b| b.is_ascii_hexdigit());
    if !hex || !(7..=64).contains(&sha.len()) {
        return Err(format!("`{}` is not 7–64 hex digits", snippet(sha)));
    }
    let Some(subject) = rest.strip_prefix(" \u{2014} ") else {
        return Err(separator_fault(rest));
    };
    if subject.trim().is_empty() {
        return Err("the subject after ` — ` is empty".to_string());
    }
    Ok((sha, subject))
}

fn separator_fault(rest: &str) -> String {
    if rest.trim().is_empty() {
        return "no ` — ` and subject after the sha".to_string();
    }
    let mut chars = rest.chars();
    let (a, b, c) = (chars.next(), chars.next(), chars.next());
    match (a, b, c) {
        (Some(' '), Some(d), Some(' ')) if is_dash_like(d) || d == '\u{2E3A}' => {
            format!("the separator is {}; write U+2014 EM DASH", describe(d))
        }
        _ => format!(
            "expected ` — ` (space, U+2014 EM DASH, space) after the sha, found `{}`",
            snippet(rest)
        ),
    }
}

/// `updated`: an ISO 8601 date or date-time on one line.
pub fn updated(item: &Item<'_>, out: &mut Vec<Finding>) -> Option<String> {
    if item.cont.is_empty() && is_iso8601(item.value) {
        return Some(item.value.to_string());
    }
    let found = match item.cont.first() {
        Some(l) => format!(
            "`{}` followed by `{}`",
            snippet(item.value),
            snippet(l.text.trim())
        ),
        None => format!("`{}`", snippet(item.value)),
    };
    let msg = format!(
        "expected an ISO 8601 date or date-time (e.g. 2026-09-02 or 2026-09-02T14:05:00Z), found {found}"
    );
    out.push(Finding::new(Code::DocUpdatedMalformed, msg).at_line(item.line));
    None
}
