//! The `state` key (SPEC §1.1, §2): one writable word, alone on the line.

use super::State;
use super::scan::Item;
use super::text::snippet;
use crate::catalog::Code;
use crate::finding::{Finding, Severity};

/// A recognised word: writable, or an older spelling and its canonical reading.
#[derive(Debug, Clone, Copy)]
struct Word<'a> {
    text: &'a str,
    state: State,
    legacy: bool,
}

fn word(text: &str) -> Option<Word<'_>> {
    if let Some(state) = State::parse(text) {
        return Some(Word {
            text,
            state,
            legacy: false,
        });
    }
    State::legacy(text).map(|state| Word {
        text,
        state,
        legacy: true,
    })
}

/// Judge the `state` item; returns the state read (if any) and adds findings.
pub fn check(
    item: Option<&Item<'_>>,
    h1_line: usize,
    legacy: bool,
    out: &mut Vec<Finding>,
) -> Option<State> {
    let Some(item) = item else {
        let msg =
            "expected a `- state:` item with one of the five state words, found no `state` key";
        out.push(Finding::new(Code::DocStateMissing, msg).at_line(h1_line));
        return None;
    };
    if item.value.is_empty() && item.cont.is_empty() {
        let msg = "expected one of the five state words after `- state:`, found nothing";
        out.push(Finding::new(Code::DocStateMissing, msg).at_line(item.line));
        return None;
    }
    let whole = word(item.value).filter(|_| item.cont.is_empty());
    let Some(found) = whole.or_else(|| find_word(item)) else {
        out.push(unknown(item));
        return None;
    };
    if whole.is_none() {
        out.push(decorated(item, found));
    }
    if found.legacy {
        out.push(legacy_finding(item.line, found, legacy));
        if !legacy {
            return None;
        }
    }
    Some(found.state)
}

/// A recognised word inside a decorated value: a token equal to a word, or a token that is a
/// word followed by `-` or `_` (a suffix such as `close-ok-pending`).
fn find_word<'a>(item: &Item<'a>) -> Option<Word<'a>> {
    let texts = std::iter::once(item.value).chain(item.cont.iter().map(|l| l.text));
    let tokens: Vec<&str> = texts.flat_map(tokens).collect();
    let exact = tokens.iter().find_map(|t| word(t));
    exact.or_else(|| tokens.iter().find_map(|t| prefix_word(t)))
}

fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .filter(|t| !t.is_empty())
}

/// The longest recognised word that `token` starts with, followed by `-` or `_`.
fn prefix_word(token: &str) -> Option<Word<'_>> {
    let cuts = token.match_indices(['-', '_']).map(|(at, _)| at);
    cuts.rev().find_map(|at| word(&token[..at]))
}

fn decorated(item: &Item<'_>, found: Word<'_>) -> Finding {
    let what = if item.cont.is_empty() {
        format!("`{}`", snippet(item.value))
    } else {
        format!(
            "`{}` and {} continuation line(s)",
            snippet(item.value),
            item.cont.len()
        )
    };
    let msg = format!(
        "expected the single word `{}` alone on the line, found {what}; move every \
         qualification to `- note:`",
        found.text
    );
    Finding::new(Code::DocStateDecorated, msg).at_line(item.line)
}

fn legacy_finding(line: usize, found: Word<'_>, legacy: bool) -> Finding {
    let canonical = found.state.as_str();
    if legacy {
        let msg = format!(
            "older state spelling `{}` read as `{canonical}` (--legacy)",
            found.text
        );
        Finding::new(Code::DocStateLegacy, msg)
            .at_line(line)
            .with_severity(Severity::Warning)
    } else {
        let msg = format!(
            "state `{}` is an older spelling that is no longer writable; write `{canonical}`",
            found.text
        );
        Finding::new(Code::DocStateLegacy, msg).at_line(line)
    }
}

fn unknown(item: &Item<'_>) -> Finding {
    let words: Vec<&str> = State::ALL.iter().map(|s| s.as_str()).collect();
    let lower = item.value.to_ascii_lowercase();
    let hint = word(&lower)
        .map(|w| format!(" (state words are lowercase: write `{}`)", w.state.as_str()))
        .unwrap_or_default();
    let msg = format!(
        "expected one of {}, found `{}`{hint}",
        words.join(", "),
        snippet(item.value)
    );
    Finding::new(Code::DocStateUnknown, msg).at_line(item.line)
}
