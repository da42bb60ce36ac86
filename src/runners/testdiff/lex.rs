//! The token stream every reader works on, and the lexer of the brace languages (Rust, C and
//! C++, Go, JavaScript/TypeScript): comments dropped, string, character, raw-string, template
//! and regular-expression literals read whole, so a brace, `#[ignore]` or `t.Skip()` inside one
//! is never taken for code. [`Src`] then matches the brackets: a file whose brackets do not
//! balance, or whose literal or comment never ends, cannot be read.

use std::ops::Range;

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tk {
    Ident,
    Punct,
    /// A string, character, template or regular-expression literal (and a C preprocessor line).
    Str,
    Num,
}

/// One token: its kind, text and byte span (a synthetic token, like Python's indentation
/// braces, has an empty span and a text of its own).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tok<'a> {
    pub kind: Tk,
    pub text: &'a str,
    pub start: usize,
    pub end: usize,
}

/// The brace language being lexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    Rust,
    C,
    Go,
    Js,
}

/// Operators read as one token, longest first.
const OPS: [&str; 21] = [
    "===", "!==", "...", "==", "!=", "<=", ">=", "&&", "||", "::", "=>", "->", "..", "+=", "-=",
    "*=", "/=", "++", "--", ":=", "**",
];

/// Keywords after which a `/` starts a regular expression in JavaScript.
const BEFORE_REGEX: [&str; 13] = [
    "return",
    "typeof",
    "case",
    "do",
    "else",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "instanceof",
    "yield",
];

/// The tokens of `text` in the brace language `flavor`; `Err` names what never ends.
pub(crate) fn lex(text: &str, flavor: Flavor) -> Result<Vec<Tok<'_>>, String> {
    let src = text.as_bytes();
    let mut out: Vec<Tok> = Vec::new();
    let mut i = 0;
    while i < src.len() {
        let c = src[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'/' && at(src, i + 1) == b'/' {
            i = line_end(src, i);
            continue;
        }
        if c == b'/' && at(src, i + 1) == b'*' {
            i = block_comment_end(src, i, flavor == Flavor::Rust)
                .ok_or("a comment that never ends")?;
            continue;
        }
        let directive = flavor == Flavor::C && c == b'#' && line_starts(src, i);
        let (kind, end) = if directive {
            // One token, so a `#define X {` is never structure; `#if 0` stays visible.
            (Tk::Str, directive_end(src, i))
        } else if let Some(end) = raw_string_end(src, i, flavor) {
            (Tk::Str, end)
        } else if let Some(end) = quoted(src, i, flavor, &out)? {
            (Tk::Str, end)
        } else if c.is_ascii_digit() || (c == b'.' && at(src, i + 1).is_ascii_digit()) {
            (Tk::Num, number_end(src, i))
        } else if is_ident_byte(c) && !c.is_ascii_digit() {
            (Tk::Ident, ident_end(src, i))
        } else {
            let len = OPS
                .iter()
                .find(|op| src[i..].starts_with(op.as_bytes()))
                .map_or(1, |op| op.len());
            (Tk::Punct, i + len)
        };
        i = end;
        let text = text
            .get(start..end)
            .ok_or("a token that splits a character")?;
        out.push(Tok {
            kind,
            text,
            start,
            end,
        });
    }
    Ok(out)
}

/// The byte at `i`, 0 past the end.
pub(crate) fn at(src: &[u8], i: usize) -> u8 {
    src.get(i).copied().unwrap_or(0)
}

/// Whether `b` may be part of an identifier (`$` for JavaScript).
pub(crate) fn is_ident_byte(b: u8) -> bool {
    b == b'_' || b == b'$' || b.is_ascii_alphanumeric() || b >= 0x80
}

/// The end of the identifier at `i`.
pub(crate) fn ident_end(src: &[u8], mut i: usize) -> usize {
    while i < src.len() && is_ident_byte(src[i]) {
        i += 1;
    }
    i
}

