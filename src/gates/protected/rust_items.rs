//! The unit tests inside a Rust source file (SPEC §26.4): the `#[cfg(test)]` module items
//! (`#[cfg(test)] mod tests;`, or inline `#[cfg(test)] mod x { … }`) and the `mod NAME;`
//! declarations whose file is a test path, found by a small lexer that skips comments, strings,
//! raw strings and character literals, so a brace or `cfg(test)` inside them is never read.
//!
//! What the protected gate compares (a removed module is a deletion on `tests`, a changed one a
//! modification) and what the overlays splice: the commit's file with its test modules replaced
//! by the base's (and the reverse), so the base's unit tests run on the agent's code.

/// One token: its kind and byte span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Token {
    kind: Kind,
    start: usize,
    end: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ident,
    Punct(u8),
    /// A string, character, byte or number literal, or a lifetime.
    Literal,
}

/// A test item of a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// The module's name (`tests`).
    pub name: String,
    /// From its first attribute to its `;` or closing `}`, inclusive, as byte offsets.
    pub start: usize,
    pub end: usize,
    /// `mod x { … }` rather than `mod x;`.
    pub inline: bool,
    /// How many braces enclose it (0: at the top of the file).
    pub depth: usize,
    /// `#[path = "…"]`, when given.
    pub path_attr: Option<String>,
}

impl Region {
    /// Its text in `src`.
    pub fn text<'s>(&self, src: &'s [u8]) -> &'s [u8] {
        &src[self.start..=self.end]
    }
}

/// The test items of `src` (a Rust source file): modules whose attributes carry a `cfg` that
/// holds `test` outside a `not(…)`, and `mod NAME;` declarations for which `is_test_decl` says
/// yes (given the name and the `#[path]` value, it resolves the file and asks the surfaces).
/// `None` when the file cannot be read as Rust tokens (an unterminated comment, string or
/// bracket): nothing can then be said about its tests.
pub fn regions(
    src: &[u8],
    is_test_decl: &dyn Fn(&str, Option<&str>) -> bool,
) -> Option<Vec<Region>> {
    let tokens = lex(src)?;
    let close = matching(&tokens)?;
    let text = |t: &Token| &src[t.start..t.end];
    let depth = brace_depths(&tokens);
    let mut out = Vec::new();
    let mut attrs: Vec<(usize, usize)> = Vec::new(); // token ranges of pending outer attributes
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i];
        let next = |k: usize| tokens.get(i + k).copied();
        if t.kind == Kind::Punct(b'#') {
            let inner = next(1).is_some_and(|n| n.kind == Kind::Punct(b'!'));
            let open = if inner { 2 } else { 1 };
            if next(open).is_some_and(|n| n.kind == Kind::Punct(b'[')) {
                let end = close[i + open].expect("a `[` is matched");
                if !inner {
                    attrs.push((i, end));
                } else {
                    attrs.clear();
                }
                i = end + 1;
                continue;
            }
        }
        if t.kind == Kind::Ident && text(&t) == b"pub" {
            i += 1;
            if tokens.get(i).is_some_and(|n| n.kind == Kind::Punct(b'(')) {
                i = close[i].expect("a `(` is matched") + 1;
            }
            continue;
        }
        let is_mod = t.kind == Kind::Ident && text(&t) == b"mod";
        let name = next(1).filter(|n| n.kind == Kind::Ident);
        let after = next(2).map(|n| n.kind);
        if let (true, Some(name), Some(Kind::Punct(p @ (b';' | b'{')))) = (is_mod, name, after) {
            let name = String::from_utf8_lossy(text(&name)).into_owned();
            let inline = p == b'{';
            let end_tok = if inline {
                close[i + 2].expect("a `{` is matched")
            } else {
                i + 2
            };
            let path_attr = attrs
                .iter()
                .find_map(|&(a, b)| path_value(src, &tokens[a..=b]));
            let cfg_test = attrs.iter().any(|&(a, b)| is_cfg_test(src, &tokens[a..=b]));
            let test = cfg_test || (!inline && is_test_decl(&name, path_attr.as_deref()));
            let start = attrs.first().map_or(t.start, |&(a, _)| tokens[a].start);
            attrs.clear();
            if test {
                out.push(Region {
                    name,
                    start,
                    end: tokens[end_tok].end - 1,
                    inline,
                    depth: depth[i],
                    path_attr,
                });
                i = end_tok + 1;
            } else if inline {
                i += 3;
            } else {
                i = end_tok + 1;
            }
            continue;
        }
        attrs.clear();
        i += 1;
    }
    Some(out)
}

