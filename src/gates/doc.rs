//! Gate `doc` (SPEC §2): the status document's grammar, plus the close line of the agent's
//! final message when the coordinator passes one and the document has none (SPEC §3).

use crate::catalog::Code;
use crate::doc::{self, ParseOptions, Parsed, close_line};
use crate::finding::Finding;

/// Parse the document; fall back to the close line of `message` when the document has none.
pub fn run(bytes: &[u8], opts: ParseOptions, message: Option<&str>) -> Parsed {
    let mut parsed = doc::parse(bytes, opts);
    let (Some(doc), Some(message)) = (parsed.doc.as_mut(), message) else {
        return parsed;
    };
    if doc.close.is_some() {
        return parsed;
    }
    match close_line::find_in_message(message) {
        None => {}
        Some(Ok(close)) => {
            parsed.findings.retain(|f| f.code != Code::DocCloseMissing);
            if close.slug != doc.slug {
                let msg = format!(
                    "the close line of the message names slug `{}` but the H1 names `{}`",
                    close.slug, doc.slug
                );
                parsed
                    .findings
                    .push(Finding::new(Code::DocCloseSlugMismatch, msg).at_line(close.line));
            }
            doc.close = Some(close);
        }
        Some(Err(fault)) => {
            let msg = format!("in the message: {fault}");
            parsed
                .findings
                .push(Finding::new(Code::DocCloseMalformed, msg));
        }
    }
    parsed
}
