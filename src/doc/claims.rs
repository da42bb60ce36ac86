//! The `done` claims and the language checks on `abstract` and `done` (SPEC §2): a claim
//! names the instrument that proves it, and neither key hedges.

use super::Entry;
use super::scan::Item;
use super::text::{contains_phrase, snippet};
use crate::catalog::Code;
use crate::finding::Finding;

/// Phrases that name the instrument behind a claim.
const INSTRUMENTS: [&str; 6] = [
    "proven by",
    "proved by",
    "shown by",
    "verified by",
    "checked by",
    "measured by",
];

/// Hedges that turn a claim into an opinion.
const SOFT: [&str; 11] = [
    "should work",
    "should be working",
    "should be fine",
    "i believe",
    "looks good",
    "appears to pass",
    "appear to pass",
    "seems to",
    "probably",
    "hopefully",
    "on my read",
];

/// One run of text that splits into claims: the inline value or one sub-bullet, with its
/// wrapped lines joined by a space. `marks` maps byte offsets back to line numbers.
#[derive(Default)]
struct Segment {
    text: String,
    marks: Vec<(usize, usize)>,
}

impl Segment {
    fn push(&mut self, text: &str, line: usize) {
        if !self.text.is_empty() {
            self.text.push(' ');
        }
        self.marks.push((self.text.len(), line));
        self.text.push_str(text);
    }
}

/// The claims of `done`, each checked for an instrument and for soft language.
pub fn done(item: &Item<'_>, out: &mut Vec<Finding>) -> Vec<Entry> {
    let claims: Vec<Entry> = segments(item).iter().flat_map(split_claims).collect();
    if claims.is_empty() {
        let msg = "expected at least one claim after `- done:`, found nothing";
        out.push(Finding::new(Code::DocProseKeyEmpty, msg).at_line(item.line));
    }
    for claim in &claims {
        let lower = claim.text.to_ascii_lowercase();
        if !INSTRUMENTS.iter().any(|p| contains_phrase(&lower, p)) {
            let msg = format!(
                "expected the claim `{}` to name its instrument (`proven by`, `shown by`, \
                 `verified by`, …), found none",
                snippet(&claim.text)
            );
            out.push(Finding::new(Code::DocClaimNoInstrument, msg).at_line(claim.line));
        }
        soft_language("done", &lower, claim.line, out);
    }
    claims
}

/// Split the item into segments: the inline value, then one per `- ` sub-bullet; other
/// continuation lines wrap the segment above.
fn segments(item: &Item<'_>) -> Vec<Segment> {
    let mut segs = vec![Segment::default()];
    if !item.value.is_empty() {
        segs[0].push(item.value, item.line);
    }
    for line in &item.cont {
        let text = line.text.trim();
        let bullet = text.strip_prefix("- ").or((text == "-").then_some(""));
        match (bullet, segs.last_mut()) {
            (Some(rest), _) => {
                let mut seg = Segment::default();
                seg.push(rest.trim(), line.no);
                segs.push(seg);
            }
            (None, Some(seg)) => seg.push(text, line.no),
            (None, None) => {}
        }
    }
    segs
}

/// Split a segment on ` · ` into claims, each with the line it starts on.
fn split_claims(seg: &Segment) -> Vec<Entry> {
    let mut claims = Vec::new();
    let mut start = 0;
    let mut mark = 0;
    let pieces = seg.text.split(" \u{00B7} ");
    for piece in pieces {
        let at = start + (piece.len() - piece.trim_start().len());
        while mark + 1 < seg.marks.len() && seg.marks[mark + 1].0 <= at {
            mark += 1;
        }
        let text = piece.trim();
        if let (false, Some((_, line))) = (text.is_empty(), seg.marks.get(mark)) {
            claims.push(Entry {
                text: text.to_string(),
                line: *line,
            });
        }
        start += piece.len() + " \u{00B7} ".len();
    }
    claims
}

/// Report the soft phrases `lower` (ASCII-lowercased text of `key`) uses.
pub fn soft_language(key: &str, lower: &str, line: usize, out: &mut Vec<Finding>) {
    let found: Vec<String> = SOFT
        .iter()
        .filter(|p| contains_phrase(lower, p))
        .map(|p| format!("`{p}`"))
        .collect();
    if !found.is_empty() {
        let msg = format!(
            "expected `{key}` to state what was shown and by what, found soft language: {}",
            found.join(", ")
        );
        out.push(Finding::new(Code::DocSoftClaim, msg).at_line(line));
    }
}