/// Whether the file as a whole is test code: an inner `#![cfg(…test…)]` at its top level.
/// `None` when the file cannot be read as Rust tokens.
pub fn whole_file_is_test(src: &[u8]) -> Option<bool> {
    let tokens = lex(src)?;
    let close = matching(&tokens)?;
    let depth = brace_depths(&tokens);
    let inner = |i: usize| {
        tokens[i].kind == Kind::Punct(b'#')
            && tokens
                .get(i + 1)
                .is_some_and(|t| t.kind == Kind::Punct(b'!'))
            && tokens
                .get(i + 2)
                .is_some_and(|t| t.kind == Kind::Punct(b'['))
    };
    Some((0..tokens.len()).any(|i| {
        depth[i] == 0
            && inner(i)
            && close[i + 2].is_some_and(|end| {
                let attr: Vec<Token> = std::iter::once(tokens[i])
                    .chain(tokens[i + 2..=end].iter().copied())
                    .collect();
                is_cfg_test(src, &attr)
            })
    }))
}

/// For each token, how many `{` enclose it.
fn brace_depths(tokens: &[Token]) -> Vec<usize> {
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

/// Whether an attribute (`#`, `[`, …, `]`) is `cfg(…)` holding `test` outside a `not(…)`.
fn is_cfg_test(src: &[u8], attr: &[Token]) -> bool {
    let text = |t: &Token| &src[t.start..t.end];
    let body = &attr[2..attr.len() - 1];
    if body.first().is_none_or(|t| text(t) != b"cfg") {
        return false;
    }
    // The names of the calls enclosing each token (`not`, `all`, `any`).
    let mut calls: Vec<&[u8]> = Vec::new();
    let mut last_ident: &[u8] = b"";
    for t in &body[1..] {
        match t.kind {
            Kind::Punct(b'(') => calls.push(last_ident),
            Kind::Punct(b')') => {
                calls.pop();
            }
            Kind::Ident => {
                last_ident = text(t);
                if text(t) == b"test" && !calls.contains(&&b"not"[..]) {
                    return true;
                }
            }
            _ => last_ident = b"",
        }
    }
    false
}

/// The value of a `#[path = "…"]` attribute.
fn path_value(src: &[u8], attr: &[Token]) -> Option<String> {
    let text = |t: &Token| &src[t.start..t.end];
    let body = &attr[2..attr.len() - 1];
    match body {
        [name, eq, value] if text(name) == b"path" && eq.kind == Kind::Punct(b'=') => {
            let lit = std::str::from_utf8(text(value)).ok()?;
            Some(lit.strip_prefix('"')?.strip_suffix('"')?.to_string())
        }
        _ => None,
    }
}

/// For each `(`, `[` or `{` token, the index of the token that closes it; `None` when the
/// brackets do not balance.
fn matching(tokens: &[Token]) -> Option<Vec<Option<usize>>> {
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
fn lex(src: &[u8]) -> Option<Vec<Token>> {
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

/// `onto` (a source file) with its top-level test items replaced by `from`'s: each of `onto`'s
/// removed, `from`'s appended at the end. `None` when either side cannot be read or holds a test
/// item inside another module (it cannot be moved without changing what `super` names).
pub fn splice(
    onto: &[u8],
    from: &[u8],
    is_test_decl: &dyn Fn(&str, Option<&str>) -> bool,
) -> Option<Vec<u8>> {
    let ours = regions(onto, is_test_decl)?;
    let theirs = regions(from, is_test_decl)?;
    if ours.iter().chain(&theirs).any(|r| r.depth > 0) {
        return None;
    }
    let mut out = Vec::with_capacity(onto.len() + from.len());
    let mut at = 0;
    for r in &ours {
        out.extend_from_slice(&onto[at..r.start]);
        at = r.end + 1;
    }
    out.extend_from_slice(&onto[at..]);
    for r in &theirs {
        if !out.ends_with(b"\n") {
            out.push(b'\n');
        }
        out.extend_from_slice(r.text(from));
        out.push(b'\n');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_decl(_: &str, _: Option<&str>) -> bool {
        false
    }

    fn names(src: &str) -> Vec<(String, bool, usize)> {
        regions(src.as_bytes(), &no_decl)
            .unwrap()
            .into_iter()
            .map(|r| (r.name, r.inline, r.depth))
            .collect()
    }

    #[test]
    fn test_modules_are_found_past_comments_strings_and_lifetimes() {
        let src = r##"
#![cfg_attr(docsrs, feature(doc_cfg))]
// #[cfg(test)] mod commented;
/* #[cfg(test)] mod /* nested */ block; */
const S: &str = "#[cfg(test)] mod in_string { }";
const R: &str = r#"}"#;
fn f<'a>(x: &'a str) -> char { let _ = '{'; '}' }
#[cfg(test)]
mod tests;
#[cfg(all(test, feature = "x"))]
#[path = "t/extra.rs"]
pub(crate) mod extra;
#[cfg(not(test))]
mod production;
#[cfg(test)]
mod inline {
    use super::*;
    #[test]
    fn t() { assert_eq!(f("}"), '}'); }
}
mod outer {
    #[cfg(test)]
    mod deep { fn x() {} }
}
"##;
        assert_eq!(
            names(src),
            [
                ("tests".to_string(), false, 0),
                ("extra".to_string(), false, 0),
                ("inline".to_string(), true, 0),
                ("deep".to_string(), true, 1),
            ]
        );
        let found = regions(src.as_bytes(), &no_decl).unwrap();
        assert_eq!(found[1].path_attr.as_deref(), Some("t/extra.rs"));
        assert!(String::from_utf8_lossy(found[2].text(src.as_bytes())).ends_with("'}'); }\n}"));
    }

    #[test]
    fn an_inner_cfg_test_makes_the_whole_file_test_code() {
        let yes = "//! helpers\n#![cfg(test)]\nuse super::*;\n";
        assert_eq!(whole_file_is_test(yes.as_bytes()), Some(true));
        let no = "#![cfg(not(test))]\nfn f() { #![cfg(test)] }\n";
        assert_eq!(whole_file_is_test(no.as_bytes()), Some(false));
    }

    #[test]
    fn a_declaration_of_a_test_file_counts_without_cfg() {
        let src = "mod tests;\nmod util;\n";
        let decl = |name: &str, _: Option<&str>| name == "tests";
        let found = regions(src.as_bytes(), &decl).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].text(src.as_bytes()), b"mod tests;");
    }

    #[test]
    fn unterminated_input_reads_as_nothing_known() {
        for src in [
            "fn f() {",
            "/* open",
            "const S: &str = \"open;",
            "fn f() { ) }",
        ] {
            assert_eq!(regions(src.as_bytes(), &no_decl), None, "{src}");
        }
    }

    #[test]
    fn splice_moves_the_base_tests_onto_the_commits_code() {
        // termtree: the commit moved its inline tests out to `src/tests.rs`.
        let base = "pub fn a() -> u8 { 1 }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() { assert_eq!(super::a(), 1); }\n}\n";
        let commit = "#[cfg(test)]\nmod tests;\n\npub fn a() -> u8 { 2 }\n";
        let spliced = splice(commit.as_bytes(), base.as_bytes(), &no_decl).unwrap();
        let spliced = String::from_utf8(spliced).unwrap();
        assert!(spliced.contains("pub fn a() -> u8 { 2 }"), "{spliced}");
        assert!(spliced.contains("assert_eq!(super::a(), 1)"), "{spliced}");
        assert!(!spliced.contains("mod tests;"), "{spliced}");
        let back = splice(base.as_bytes(), commit.as_bytes(), &no_decl).unwrap();
        let back = String::from_utf8(back).unwrap();
        assert!(
            back.contains("pub fn a() -> u8 { 1 }") && back.contains("mod tests;"),
            "{back}"
        );
        let nested = "mod outer { #[cfg(test)] mod t {} }\n";
        assert_eq!(splice(nested.as_bytes(), base.as_bytes(), &no_decl), None);
    }
}
