//! The lexer of Python: indentation as synthetic `{`/`}` tokens and logical line ends as `;`
//! (brackets, backslashes and triple-quoted strings joining lines), so blocks match like braces;
//! comments dropped, strings (with their `r`/`b`/`f` prefixes) read whole. A dedent to no outer
//! level, or a string that never ends, is an `Err`.

use super::lex::{at, ident_end, number_end};
use super::tokens::{Tk, Tok};

/// Operators read as one token, longest first.
const OPS: [&str; 14] = [
    "**=", "//=", "->", ":=", "==", "!=", "<=", ">=", "**", "//", "+=", "-=", "*=", "/=",
];

/// The tokens of Python source `text`: indentation as synthetic `{`/`}`, line ends as `;`.
pub(crate) fn lex(text: &str) -> Result<Vec<Tok<'_>>, String> {
    let src = text.as_bytes();
    let mut lx = Lexer {
        text,
        out: Vec::new(),
        indents: vec![0],
        depth: 0,
    };
    let mut i = 0;
    let mut line_start = true;
    while i < src.len() {
        if line_start && lx.depth == 0 {
            (i, line_start) = lx.indent(i)?;
            continue;
        }
        let c = src[i];
        match c {
            b'\n' => {
                if lx.depth == 0 {
                    lx.end_line(i);
                    line_start = true;
                }
                i += 1;
            }
            b' ' | b'\t' | b'\r' | 0x0c => i += 1,
            b'#' => i = memchr::memchr(b'\n', &src[i..]).map_or(src.len(), |n| i + n),
            b'\\' if matches!(at(src, i + 1), b'\n' | b'\r') => i += 2,
            _ => i = lx.token(i)?,
        }
    }
    lx.end_line(src.len());
    while lx.indents.len() > 1 {
        lx.indents.pop();
        lx.synth("}", src.len());
    }
    Ok(lx.out)
}

struct Lexer<'a> {
    text: &'a str,
    out: Vec<Tok<'a>>,
    indents: Vec<usize>,
    depth: usize,
}

impl<'a> Lexer<'a> {
    fn synth(&mut self, text: &'static str, at: usize) {
        self.out.push(Tok {
            kind: Tk::Punct,
            text,
            start: at,
            end: at,
        });
    }

    fn end_line(&mut self, at: usize) {
        if self
            .out
            .last()
            .is_some_and(|t| !(t.text == ";" || t.start == t.end))
        {
            self.synth(";", at);
        }
    }

    /// Reads the indentation of the line at `i`: the index of its first token, or of the next
    /// line's start with `true` when the line is blank.
    fn indent(&mut self, i: usize) -> Result<(usize, bool), String> {
        let src = self.text.as_bytes();
        let (mut j, mut col) = (i, 0);
        while j < src.len() && matches!(src[j], b' ' | b'\t' | 0x0c) {
            col = if src[j] == b'\t' {
                col / 8 * 8 + 8
            } else {
                col + 1
            };
            j += 1;
        }
        if j >= src.len() || matches!(src[j], b'\n' | b'\r' | b'#') {
            let next = memchr::memchr(b'\n', &src[j..]).map_or(src.len(), |n| j + n + 1);
            return Ok((next, true));
        }
        let top = *self.indents.last().unwrap_or(&0);
        if col > top {
            self.indents.push(col);
            self.synth("{", j);
        }
        while col < *self.indents.last().unwrap_or(&0) {
            self.indents.pop();
            self.synth("}", j);
        }
        if col != *self.indents.last().unwrap_or(&0) {
            return Err("an indentation that matches no outer level".into());
        }
        Ok((j, false))
    }

    /// Reads the token at `i`; the index past it.
    fn token(&mut self, i: usize) -> Result<usize, String> {
        let src = self.text.as_bytes();
        let c = src[i];
        let (kind, end) = if let Some(end) = string_at(src, i)? {
            (Tk::Str, end)
        } else if c.is_ascii_digit() || (c == b'.' && at(src, i + 1).is_ascii_digit()) {
            (Tk::Num, number_end(src, i))
        } else if c == b'_' || c.is_ascii_alphabetic() || c >= 0x80 {
            (Tk::Ident, ident_end(src, i))
        } else {
            let len = OPS
                .iter()
                .find(|op| src[i..].starts_with(op.as_bytes()))
                .map_or(1, |op| op.len());
            match c {
                b'(' | b'[' | b'{' => self.depth += 1,
                b')' | b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
            (Tk::Punct, i + len)
        };
        let text = self
            .text
            .get(i..end)
            .ok_or("a token that splits a character")?;
        self.out.push(Tok {
            kind,
            text,
            start: i,
            end,
        });
        Ok(end)
    }
}

/// A string literal at `i` (with a prefix like `r`, `b`, `f`, `rb`): its end, if one starts.
fn string_at(src: &[u8], i: usize) -> Result<Option<usize>, String> {
    if i > 0 && (src[i - 1] == b'_' || src[i - 1].is_ascii_alphanumeric()) {
        return Ok(None);
    }
    let prefix = src[i..]
        .iter()
        .take_while(|b| b"rRbBuUfF".contains(b))
        .count();
    let q = at(src, i + prefix);
    if prefix > 2 || !(q == b'"' || q == b'\'') {
        return Ok(None);
    }
    let start = i + prefix;
    let triple = src[start..].starts_with(&[q, q, q]);
    let mut k = start + if triple { 3 } else { 1 };
    while k < src.len() {
        match src[k] {
            b'\\' => k += 2,
            b'\n' if !triple => return Err("a string that never ends".into()),
            b if b == q && (!triple || src[k..].starts_with(&[q, q, q])) => {
                return Ok(Some(k + if triple { 3 } else { 1 }));
            }
            _ => k += 1,
        }
    }
    Err("a string that never ends".into())
}
