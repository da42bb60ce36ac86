//! Rendering of reports: human, JSON, GitHub workflow commands and SARIF, all from one `Report`.
//!
//! Gates never print; every subcommand hands its `Report` to `render`. Agent-written text is
//! untrusted, so each format neutralises control characters in its own way (SPEC §11).

pub mod board;
mod github;
mod human;
mod sarif;

use std::io::Write;

use crate::report::Report;

/// Output format chosen with `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    #[default]
    Human,
    Json,
    Github,
    Sarif,
}

/// Print `report` in `format` to `out`. `color` is decided by the caller (terminal, NO_COLOR).
pub fn render(
    report: &Report,
    format: Format,
    color: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    match format {
        Format::Human => human::render(report, color, out),
        Format::Json => write_json(report, out),
        Format::Github => github::render(report, out),
        Format::Sarif => sarif::render(report, out),
    }
}

/// Escape control characters of agent-written text so it cannot drive the terminal.
///
/// Besides C0, DEL and C1 controls this escapes the bidirectional overrides and isolates, which
/// can make a terminal show text in another order than it is stored ("trojan source").
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_unsafe(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// A character that must never reach a terminal raw.
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Pretty JSON with a trailing newline, shared by the `json` and `sarif` formats.
///
/// serde_json escapes only C0 controls; DEL, C1 controls and bidi overrides are rewritten as
/// `\uXXXX` too. They can only occur inside strings (the structure is ASCII), so the result is the
/// same JSON value.
fn write_json<T: serde::Serialize + ?Sized>(value: &T, out: &mut dyn Write) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    // C0 controls inside strings are already escaped; outside them they are layout (`\n`).
    let needs_escape = |c: char| is_unsafe(c) && u32::from(c) >= 0x7f;
    let mut last = 0;
    for (at, c) in text.char_indices().filter(|&(_, c)| needs_escape(c)) {
        out.write_all(&text.as_bytes()[last..at])?;
        let mut units = [0u16; 2];
        for unit in c.encode_utf16(&mut units) {
            write!(out, "\\u{unit:04x}")?;
        }
        last = at + c.len_utf8();
    }
    out.write_all(&text.as_bytes()[last..])?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_neutralises_controls_and_bidi() {
        assert_eq!(escape("a\x1b[31mb"), "a\\u{1b}[31mb");
        assert_eq!(escape("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(escape("café · ok"), "café · ok");
    }

    #[test]
    fn json_escapes_c1_and_bidi_inside_strings() {
        let mut out = Vec::new();
        write_json(
            &serde_json::json!({"m": "a\u{9b}b\u{202e}c\u{7f}"}),
            &mut out,
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(r"a\u009bb\u202ec\u007f"), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["m"], "a\u{9b}b\u{202e}c\u{7f}");
    }
}
