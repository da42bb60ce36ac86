//! The CLOSE-OK line (SPEC §3): recognising lines meant as close lines and parsing them.
//!
//! Parsing walks the line field by field so the refusal names the exact fault, and a
//! look-alike character (an en dash in the marker, a bullet between fields) by code point.
//! Trailing spaces and tabs are ignored; leading whitespace is a fault in a document.

use super::CloseLine;
use super::text::{describe, is_dash_like, is_dot_like, slug_fault, snippet};

const MARKER: &str = "CLOSE-OK";
const SEP: &str = " \u{00B7} ";

/// Whether `line` is meant as a close line: after trimming it starts with `CLOSE` and a
/// dash-like character, or it contains ` · commit `.
pub fn is_candidate(line: &str) -> bool {
    starts_with_marker(line) || line.contains(" \u{00B7} commit ")
}

/// After trimming, `line` starts with `CLOSE` and a dash-like character.
pub fn starts_with_marker(line: &str) -> bool {
    let rest = line.trim_start().strip_prefix("CLOSE");
    rest.and_then(|r| r.chars().next())
        .is_some_and(is_dash_like)
}

/// Parse a candidate line; `Err` carries the exact fault for `doc-close-malformed`.
pub fn parse(line: &str, line_no: usize) -> Result<CloseLine, String> {
    let line = line.trim_end_matches([' ', '\t']);
    if line.starts_with(char::is_whitespace) {
        return Err(
            "expected the close line to start at column 0, found leading whitespace".into(),
        );
    }
    let mut c = Cursor { rest: line };
    c.marker()?;
    c.sep("the marker")?;
    let slug = c.token();
    if let Some(fault) = slug_fault(slug) {
        return Err(format!("in the slug field: {fault}"));
    }
    c.sep("the slug")?;
    c.label("commit")?;
    let commit = c.token();
    sha_fault(commit).map_or(Ok(()), Err)?;
    c.sep("the sha")?;
    c.label("branch")?;
    let branch = c.token();
    branch_fault(branch).map_or(Ok(()), Err)?;
    c.sep("the branch")?;
    c.label("worktree")?;
    let worktree = c.rest;
    if !worktree.starts_with('/') {
        return Err(format!(
            "expected an absolute worktree path, found `{}`",
            snippet(worktree)
        ));
    }
    Ok(CloseLine {
        slug: slug.to_string(),
        commit: commit.to_string(),
        branch: branch.to_string(),
        worktree: worktree.to_string(),
        line: line_no,
    })
}

/// The close line of an agent's final message (`--message FILE`): the last candidate line,
/// with surrounding whitespace ignored (a message may indent it as a code block).
pub fn find_in_message(text: &str) -> Option<Result<CloseLine, String>> {
    let lines = text.split('\n').enumerate();
    let (idx, line) = lines.filter(|(_, l)| is_candidate(l)).last()?;
    Some(parse(line.trim(), idx + 1))
}

/// A position in the line being parsed.
struct Cursor<'a> {
    rest: &'a str,
}

impl<'a> Cursor<'a> {
    /// The text up to the next whitespace, consumed.
    fn token(&mut self) -> &'a str {
        let end = self
            .rest
            .find(char::is_whitespace)
            .unwrap_or(self.rest.len());
        let (tok, rest) = self.rest.split_at(end);
        self.rest = rest;
        tok
    }

    fn marker(&mut self) -> Result<(), String> {
        let end = self
            .rest
            .find(|c: char| c.is_whitespace() || c == '\u{00B7}');
        let (tok, rest) = self.rest.split_at(end.unwrap_or(self.rest.len()));
        if tok == MARKER {
            self.rest = rest;
            return Ok(());
        }
        let dash = tok.strip_prefix("CLOSE").and_then(|r| r.chars().next());
        match dash {
            Some(d) if is_dash_like(d) && d != '-' => {
                Err(format!("{} in the marker; write ASCII '-'", describe(d)))
            }
            _ => Err(format!(
                "expected the marker `{MARKER}` at the start of the line, found `{}`",
                snippet(tok)
            )),
        }
    }

    /// Consume ` · ` or name what stands in its place.
    fn sep(&mut self, after: &str) -> Result<(), String> {
        match self.rest.strip_prefix(SEP) {
            Some(rest) => {
                self.rest = rest;
                Ok(())
            }
            None => Err(sep_fault(self.rest, after)),
        }
    }

    /// Consume `label` and the one space after it.
    fn label(&mut self, label: &str) -> Result<(), String> {
        let tok = self.token();
        if tok != label {
            return Err(label_fault(tok, label));
        }
        match self.rest.strip_prefix(' ') {
            Some(rest) if !rest.starts_with(char::is_whitespace) && !rest.is_empty() => {
                self.rest = rest;
                Ok(())
            }
            _ => Err(format!(
                "expected one space and a value after `{label}`, found `{}`",
                snippet(self.rest)
            )),
        }
    }
}

