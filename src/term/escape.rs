//! Escaping agent-written text for a terminal (SPEC §11): the one rule, at the bottom layer so
//! every module that words a line can use it; `render::escape` is the same function.

/// Escape control characters of agent-written text so it cannot drive the terminal.
///
/// Besides C0, DEL and C1 controls this escapes the bidirectional overrides and isolates, which
/// can make a terminal show text in another order than it is stored ("trojan source").
pub fn escape(text: &str) -> String {
    if text.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return text.to_string(); // printable ASCII: nothing to escape
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_terminal_hazard(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// A character that must never reach a terminal raw.
pub fn is_terminal_hazard(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}
