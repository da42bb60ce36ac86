//! The test runners closegate knows, one row each (issue #46), and the one reader of a check's
//! `run` string ([`command`]). A row says everything closegate knows about one runner: how a
//! command of a `run` string invokes it, what is graded input when it runs (SPEC §4.5, §26.4),
//! which files wire it (§26.4), how its output is read for the census and what its test ids
//! look like, what source text tests whether it runs under it, and how to run only some of its
//! tests. The gates, the census, `init`'s guesses and `validate` ask this table; nothing else
//! names a runner. Adding a runner is one file here and one line in [`Runner`]: every `match`
//! over [`Runner`] is exhaustive, and `tests::every_row_is_whole` fails on a row with a field
//! left empty that the runner's kind needs.

pub mod census;
mod command;
mod gotest;
mod jest;
mod js;
mod libtest;
mod make;
mod mocha;
mod nextest;
mod node;
mod npm;
mod prove;
mod pytest;
mod redefine;
mod tap;
mod task;
pub mod testdiff;
mod unittest;
mod vitest;

use std::collections::BTreeSet;

use serde_json::Value as Json;

pub use command::{Invocation, invocations, run_words};
pub use redefine::redefinition;

/// A test runner (or a program that runs a project's tests for it: make, npm scripts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Runner {
    /// Rust's libtest, as `cargo test` runs it.
    Libtest,
    Pytest,
    /// Python's `unittest`.
    Unittest,
    /// `go test`.
    Go,
    /// `node --test`.
    Node,
    Mocha,
    Jest,
    Vitest,
    /// A TAP producer: tape, node-tap, ava's TAP, any program printing TAP.
    Tap,
    /// Perl's `prove`.
    Prove,
    /// `cargo nextest run`.
    Nextest,
    /// `make` and its test target.
    Make,
    /// npm, yarn and pnpm: the package's scripts.
    Npm,
    /// Other task runners that run a project's own test task (`just`, `task`, `tox`, …).
    Task,
}

impl Runner {
    /// Every runner, in the order reports name them.
    pub const ALL: [Runner; 14] = [
        Runner::Libtest,
        Runner::Pytest,
        Runner::Unittest,
        Runner::Go,
        Runner::Node,
        Runner::Mocha,
        Runner::Jest,
        Runner::Vitest,
        Runner::Tap,
        Runner::Prove,
        Runner::Nextest,
        Runner::Make,
        Runner::Npm,
        Runner::Task,
    ];

    /// The runner's row of the table.
    pub fn row(self) -> &'static Row {
        match self {
            Runner::Libtest => &libtest::ROW,
            Runner::Pytest => &pytest::ROW,
            Runner::Unittest => &unittest::ROW,
            Runner::Go => &gotest::ROW,
            Runner::Node => &node::ROW,
            Runner::Mocha => &mocha::ROW,
            Runner::Jest => &jest::ROW,
            Runner::Vitest => &vitest::ROW,
            Runner::Tap => &tap::ROW,
            Runner::Prove => &prove::ROW,
            Runner::Nextest => &nextest::ROW,
            Runner::Make => &make::ROW,
            Runner::Npm => &npm::ROW,
            Runner::Task => &task::ROW,
        }
    }

    /// The runner's name in the configuration, the report and the record.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// The runner called `name`.
    pub fn parse(name: &str) -> Option<Runner> {
        Runner::ALL.into_iter().find(|r| r.name() == name)
    }

    /// Whether closegate reads this runner's output for the census (SPEC §26.4).
    pub fn has_census(self) -> bool {
        self.row().census.is_some()
    }

    /// The runners whose output the census reads.
    pub fn with_census() -> impl Iterator<Item = Runner> {
        Runner::ALL.into_iter().filter(|r| r.has_census())
    }
}

/// The language a runner's tests are written in: which source files its under-test markers are
/// looked for in, and (issue #47) which test-diff reader reads an edit of its test files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Rust,
    Python,
    Go,
    /// JavaScript and TypeScript.
    Js,
    Perl,
    /// A runner of other programs' tests (make, a task runner): no language of its own.
    None,
}