fn sep_fault(rest: &str, after: &str) -> String {
    let expected = "write ` · ` (space, U+00B7 MIDDLE DOT, space)";
    let mut chars = rest.chars();
    let (a, b, c) = (chars.next(), chars.next(), chars.next());
    let odd = |x: char| is_dot_like(x) || is_dash_like(x) || "|/,;*+".contains(x);
    match (a, b, c) {
        (None, _, _) => format!("expected ` · ` after {after}, found the end of the line"),
        (Some(a), _, _) if a.is_whitespace() && a != ' ' => {
            format!(
                "{} after {after}; {expected} with ASCII spaces",
                describe(a)
            )
        }
        (Some('\u{00B7}'), _, _) => {
            format!("no space before U+00B7 MIDDLE DOT after {after}; {expected}")
        }
        (Some(' '), Some('\u{00B7}'), Some(c)) if c.is_whitespace() => {
            format!(
                "{} after U+00B7 MIDDLE DOT after {after}; {expected} with ASCII spaces",
                describe(c)
            )
        }
        (Some(' '), Some('\u{00B7}'), _) => {
            format!("no space after U+00B7 MIDDLE DOT after {after}; {expected}")
        }
        (Some(' '), Some(b), _) if odd(b) => {
            format!("{} as the separator after {after}; {expected}", describe(b))
        }
        (Some(a), _, _) if odd(a) => {
            format!("{} as the separator after {after}; {expected}", describe(a))
        }
        _ => format!(
            "expected ` · ` after {after}, found `{}`; {expected}",
            snippet(rest)
        ),
    }
}

fn label_fault(tok: &str, label: &str) -> String {
    let order = ["commit", "branch", "worktree"];
    if order.contains(&tok) {
        return format!(
            "expected the label `{label}`, found `{tok}`; the labels are commit, branch, worktree in this order"
        );
    }
    if tok.eq_ignore_ascii_case(label) {
        return format!("expected the label `{label}` in lowercase, found `{tok}`");
    }
    format!("expected the label `{label}`, found `{}`", snippet(tok))
}

/// Why `sha` is not 7–64 lowercase hex digits, if it is not.
fn sha_fault(sha: &str) -> Option<String> {
    let hex = sha
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if hex && (7..=64).contains(&sha.len()) {
        return None;
    }
    let upper = sha.bytes().all(|b| b.is_ascii_hexdigit()) && !hex;
    let case = if upper {
        " (write hex digits in lowercase)"
    } else {
        ""
    };
    Some(format!(
        "expected a commit sha of 7–64 lowercase hex digits, found `{}`{case}",
        snippet(sha)
    ))
}

/// Why `name` is not a valid branch name as `git check-ref-format --branch` judges, if not.
pub fn branch_fault(name: &str) -> Option<String> {
    let fault = branch_rule(name)?;
    Some(format!(
        "branch `{}` is not a valid git branch name: {fault}",
        snippet(name)
    ))
}

