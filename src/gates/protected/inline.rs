//! Tests that live inside source files (SPEC §26.4), which no path glob can see:
//!
//! - a Rust source file's `#[cfg(test)]` modules (inline `mod x { … }`, or `mod x;` naming the
//!   file), `mod NAME;` declarations of a file on `tests`, and a file whose inner `#![cfg(test)]`
//!   makes all of it test code: removing one is a **deletion** on `tests`, changing one a
//!   **modification**, adding one an **addition**, each a `protected-surface` finding at the
//!   source file's path naming the module;
//! - code that behaves differently under test (`cfg!(test)`, `#[cfg(not(test))]` outside a test
//!   module, pytest's `PYTEST_CURRENT_TEST`, Jest's `JEST_WORKER_ID`, Go's `testing.Testing()`,
//!   …): a line adding or removing such a test in a source file is a modification on `tests`
//!   that always needs a human.
//!
//! The overlays (SPEC §23) put the base's test modules back into the commit's file
//! ([`Inline::overlay`]), so the base's unit tests run on the agent's code.

use anyhow::Result;
use git2::Oid;

use super::macros;
use super::rust_items::{self, Region};
use crate::catalog::Code;
use crate::config::{Config, SurfacePolicy};
use crate::finding::{Finding, Severity};
use crate::repo::{Change, ChangeKind, Repo};
use crate::report::ProtectedChange;

/// What one changed source file did to the tests inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inline {
    /// The file in the commit (the new side of a rename), bytes and printed.
    pub bytes: Vec<u8>,
    pub text: String,
    /// Per test module, what happened to it: (name, change).
    pub modules: Vec<(String, ChangeKind)>,
    /// Lines that test whether they run under test, added or removed (`cfg!(test)`, …).
    pub markers: Vec<String>,
    /// The base's and the commit's versions, when both can be read as tokens and every test
    /// module is at the top of the file (so the overlays can splice them).
    pub sides: Option<Sides>,
    /// The whole file is test code on a side (`#![cfg(test)]`): the overlays restore it whole.
    pub whole_file: bool,
}

/// The overlay's and the reverse overlay's version of a source file (`None` where it is absent).
pub type Spliced = (Option<Vec<u8>>, Option<Vec<u8>>);

/// The two versions of a changed source file (absent: `None`), and their test modules' text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sides {
    pub base: Option<Vec<u8>>,
    pub commit: Option<Vec<u8>>,
    pub base_tests: Vec<u8>,
    pub commit_tests: Vec<u8>,
}

impl Inline {
    /// The commit's version with the base's test modules (for the overlay), and the base's with
    /// the commit's (for the reverse overlay); `None` on a side the file is absent from.
    pub fn overlay(&self, config: &Config) -> Option<Spliced> {
        let sides = self.sides.as_ref()?;
        let decl = decl_test(config, &self.bytes);
        let splice = |onto: &Option<Vec<u8>>, from: &Option<Vec<u8>>| {
            let onto = onto.as_deref()?;
            rust_items::splice(onto, from.as_deref().unwrap_or_default(), &decl)
        };
        Some((
            splice(&sides.commit, &sides.base),
            splice(&sides.base, &sides.commit),
        ))
    }

    /// Whether the only change is lines added to the base's test modules (SPEC §26.4 (b)):
    /// no module removed or rewritten, no test-detecting code, every base line kept in order.
    pub fn only_adds_tests(&self) -> bool {
        let Some(sides) = &self.sides else {
            return false;
        };
        self.markers.is_empty()
            && !self.whole_file
            && self
                .modules
                .iter()
                .all(|(_, k)| matches!(k, ChangeKind::Added | ChangeKind::Modified))
            && only_adds_lines(&sides.base_tests, &sides.commit_tests)
    }
}