impl Language {
    /// The language of a source file, by its extension (C and C++ are not runner languages:
    /// their harness macros are `gates::protected::macros`'s).
    pub fn of_path(path: &[u8]) -> Option<Language> {
        let ext = |e: &[u8]| path.ends_with(e);
        if ext(b".rs") {
            Some(Language::Rust)
        } else if ext(b".py") {
            Some(Language::Python)
        } else if ext(b".go") {
            Some(Language::Go)
        } else if [&b".js"[..], b".mjs", b".cjs", b".ts", b".tsx", b".jsx"]
            .iter()
            .any(|e| ext(e))
        {
            Some(Language::Js)
        } else if ext(b".pl") || ext(b".pm") || ext(b".t") {
            Some(Language::Perl)
        } else {
            None
        }
    }
}

/// Why a whole graded file decides what the checks run.
pub const RUNNER_CONFIG: &str = "the runner's own configuration decides what the checks run";

/// A graded file of a runner: a glob over repository paths, and why it is graded.
pub type Graded = (&'static str, &'static str);

/// Graded keys of one file kind and their values (as text), `None` when the file does not parse.
pub type KeyReader = fn(&[u8], &Invoked) -> Option<Vec<(String, String)>>;

/// A file some of whose keys are graded input (SPEC §4.5): its name (at any depth) and the
/// reader of those keys.
#[derive(Clone, Copy)]
pub struct Keys {
    pub file: &'static str,
    pub read: KeyReader,
}

/// How one command of a `run` string invokes a runner.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hit {
    /// What the census reads of this command's output.
    pub census: Reading,
    /// npm scripts it runs (`npm test` → `test`).
    pub scripts: Vec<String>,
    /// Test globs or paths handed to it on the command line (tape, ava, nyc: SPEC §26.4).
    pub test_globs: Vec<String>,
}

impl Hit {
    pub fn named() -> Option<Hit> {
        Some(Hit {
            census: Reading::Named,
            ..Hit::default()
        })
    }

    pub fn wrapper() -> Option<Hit> {
        Some(Hit {
            census: Reading::Auto,
            ..Hit::default()
        })
    }

    pub fn graded_only() -> Option<Hit> {
        Some(Hit::default())
    }
}

/// What the census reads of a command that invokes a runner.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Reading {
    /// The runner's own census (`cargo test`, `pytest`).
    Named,
    /// Every runner's: the command runs the project's tests through something else (`npm test`,
    /// `make test`, `tox`).
    Auto,
    /// None: the command invokes the runner's tool for something else (`cargo build`), which
    /// still makes its configuration graded input.
    #[default]
    Nothing,
}

/// The census side of a row: how its output is read (SPEC §26.4).
pub struct Census {
    /// The parsers of its output: its plain output and the machine formats it offers. Under
    /// `auto` each kind of parser runs once ([`census::Mode::Auto`]).
    pub parsers: fn(Reading) -> Vec<Box<dyn census::Parse>>,
    /// What one of its test ids looks like (docs/census.md).
    pub id_format: &'static str,
    /// The option that makes it name every passing test (its census is then by id, not only a
    /// count), as `npm test -- OPTION` passes it; `None` when its default output names them.
    pub names_tests: Option<&'static str>,
    /// The readers of its failing tests' own output, for the excerpt of a failed run (SPEC
    /// §27.2): the formats its `parsers` read, each reader beside its parser.
    pub failures: fn(Reading) -> Vec<Box<dyn census::Failures>>,
}

/// The arguments that run only the named tests (their census ids).
pub type Only = fn(&[&str]) -> Vec<String>;