fn branch_rule(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("it is empty".into());
    }
    if let Some(c) = name
        .chars()
        .find(|c| c.is_ascii_control() || " ~^:?*[\\".contains(*c))
    {
        return Some(format!("it contains {}", describe(c)));
    }
    // `@` alone is a valid branch name (refs/heads/@): git check-ref-format --branch @ accepts it.
    let rules: [(bool, &str); 8] = [
        (name == "HEAD", "it is `HEAD`"),
        (name.starts_with('-'), "it starts with '-'"),
        (name.contains(".."), "it contains `..`"),
        (name.contains("@{"), "it contains `@{`"),
        (name.contains("//"), "it contains `//`"),
        (
            name.starts_with('/') || name.ends_with('/'),
            "it starts or ends with '/'",
        ),
        (name.ends_with('.'), "it ends with '.'"),
        (
            name.split('/')
                .any(|c| c.starts_with('.') || c.ends_with(".lock")),
            "a component starts with '.' or ends with `.lock`",
        ),
    ];
    rules
        .iter()
        .find(|(broken, _)| *broken)
        .map(|(_, why)| why.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "CLOSE-OK · s · commit 4b19c7ae0f2 · branch feature/x · worktree /srv/w t";

    #[test]
    fn parses_the_canonical_line() {
        let c = parse(GOOD, 9).expect("valid");
        assert_eq!(
            (c.slug.as_str(), c.commit.as_str(), c.branch.as_str()),
            ("s", "4b19c7ae0f2", "feature/x")
        );
        assert_eq!((c.worktree.as_str(), c.line), ("/srv/w t", 9));
    }

    #[test]
    fn candidates() {
        assert!(is_candidate("  CLOSE\u{2013}OK · x"));
        assert!(is_candidate("done · commit abc"));
        assert!(!is_candidate("CLOSED-WITHOUT-MERGE"));
        assert!(!is_candidate("CLOSE OK"));
    }

    #[test]
    fn faults_name_the_look_alike() {
        let en = GOOD.replacen('-', "\u{2013}", 1);
        assert_eq!(
            parse(&en, 1).unwrap_err(),
            "U+2013 EN DASH in the marker; write ASCII '-'"
        );
        let bullet = GOOD.replacen('\u{00B7}', "\u{2022}", 1);
        assert!(
            parse(&bullet, 1)
                .unwrap_err()
                .starts_with("U+2022 BULLET as the separator after the marker")
        );
        let nbsp = GOOD.replacen(" \u{00B7} commit", "\u{00A0}\u{00B7} commit", 1);
        assert!(
            parse(&nbsp, 1)
                .unwrap_err()
                .starts_with("U+00A0 NO-BREAK SPACE after the slug")
        );
        let pipe = GOOD.replace(" \u{00B7} branch", " | branch");
        assert!(
            parse(&pipe, 1)
                .unwrap_err()
                .starts_with("'|' as the separator after the sha")
        );
        let tight = GOOD.replacen(" \u{00B7} s", " \u{00B7}s", 1);
        assert!(
            parse(&tight, 1)
                .unwrap_err()
                .starts_with("no space after U+00B7 MIDDLE DOT")
        );
    }

    #[test]
    fn faults_in_fields() {
        let cases = [
            (
                GOOD.replace("commit 4b19c7ae0f2", "commit 4B19C7AE0F2"),
                "lowercase",
            ),
            (GOOD.replace("commit 4b19c7ae0f2", "commit 4b19"), "7–64"),
            (
                GOOD.replace("commit 4b", "sha 4b"),
                "expected the label `commit`, found `sha`",
            ),
            (GOOD.replace("feature/x", "feature..x"), "`..`"),
            (GOOD.replace("/srv/w t", "srv/w"), "absolute"),
            (
                GOOD.replace("branch feature/x · worktree", "worktree feature/x · branch"),
                "in this order",
            ),
            (format!(" {GOOD}"), "column 0"),
            (GOOD.replace("CLOSE-OK", "CLOSE-Ok"), "`CLOSE-Ok`"),
        ];
        for (line, want) in cases {
            let err = parse(&line, 1).unwrap_err();
            assert!(err.contains(want), "{line}: {err}");
        }
    }

    /// Branch names and whether they are valid: git's own answer (`git check-ref-format --branch`,
    /// compared below), the edges of each rule.
    const NAMES: [(&str, bool); 37] = [
        ("main", true),
        ("feature/invoice-export-csv", true),
        ("a.b", true),
        ("x@y", true),
        ("ü", true),
        ("@", true),
        ("@a", true),
        ("a@", true),
        ("a/b/c", true),
        ("a-", true),
        ("a.lock/b", false),
        ("head", true),
        ("refs/heads/x", true),
        ("a/HEAD", true),
        ("", false),
        ("-x", false),
        ("-", false),
        ("a/-b", true),
        ("a..b", false),
        ("a b", false),
        ("a~1", false),
        ("a^", false),
        ("a:b", false),
        ("a?", false),
        ("a*", false),
        ("a[", false),
        ("a\\b", false),
        ("x.lock", false),
        ("a/x.lock/b", false),
        (".a", false),
        ("a/.b", false),
        ("a@{1}", false),
        ("a/", false),
        ("a.", false),
        ("a//b", false),
        ("/a", false),
        ("HEAD", false),
    ];

    #[test]
    fn branch_rules() {
        for (name, valid) in NAMES.into_iter().chain([("a\u{7f}", false)]) {
            assert_eq!(branch_rule(name).is_none(), valid, "{name:?}");
        }
    }

    /// SPEC §3: a valid branch name is what `git check-ref-format --branch` accepts; the rules
    /// agree with git itself on every name of [`NAMES`].
    #[test]
    fn branch_rules_agree_with_git_check_ref_format() {
        let dir = tempfile::tempdir().unwrap();
        for (name, valid) in NAMES {
            let git = crate::repo::git_cli::Git::dir(dir.path())
                .run(&["check-ref-format", "--branch", name])
                .unwrap();
            assert_eq!(git.status.success(), valid, "git on {name:?}");
        }
    }
}
