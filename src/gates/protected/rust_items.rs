//! The unit tests inside a Rust source file (SPEC §26.4): the `#[cfg(test)]` module items
//! (`#[cfg(test)] mod tests;`, or inline `#[cfg(test)] mod x { … }`) and the `mod NAME;`
//! declarations whose file is a test path, found by a small lexer that skips comments, strings,
//! raw strings and character literals, so a brace or `cfg(test)` inside them is never read.
//!
//! What the protected gate compares (a removed module is a deletion on `tests`, a changed one a
//! modification) and what the overlays splice: the commit's file with its test modules replaced
//! by the base's (and the reverse), so the base's unit tests run on the agent's code.

use super::rust_lex::{Kind, Token, brace_depths, lex, matching};

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
    read(src, is_test_decl).map(|(regions, _)| regions)
}

/// [`regions`], and whether the file as a whole is test code ([`whole_file_is_test`]), from
/// one reading.
pub fn read(
    src: &[u8],
    is_test_decl: &dyn Fn(&str, Option<&str>) -> bool,
) -> Option<(Vec<Region>, bool)> {
    let tokens = lex(src)?;
    let close = matching(&tokens)?;
    let scan = Scan {
        src,
        depth: brace_depths(&tokens),
        tokens: &tokens,
        close: &close,
    };
    let mut out = Vec::new();
    let mut whole = false;
    // The pending item's outer attributes (token ranges) and where the item starts.
    let mut attrs: Vec<(usize, usize)> = Vec::new();
    let mut item_start: Option<usize> = None;
    let mut i = 0;
    while i < tokens.len() {
        if let Some((end, inner)) = scan.attribute(i) {
            match inner {
                true => attrs.clear(),
                false => attrs.push((i, end)),
            }
            whole |= inner && scan.depth[i] == 0 && scan.inner_cfg_test(i, end);
            item_start = if inner { None } else { item_start.or(Some(i)) };
            i = end + 1;
            continue;
        }
        if let Some(end) = scan.visibility(i) {
            item_start = item_start.or(Some(i));
            i = end + 1;
            continue;
        }
        let start = item_start.take().unwrap_or(i);
        let pending = std::mem::take(&mut attrs);
        i = match scan.module(i, start, &pending, is_test_decl) {
            Some(Module::Test(region, next)) => {
                out.push(region);
                next
            }
            Some(Module::Other(next)) => next,
            None => i + 1,
        };
    }
    Some((out, whole))
}

/// The tokens of one source file, their brackets matched and their brace depths.
struct Scan<'s> {
    src: &'s [u8],
    tokens: &'s [Token],
    close: &'s [Option<usize>],
    depth: Vec<usize>,
}

/// A `mod` item: a test item and the token after it, or another module and where to go on
/// (into an inline module's body, past a declaration).
enum Module {
    Test(Region, usize),
    Other(usize),
}

impl Scan<'_> {
    fn text(&self, i: usize) -> &[u8] {
        &self.src[self.tokens[i].start..self.tokens[i].end]
    }

    fn is(&self, i: usize, kind: Kind) -> bool {
        self.tokens.get(i).is_some_and(|t| t.kind == kind)
    }

    /// An attribute at `i` (`#[…]`, or inner `#![…]`): its last token and whether inner.
    fn attribute(&self, i: usize) -> Option<(usize, bool)> {
        if !self.is(i, Kind::Punct(b'#')) {
            return None;
        }
        let inner = self.is(i + 1, Kind::Punct(b'!'));
        let open = i + 1 + usize::from(inner);
        if !self.is(open, Kind::Punct(b'[')) {
            return None;
        }
        Some((self.close[open].expect("a `[` is matched"), inner))
    }

    /// Whether the inner attribute from `i` (`#`) to `end` (`]`) is a `cfg` holding `test`.
    fn inner_cfg_test(&self, i: usize, end: usize) -> bool {
        let attr: Vec<Token> = std::iter::once(self.tokens[i])
            .chain(self.tokens[i + 2..=end].iter().copied())
            .collect();
        is_cfg_test(self.src, &attr)
    }

    /// `pub` or `pub(…)` at `i`: its last token.
    fn visibility(&self, i: usize) -> Option<usize> {
        if !self.is(i, Kind::Ident) || self.text(i) != b"pub" {
            return None;
        }
        match self.is(i + 1, Kind::Punct(b'(')) {
            true => Some(self.close[i + 1].expect("a `(` is matched")),
            false => Some(i),
        }
    }

    /// `mod NAME;` or `mod NAME { … }` at `i`, with its attributes `attrs` and visibility from
    /// `start` on.
    fn module(
        &self,
        i: usize,
        start: usize,
        attrs: &[(usize, usize)],
        is_test_decl: &dyn Fn(&str, Option<&str>) -> bool,
    ) -> Option<Module> {
        let is_mod = self.is(i, Kind::Ident) && self.text(i) == b"mod";
        if !is_mod || !self.is(i + 1, Kind::Ident) {
            return None;
        }
        let inline = self.is(i + 2, Kind::Punct(b'{'));
        if !inline && !self.is(i + 2, Kind::Punct(b';')) {
            return None;
        }
        let name = String::from_utf8_lossy(self.text(i + 1)).into_owned();
        let end = match inline {
            true => self.close[i + 2].expect("a `{` is matched"),
            false => i + 2,
        };
        let attr = |&(a, b): &(usize, usize)| &self.tokens[a..=b];
        let path_attr = attrs.iter().find_map(|r| path_value(self.src, attr(r)));
        let cfg_test = attrs.iter().any(|r| is_cfg_test(self.src, attr(r)));
        let test = cfg_test || (!inline && is_test_decl(&name, path_attr.as_deref()));
        if !test {
            return Some(Module::Other(if inline { i + 3 } else { end + 1 }));
        }
        let region = Region {
            name,
            start: self.tokens[start].start,
            end: self.tokens[end].end - 1,
            inline,
            depth: self.depth[i],
            path_attr,
        };
        Some(Module::Test(region, end + 1))
    }
}

/// Whether the file as a whole is test code: an inner `#![cfg(…test…)]` at its top level.
/// `None` when the file cannot be read as Rust tokens.
pub fn whole_file_is_test(src: &[u8]) -> Option<bool> {
    read(src, &|_, _| false).map(|(_, whole)| whole)
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
        let src = "pub(crate) mod tests;\nmod util;\n";
        let decl = |name: &str, _: Option<&str>| name == "tests";
        let found = regions(src.as_bytes(), &decl).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].text(src.as_bytes()), b"pub(crate) mod tests;");
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
