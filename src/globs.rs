//! Glob sets for protected surfaces, agent branches and contract scopes, with `*` never crossing
//! `/` (globset's `literal_separator`).
//!
//! Most globs here are made of literal text, `*` and whole-segment `**` (`**/tests/**`,
//! `**/*_test.*`, `.github/workflows/**`, `agent/*`). Compiling those into regexes cost half a
//! millisecond per run, a tenth of a whole `check`; they are matched segment by segment instead,
//! with exactly globset's semantics (a property test holds the two together). Any other glob
//! (`?`, `[…]`, `{…}`, escapes, `**` inside a segment) is compiled by globset.
//!
//! Paths are bytes (SPEC §26.4): a tree path need not be UTF-8, and it is matched as git stores
//! it, never as printed text (`\xff` is four characters, the name holds one byte).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

/// A set of globs, the patterns kept for messages. A set that cannot fail to compile
/// ([`deferrable`]) is compiled on its first match: most commands read a configuration whose
/// surfaces they never match, and compiling its dozens of globs was a tenth of the stop hook's
/// answer to a question (issue 38).
#[derive(Debug, Clone)]
pub struct Globs {
    patterns: Vec<String>,
    compiled: OnceLock<Compiled>,
    /// Path patterns (SPEC §4.5): a pattern without glob characters covers everything under it.
    under: bool,
    /// Match ignoring (ASCII) case, as git does with `core.ignorecase = true`.
    fold: bool,
}

/// The matchers of a set.
#[derive(Debug, Clone)]
struct Compiled {
    /// The globs matched without globset.
    simple: Vec<Simple>,
    /// The other globs, in sets of at most [`CHUNK`]: one regex set of tens of thousands of
    /// globs exceeds the regex engine's size limit.
    complex: Vec<Chunk>,
}

/// Globs compiled by globset: the set, and per glob its pattern index and the glob itself.
#[derive(Debug, Clone)]
struct Chunk {
    set: GlobSet,
    index: Vec<usize>,
    globs: Vec<Glob>,
}

impl Chunk {
    fn new(builder: GlobSetBuilder, index: Vec<usize>, globs: Vec<Glob>) -> Result<Chunk, String> {
        let set = builder.build().map_err(|e| format!("bad glob set: {e}"))?;
        Ok(Chunk { set, index, globs })
    }

    /// The pattern index of the first glob matching `path`. A `GlobSet` takes a path whose last
    /// segment is `..` to have no file name, so its file-name and extension shortcuts miss it
    /// where the glob's own regex matches (`[a]/..` on `a/..`); a crafted tree can hold such an
    /// entry, so that path is matched glob by glob.
    fn first(&self, path: &[u8]) -> Option<usize> {
        // globset matches a `Path` by its bytes on Unix: a name that is not UTF-8 is matched as
        // git stores it.
        let path = Path::new(OsStr::from_bytes(path));
        if path.as_os_str().as_bytes().rsplit(|&b| b == b'/').next() == Some(b"..") {
            let hit = self
                .globs
                .iter()
                .position(|g| g.compile_matcher().is_match(path));
            return hit.map(|i| self.index[i]);
        }
        self.set
            .matches(path)
            .iter()
            .map(|&hit| self.index[hit])
            .min()
    }
}

/// Complex globs compiled and not yet in a [`Chunk`].
struct Pending {
    builder: GlobSetBuilder,
    /// Each glob's index in `patterns`.
    index: Vec<usize>,
    globs: Vec<Glob>,
}

impl Pending {
    fn new() -> Pending {
        Pending {
            builder: GlobSetBuilder::new(),
            index: Vec::new(),
            globs: Vec::new(),
        }
    }

