//! The status document grammar (SPEC §2) and the close line (SPEC §3).
//!
//! `parse` never panics and never stops at the first problem (except `doc-not-utf8` and
//! `doc-h1-missing`): every fault becomes a finding with its 1-based line. The work is one
//! pass over the lines (`scan`), then one look at each key; nothing is quadratic.

mod claims;
pub mod close_line;
pub mod compose;
mod fields;
pub mod fix;
mod h1;
pub mod items;
mod keys;
mod manifest;
mod model;
mod rules;
mod scan;
mod state;
mod text;

pub use manifest::path_fault as artifact_path_fault;
pub use model::{CloseLine, Entry, LastCommit, Parsed, State, StatusDoc};
pub use text::slug_fault;

use crate::catalog::Code;
use crate::finding::Finding;
use scan::Line;

/// Options of the parser.
#[derive(Debug, Clone, Copy, Default)]
pub struct ParseOptions {
    /// Read the eight older state spellings with a warning instead of refusing them.
    pub legacy: bool,
}

/// Parse a status document from raw bytes.
pub fn parse(bytes: &[u8], opts: ParseOptions) -> Parsed {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = match std::str::from_utf8(body) {
        Ok(text) => text,
        Err(err) => {
            return refused(not_utf8(
                bytes,
                bytes.len() - body.len() + err.valid_up_to(),
            ));
        }
    };
    let mut lines = lines(text);
    let Some(h1) = lines.find(|l| !l.text.trim().is_empty()) else {
        let msg =
            "expected `# STATUS — <slug>` as the first non-blank line, found an empty document";
        return refused(Finding::new(Code::DocH1Missing, msg).at_line(1));
    };
    let slug = match h1::parse(h1.text) {
        Ok(slug) => slug,
        Err(msg) => return refused(Finding::new(Code::DocH1Missing, msg).at_line(h1.no)),
    };
    let (doc, mut findings) = rules::body(slug, h1.no, lines, opts);
    findings.sort_by_key(|f| f.line);
    Parsed {
        doc: Some(doc),
        findings,
    }
}

/// The lines of `text` numbered from 1, LF or CRLF.
fn lines(text: &str) -> impl Iterator<Item = Line<'_>> {
    text.split('\n').enumerate().map(|(i, l)| Line {
        no: i + 1,
        text: l.strip_suffix('\r').unwrap_or(l),
    })
}

fn refused(finding: Finding) -> Parsed {
    Parsed {
        doc: None,
        findings: vec![finding],
    }
}

/// `doc-not-utf8` at the line of the first invalid byte (`at`, counted from the file's start).
fn not_utf8(bytes: &[u8], at: usize) -> Finding {
    let line = 1 + bytes.iter().take(at).filter(|b| **b == b'\n').count();
    let msg = format!(
        "expected UTF-8 text, found an invalid byte sequence at byte offset {at}; nothing else was read"
    );
    Finding::new(Code::DocNotUtf8, msg).at_line(line)
}
