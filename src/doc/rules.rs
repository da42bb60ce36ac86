//! The document body after the H1: read each key once, then the rules that tie keys together
//! (a returned state needs an abstract, a manifest and a close line; `blocked` names a blocker).

use super::keys::{self, Header, Key};
use super::scan::{self, Line};
use super::{ParseOptions, State, StatusDoc, claims, close_line, fields, manifest, state};
use crate::catalog::Code;
use crate::finding::Finding;

/// Read the body: every key, the close line, and the rules between them.
pub fn body<'a>(
    slug: &str,
    h1_line: usize,
    lines: impl Iterator<Item = Line<'a>>,
    opts: ParseOptions,
) -> (StatusDoc, Vec<Finding>) {
    let scan::Scan {
        items,
        candidates,
        findings,
    } = scan::scan(lines);
    let mut out = findings;
    let header = keys::resolve(&items, &mut out);
    let mut doc = read_keys(&header, h1_line, opts, &mut out);
    doc.slug = slug.to_string();
    doc.close = close(&candidates, &doc, &mut out);
    requirements(&doc, &header, h1_line, &mut out);
    (doc, out)
}

/// Read every key of the header into the typed document; `evidence` is never read.
fn read_keys(
    header: &Header<'_, '_>,
    h1_line: usize,
    opts: ParseOptions,
    out: &mut Vec<Finding>,
) -> StatusDoc {
    let state_item = header.get(Key::State);
    let abstract_item = header.get(Key::Abstract);
    let abstract_text = abstract_item.and_then(|i| fields::abstract_text(i, out));
    if let (Some(item), Some(text)) = (abstract_item, &abstract_text) {
        let lower = text.replace('\n', " ").to_ascii_lowercase();
        claims::soft_language("abstract", &lower, item.line, out);
    }
    StatusDoc {
        slug: String::new(),
        state: state::check(state_item, h1_line, opts.legacy, out),
        state_line: state_item.map(|i| i.line),
        abstract_text,
        last_commit: header
            .get(Key::LastCommit)
            .and_then(|i| fields::last_commit(i, out)),
        done: header
            .get(Key::Done)
            .map(|i| claims::done(i, out))
            .unwrap_or_default(),
        next: header.get(Key::Next).and_then(|i| fields::prose(i, out)),
        artifacts: header
            .get(Key::Artifacts)
            .map(|i| manifest::artifacts(i, out)),
        note: header.get(Key::Note).and_then(|i| fields::prose(i, out)),
        updated: header
            .get(Key::Updated)
            .and_then(|i| fields::updated(i, out)),
        close: None,
    }
}

/// Judge the close-line candidates: malformed, duplicated, unexpected, missing, slug mismatch.
fn close(
    candidates: &[Line<'_>],
    doc: &StatusDoc,
    out: &mut Vec<Finding>,
) -> Option<super::CloseLine> {
    let state_line = doc.state_line.unwrap_or(1);
    let Some(first) = candidates.first() else {
        if let Some(s) = doc.state.filter(|s| s.needs_close_line()) {
            let msg = format!(
                "expected a `CLOSE-OK · …` line at the end of the document for state `{}`, found none",
                s.as_str()
            );
            out.push(Finding::new(Code::DocCloseMissing, msg).at_line(state_line));
        }
        return None;
    };
    if let Some(s) = doc
        .state
        .filter(|s| matches!(s, State::InProgress | State::Blocked))
    {
        let msg = format!(
            "expected no close line while the state is `{}`, found one",
            s.as_str()
        );
        out.push(Finding::new(Code::DocCloseUnexpected, msg).at_line(first.no));
    }
    for again in candidates.iter().skip(1) {
        let msg = format!(
            "expected one close line, found another on line {} after line {}; keep one",
            again.no, first.no
        );
        out.push(Finding::new(Code::DocCloseDuplicated, msg).at_line(again.no));
    }
    let mut parsed = None;
    for line in candidates {
        match close_line::parse(line.text, line.no) {
            Ok(c) => {
                parsed.get_or_insert(c);
            }
            Err(fault) => out.push(Finding::new(Code::DocCloseMalformed, fault).at_line(line.no)),
        }
    }
    if let Some(c) = parsed.as_ref().filter(|c| c.slug != doc.slug) {
        let msg = format!(
            "expected the close line's slug to be `{}` as in the H1, found `{}`",
            doc.slug, c.slug
        );
        out.push(Finding::new(Code::DocCloseSlugMismatch, msg).at_line(c.line));
    }
    parsed
}

/// What a state requires of the other keys.
fn requirements(doc: &StatusDoc, header: &Header<'_, '_>, h1_line: usize, out: &mut Vec<Finding>) {
    let Some(state) = doc.state else { return };
    let line = doc.state_line.unwrap_or(h1_line);
    let word = state.as_str();
    if state.is_returned() && header.get(Key::Abstract).is_none() {
        let msg = format!("expected `- abstract:` for the returned state `{word}`, found none");
        out.push(Finding::new(Code::DocAbstractMissing, msg).at_line(line));
    }
    if state.is_returned() && header.get(Key::Artifacts).is_none() {
        let msg = format!(
            "expected `- artifacts:` for the returned state `{word}`, found neither `artifacts` nor \
             `return`; a bare `- artifacts:` declares that nothing was produced"
        );
        out.push(Finding::new(Code::DocReturnManifestMissing, msg).at_line(line));
    }
    if state == State::Blocked {
        blocked_on(doc, header, line, out);
    }
}

/// `blocked` must name what it waits on: `next / blocked-on` present and not `none`.
fn blocked_on(doc: &StatusDoc, header: &Header<'_, '_>, line: usize, out: &mut Vec<Finding>) {
    let found = match (header.get(Key::Next), doc.next.as_deref()) {
        (None, _) => "no `next / blocked-on` key",
        (Some(_), Some(text)) if fields::is_none(text) => "`none`",
        _ => return,
    };
    let at = header.get(Key::Next).map_or(line, |i| i.line);
    let msg = format!(
        "expected `- next / blocked-on:` to name what the blocked work waits on, found {found}"
    );
    out.push(Finding::new(Code::DocBlockedOnNone, msg).at_line(at));
}