/// Every changed source file's tests-inside changes; files on `tests` themselves are judged
/// whole by the protected gate, not here.
pub fn inline_changes(
    repo: &Repo,
    config: &Config,
    changes: &[Change],
    from: Oid,
    to: Oid,
) -> Result<Vec<Inline>> {
    let mut out = Vec::new();
    let mut harness = None;
    for change in changes {
        let new = change.new_bytes.as_slice();
        let old = change.old_bytes.as_slice();
        let on_tests = |p: &[u8]| config.surfaces_for(p).iter().any(|s| s == "tests");
        let source = |p: &[u8]| is_source(p) || macros::is_c(p);
        if on_tests(new) || on_tests(old) || !source(new) && !source(old) {
            continue;
        }
        let base = match change.kind {
            ChangeKind::Added => None,
            _ => repo.read_file(from, old)?,
        };
        let commit = match change.kind {
            ChangeKind::Deleted => None,
            _ => repo.read_file(to, new)?,
        };
        let path = if change.kind == ChangeKind::Deleted {
            old
        } else {
            new
        };
        let mut found = judge(config, path, base.clone(), commit.clone());
        let defs = match macros::is_c(path) {
            true => macros::changed_directives(base.as_deref(), commit.as_deref()),
            false => Vec::new(),
        };
        if !defs.is_empty() {
            let harness = match &mut harness {
                Some(known) => known,
                None => harness.insert(macros::harness_macros(repo, config, from)?),
            };
            for (name, line) in defs {
                if let Some(file) = harness.get(&name) {
                    let at = format!("{line} (redefines `{name}` of the tests' {file})");
                    found.get_or_insert_with(|| plain(path)).markers.push(at);
                }
            }
        }
        out.extend(found);
    }
    Ok(out)
}

/// A changed source file with nothing found in it yet.
fn plain(path: &[u8]) -> Inline {
    Inline {
        bytes: path.to_vec(),
        text: crate::repo::path_text(path),
        modules: Vec::new(),
        markers: Vec::new(),
        sides: None,
        whole_file: false,
    }
}

/// What changed between the two versions of one source file, or `None` when nothing test-like
/// did.
fn judge(
    config: &Config,
    path: &[u8],
    base: Option<Vec<u8>>,
    commit: Option<Vec<u8>>,
) -> Option<Inline> {
    let decl = decl_test(config, path);
    let rust = path.ends_with(b".rs");
    let read = |src: &Option<Vec<u8>>| -> Option<(Vec<Region>, bool)> {
        match src {
            Some(src) if rust => rust_items::read(src, &decl),
            _ => Some((Vec::new(), false)),
        }
    };
    let (Some((b, b_whole)), Some((c, c_whole))) = (read(&base), read(&commit)) else {
        // A side that does not read as tokens: nothing is known when it could hold tests.
        let could = |s: &Option<Vec<u8>>| s.as_deref().is_some_and(mentions_test);
        let what = "(unreadable: its unit tests cannot be told apart)".to_string();
        let mut found = plain(path);
        found.modules.push((what, ChangeKind::Modified));
        return (could(&base) || could(&commit)).then_some(found);
    };
    if b_whole || c_whole {
        let kind = match (&base, &commit) {
            (Some(_), None) => ChangeKind::Deleted,
            (None, Some(_)) => ChangeKind::Added,
            _ => ChangeKind::Modified,
        };
        let mut found = plain(path);
        found
            .modules
            .push(("(the whole file: #![cfg(test)])".to_string(), kind));
        found.whole_file = true;
        return Some(found);
    }
    let modules = compare(&base, &b, &commit, &c);
    let markers = changed_markers(path, &base, &b, &commit, &c);
    if modules.is_empty() && markers.is_empty() {
        return None;
    }
    let top = b.iter().chain(&c).all(|r| r.depth == 0);
    let sides = top.then(|| Sides {
        base_tests: joined(&base, &b),
        commit_tests: joined(&commit, &c),
        base: base.clone(),
        commit: commit.clone(),
    });
    Some(Inline {
        modules,
        markers,
        sides,
        ..plain(path)
    })
}

/// The text of the test modules `rs` of `src`, one after the other.
fn joined(src: &Option<Vec<u8>>, rs: &[Region]) -> Vec<u8> {
    let src = src.as_deref().unwrap_or_default();
    rs.iter()
        .flat_map(|r| [r.text(src), b"\n"])
        .flatten()
        .copied()
        .collect()
}

