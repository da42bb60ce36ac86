//! The token stream every reader works on ([`Tok`]) and its brackets matched ([`Src`]): a file
//! whose brackets do not balance cannot be read. [`Src`] also folds a span of tokens into the
//! texts the classifier compares (whitespace folded) and shows (the source, folded).

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
