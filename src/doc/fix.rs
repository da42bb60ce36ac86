//! `closegate lint --fix` (SPEC §17): mechanical fixes only, one line at a time, never a line
//! added or removed, never invented content. A line is rewritten only when the grammar refuses
//! (or warns about) it as written and the rewrite is a spelling change: a look-alike or ASCII
//! dash where `—` is wanted, a separator where ` · ` is wanted, a key's case or older spelling,
//! an older state spelling, upper-case hex in the close line, a missing `T` in `updated`.

use super::close_line;
use super::items::canonical_key;
use super::model::State;
use super::text::{is_dash_like, is_dot_like};
use crate::catalog::Code;

/// One change `--fix` made: the 1-based line, what changed, and the finding code it fixes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    pub line: usize,
    /// The finding codes the change fixes (a line can have several faults).
    pub codes: Vec<Code>,
    pub before: String,
    pub after: String,
}

/// The fixed text and the changes. Line endings (LF or CRLF) and a leading BOM are kept.
pub fn fix(text: &str) -> (String, Vec<Fix>) {
    let (bom, body) = match text.strip_prefix('\u{feff}') {
        Some(body) => ("\u{feff}", body),
        None => ("", text),
    };
    let counts = key_counts(body);
    let mut out = String::from(bom);
    let mut fixes = Vec::new();
    let mut seen_h1 = false;
    let raws: Vec<&str> = body.split_inclusive('\n').collect();
    // Several close-line candidates: fixing one could change which one is read.
    let candidates = close_candidates(&raws);
    for (i, raw) in raws.iter().enumerate() {
        let (line, ending) = split_ending(raw);
        // An item with continuation lines is not a one-line value: its value is left alone.
        let continued = raws[i + 1..]
            .iter()
            .take_while(|next| !next.starts_with("- "))
            .any(|next| next.starts_with("  ") || next.starts_with('\t'));
        let no = i + 1;
        let fixed = if !seen_h1 {
            if line.trim().is_empty() {
                None
            } else {
                seen_h1 = true;
                fix_h1(line)
            }
        } else if let Some(rest) = line.strip_prefix("- ") {
            fix_item(rest, &counts, continued).map(|(codes, l)| (codes, format!("- {l}")))
        } else if candidates == 1 && (close_line::is_candidate(line) || starts_closeish(line)) {
            fix_close(line).map(|l| (vec![Code::DocCloseMalformed], l))
        } else {
            None
        };
        match fixed {
            Some((codes, after)) if after != line => {
                fixes.push(Fix {
                    line: no,
                    codes,
                    before: line.to_string(),
                    after: after.clone(),
                });
                out.push_str(&after);
            }
            _ => out.push_str(line),
        }
        out.push_str(ending);
    }
    (out, fixes)
}

/// How often each canonical key is written. A key written more than once (counting other
/// spellings) is left as written: renaming one of them could change which one the parser reads.
fn key_counts(body: &str) -> std::collections::HashMap<&'static str, usize> {
    let mut counts: std::collections::HashMap<&'static str, usize> = Default::default();
    for line in body.lines() {
        if let Some(key) = line
            .strip_prefix("- ")
            .and_then(|r| r.split_once(':'))
            .and_then(|(k, _)| canonical_key(k))
        {
            *counts.entry(key).or_default() += 1;
        }
    }
    counts
}

/// The lines that are, or start like, a close line.
fn close_candidates(raws: &[&str]) -> usize {
    raws.iter()
        .filter(|r| {
            let l = split_ending(r).0;
            !l.starts_with("- ") && (close_line::is_candidate(l) || starts_closeish(l))
        })
        .count()
}

fn split_ending(raw: &str) -> (&str, &str) {
    if let Some(l) = raw.strip_suffix("\r\n") {
        (l, "\r\n")
    } else if let Some(l) = raw.strip_suffix('\n') {
        (l, "\n")
    } else {
        (raw, "")
    }
}

/// `# STATUS - slug` (any dash, any case of `status`) → `# STATUS — slug`.
fn fix_h1(line: &str) -> Option<(Vec<Code>, String)> {
    if super::h1::parse(line).is_ok() {
        return None;
    }
    let rest = line.strip_prefix("# ")?;
    let word = rest.get(..6)?;
    if !word.eq_ignore_ascii_case("status") {
        return None;
    }
    let rest = rest[6..].strip_prefix(' ')?;
    let mut chars = rest.chars();
    let dash = chars.next()?;
    if !(is_dash_like(dash) || dash == '\u{2014}') {
        return None;
    }
    let slug = chars.as_str().strip_prefix(' ')?;
    let fixed = format!("# STATUS \u{2014} {slug}");
    super::h1::parse(&fixed).ok()?;
    Some((vec![Code::DocH1Missing], fixed))
}