/// Each test module removed, changed or added, by name.
fn compare(
    base: &Option<Vec<u8>>,
    b: &[Region],
    commit: &Option<Vec<u8>>,
    c: &[Region],
) -> Vec<(String, ChangeKind)> {
    let (bs, cs) = (
        base.as_deref().unwrap_or_default(),
        commit.as_deref().unwrap_or_default(),
    );
    let mut out = Vec::new();
    for r in b {
        match c.iter().find(|o| o.name == r.name) {
            None => out.push((r.name.clone(), ChangeKind::Deleted)),
            Some(o) if o.text(cs) != r.text(bs) => out.push((r.name.clone(), ChangeKind::Modified)),
            Some(_) => {}
        }
    }
    for r in c {
        if !b.iter().any(|o| o.name == r.name) {
            out.push((r.name.clone(), ChangeKind::Added));
        }
    }
    out
}

/// Source files whose code could test whether it runs under test.
fn is_source(path: &[u8]) -> bool {
    const EXT: [&[u8]; 9] = [
        b".rs", b".py", b".js", b".mjs", b".cjs", b".ts", b".tsx", b".jsx", b".go",
    ];
    EXT.iter().any(|e| path.ends_with(e))
}

/// Whether source text could hold test code (for a file the lexer cannot read).
fn mentions_test(src: &[u8]) -> bool {
    src.windows(4).any(|w| w == b"test")
}

/// Text that tests whether the code runs under a test runner, per language: the runners
/// table's markers for the file's language (C's harness macros are [`macros`]'s).
fn markers_for(path: &[u8]) -> Vec<&'static str> {
    crate::runners::under_test_markers(path)
}

/// The lines outside test modules that mention a marker, added or removed (as a multiset of
/// trimmed lines), each prefixed `+ ` or `- `.
fn changed_markers(
    path: &[u8],
    base: &Option<Vec<u8>>,
    b: &[Region],
    commit: &Option<Vec<u8>>,
    c: &[Region],
) -> Vec<String> {
    // Compared without blanks (`cfg! (test)` is `cfg!(test)`); most lines hold none of them.
    let markers: Vec<(String, String)> = (markers_for(path).iter())
        .map(|m| {
            let word = m.split_whitespace().max_by_key(|w| w.len()).unwrap_or(m);
            (
                m.chars().filter(|c| !c.is_ascii_whitespace()).collect(),
                word.to_string(),
            )
        })
        .collect();
    let lines = |src: &Option<Vec<u8>>, rs: &[Region]| -> Vec<String> {
        let Some(src) = src else { return Vec::new() };
        let mut out = Vec::new();
        let mut at = 0;
        let ends = rs.iter().map(|r| (r.start, r.end + 1));
        for (from, to) in ends.chain(std::iter::once((src.len(), src.len()))) {
            let part = &src[at..from];
            at = to;
            if !holds_marker(part, &markers) {
                continue; // one search per stretch of code: most hold none
            }
            for line in part.split(|&b| b == b'\n') {
                if holds_marker(line, &markers) {
                    let text = String::from_utf8_lossy(line);
                    out.push(text.split_whitespace().collect::<Vec<_>>().join(" "));
                }
            }
        }
        out
    };
    let (mut old, new) = (lines(base, b), lines(commit, c));
    let mut out = Vec::new();
    for line in new {
        match old.iter().position(|o| *o == line) {
            Some(i) => {
                old.remove(i);
            }
            None => out.push(format!("+ {line}")),
        }
    }
    out.extend(old.into_iter().map(|l| format!("- {l}")));
    out
}

/// Whether `text`, its blanks dropped, holds one of `markers`. Each marker's longest blank-free
/// word is looked for first, in the text as it is (memchr's substring search): most text holds
/// none, and is never copied.
fn holds_marker(text: &[u8], markers: &[(String, String)]) -> bool {
    let found = |hay: &[u8], needle: &str| memchr::memmem::find(hay, needle.as_bytes()).is_some();
    if !markers.iter().any(|(_, word)| found(text, word)) {
        return false;
    }
    let squeezed: Vec<u8> = (text.iter().copied())
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    markers.iter().any(|(m, _)| found(&squeezed, m))
}