    /// Compile `pattern` (pattern number `index`) as globset reads it, and for a `literal` path
    /// pattern also what lies under it; the error names the bad glob.
    fn add(
        &mut self,
        pattern: &str,
        index: usize,
        literal: bool,
        fold: bool,
    ) -> Result<(), String> {
        // A literal path pattern names its path without the trailing `/`, as the segment
        // matcher reads it (`simple_text`): `/a/` covers `/a` and what lies under it.
        let own = match literal && pattern.len() > 1 {
            true => pattern.trim_end_matches('/'),
            false => pattern,
        };
        let mut texts = vec![own.to_string()];
        if literal {
            texts.push(format!("{}/**", pattern.trim_end_matches('/')));
        }
        for text in texts {
            let glob = GlobBuilder::new(&text)
                .literal_separator(true)
                .case_insensitive(fold)
                .build()
                .map_err(|e| format!("bad glob `{pattern}`: {}", e.kind()))?;
            self.builder.add(glob.clone());
            self.index.push(index);
            self.globs.push(glob);
        }
        Ok(())
    }

    /// The globs so far as one chunk, leaving none pending.
    fn take(&mut self) -> Result<Chunk, String> {
        let full = std::mem::replace(&mut self.builder, GlobSetBuilder::new());
        let index = std::mem::take(&mut self.index);
        Chunk::new(full, index, std::mem::take(&mut self.globs))
    }
}

/// The text of a pattern as the simple matcher reads it: lower case when matching ignores
/// case, and a `literal` path pattern without its trailing `/`.
fn simple_text(pattern: &str, literal: bool, fold: bool) -> String {
    let mut text = if fold {
        pattern.to_ascii_lowercase()
    } else {
        pattern.to_string()
    };
    if literal && text.len() > 1 {
        text = text.trim_end_matches('/').to_string();
    }
    text
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
        let globs = Globs {
            patterns: patterns.to_vec(),
            compiled: OnceLock::new(),
            under,
            fold,
        };
        if !deferrable(patterns) {
            let compiled = compile(patterns, under, fold)?;
            globs.compiled.set(compiled).expect("a new cell is empty");
        }
        Ok(globs)
    }

    /// The matchers, compiled now if they were deferred.
    fn compiled(&self) -> &Compiled {
        self.compiled.get_or_init(|| {
            compile(&self.patterns, self.under, self.fold)
                .expect("a deferrable set compiles (see `deferrable`)")
        })
    }

    /// The patterns, as given.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Whether any glob matches the repo-relative `path` (text, or the bytes git stores).
    pub fn is_match(&self, path: impl AsRef<[u8]>) -> bool {
        self.first_match(path).is_some()
    }

    /// The first pattern (in the order given) that matches `path` (text, or the bytes git
    /// stores: a name need not be UTF-8).
    pub fn first_match(&self, path: impl AsRef<[u8]>) -> Option<&str> {
        let path = path.as_ref();
        let folded;
        let path = if self.fold {
            folded = path.to_ascii_lowercase();
            folded.as_slice()
        } else {
            path
        };
        let mut parts: Option<Vec<&[u8]>> = None;
        let simple = self
            .compiled()
            .simple
            .iter()
            .find(|glob| {
                contains(path, glob.needle.as_bytes())
                    && matches(
                        &glob.segments,
                        parts.get_or_insert_with(|| path.split(|&b| b == b'/').collect()),
                    )
            })
            .map(|glob| glob.index);
        let complex = self
            .compiled()
            .complex
            .iter()
            .filter_map(|c| c.first(path))
            .min();
        let first = match (simple, complex) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        Some(self.patterns[first].as_str())
    }
}

/// Compile `patterns`: each simple glob into its segments, the others by globset; the error
/// names the bad glob.
fn compile(patterns: &[String], under: bool, fold: bool) -> Result<Compiled, String> {
    let mut simple = Vec::new();
    let mut complex = Vec::new();
    let mut pending = Pending::new();
    for (index, pattern) in patterns.iter().enumerate() {
        let literal = under && is_literal(pattern);
        let text = simple_text(pattern, literal, fold);
        // `{a,b}` of plain words: one simple glob per alternative.
        let expanded: Option<Vec<Vec<Segment>>> = expand_braces(&text)
            .unwrap_or_else(|| vec![text.clone()])
            .iter()
            .map(|t| segments(t))
            .collect();
        match expanded {
            Some(all) => {
                for mut segments in all {
                    if literal {
                        segments.push(Segment::Any {
                            at_least_one: false,
                        });
                    }
                    simple.push(Simple {
                        index,
                        needle: needle(&segments),
                        segments,
                    });
                }
            }
            None => {
                pending.add(pattern, index, literal, fold)?;
                if pending.index.len() >= CHUNK {
                    complex.push(pending.take()?);
                }
            }
        }
    }
    if !pending.index.is_empty() {
        complex.push(pending.take()?);
    }
    Ok(Compiled { simple, complex })
}

