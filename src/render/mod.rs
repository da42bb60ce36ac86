//! Rendering of reports: human, JSON, GitHub workflow commands and SARIF, all from one `Report`.
//!
//! Gates never print; every subcommand hands its `Report` to `render`. Agent-written text is
//! untrusted, so each format neutralises control characters in its own way (SPEC §11).

pub mod agent;
pub mod board;
pub mod claim;
pub mod close;
pub mod doctor;
pub mod explain;
mod github;
pub mod hook;
mod human;
pub mod init;
pub mod land;
pub mod lint;
pub mod log;
pub mod notes;
pub mod review;
mod sarif;
pub mod sweep;
pub mod teardown;
pub mod validate;

use std::io::Write;

use crate::finding::Finding;
use crate::report::Report;

/// Output format chosen with `--format` (`cmd::values` lets clap read it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Human,
    Json,
    Github,
    Sarif,
}

impl Format {
    /// The format's name, as `--format` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Human => "human",
            Format::Json => "json",
            Format::Github => "github",
            Format::Sarif => "sarif",
        }
    }
}

/// Standard output for a report in `format`: the human report is prose (nothing under
/// `-q/--quiet`), the others are parsed.
pub fn out(format: Format) -> crate::term::Out {
    if format == Format::Human {
        crate::term::human()
    } else {
        crate::term::stdout()
    }
}

/// Print `report` in `format` to `out`. `color` is decided by the caller (terminal, NO_COLOR).
pub fn render(
    report: &Report,
    format: Format,
    color: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(out);
    match format {
        Format::Human => human::render(report, color, &mut out),
        Format::Json => write_json(report, &mut out),
        Format::Github => github::render(report, &mut out),
        Format::Sarif => sarif::render(report, &mut out),
    }?;
    out.flush()
}

/// The file a finding points at: its own path, else the status document when the finding
/// names a line of it (a finding with neither, like `checks-none`, points at no file).
pub(crate) fn location<'a>(report: &'a Report, finding: &'a Finding) -> Option<&'a str> {
    match (&finding.path, finding.line) {
        (Some(path), _) => Some(path),
        (None, Some(_)) => report.source.as_deref(),
        (None, None) => None,
    }
}

/// Where the `github` and `sarif` formats locate a finding (SPEC §4.7), and the message they show.
pub(crate) struct Annotation<'a> {
    /// Repository-relative: the status document for a finding with a line, else its path.
    pub file: Option<&'a str>,
    /// A line of the status document.
    pub line: Option<usize>,
    /// The message; a finding located in the status document names its path here.
    pub message: std::borrow::Cow<'a, str>,
}

/// A finding with a `line` is located in the status document at that line (its `path` goes into
/// the message); one with only a `path` is located at that path (SPEC §4.7).
pub(crate) fn annotation<'a>(report: &'a Report, finding: &'a Finding) -> Annotation<'a> {
    let message = std::borrow::Cow::Borrowed(finding.message.as_str());
    match (finding.line, &finding.path) {
        (Some(line), path) => {
            let message = match path {
                Some(path) if !finding.message.contains(path.as_str()) => {
                    std::borrow::Cow::Owned(format!("{} (path: {path})", finding.message))
                }
                _ => message,
            };
            Annotation {
                file: report.source.as_deref(),
                line: Some(line),
                message,
            }
        }
        (None, path) => Annotation {
            file: path.as_deref(),
            line: None,
            message,
        },
    }
}

/// Quoting for sh lives below the verbs that print commands; `render` keeps the name.
pub use crate::shell::shell_word;

/// Escaping lives at the bottom (`term`) so a domain module that words a line can escape what
/// it quotes; `render` keeps the name.
pub use crate::term::escape::escape;
use crate::term::escape::is_terminal_hazard;

/// Pretty JSON with a trailing newline, shared by the `json` and `sarif` formats.
///
/// serde_json escapes only C0 controls; DEL, C1 controls and bidi overrides are rewritten as
/// `\uXXXX` too. They can only occur inside strings (the structure is ASCII), so the result is the
/// same JSON value.
pub fn write_json<T: serde::Serialize + ?Sized>(
    value: &T,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let escaping = Escaping {
        out: &mut *out,
        carry: Vec::new(),
    };
    // serde_json writes token by token: batch them before the escaping pass.
    let mut batched = std::io::BufWriter::with_capacity(1 << 16, escaping);
    serde_json::to_writer_pretty(&mut batched, value).map_err(std::io::Error::other)?;
    batched.flush()?;
    drop(batched);
    writeln!(out)
}

/// A writer that passes serde_json's output through, rewriting DEL, C1 controls and bidi
/// characters as `\uXXXX` (C0 controls inside strings are already escaped by serde_json;
/// outside strings they are layout). A UTF-8 sequence split across two writes is carried over.
struct Escaping<'a> {
    out: &'a mut dyn Write,
    carry: Vec<u8>,
}

impl Write for Escaping<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.carry.is_empty() {
            let valid = utf8_prefix(buf)?;
            let text = std::str::from_utf8(&buf[..valid]).map_err(std::io::Error::other)?;
            write_escaped(text, self.out)?;
            self.carry.extend_from_slice(&buf[valid..]);
        } else {
            self.carry.extend_from_slice(buf);
            let valid = utf8_prefix(&self.carry)?;
            let text = std::str::from_utf8(&self.carry[..valid]).map_err(std::io::Error::other)?;
            write_escaped(text, self.out)?;
            self.carry.drain(..valid);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.carry.is_empty() {
            return Err(std::io::Error::other("truncated UTF-8 in JSON output"));
        }
        self.out.flush()
    }
}

/// The length of the longest valid UTF-8 prefix, leaving out only an incomplete final sequence.
fn utf8_prefix(bytes: &[u8]) -> std::io::Result<usize> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(text.len()),
        Err(e) if e.error_len().is_none() => Ok(e.valid_up_to()),
        Err(e) => Err(std::io::Error::other(e)),
    }
}

/// Write `text`, rewriting the terminal hazards at or above U+007F as `\uXXXX`. ASCII runs
/// are skipped bytewise: every such character starts with a byte of 0x7F or more.
fn write_escaped(text: &str, out: &mut dyn Write) -> std::io::Result<()> {
    let bytes = text.as_bytes();
    let (mut last, mut at) = (0, 0);
    while let Some(offset) = bytes[at..].iter().position(|&b| b >= 0x7f) {
        at += offset;
        let Some(c) = text[at..].chars().next() else {
            break;
        };
        if is_terminal_hazard(c) {
            out.write_all(&bytes[last..at])?;
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(out, "\\u{unit:04x}")?;
            }
            last = at + c.len_utf8();
        }
        at += c.len_utf8();
    }
    out.write_all(&bytes[last..])
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

    #[test]
    fn escaping_writer_carries_a_sequence_split_across_writes() {
        let text = "x\u{202e}y é";
        let bytes = text.as_bytes();
        for cut in 0..=bytes.len() {
            let mut out = Vec::new();
            let mut w = Escaping {
                out: &mut out,
                carry: Vec::new(),
            };
            w.write_all(&bytes[..cut]).unwrap();
            w.write_all(&bytes[cut..]).unwrap();
            w.flush().unwrap();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                "x\\u202ey é",
                "cut at {cut}"
            );
        }
    }
}