/// The end of the number at `start` (exponent signs and suffixes included).
pub(crate) fn number_end(src: &[u8], start: usize) -> usize {
    let hex = matches!(src.get(start..start + 2), Some(b"0x" | b"0X"));
    let mut i = start;
    while i < src.len() {
        let b = src[i];
        let exp_sign =
            !hex && (b == b'+' || b == b'-') && i > start && matches!(src[i - 1], b'e' | b'E');
        if is_ident_byte(b) || (b == b'.' && at(src, i + 1) != b'.') || exp_sign {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// The end of the line at `i` (the newline not included).
fn line_end(src: &[u8], i: usize) -> usize {
    memchr::memchr(b'\n', &src[i..]).map_or(src.len(), |n| i + n)
}

/// Whether only blanks precede `i` on its line.
fn line_starts(src: &[u8], i: usize) -> bool {
    src[..i]
        .iter()
        .rev()
        .take_while(|&&b| b != b'\n')
        .all(|b| *b == b' ' || *b == b'\t')
}

/// The end of a C preprocessor line at `i`, backslash continuations included.
fn directive_end(src: &[u8], mut i: usize) -> usize {
    loop {
        let end = line_end(src, i);
        let continued = end > 0 && src[end - 1] == b'\\' || src[i..end].ends_with(b"\\\r");
        if !continued || end >= src.len() {
            return end;
        }
        i = end + 1;
    }
}

/// The end of a block comment at `i` (nested in Rust).
fn block_comment_end(src: &[u8], mut i: usize, nested: bool) -> Option<usize> {
    let mut depth = 0usize;
    while i + 1 < src.len() {
        match (src[i], src[i + 1]) {
            (b'/', b'*') if nested || depth == 0 => {
                depth += 1;
                i += 2;
            }
            (b'*', b'/') => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// The end of a Rust raw string (`r#"…"#`, `br"…"`) or a C++ raw string (`R"d(…)d"`) at `i`.
fn raw_string_end(src: &[u8], i: usize, flavor: Flavor) -> Option<usize> {
    if i > 0 && is_ident_byte(src[i - 1]) {
        return None;
    }
    let mut j = i;
    match flavor {
        Flavor::Rust => {
            j += usize::from(matches!(at(src, j), b'b' | b'c'));
            (at(src, j) == b'r').then_some(())?;
            j += 1;
            let hashes = src[j..].iter().take_while(|&&b| b == b'#').count();
            j += hashes;
            (at(src, j) == b'"').then_some(())?;
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            find_after(src, j + 1, &close)
        }
        Flavor::C => {
            j += [&b"u8R\""[..], b"uR\"", b"UR\"", b"LR\"", b"R\""]
                .iter()
                .find(|p| src[j..].starts_with(p))?
                .len();
            let delim_len = src[j..].iter().position(|&b| b == b'(')?;
            let mut close = vec![b')'];
            close.extend_from_slice(&src[j..j + delim_len]);
            close.push(b'"');
            find_after(src, j + delim_len + 1, &close)
        }
        Flavor::Go | Flavor::Js => None,
    }
}

/// The end of the first `needle` at or after `from`.
fn find_after(src: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    let rest = src.get(from..)?;
    let at = rest.windows(needle.len()).position(|w| w == needle)?;
    Some(from + at + needle.len())
}

/// A quoted literal at `i` (with its prefix): its end, `None` when there is none at `i`.
fn quoted(src: &[u8], i: usize, flavor: Flavor, prev: &[Tok]) -> Result<Option<usize>, String> {
    let c = src[i];
    let prefixed = |p: &[u8]| src[i..].starts_with(p) && (i == 0 || !is_ident_byte(src[i - 1]));
    let never = || "a literal that never ends".to_string();
    let end = match (flavor, c) {
        (_, b'"') => string_end(src, i, b'"').ok_or_else(never)?,
        (Flavor::Rust, b'b' | b'c') if prefixed(b"b\"") || prefixed(b"c\"") => {
            string_end(src, i + 1, b'"').ok_or_else(never)?
        }
        (Flavor::Rust, b'b') if prefixed(b"b'") => char_end(src, i + 1).ok_or_else(never)?,
        (Flavor::Rust, b'\'') => char_end(src, i).ok_or_else(never)?,
        (Flavor::C, b'L' | b'u' | b'U') if prefixed(b"L\"") || prefixed(b"u\"") => {
            string_end(src, i + 1, b'"').ok_or_else(never)?
        }
        (Flavor::C | Flavor::Go | Flavor::Js, b'\'') => {
            string_end(src, i, b'\'').ok_or_else(never)?
        }
        (Flavor::Go, b'`') => find_after(src, i + 1, b"`").ok_or_else(never)?,
        (Flavor::Js, b'`') => template_end(src, i).ok_or_else(never)?,
        (Flavor::Js, b'/') if regex_may_start(prev) && at(src, i + 1) != b'/' => {
            regex_end(src, i).ok_or_else(never)?
        }
        _ => return Ok(None),
    };
    Ok(Some(end))
}

/// The end of a string opened by `quote` at `i` (escapes honoured).
fn string_end(src: &[u8], mut i: usize, quote: u8) -> Option<usize> {
    i += 1;
    while i < src.len() {
        match src[i] {
            b'\\' => i += 2,
            b if b == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The end of a Rust character literal or lifetime at `i`.
fn char_end(src: &[u8], i: usize) -> Option<usize> {
    let rest = src.get(i + 1..)?;
    if rest.first() == Some(&b'\\') {
        let close = rest.iter().skip(2).position(|&b| b == b'\'')?;
        return Some(i + 3 + close + 1);
    }
    let len = match *rest.first()? {
        b if b < 0x80 => 1,
        b if b >= 0xf0 => 4,
        b if b >= 0xe0 => 3,
        _ => 2,
    };
    if rest.get(len) == Some(&b'\'') {
        return Some(i + 1 + len + 1);
    }
    Some(ident_end(src, i + 1)) // a lifetime
}

/// The end of a JavaScript template literal at `i`, `${…}` substitutions read as code.
fn template_end(src: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    while i < src.len() {
        match src[i] {
            b'\\' => i += 2,
            b'`' => return Some(i + 1),
            b'$' if at(src, i + 1) == b'{' => i = substitution_end(src, i + 2)?,
            _ => i += 1,
        }
    }
    None
}

/// The end of a template substitution whose body starts at `i` (after its `}`).
fn substitution_end(src: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    while i < src.len() {
        match src[i] {
            b'{' => depth += 1,
            b'}' if depth == 0 => return Some(i + 1),
            b'}' => depth -= 1,
            q @ (b'"' | b'\'') => {
                i = string_end(src, i, q)?;
                continue;
            }
            b'`' => {
                i = template_end(src, i)?;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Whether a `/` after the tokens `prev` starts a regular expression (not a division).
fn regex_may_start(prev: &[Tok]) -> bool {
    match prev.last() {
        None => true,
        Some(t) if t.kind == Tk::Punct => !matches!(t.text, ")" | "]" | "}"),
        Some(t) if t.kind == Tk::Ident => BEFORE_REGEX.contains(&t.text),
        Some(_) => false,
    }
}

/// The end of a regular-expression literal at `i` (its flags included).
fn regex_end(src: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    let mut class = false;
    while i < src.len() {
        match src[i] {
            b'\\' => i += 1,
            b'\n' => return None,
            b'[' => class = true,
            b']' => class = false,
            b'/' if !class => return Some(ident_end(src, i + 1)),
            _ => {}
        }
        i += 1;
    }
    None
}

/// Tokens with their brackets matched.
pub(crate) struct Src<'a> {
    pub text: &'a str,
    pub toks: Vec<Tok<'a>>,
    /// For an opening bracket, the index of its closing one; else `usize::MAX`.
    pub close: Vec<usize>,
    /// For a closing bracket, the index of its opening one; else `usize::MAX`.
    pub open: Vec<usize>,
}

impl<'a> Src<'a> {
    /// Matches the brackets of `toks`; `Err` when they do not balance.
    pub fn new(text: &'a str, toks: Vec<Tok<'a>>) -> Result<Src<'a>, String> {
        let mut close = vec![usize::MAX; toks.len()];
        let mut opener = vec![usize::MAX; toks.len()];
        let mut open: Vec<usize> = Vec::new();
        for (i, t) in toks.iter().enumerate() {
            if t.kind != Tk::Punct {
                continue;
            }
            match t.text {
                "(" | "[" | "{" => open.push(i),
                c @ (")" | "]" | "}") => {
                    let o = open.pop().ok_or_else(|| format!("an unmatched `{c}`"))?;
                    if !matches!((toks[o].text, c), ("(", ")") | ("[", "]") | ("{", "}")) {
                        return Err(format!("`{}` closed by `{c}`", toks[o].text));
                    }
                    close[o] = i;
                    opener[i] = o;
                }
                _ => {}
            }
        }
        match open.last() {
            Some(&o) => Err(format!("a `{}` that is never closed", toks[o].text)),
            None => Ok(Src {
                text,
                toks,
                close,
                open: opener,
            }),
        }
    }

    /// The text of token `i`, empty past the end.
    pub fn t(&self, i: usize) -> &'a str {
        self.toks.get(i).map_or("", |t| t.text)
    }

    /// Whether token `i` is the identifier or punctuation `s`.
    pub fn is(&self, i: usize, s: &str) -> bool {
        self.toks
            .get(i)
            .is_some_and(|t| t.kind != Tk::Str && t.text == s)
    }

    /// Whether token `i` is an identifier.
    pub fn ident(&self, i: usize) -> bool {
        self.toks.get(i).is_some_and(|t| t.kind == Tk::Ident)
    }

    /// The index of the bracket closing the one at `i` (`i` itself when it opens none).
    pub fn end_of(&self, i: usize) -> usize {
        match self.close.get(i) {
            Some(&c) if c != usize::MAX => c,
            _ => i,
        }
    }

    /// The index of the bracket opening the one closing at `i` (`i` itself when none).
    pub fn start_of(&self, i: usize) -> usize {
        match self.open.get(i) {
            Some(&o) if o != usize::MAX => o,
            _ => i,
        }
    }

    /// The innermost `{` that encloses token `i`.
    pub fn block_of(&self, i: usize) -> Option<usize> {
        let mut j = i.checked_sub(1)?;
        loop {
            match self.t(j) {
                "{" if self.toks[j].kind == Tk::Punct => return Some(j),
                ")" | "]" | "}" => j = self.start_of(j),
                _ => {}
            }
            j = j.checked_sub(1)?;
        }
    }

    /// The tokens of `r` joined by single spaces: the text with its whitespace folded.
    pub fn norm(&self, r: Range<usize>) -> String {
        self.toks[r]
            .iter()
            .map(|t| t.text)
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The source of `r` as a human reads it, whitespace folded, at most 100 characters.
    pub fn shown(&self, r: Range<usize>) -> String {
        let (Some(a), Some(b)) = (self.toks.get(r.start), self.toks.get(r.end.wrapping_sub(1)))
        else {
            return String::new();
        };
        let raw = self.text.get(a.start..b.end.max(a.start)).unwrap_or("");
        let folded = raw.split_whitespace().collect::<Vec<_>>().join(" ");
        match folded.char_indices().nth(100) {
            Some((at, _)) => format!("{}…", &folded[..at]),
            None => folded,
        }
    }

    /// The comma-separated elements inside the bracket at `open`.
    pub fn elements(&self, open: usize) -> Vec<Range<usize>> {
        let end = self.end_of(open);
        let mut out = Vec::new();
        let (mut i, mut from) = (open + 1, open + 1);
        while i < end {
            if self.is(i, ",") {
                out.push(from..i);
                from = i + 1;
            }
            i = self.end_of(i) + 1;
        }
        if from < end {
            out.push(from..end);
        }
        out
    }
}