/// Whether `mod NAME;` in the file at `path` names a file on `tests` (SPEC §4.5 surfaces): any
/// of the files it may name ([`module_files`]) on `tests` makes it a test module.
fn decl_test<'c>(config: &'c Config, path: &[u8]) -> impl Fn(&str, Option<&str>) -> bool + 'c {
    let path = path.to_vec();
    move |name: &str, attr: Option<&str>| {
        module_files(&path, name, attr)
            .iter()
            .any(|c| config.surfaces_for(c).iter().any(|s| s == "tests"))
    }
}

/// The files `mod NAME;` in the file at `path` may name: its `#[path]` (beside the file), or
/// `NAME.rs` and `NAME/mod.rs` beside it (a crate root or `mod.rs`) or in its own folder (any
/// other module file), every reading kept.
pub fn module_files(path: &[u8], name: &str, attr: Option<&str>) -> Vec<Vec<u8>> {
    let (dir, file) = match path.iter().rposition(|&b| b == b'/') {
        Some(i) => (&path[..=i], &path[i + 1..]),
        None => (&b""[..], path),
    };
    if let Some(attr) = attr {
        return vec![[dir, attr.as_bytes()].concat()];
    }
    let stem = file.strip_suffix(b".rs").unwrap_or(file);
    let mut out = Vec::new();
    for base in [dir.to_vec(), [dir, stem, b"/"].concat()] {
        out.push([&base, name.as_bytes(), b".rs"].concat());
        out.push([&base, name.as_bytes(), b"/mod.rs"].concat());
    }
    out
}

/// The `protected-surface` findings (surface `tests`) for the inline changes.
pub fn findings(config: &Config, inline: &[Inline]) -> (Vec<ProtectedChange>, Vec<Finding>) {
    let modify = config
        .surfaces
        .iter()
        .any(|s| s.name == "tests" && s.policy == SurfacePolicy::Modify);
    let mut hits = Vec::new();
    let mut findings = Vec::new();
    for change in inline {
        let path = &change.text;
        for (name, kind) in &change.modules {
            let verb = kind.as_str();
            let what = match name.starts_with('(') {
                true => format!("the unit tests inside `{path}` {name}"),
                false => format!("the test module `{name}` of `{path}`"),
            };
            let on =
                format!("{verb} {what} on protected surface `tests` (tests inside a source file)");
            if *kind == ChangeKind::Added && modify {
                let msg = format!("{on} (policy `modify`: an addition needs no review)");
                let finding = Finding::new(Code::ProtectedSurface, msg).at_path(path);
                findings.push(finding.with_severity(Severity::Warning));
                continue;
            }
            findings.push(Finding::new(Code::ProtectedSurface, on).at_path(path));
            hit(&mut hits, path, kind.as_str());
        }
        if !change.markers.is_empty() {
            let msg = format!(
                "modified `{path}`: code that behaves differently under test (on protected \
                 surface `tests`: it can pass its tests and fail in use): {}",
                change.markers.join("; ")
            );
            findings.push(Finding::new(Code::ProtectedSurface, msg).at_path(path));
            hit(&mut hits, path, "modified");
        }
    }
    (hits, findings)
}

fn hit(hits: &mut Vec<ProtectedChange>, path: &str, change: &'static str) {
    if !hits.iter().any(|h: &ProtectedChange| h.path == path) {
        hits.push(ProtectedChange {
            path: path.to_string(),
            surface: "tests".to_string(),
            change,
        });
    }
}

/// Whether `new` only adds lines to `old` (SPEC §26.4 (b)): every line of `old` is in `new`, in
/// order, unchanged; a last line without its newline counts as the same line with one.
pub fn only_adds_lines(old: &[u8], new: &[u8]) -> bool {
    let lines = |b: &[u8]| -> Vec<Vec<u8>> {
        b.split_inclusive(|&c| c == b'\n')
            .map(|l| l.strip_suffix(b"\n").unwrap_or(l).to_vec())
            .collect()
    };
    let (old, new) = (lines(old), lines(new));
    let mut want = old.iter().peekable();
    for line in &new {
        if want.peek().is_some_and(|w| *w == line) {
            want.next();
        }
    }
    want.peek().is_none()
}
