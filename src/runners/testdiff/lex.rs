//! The lexer of the brace languages (Rust, C and C++, Go, JavaScript/TypeScript): comments
//! dropped, string, character, raw-string, template and regular-expression literals (and C's
//! preprocessor lines) read whole, so a brace, `#[ignore]` or `t.Skip()` inside one is never
//! taken for code. A literal or comment that never ends is an `Err`: the file cannot be read.

use super::tokens::{Tk, Tok};

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
