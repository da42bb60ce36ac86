//! A lexer for Rust source, just enough to find items (SPEC §26.4: the test modules of a source
//! file): tokens with their byte spans, comments dropped, and string, raw string, byte string,
//! character literals and lifetimes read whole, so a brace or `cfg(test)` inside them is never
//! taken for code; then brackets matched and brace depths counted.

/// One token: its kind and byte span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ident,
    Punct(u8),
    /// A string, character, byte or number literal, or a lifetime.
    Literal,
}

/// For each token, how many `{` enclose it.
pub fn brace_depths(tokens: &[Token]) -> Vec<usize> {
    let mut depth = 0usize;
    tokens
        .iter()
        .map(|t| match t.kind {
            Kind::Punct(b'{') => {
                depth += 1;
                depth - 1
            }
            Kind::Punct(b'}') => {
                depth = depth.saturating_sub(1);
                depth
            }
            _ => depth,
        })
        .collect()
}

/// For each `(`, `[` or `{` token, the index of the token that closes it; `None` when the
/// brackets do not balance.
pub fn matching(tokens: &[Token]) -> Option<Vec<Option<usize>>> {
    let mut close = vec![None; tokens.len()];
    let mut open: Vec<(usize, u8)> = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        match t.kind {
            Kind::Punct(c @ (b'(' | b'[' | b'{')) => open.push((i, c)),
            Kind::Punct(c @ (b')' | b']' | b'}')) => {
                let (at, o) = open.pop()?;
                if (o, c) != (b'(', b')') && (o, c) != (b'[', b']') && (o, c) != (b'{', b'}') {
                    return None;
                }
                close[at] = Some(i);
            }
            _ => {}
        }
    }
    open.is_empty().then_some(close)
}

/// The tokens of `src`, comments dropped; `None` for an unterminated comment or literal.
pub fn lex(src: &[u8]) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    let mut i = 0;
    let at = |k: usize| src.get(k).copied().unwrap_or(0);
    while i < src.len() {
        let c = src[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'/' && at(i + 1) == b'/' {
            while i < src.len() && src[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && at(i + 1) == b'*' {
            i = block_comment_end(src, i)?;
            continue;
        }
        let kind = if let Some(end) = raw_string_end(src, i) {
            i = end;
            Kind::Literal
        } else if c == b'"' || (c == b'b' && at(i + 1) == b'"') || (c == b'c' && at(i + 1) == b'"')
        {
            i = string_end(src, if c == b'"' { i } else { i + 1 })?;
            Kind::Literal
        } else if c == b'\'' || (c == b'b' && at(i + 1) == b'\'') {
            i = char_or_lifetime_end(src, if c == b'\'' { i } else { i + 1 })?;
            Kind::Literal
        } else if c.is_ascii_digit() {
            while i < src.len() && (src[i].is_ascii_alphanumeric() || src[i] == b'_') {
                i += 1;
            }
            Kind::Literal
        } else if c == b'_' || c.is_ascii_alphabetic() || c >= 0x80 {
            while i < src.len()
                && (src[i] == b'_' || src[i].is_ascii_alphanumeric() || src[i] >= 0x80)
            {
                i += 1;
            }
            Kind::Ident
        } else {
            i += 1;
            Kind::Punct(c)
        };
        out.push(Token {
            kind,
            start,
            end: i,
        });
    }
    Some(out)
}

/// The end of a (nested) block comment starting at `i`.
fn block_comment_end(src: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    while i + 1 < src.len() {
        match (src[i], src[i + 1]) {
            (b'/', b'*') => {
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

/// The end of a raw string (`r"…"`, `r#"…"#`, `br##"…"##`, `cr"…"`) starting at `i`, if one does.
fn raw_string_end(src: &[u8], i: usize) -> Option<usize> {
    let mut j = i;
    if matches!(src.get(j), Some(b'b' | b'c')) {
        j += 1;
    }
    if src.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = src[j..].iter().take_while(|&&b| b == b'#').count();
    j += hashes;
    if src.get(j) != Some(&b'"') {
        return None;
    }
    if i > 0 && (src[i - 1] == b'_' || src[i - 1].is_ascii_alphanumeric()) {
        return None; // part of an identifier
    }
    let close: Vec<u8> = std::iter::once(b'"')
        .chain(std::iter::repeat_n(b'#', hashes))
        .collect();
    let body = j + 1;
    let found = src[body..]
        .windows(close.len())
        .position(|w| w == close.as_slice())?;
    Some(body + found + close.len())
}

/// The end of a string literal whose `"` is at `i` (escapes honoured).
fn string_end(src: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    while i < src.len() {
        match src[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The end of a character literal (`'a'`, `'\n'`, `'\u{1F600}'`) or a lifetime (`'a`) at `i`.
fn char_or_lifetime_end(src: &[u8], i: usize) -> Option<usize> {
    let rest = &src[i + 1..];
    if rest.first() == Some(&b'\\') {
        let close = rest.iter().skip(1).position(|&b| b == b'\'')?;
        return Some(i + 1 + 1 + close + 1);
    }
    // One character (possibly several bytes) then `'`: a char literal; else a lifetime.
    let len = match rest.first()? {
        b if *b < 0x80 => 1,
        b if *b >= 0xf0 => 4,
        b if *b >= 0xe0 => 3,
        _ => 2,
    };
    if rest.get(len) == Some(&b'\'') {
        return Some(i + 1 + len + 1);
    }
    let ident = rest
        .iter()
        .take_while(|&&b| b == b'_' || b.is_ascii_alphanumeric() || b >= 0x80);
    Some(i + 1 + ident.count())
}