/// One runner: everything closegate knows about it, in one place.
pub struct Row {
    pub runner: Runner,
    /// Its name in the configuration (`census = "pytest"`), the report and the record.
    pub name: &'static str,
    /// The language its tests are written in.
    pub language: Language,
    /// Whether one command of a `run` string (wrappers already unwrapped by [`command`])
    /// invokes it, and how.
    pub recognise: fn(&Invocation) -> Option<Hit>,
    /// Files graded whole when it runs (SPEC §4.5, §26.4).
    pub graded: &'static [Graded],
    /// Files whose keys are graded when it runs.
    pub keys: &'static [Keys],
    /// Names whose mere addition changes how the tests already there run (runner wiring, SPEC
    /// §26.4): needs review under `modify` and `integrity`.
    pub wiring: &'static [&'static str],
    /// Its configuration files at the root, read for the files they name (those are wiring too).
    pub configs: &'static [&'static str],
    /// Its census; `None` for a program that runs other runners (make, npm scripts).
    pub census: Option<Census>,
    /// Source text that tests whether the code runs under this runner (docs/integrity.md).
    pub under_test: &'static [&'static str],
    /// The arguments that make it run only the named tests (its census ids), added after its
    /// own arguments; `None` when it cannot (the reruns of SPEC §27.2 then rerun the whole run).
    pub only: Option<Only>,
}

/// What a set of checks invokes: the runners, the npm scripts and the test globs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Invoked {
    pub runners: BTreeSet<Runner>,
    pub npm_scripts: BTreeSet<String>,
    /// The test globs (or paths) given to tape, ava or nyc, as written (quotes and `./` dropped).
    pub test_globs: Vec<String>,
}

impl Invoked {
    /// What the `run` strings invoke, command by command.
    pub fn of<'a>(runs: impl IntoIterator<Item = &'a str>) -> Invoked {
        let mut found = Invoked::default();
        for run in runs {
            found.add(run);
        }
        found
    }

    /// Add what one shell text invokes (a `run` string or an npm script).
    pub fn add(&mut self, text: &str) {
        for invocation in invocations(text) {
            for runner in Runner::ALL {
                let Some(hit) = (runner.row().recognise)(&invocation) else {
                    continue;
                };
                self.runners.insert(runner);
                self.npm_scripts.extend(hit.scripts);
                for glob in hit.test_globs {
                    if !self.test_globs.contains(&glob) {
                        self.test_globs.push(glob);
                    }
                }
            }
        }
    }

    pub fn has(&self, runner: Runner) -> bool {
        self.runners.contains(&runner)
    }

    /// Whether a JavaScript runner or package manager runs.
    pub fn js(&self) -> bool {
        self.runners
            .iter()
            .any(|r| r.row().language == Language::Js)
    }

    /// The rows of the runners invoked.
    pub fn rows(&self) -> impl Iterator<Item = &'static Row> + '_ {
        self.runners.iter().map(|r| r.row())
    }

    /// With what the npm scripts it names run, followed through `package_json` (SPEC §4.5): a
    /// runner an npm script invokes is invoked.
    pub fn with_scripts(&self, package_json: &Json) -> Invoked {
        let mut found = self.clone();
        for (_, text) in js::followed_scripts(package_json, &self.npm_scripts) {
            found.add(text.as_deref().unwrap_or(""));
        }
        found
    }

    /// The files graded whole, each with why: what every run grades, then the rows'.
    pub fn graded_files(&self) -> Vec<Graded> {
        let mut out: Vec<Graded> = ALWAYS_GRADED.to_vec();
        for row in self.rows() {
            for graded in row.graded {
                if !out.iter().any(|(g, _)| g == &graded.0) {
                    out.push(*graded);
                }
            }
        }
        out
    }

    /// The key readers of the file called `name` (a base name), for the runners invoked.
    pub fn key_readers(&self, name: &[u8]) -> Vec<KeyReader> {
        let mut out: Vec<KeyReader> = Vec::new();
        for row in self.rows() {
            for keys in row.keys.iter().filter(|k| k.file.as_bytes() == name) {
                if !out.iter().any(|r| std::ptr::fn_addr_eq(*r, keys.read)) {
                    out.push(keys.read);
                }
            }
        }
        out
    }
}

