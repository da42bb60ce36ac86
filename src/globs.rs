//! Glob sets for protected surfaces, agent branches and contract scopes, with `*` never crossing
//! `/` (globset's `literal_separator`).
//!
//! Most globs here are made of literal text, `*` and whole-segment `**` (`**/tests/**`,
//! `**/*_test.*`, `.github/workflows/**`, `agent/*`). Compiling those into regexes cost half a
//! millisecond per run, a tenth of a whole `check`; they are matched segment by segment instead,
//! with exactly globset's semantics (a property test holds the two together). Any other glob
//! (`?`, `[…]`, `{…}`, escapes, `**` inside a segment) is compiled by globset.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// A compiled set of globs, the patterns kept for messages.
#[derive(Debug, Clone)]
pub struct Globs {
    patterns: Vec<String>,
    /// The globs matched without globset.
    simple: Vec<Simple>,
    /// The other globs, and the pattern index of each.
    complex: Option<(GlobSet, Vec<usize>)>,
    /// Path patterns (SPEC §4.5): a pattern without glob characters covers everything under it.
    under: bool,
    /// Match ignoring (ASCII) case, as git does with `core.ignorecase = true`.
    fold: bool,
}

/// A glob matched segment by segment.
#[derive(Debug, Clone)]
struct Simple {
    /// Its index in `patterns`.
    index: usize,
    segments: Vec<Segment>,
    /// The longest run of literal text in it: a path without it cannot match, which settles
    /// most paths against most globs with one substring search.
    needle: String,
}

/// One `/`-separated piece of a simple glob.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    /// `**`: any number of whole segments (at the end of a longer glob: at least one).
    Any { at_least_one: bool },
    /// Literal text with `*` wildcards that stay inside the segment.
    Wild(String),
}

impl Globs {
    /// Compile `patterns` exactly as globset reads them (branch names); the error names the bad
    /// glob.
    pub fn new(patterns: &[String]) -> Result<Globs, String> {
        Globs::build(patterns, false, false)
    }

    /// Compile repository path patterns (SPEC §4.5): as [`Globs::new`], and a pattern without
    /// glob characters (`db`, `docs/spec.md`) also matches everything under it.
    pub fn paths(patterns: &[String]) -> Result<Globs, String> {
        Globs::build(patterns, true, false)
    }

    /// From now on match ignoring ASCII case (`core.ignorecase = true`: `DB/x` is `db/x` on a
    /// checkout).
    pub fn fold_case(&mut self) {
        if !self.fold {
            *self = Globs::build(&self.patterns, self.under, true)
                .expect("globs that compiled compile again ignoring case");
        }
    }

    fn build(patterns: &[String], under: bool, fold: bool) -> Result<Globs, String> {
        let mut simple = Vec::new();
        let (mut builder, mut complex_index) = (GlobSetBuilder::new(), Vec::new());
        for (index, pattern) in patterns.iter().enumerate() {
            let literal = under && is_literal(pattern);
            let mut text = if fold {
                pattern.to_ascii_lowercase()
            } else {
                pattern.clone()
            };
            if literal && text.len() > 1 {
                text = text.trim_end_matches('/').to_string();
            }
            match segments(&text) {
                Some(mut segments) => {
                    if literal {
                        segments.push(Segment::Any {
                            at_least_one: false,
                        });
                    }
                    simple.push(Simple {
                        index,
                        needle: needle(&segments),
                        segments,
                    })
                }
                None => {
                    let mut texts = vec![pattern.clone()];
                    if literal {
                        texts.push(format!("{}/**", pattern.trim_end_matches('/')));
                    }
                    for text in texts {
                        let glob = GlobBuilder::new(&text)
                            .literal_separator(true)
                            .case_insensitive(fold)
                            .build()
                            .map_err(|e| format!("bad glob `{pattern}`: {}", e.kind()))?;
                        builder.add(glob);
                        complex_index.push(index);
                    }
                }
            }
        }
        let complex = if complex_index.is_empty() {
            None
        } else {
            let set = builder.build().map_err(|e| format!("bad glob set: {e}"))?;
            Some((set, complex_index))
        };
        let patterns = patterns.to_vec();
        Ok(Globs {
            patterns,
            simple,
            complex,
            under,
            fold,
        })
    }

