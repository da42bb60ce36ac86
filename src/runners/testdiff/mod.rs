//! The test-diff reader (SPEC §27.1 rule (b), issue 47): reads every edited test file of a
//! commit — both sides — and classifies each edited test as `added`, `strengthened`,
//! `reworded`, `moved`, `fixture`, `weakened` or `dropped`. The rules are cross-file (an
//! assertion or a test moved to another file is not gone), so [`read`] takes all the files at
//! once.
//!
//! Each language has a reader of its test structure ([`rust`], [`python`], [`js`], [`go`],
//! [`c`]) over a hand-written lexer ([`lex`] for the brace languages, [`lex_python`]) whose tokens
//! have their brackets matched ([`tokens`]); what a test holds ([`unit`]) and how two versions of
//! it compare ([`classify`]) are language-neutral. A file that cannot be read — a syntax error the
//! lexer sees (an unbalanced bracket, a literal that never ends, a bad indentation), an unknown
//! language, binary content (a NUL byte, not UTF-8), a name that is not UTF-8 — is an `Err`: the
//! caller sends it to a human, never passes it silently.
//!
//! Choices where the contract is silent:
//! - a test is: Rust — a `fn` with an attribute whose last path segment is `test`, or `rstest`,
//!   `test_case`, `case`, `quickcheck`, named by its module path (`tests::adds`); Python — a
//!   `def test*` at module level or in a class named `Test*` or deriving from a `*TestCase`,
//!   named `Class::test_x`; JavaScript — an `it`/`test` call (and `xit`, `fit`, `.only`,
//!   `.skip`, `.each(…)`) named by its `describe` path joined with ` > `; Go — `func TestX`,
//!   `ExampleX`, `FuzzX` (a method `Suite.TestX` too); C and C++ — a harness macro
//!   (`TEST(Suite, Name)` → `Suite.Name`, `TEST_F`, `TEST_P`, `TEST_CASE("name")`,
//!   `START_TEST(name)`), a function named `test*`, or any function whose body asserts;
//! - one edit per edited test; a test both weakened and dropping a case gets one of each; the
//!   code outside every test of a file is one more unit, named `(outside tests)`: its assertion
//!   removed, table row dropped or skip added counts like a test's, any other change is
//!   `fixture`;
//! - an assertion "present elsewhere" is looked up among every assertion of the new sides of
//!   all files given, helpers included; a changed expected value is a removed assertion;
//! - a changed assertion paired with its old self by subject counts as `strengthened` when its
//!   form is stronger (truthiness → bound → tolerance → exact, or a narrower tolerance);
//! - a test renamed with its body unchanged, or found under its name in another file, is
//!   `moved`; an added test carrying `only`/focus is `weakened` (the file's other tests stop
//!   running); an added test with a skip is `added`.

mod c;
mod classify;
mod go;
mod js;
mod lex;
mod lex_python;
mod python;
mod rust;
mod tokens;
mod unit;

use super::Language;

/// What an edit did to a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Added,
    Strengthened,
    Reworded,
    Moved,
    Fixture,
    Weakened,
    Dropped,
}

impl Kind {
    /// The kind's name in the report.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Added => "added",
            Kind::Strengthened => "strengthened",
            Kind::Reworded => "reworded",
            Kind::Moved => "moved",
            Kind::Fixture => "fixture",
            Kind::Weakened => "weakened",
            Kind::Dropped => "dropped",
        }
    }

    /// Whether the kind needs a human (SPEC §27.1 (b)).
    pub fn weakens(self) -> bool {
        matches!(self, Kind::Weakened | Kind::Dropped)
    }
}

/// One edited test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub path: Vec<u8>,
    /// The test's name (see the module doc), `(outside tests)` for the rest of the file.
    pub test: String,
    pub kind: Kind,
    /// One plain line for a human: "removed `assert_eq!(sum(1, 2), 3)`".
    pub detail: String,
    /// For a `moved` test, where it went: its file and its new name.
    pub to: Option<(Vec<u8>, String)>,
}