/// Graded whatever runs: each runs before any test does (SPEC §26.4).
const ALWAYS_GRADED: [Graded; 4] = [
    (
        "**/build.rs",
        "a build script runs before the code it builds is compiled",
    ),
    (
        "**/sitecustomize.py",
        "Python runs a start-up file before any test",
    ),
    (
        "**/usercustomize.py",
        "Python runs a start-up file before any test",
    ),
    ("**/*.pth", "Python runs a start-up file before any test"),
];

/// The census mode a check's `run` implies when it has no `census` key (SPEC §26.4): the
/// runners it names by their own census; else every runner's, when it goes through a program
/// that runs the project's tests for it (`npm test`, `make test`, `tox`); else none.
pub fn census_mode(run: &str) -> census::Mode {
    let mut named: Vec<Runner> = Vec::new();
    let mut wrapped = false;
    for invocation in invocations(run) {
        for runner in Runner::ALL {
            match (runner.row().recognise)(&invocation).map(|h| h.census) {
                Some(Reading::Named) if runner.has_census() && !named.contains(&runner) => {
                    named.push(runner);
                }
                Some(Reading::Named) if runner.has_census() => {}
                Some(Reading::Named | Reading::Auto) => wrapped = true,
                _ => {}
            }
        }
    }
    if !named.is_empty() {
        named.sort();
        return census::Mode::Named(named);
    }
    if wrapped {
        census::Mode::Auto
    } else {
        census::Mode::Off
    }
}

/// Whether `run` invokes a runner the census reads by name (SPEC §26.4), directly or through
/// the scripts of `package_json` it runs (`npm test` running `mocha`): what `init` asks before
/// it writes `tests = "integrity"` (SPEC §27.1).
pub fn reads_census(run: &str, package_json: Option<&Json>) -> bool {
    if matches!(census_mode(run), census::Mode::Named(_)) {
        return true;
    }
    let scripts = Invoked::of([run]).npm_scripts;
    let Some(package_json) = package_json.filter(|_| !scripts.is_empty()) else {
        return false;
    };
    js::followed_scripts(package_json, &scripts)
        .iter()
        .filter_map(|(_, text)| text.as_deref())
        .any(|text| matches!(census_mode(text), census::Mode::Named(_)))
}

/// The names whose mere addition rewires a runner, of every row (SPEC §26.4).
pub fn wiring_names() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for runner in Runner::ALL {
        for name in runner.row().wiring {
            if !out.contains(name) {
                out.push(name);
            }
        }
    }
    out
}

/// The runners' configuration files read for the files they name, of every row.
pub fn wiring_configs() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for runner in Runner::ALL {
        for name in runner.row().configs {
            if !out.contains(name) {
                out.push(name);
            }
        }
    }
    out
}

/// The text that tests whether code runs under a test runner, for the language of `path`: the
/// markers of every row of that language.
pub fn under_test_markers(path: &[u8]) -> Vec<&'static str> {
    let Some(language) = Language::of_path(path) else {
        return Vec::new();
    };
    let mut out: Vec<&'static str> = Vec::new();
    for runner in Runner::ALL {
        let row = runner.row();
        if row.language == language {
            for marker in row.under_test {
                if !out.contains(marker) {
                    out.push(marker);
                }
            }
        }
    }
    out
}

/// The option that makes the runner a command invokes name every passing test, when `command`
/// (an npm script, say) is one runner's command alone; `None` when it already does or cannot.
pub fn names_tests_option(command: &str) -> Option<&'static str> {
    let found = invocations(command);
    let [invocation] = found.as_slice() else {
        return None;
    };
    let runner = Runner::ALL
        .into_iter()
        .find(|r| (r.row().recognise)(invocation).is_some_and(|h| h.census == Reading::Named))?;
    let option = runner.row().census.as_ref()?.names_tests?;
    let given = option.split('=').next().unwrap_or(option);
    (!command.contains(given)).then_some(option)
}

#[cfg(test)]
mod tests;