    /// The patterns, as given.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Whether any glob matches the repo-relative `path`.
    pub fn is_match(&self, path: &str) -> bool {
        self.first_match(path).is_some()
    }

    /// The first pattern (in the order given) that matches `path`.
    pub fn first_match(&self, path: &str) -> Option<&str> {
        let folded;
        let path = if self.fold {
            folded = path.to_ascii_lowercase();
            folded.as_str()
        } else {
            path
        };
        let mut parts: Option<Vec<&str>> = None;
        let simple = self
            .simple
            .iter()
            .find(|glob| {
                contains(path.as_bytes(), glob.needle.as_bytes())
                    && matches(
                        &glob.segments,
                        parts.get_or_insert_with(|| path.split('/').collect()),
                    )
            })
            .map(|glob| glob.index);
        let complex = self
            .complex
            .as_ref()
            .and_then(|(set, index)| set.matches(path).iter().map(|&hit| index[hit]).min());
        let first = match (simple, complex) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        Some(self.patterns[first].as_str())
    }
}

/// Whether a pattern has no glob characters at all (SPEC §4.5: it then names a path and
/// everything under it).
fn is_literal(pattern: &str) -> bool {
    !pattern.is_empty() && !pattern.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

/// The segments of a simple glob, or `None` when globset must compile it.
fn segments(pattern: &str) -> Option<Vec<Segment>> {
    if pattern.contains(['?', '[', ']', '{', '}', '\\']) {
        return None;
    }
    let parts: Vec<&str> = pattern.split('/').collect();
    let last = parts.len() - 1;
    parts
        .iter()
        .enumerate()
        .map(|(i, part)| match *part {
            "" => None, // a leading, trailing or doubled `/`: left to globset's own rules
            "**" => Some(Segment::Any {
                at_least_one: i == last && last > 0,
            }),
            p if p.contains("**") => None,
            p => Some(Segment::Wild(p.to_string())),
        })
        .collect()
}

/// Whether `needle` occurs in `haystack`. Paths are short: a plain scan beats setting up
/// `str::contains`'s two-way searcher on every call.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    let Some(last_start) = haystack.len().checked_sub(needle.len()) else {
        return false;
    };
    (0..=last_start).any(|i| haystack[i] == first && haystack[i + 1..i + needle.len()] == *rest)
}

/// The longest `*`-free run of text in the glob's segments (empty when it has none).
fn needle(segments: &[Segment]) -> String {
    segments
        .iter()
        .filter_map(|s| match s {
            Segment::Wild(text) => Some(text.split('*')),
            Segment::Any { .. } => None,
        })
        .flatten()
        .max_by_key(|run| run.len())
        .unwrap_or_default()
        .to_string()
}

/// Whether the glob's segments match the path's segments.
fn matches(segs: &[Segment], parts: &[&str]) -> bool {
    match segs.split_first() {
        None => parts.is_empty(),
        Some((Segment::Wild(w), rest)) => {
            !parts.is_empty() && wildcard(w, parts[0]) && matches(rest, &parts[1..])
        }
        Some((Segment::Any { at_least_one }, rest)) => {
            let from = usize::from(*at_least_one);
            (from..=parts.len()).any(|skip| matches(rest, &parts[skip..]))
        }
    }
}