/// A header item `KEY: VALUE` (without the leading `- `).
fn fix_item(
    rest: &str,
    counts: &std::collections::HashMap<&'static str, usize>,
    continued: bool,
) -> Option<(Vec<Code>, String)> {
    let (key, value) = rest.split_once(':')?;
    let canonical = canonical_key(key)?;
    let mut codes = Vec::new();
    let mut new_key = key.to_string();
    let once = counts.get(canonical).copied().unwrap_or(0) <= 1;
    if once && key != canonical {
        new_key = canonical.to_string();
        codes.push(if is_alias(key) {
            Code::DocKeyAlias
        } else {
            Code::DocKeyUnknown
        });
    }
    let mut new_value = value.to_string();
    let trimmed = value.trim();
    match canonical {
        "state" if !continued => {
            if State::parse(trimmed).is_none()
                && let Some(state) = State::legacy(trimmed)
            {
                new_value = format!(" {}", state.as_str());
                codes.push(Code::DocStateLegacy);
            }
        }
        "last commit" if !continued => {
            if let Some(fixed) = fix_last_commit(trimmed) {
                new_value = format!(" {fixed}");
                codes.push(Code::DocLastCommitMalformed);
            }
        }
        "updated" if !continued => {
            if let Some(fixed) = fix_updated(trimmed) {
                new_value = format!(" {fixed}");
                codes.push(Code::DocUpdatedMalformed);
            }
        }
        _ => {}
    }
    (!codes.is_empty()).then(|| (codes, format!("{new_key}:{new_value}")))
}

/// The older spellings of SPEC §2 (read with `doc-key-alias`), as written.
fn is_alias(key: &str) -> bool {
    super::keys::is_alias(key)
}

/// `<sha> - subject` (any dash) → `<sha> — subject`; only when the value has no ` — ` yet.
fn fix_last_commit(value: &str) -> Option<String> {
    let (sha, rest) = value.split_once(' ')?;
    let hex = (7..=64).contains(&sha.len()) && sha.chars().all(|c| c.is_ascii_hexdigit());
    if !hex || rest.starts_with('\u{2014}') {
        return None;
    }
    let mut chars = rest.chars();
    let dash = chars.next()?;
    if !is_dash_like(dash) {
        return None;
    }
    let subject = chars.as_str().strip_prefix(' ')?;
    (!subject.trim().is_empty()).then(|| format!("{sha} \u{2014} {subject}"))
}

/// `2026-11-30 03:51` → `2026-11-30T03:51` when that makes it ISO 8601.
fn fix_updated(value: &str) -> Option<String> {
    if crate::date::is_iso8601(value) {
        return None;
    }
    let (date, time) = value.split_once(' ')?;
    let fixed = format!("{date}T{}", time.trim_start());
    crate::date::is_iso8601(&fixed).then_some(fixed)
}

/// `CLOSE` then any dash or other look-alike before `OK`.
fn starts_closeish(line: &str) -> bool {
    line.trim_start()
        .strip_prefix("CLOSE")
        .and_then(|r| r.chars().next())
        .is_some_and(|c| is_dash_like(c) || c == '_' || c == ' ')
        && line.contains("commit ")
}

/// Rebuild a close line that does not parse from its fields: the marker, ` · ` separators,
/// lower-case hex. `None` unless the rebuilt line parses.
fn fix_close(line: &str) -> Option<String> {
    if close_line::parse(line, 1).is_ok() {
        return None;
    }
    let t = line.trim();
    let rest = t.strip_prefix("CLOSE")?;
    let mut chars = rest.chars();
    let dash = chars.next()?;
    if !(is_dash_like(dash) || dash == '_' || dash == ' ') {
        return None;
    }
    let rest = chars.as_str().strip_prefix("OK")?;
    let (slug, rest) = field(rest, "commit")?;
    let (commit, rest) = field(rest, "branch")?;
    let (branch, worktree) = field(rest, "worktree")?;
    let fixed = format!(
        "CLOSE-OK \u{b7} {slug} \u{b7} commit {} \u{b7} branch {branch} \u{b7} worktree {}",
        commit.to_ascii_lowercase(),
        worktree.trim()
    );
    close_line::parse(&fixed, 1).ok()?;
    Some(fixed)
}

/// The text before ` <label> ` with separators trimmed, and the text after it.
fn field<'a>(text: &'a str, label: &str) -> Option<(&'a str, &'a str)> {
    let needle = format!(" {label} ");
    let at = text.find(&needle)?;
    let value = text[..at].trim_matches(|c: char| c.is_whitespace() || is_separator(c));
    let value = value.trim();
    (!value.is_empty() && !value.contains(' ')).then_some((value, &text[at + needle.len()..]))
}

/// What stands between a close line's fields where ` · ` is wanted: a dot or dash of any kind
/// (ASCII `.` and `*` are how a middle dot is typed without one), a bar, comma, semicolon or slash.
fn is_separator(c: char) -> bool {
    is_dot_like(c) || is_dash_like(c) || matches!(c, '.' | '*' | '|' | ',' | ';' | '/' | '\u{2014}')
}