/// Whether a set cannot fail to compile, so that compiling it can wait for its first match: no
/// pattern holds the syntax globset can reject (`[`, `]`, `{`, `}`, `\`), and the set is small
/// enough for one regex set of plain globs (at most [`CHUNK`] globs of at most 64 KiB in all).
fn deferrable(patterns: &[String]) -> bool {
    let bytes: usize = patterns.iter().map(String::len).sum();
    patterns.len() <= CHUNK
        && bytes <= 64 * 1024
        && !patterns
            .iter()
            .any(|p| p.contains(['[', ']', '{', '}', '\\']))
}

/// Globs per compiled regex set.
const CHUNK: usize = 1000;

/// The plain alternatives of a glob's `{…}` groups, expanded (`src/{a,b}.rs` → `src/a.rs`,
/// `src/b.rs`); `None` when it has none, when an alternative holds anything but plain text (glob
/// characters, `/`, nesting) or when the expansion would pass 64 globs: globset compiles those.
fn expand_braces(pattern: &str) -> Option<Vec<String>> {
    if !pattern.contains('{') || pattern.contains('\\') {
        return None;
    }
    let mut out = vec![String::new()];
    let mut rest = pattern;
    while let Some(open) = rest.find('{') {
        let close = open + rest[open..].find('}')?;
        let (head, group) = (&rest[..open], &rest[open + 1..close]);
        if head.contains('}') || group.contains(['{', '*', '?', '[', ']', '/']) {
            return None;
        }
        let words: Vec<&str> = group.split(',').collect();
        if words.contains(&"") || out.len() * words.len() > 64 {
            return None;
        }
        out = out
            .iter()
            .flat_map(|prefix| words.iter().map(move |w| format!("{prefix}{head}{w}")))
            .collect();
        rest = &rest[close + 1..];
    }
    if rest.contains('}') {
        return None;
    }
    Some(out.into_iter().map(|p| p + rest).collect())
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
fn matches(segs: &[Segment], parts: &[&[u8]]) -> bool {
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
fn wildcard(pattern: &str, t: &[u8]) -> bool {
    let p = pattern.as_bytes();
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
    fn plain_braces_expand_and_agree_with_globset() {
        assert_eq!(
            expand_braces("src/{a,b}.rs").unwrap(),
            ["src/a.rs", "src/b.rs"]
        );
        assert_eq!(
            expand_braces("{x,y}{1,2}").unwrap(),
            ["x1", "x2", "y1", "y2"]
        );
        for no in [
            "a", "{a/b,c}", "{a*,b}", "{a,{b}}", "a}{b", "{a", "\\{a,b}", "{x,}",
        ] {
            assert_eq!(expand_braces(no), None, "{no}");
        }
        let patterns = ["src/{a,b}/**", "**/*.{rs,toml}", "{x,y}{1,2}", "a{b,c}d/*"];
        let paths = [
            "src/a/x",
            "src/c/x",
            "lib/y.toml",
            "z.rs",
            "z.md",
            "x1",
            "2",
            "x",
            "abd/q",
            "acd/q/r",
        ];
        for pattern in patterns {
            let ours = Globs::new(&[pattern.to_string()]).unwrap();
            assert!(
                ours.compiled().complex.is_empty(),
                "{pattern} expands to simple globs"
            );
            for path in paths {
                assert_eq!(
                    ours.is_match(path),
                    globset(pattern).is_match(path),
                    "{pattern} on {path}"
                );
            }
        }
    }

    /// globset's `GlobSet` misses a path whose last segment is `..` where the glob's regex
    /// matches it: a protected glob must still see a crafted `..` entry under it.
    #[test]
    fn a_path_ending_in_dot_dot_matches_complex_globs_as_their_regex_does() {
        let cases = [
            ("[a]/..", "a/.."),
            ("**/[.].", "x/.."),
            (".github/[w]orkflows/**", ".github/workflows/.."),
            ("/**/..", "/.."),
            ("src/{a,b*}/**", "src/bc/.."),
        ];
        for (pattern, path) in cases {
            let ours = Globs::new(&[pattern.to_string(), "z[z]".to_string()]).unwrap();
            assert!(
                !ours.compiled().complex.is_empty(),
                "{pattern} is compiled by globset"
            );
            assert!(globset(pattern).is_match(path), "{pattern} on {path}");
            assert_eq!(ours.first_match(path), Some(pattern), "{pattern} on {path}");
            assert_eq!(ours.first_match("zz"), Some("z[z]"), "{pattern}");
        }
    }

    /// A name that is not UTF-8 is matched by its bytes, simple and complex globs alike, as
    /// globset matches a `Path` made of those bytes; its printed form (`\xff`) is not the name.
    #[test]
    fn names_that_are_not_utf8_match_by_their_bytes() {
        let cases: [(&str, &[u8], bool); 12] = [
            ("**/tests/**", b"tests/\xff.py", true),
            ("**/test_*.*", b"a/test_\xfe\xff.py", true),
            ("**/*_test.*", b"x\x80_test.go", true),
            ("tests", b"tests/\xc3", true),
            ("src/[a]*", b"src/a\xff.rs", true),
            ("src/?.rs", b"src/\xff.rs", true),
            ("src/[!a].rs", b"src/\xff.rs", true),
            ("**/*.{py,rs}", b"\xff/\xfe.py", true),
            ("*.md", b"\xff/a.md", false),
            ("tests/\\\\xff", b"tests/\xff", false),
            ("src/*", b"src/\xff/x", false),
            ("src/**", b"src/\xff/x", true),
        ];
        for (pattern, path, expected) in cases {
            let theirs = GlobBuilder::new(pattern)
                .literal_separator(true)
                .build()
                .unwrap()
                .compile_matcher()
                .is_match(Path::new(OsStr::from_bytes(path)));
            let ours = Globs::paths(&[pattern.to_string()]).unwrap();
            assert_eq!(ours.is_match(path), expected, "{pattern} on {path:?}");
            if !is_literal(pattern) {
                assert_eq!(theirs, expected, "globset: {pattern} on {path:?}");
            }
            let mut folded = ours.clone();
            folded.fold_case();
            assert_eq!(
                folded.is_match(path.to_ascii_uppercase()),
                expected,
                "{pattern}"
            );
        }
    }

    #[test]
    fn thousands_of_complex_globs_compile_in_chunks_and_keep_the_order() {
        let patterns: Vec<String> = (0..2500).map(|i| format!("src/m[ab]{i:05}/**")).collect();
        let globs = Globs::paths(&patterns).unwrap();
        assert_eq!(globs.compiled().complex.len(), 3);
        assert_eq!(
            globs.first_match("src/mb02042/x"),
            Some("src/m[ab]02042/**")
        );
        assert_eq!(globs.first_match("src/mc02042/x"), None);
    }

    #[test]
    fn a_set_that_cannot_fail_to_compile_waits_for_its_first_match() {
        // Plain globs (the default surfaces' shape, `**` inside a segment, an empty pattern):
        // compiled on the first match, answering as an eager set does.
        let patterns: Vec<String> = ["**/tests/**", "*.md", "src/a**b/x", "docs", ""]
            .map(String::from)
            .to_vec();
        let plain = Globs::paths(&patterns).unwrap();
        assert!(plain.compiled.get().is_none());
        assert_eq!(plain.first_match("a/tests/x"), Some("**/tests/**"));
        assert_eq!(plain.first_match("src/aqqb/x"), Some("src/a**b/x"));
        assert_eq!(plain.first_match("docs/a/b"), Some("docs"));
        assert_eq!(plain.first_match("src/x.rs"), None);
        assert!(plain.compiled.get().is_some());
        // Syntax globset can reject is compiled, and refused, when the set is made: a bad glob
        // in a configuration is its error, never a panic at the first match.
        for bad in ["a/[b", "a/{b", "a/b}", "a\\"] {
            let set = [String::from("ok/**"), String::from(bad)];
            assert!(Globs::paths(&set).is_err(), "{bad}");
        }
        // So is a set too large to be sure of (over one regex set's worth of globs).
        let many: Vec<String> = (0..=CHUNK).map(|i| format!("x{i}/*")).collect();
        assert!(Globs::paths(&many).unwrap().compiled.get().is_some());
        let long = vec!["a*".repeat(40 * 1024)];
        assert!(Globs::paths(&long).unwrap().compiled.get().is_some());
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
            "{a,b}",
            "*.{snap,py}",
            "t{est,ests}",
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5000))]

        /// The same on the edges a crafted path or glob reaches for: non-ASCII text (multi-byte,
        /// combining marks, case pairs outside ASCII), a leading `/`, empty and `.`/`..`
        /// segments, `**` at either end, a trailing `/`. A mismatch would hide a protected
        /// change (or widen a contract's scope), so the fast matcher must say what globset says.
        #[test]
        fn edge_globs_agree_with_globset(
            pattern in proptest::collection::vec(edge_piece(), 1..5),
            path in proptest::collection::vec(edge_piece(), 0..6),
            (lead, any_start, any_end) in (any::<bool>(), any::<bool>(), any::<bool>()),
            (path_lead, path_trail) in (any::<bool>(), any::<bool>()),
        ) {
            let mut pattern = pattern.join("/");
            if any_start {
                pattern = format!("**/{pattern}");
            }
            if any_end {
                pattern.push_str("/**");
            }
            if lead {
                pattern.insert(0, '/');
            }
            let mut path = path.join("/");
            if path_lead {
                path.insert(0, '/');
            }
            if path_trail {
                path.push('/');
            }
            let Ok(theirs) = GlobBuilder::new(&pattern).literal_separator(true).build() else {
                prop_assert!(Globs::new(std::slice::from_ref(&pattern)).is_err(), "{}", pattern);
                return Ok(());
            };
            let theirs = theirs.compile_matcher();
            let ours = Globs::new(std::slice::from_ref(&pattern)).unwrap();
            prop_assert_eq!(ours.is_match(&path), theirs.is_match(&path), "{} on {:?}", pattern, path);
            // As a path pattern: a glob-free one also covers everything under it.
            let ours = Globs::paths(std::slice::from_ref(&pattern)).unwrap();
            let mut expected = theirs.is_match(&path);
            if is_literal(&pattern) {
                let trimmed = match pattern.len() > 1 {
                    true => pattern.trim_end_matches('/'),
                    false => pattern.as_str(),
                };
                expected |= globset(trimmed).is_match(&path)
                    || globset(&format!("{}/**", pattern.trim_end_matches('/'))).is_match(&path);
            }
            prop_assert_eq!(ours.is_match(&path), expected, "paths {} on {:?}", pattern, path);
            // Folded: ASCII case ignored, as on a `core.ignorecase` checkout.
            let mut folded = Globs::new(std::slice::from_ref(&pattern)).unwrap();
            folded.fold_case();
            let upper = path.to_ascii_uppercase();
            prop_assert_eq!(
                folded.is_match(&upper),
                globset(&pattern.to_ascii_lowercase()).is_match(path.to_ascii_lowercase()),
                "folded {} on {:?}", pattern, upper
            );
        }
    }

    fn edge_piece() -> impl Strategy<Value = &'static str> {
        proptest::sample::select(vec![
            "", ".", "..", "a", "A", "tests", "é", "É", "e\u{301}", "日本", "ß", "SS", "ǅ", "ǆ",
            "🦀", "k", "\u{212a}", "x.é", "*", "**", "*é", "日*", "a*b", "*.rs", "[é]", "?",
            "{a,é}", "**a", "a**", " ", "a b",
        ])
    }
}