/// `*`-only wildcard match of one segment (the classic two-pointer walk with backtracking).
fn wildcard(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&b| b == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn globset(pattern: &str) -> globset::GlobMatcher {
        GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .unwrap()
            .compile_matcher()
    }

    #[test]
    fn edges_agree_with_globset() {
        let cases = [
            ("foo/**", "foo"),
            ("foo/**", "foo/a"),
            ("foo/**", "foo/"),
            ("**/tests/**", "tests"),
            ("**/tests/**", "tests/"),
            ("**/tests/**", "a/tests/b"),
            ("**/x", "x"),
            ("**/x", "/x"),
            ("*.md", ".md"),
            ("a/**/b", "a/b"),
            ("a/**/b", "a/x/y/b"),
            ("**", ""),
            ("*", ""),
            ("a/*", "a/"),
            ("x", "x/"),
            ("agent/*", "agent/x/y"),
        ];
        for (pattern, path) in cases {
            let ours = Globs::new(&[pattern.to_string()]).unwrap().is_match(path);
            assert_eq!(
                ours,
                globset(pattern).is_match(path),
                "{pattern} on {path:?}"
            );
        }
    }

    #[test]
    fn needles_are_the_longest_literal_runs_and_are_found_anywhere() {
        let needle_of = |p: &str| needle(&segments(p).unwrap());
        assert_eq!(needle_of("**/tests/**"), "tests");
        assert_eq!(needle_of("**/*_test.*"), "_test.");
        assert_eq!(needle_of("**"), "");
        for (hay, pin, found) in [
            ("a/tests/b", "tests", true),
            ("tests", "tests", true),
            ("x/test", "tests", false),
            ("ab", "abc", false),
            ("", "", true),
            ("abc", "c", true),
        ] {
            assert_eq!(
                contains(hay.as_bytes(), pin.as_bytes()),
                found,
                "{pin} in {hay}"
            );
        }
    }

    #[test]
    fn complex_globs_fall_back_to_globset_and_keep_the_order() {
        let patterns = ["src/{a,b}.rs".to_string(), "src/*.rs".to_string()];
        let globs = Globs::new(&patterns).unwrap();
        assert_eq!(globs.first_match("src/a.rs"), Some("src/{a,b}.rs"));
        assert_eq!(globs.first_match("src/c.rs"), Some("src/*.rs"));
        assert!(Globs::new(&["a/[b".to_string()]).is_err());
    }

    #[test]
    fn path_patterns_without_glob_characters_cover_everything_under_them() {
        let globs = Globs::paths(&[
            "db".into(),
            "docs/spec.md".into(),
            "out/".into(),
            "a[b]".into(),
        ])
        .unwrap();
        for path in [
            "db",
            "db/x",
            "db/m/001.sql",
            "docs/spec.md",
            "out",
            "out/x",
            "ab",
        ] {
            assert!(globs.is_match(path), "{path}");
        }
        for path in [
            "database.md",
            "x/db",
            "docs/spec.md.bak",
            "docs",
            "a[b]/x",
            "DB/x",
        ] {
            assert!(!globs.is_match(path), "{path}");
        }
        // Branch globs stay exact.
        assert!(
            !Globs::new(&["release".into()])
                .unwrap()
                .is_match("release/x")
        );
    }

    #[test]
    fn folded_globs_ignore_ascii_case_simple_and_complex() {
        let mut globs =
            Globs::paths(&["db/**".into(), "src/{A,b}.rs".into(), "Docs".into()]).unwrap();
        assert!(!globs.is_match("DB/x"));
        globs.fold_case();
        for path in ["DB/x", "Db/Y/z", "SRC/a.RS", "src/B.rs", "docs/x", "DOCS"] {
            assert!(globs.is_match(path), "{path}");
        }
        assert_eq!(globs.first_match("DB/x"), Some("db/**"));
        assert!(!globs.is_match("dbx/y"));
    }

    fn piece() -> impl Strategy<Value = &'static str> {
        proptest::sample::select(vec![
            "",
            "a",
            "b",
            "tests",
            "test",
            ".github",
            "workflows",
            "x_test.go",
            "test_x.py",
            "a.test.js",
            "conftest.py",
            "f.snap",
            "AGENTS.md",
            ".",
            "*",
            "**",
            "a*",
            "*b",
            "*_test.*",
            "test_*.*",
            "*.*",
            "agent",
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// Our segment matcher and globset agree on every simple glob and path built from the
        /// same pieces (the default surfaces are all of this shape).
        #[test]
        fn simple_globs_agree_with_globset(
            pattern in proptest::collection::vec(piece(), 1..5),
            path in proptest::collection::vec(piece(), 1..6),
        ) {
            let pattern = pattern.join("/");
            let path = path.join("/");
            let Ok(ours) = Globs::new(std::slice::from_ref(&pattern)) else { return Ok(()) };
            let Ok(theirs) = GlobBuilder::new(&pattern).literal_separator(true).build() else {
                return Ok(());
            };
            prop_assert_eq!(
                ours.is_match(&path),
                theirs.compile_matcher().is_match(&path),
                "{} on {:?}", pattern, path
            );
        }
    }
}