/// One edited file: `old` is `None` for an added file, `new` for a deleted one.
#[derive(Debug, Clone, Copy)]
pub struct FileDiff<'a> {
    pub path: &'a [u8],
    pub old: Option<&'a [u8]>,
    pub new: Option<&'a [u8]>,
}

/// The edits of one file, or why it could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileResult {
    pub path: Vec<u8>,
    pub outcome: Result<Vec<Edit>, String>,
}

/// The name of the unit holding a file's code outside its tests.
pub const OUTSIDE: &str = "(outside tests)";

/// A language the reader reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    Rust,
    Python,
    Js,
    Go,
    /// C and C++.
    C,
}

/// The reader of a path, by its extension; `None` for a language it does not read.
pub fn reader_for(path: &[u8]) -> Option<Reader> {
    match Language::of_path(path) {
        Some(Language::Rust) => Some(Reader::Rust),
        Some(Language::Python) => Some(Reader::Python),
        Some(Language::Js) => Some(Reader::Js),
        Some(Language::Go) => Some(Reader::Go),
        _ => c::is_c(path).then_some(Reader::C),
    }
}

/// A file read: its tests and the unit of its other code.
#[derive(Debug, Clone, Default)]
pub(crate) struct Parsed {
    pub tests: Vec<unit::Unit>,
    pub outside: unit::Unit,
}

/// Reads one side of a file.
fn parse(reader: Reader, bytes: &[u8]) -> Result<Parsed, String> {
    if bytes.contains(&0) {
        return Err("binary content (a NUL byte)".into());
    }
    let text = std::str::from_utf8(bytes).map_err(|_| "content that is not UTF-8".to_string())?;
    match reader {
        Reader::Rust => rust::parse(text),
        Reader::Python => python::parse(text),
        Reader::Js => js::parse(text),
        Reader::Go => go::parse(text),
        Reader::C => c::parse(text),
    }
    .map_err(|why| format!("a syntax error the reader cannot read past: {why}"))
}

/// Both sides of a file read.
fn parse_file(file: &FileDiff<'_>) -> Result<(Option<Parsed>, Option<Parsed>), String> {
    let path = std::str::from_utf8(file.path).map_err(|_| "a name that is not UTF-8")?;
    let reader = reader_for(file.path).ok_or_else(|| format!("no test reader for `{path}`"))?;
    let side = |b: Option<&[u8]>| b.map(|b| parse(reader, b)).transpose();
    Ok((side(file.old)?, side(file.new)?))
}

/// Classifies every edited test of `files`, all the edited test files of one commit.
pub fn read(files: &[FileDiff<'_>]) -> Vec<FileResult> {
    let parsed: Vec<_> = files.iter().map(parse_file).collect();
    let ok: Vec<Option<classify::Sides>> = parsed
        .iter()
        .map(|p| p.as_ref().ok().map(|(o, n)| (o.as_ref(), n.as_ref())))
        .collect();
    let paths: Vec<String> = files
        .iter()
        .map(|f| String::from_utf8_lossy(f.path).into_owned())
        .collect();
    let (mut edits, moves) = classify::classify(&ok, &paths);
    let to = |k: usize, test: &str| {
        let m = moves.iter().find(|m| m.file == k && m.name == test)?;
        Some((files[m.to_file].path.to_vec(), m.to_name.clone()))
    };
    files
        .iter()
        .zip(parsed.iter())
        .enumerate()
        .map(|(k, (file, p))| FileResult {
            path: file.path.to_vec(),
            outcome: match p {
                Err(why) => Err(why.clone()),
                Ok(_) => Ok(std::mem::take(&mut edits[k])
                    .into_iter()
                    .map(|(test, kind, detail)| Edit {
                        path: file.path.to_vec(),
                        to: (kind == Kind::Moved).then(|| to(k, &test)).flatten(),
                        test,
                        kind,
                        detail,
                    })
                    .collect()),
            },
        })
        .collect()
}

#[cfg(test)]
mod tests;
