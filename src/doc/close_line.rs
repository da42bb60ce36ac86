//! The CLOSE-OK line (SPEC §3): recognising lines meant as close lines and parsing them.

use super::CloseLine;

/// Whether `line` is meant as a close line: after trimming it starts with `CLOSE` and a
/// dash-like character, or it contains ` · commit `.
pub fn is_candidate(line: &str) -> bool {
    let _ = line;
    todo!()
}

/// Parse a candidate line; `Err` carries the exact fault for `doc-close-malformed`.
pub fn parse(line: &str, line_no: usize) -> Result<CloseLine, String> {
    let _ = (line, line_no);
    todo!()
}

/// The close line of an agent's final message (`--message FILE`): the last candidate line.
pub fn find_in_message(text: &str) -> Option<Result<CloseLine, String>> {
    let _ = text;
    todo!()
}
