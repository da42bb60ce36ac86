//! `go test`: its JSON events (`-json`), its verbose lines (`-v`), or its package lines.
//!
//! An id is `PACKAGE::TEST` (`example.com/m::TestSub/two_words`, subtests included). With
//! `-json` each `{"Action":"pass","Package":…,"Test":…}` event is one; with `-v` the `--- PASS:
//! TestX (0.00s)` lines of a package are named when its `ok  \tPACKAGE` line comes. Plain
//! `go test ./...` prints no test names: then each package that passed (`ok  \tPACKAGE`) is one
//! id, so a package that leaves the run (a nested `go.mod`) is missing, a test inside one is not.

use serde::Deserialize;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use super::census::{Block, Blocks, Failures, Found, Parse, visible};
use super::{Census, Graded, Hit, Invocation, Language, RUNNER_CONFIG, Reading, Row, Runner, js};

pub(super) const ROW: Row = Row {
    runner: Runner::Go,
    name: "go",
    language: Language::Go,
    recognise,
    graded: &GRADED,
    keys: &[],
    wiring: &[],
    configs: &[],
    census: Some(Census {
        parsers,
        id_format: "`PACKAGE::TEST`, subtests as go names them (`example.com/m::TestParse/two`)",
        names_tests: Some("-json"),
        failures,
    }),
    under_test: &["testing.Testing()", "flag.Lookup(\"test.", "\".test\")"],
    only: Some(only),
};

/// A `go.mod` below the root makes a module of its own, which `./...` leaves out; `go.work`
/// decides which modules build.
const GRADED: [Graded; 2] = [
    ("*/**/go.mod", RUNNER_CONFIG),
    ("**/go.work", RUNNER_CONFIG),
];

/// `go test`; any other go command still grades the modules' files.
fn recognise(invocation: &Invocation) -> Option<Hit> {
    if invocation.program() != "go" {
        return None;
    }
    let at = super::command::skip_options(invocation.args(), &["-C"]);
    match invocation.args().get(at).map(String::as_str) {
        Some("test") => Hit::named(),
        _ => Hit::graded_only(),
    }
}

fn parsers(_: Reading) -> Vec<Box<dyn Parse>> {
    vec![Box::new(GoTest::default())]
}

/// `-run '^(TestA|TestB)$'`: the top-level test names of the ids (`PACKAGE::TEST/SUBTEST`).
fn only(ids: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for id in ids {
        let test = id.rsplit_once("::").map_or(*id, |(_, t)| t);
        let name = js::regex_literal(test.split('/').next().unwrap_or(test));
        if !names.contains(&name) {
            names.push(name);
        }
    }
    vec!["-run".to_string(), format!("^({})$", names.join("|"))]
}

fn failures(_: Reading) -> Vec<Box<dyn Failures>> {
    vec![Box::new(GoFailures::default())]
}

#[derive(Default)]
pub(super) struct GoTest {
    found: Option<Found>,
    /// `-v`: the tests that passed since the last package line.
    pending: Vec<String>,
    /// `-v`: a `--- ` result line was read since the last package line.
    verbose: bool,
}

/// The fields of a `go test -json` event the census reads.
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "Action")]
    action: &'a str,
    #[serde(rename = "Package", default)]
    package: Option<&'a str>,
    #[serde(rename = "Test", default)]
    test: Option<&'a str>,
}

impl GoTest {
    fn found(&mut self) -> &mut Found {
        self.found.get_or_insert_with(|| Found::new(Runner::Go))
    }

    fn event(&mut self, line: &str) {
        // Most events are output: parse only what can be a result.
        let results = [
            "\"Action\":\"pass\"",
            "\"Action\":\"fail\"",
            "\"Action\":\"skip\"",
        ];
        if !results.iter().any(|r| line.contains(r)) {
            if line.contains("\"Action\":") {
                self.found().seen = true;
            }
            return;
        }
        let Ok(event) = serde_json::from_str::<Event<'_>>(line) else {
            return;
        };
        self.found().seen = true;
        if let (Some(package), Some(test), "pass") = (event.package, event.test, event.action) {
            self.found().pass_owned(format!("{package}::{test}"));
        }
    }

    /// `ok  \tPKG\t0.01s`, `FAIL\tPKG\t…`, `?   \tPKG\t[no test files]`: the package's tests
    /// named, or the package itself when the run is not verbose.
    fn package_line(&mut self, line: &str) -> bool {
        let Some((status, rest)) = line.split_once('\t') else {
            return false;
        };
        let status = status.trim_end();
        if !matches!(status, "ok" | "FAIL" | "?") {
            return false;
        }
        let package = rest.split('\t').next().unwrap_or("").trim();
        if package.is_empty() || package.contains(' ') {
            return false;
        }
        self.found().seen = true;
        let pending = std::mem::take(&mut self.pending);
        let verbose = std::mem::take(&mut self.verbose);
        if verbose {
            // The tests that passed, in a package that failed too.
            for test in pending {
                self.found().pass_owned(format!("{package}::{test}"));
            }
        } else if status == "ok" && !rest.contains("[no test files]") {
            self.found().pass(package);
        }
        true
    }

    /// `--- PASS: TestX (0.00s)`, indented for subtests.
    fn result_line(&mut self, line: &str) {
        let Some(rest) = line.trim_start().strip_prefix("--- ") else {
            return;
        };
        let Some((status, rest)) = rest.split_once(": ") else {
            return;
        };
        if !matches!(status, "PASS" | "FAIL" | "SKIP") {
            return;
        }
        self.verbose = true;
        let Some((name, _)) = rest.rsplit_once(" (") else {
            return;
        };
        if status == "PASS" && !name.is_empty() {
            self.pending.push(name.to_string());
        }
    }
}

impl Parse for GoTest {
    fn line(&mut self, line: &str) {
        if line.starts_with('{') {
            self.event(line);
        } else if !self.package_line(line) {
            self.result_line(line);
        }
    }

    fn finish(self: Box<Self>) -> Found {
        self.found.unwrap_or_else(|| Found::new(Runner::Go))
    }
}

/// A `go test -json` event as the excerpt reads it: its output too.
#[derive(Deserialize)]
struct OutputEvent<'a> {
    #[serde(rename = "Action")]
    action: &'a str,
    #[serde(rename = "Package", default)]
    package: Option<&'a str>,
    #[serde(rename = "Test", default)]
    test: Option<&'a str>,
    #[serde(rename = "Output", default, borrow)]
    output: Option<Cow<'a, str>>,
}

/// The most tests whose output is held while they run; later ones are shown without it.
const RUNNING_MAX: usize = 1024;

/// The failing tests' own output of `go test -json` (the `Output` of each failing test's
/// events, by the event's `Test`, never by what the text says) or of its text report (a `---
/// FAIL: TestX` line with its indented lines, and with `-v` what it printed since its `=== RUN`).
/// A test with no `run` event never ran: go's text-to-JSON converter of old Go versions turns a
/// line a test prints, `--- FAIL: TestOther`, into a failure of a test that never ran, and that
/// is not shown. A package that failed with no failing test (it did not build, it panicked
/// outside a test) shows its own output.
#[derive(Default)]
struct GoFailures {
    /// The tests that ran and have no result yet, with their output.
    running: HashMap<(String, String), Block>,
    /// The tests that have a `run` event.
    ran: HashSet<(String, String)>,
    /// Each package's own output (events without a test).
    packages: HashMap<String, Block>,
    /// The packages where a test failed.
    failed_in: HashSet<String>,
    blocks: Blocks,
    text: GoText,
}

impl GoFailures {
    fn event(&mut self, event: OutputEvent<'_>) {
        let Some(package) = event.package else {
            return;
        };
        let Some(test) = event.test else {
            return self.package_event(package, &event);
        };
        let key = (package.to_string(), test.to_string());
        match event.action {
            "run" => {
                self.ran.insert(key.clone());
                if self.running.len() < RUNNING_MAX {
                    self.running
                        .insert(key, Block::new(format!("{package}::{test}")));
                }
            }
            "output" => {
                if let (Some(block), Some(text)) = (self.running.get_mut(&key), &event.output) {
                    push_output(block, text);
                }
            }
            "fail" if self.ran.contains(&key) => {
                let block = self.running.remove(&key);
                self.failed_in.insert(key.0);
                self.blocks
                    .push(block.unwrap_or_else(|| Block::new(format!("{package}::{test}"))));
            }
            "pass" | "skip" => {
                self.running.remove(&key);
            }
            _ => {}
        }
    }

    fn package_event(&mut self, package: &str, event: &OutputEvent<'_>) {
        match (event.action, &event.output) {
            ("output", Some(text)) => {
                let block = self
                    .packages
                    .entry(package.to_string())
                    .or_insert_with(|| Block::new(package));
                push_output(block, text);
            }
            ("fail", _) if !self.failed_in.contains(package) => {
                if let Some(block) = self.packages.remove(package) {
                    self.blocks.push(block);
                }
            }
            ("fail" | "pass" | "skip", _) => {
                self.packages.remove(package);
            }
            _ => {}
        }
    }
}

/// Add the lines of an event's `Output`, as a terminal shows them, leaving out go's framing
/// (`=== RUN`, `=== PAUSE`, `=== CONT`, `=== NAME`).
fn push_output(block: &mut Block, text: &str) {
    for line in text.strip_suffix('\n').unwrap_or(text).split('\n') {
        let line = visible(line.as_bytes());
        let framing = ["=== RUN ", "=== PAUSE ", "=== CONT ", "=== NAME "];
        if !framing.iter().any(|f| line.starts_with(f)) {
            block.push(&line);
        }
    }
}

impl Failures for GoFailures {
    fn line(&mut self, line: &str) {
        if line.starts_with('{') && line.contains("\"Action\":") {
            if let Ok(event) = serde_json::from_str::<OutputEvent<'_>>(line) {
                self.event(event);
            }
            return;
        }
        self.text.line(line);
    }

    fn finish(self: Box<Self>) -> Blocks {
        let mut blocks = self.blocks;
        let text = self.text.finish();
        let (kept, more) = text.into_parts();
        for block in kept {
            blocks.push(block);
        }
        for id in more {
            blocks.push(Block::new(id));
        }
        without_bare_parents(blocks)
    }
}

/// Without a failing test that printed nothing but its own `--- FAIL` line when one of its
/// subtests failed (the subtest's block says why).
fn without_bare_parents(mut blocks: Blocks) -> Blocks {
    let ids: Vec<String> = blocks.kept_mut().iter().map(|b| b.id.clone()).collect();
    blocks.kept_mut().retain(|b| {
        let bare = b.lines().all(|l| l.trim_start().starts_with("--- FAIL: "));
        let prefix = format!("{}/", b.id);
        !(bare && ids.iter().any(|id| id.starts_with(&prefix)))
    });
    blocks
}

/// `go test`'s text report: a `--- FAIL: TestX (0.00s)` line, the lines indented under it (and
/// an example's `got:`/`want:`), and with `-v` the lines since the test's `=== RUN`; the
/// package, and so the id, comes with the package's `FAIL\tPACKAGE` line.
#[derive(Default)]
struct GoText {
    /// `-v`: the test whose lines these are (`=== RUN`, `=== CONT`, `=== NAME`) and its lines.
    current: Option<Block>,
    /// The failing test being read and the indentation of its `--- FAIL` line.
    open: Option<(Block, usize)>,
    /// The failing tests of the package being read, without their package.
    package: Vec<Block>,
    blocks: Blocks,
}

impl GoText {
    fn line(&mut self, line: &str) {
        let content = line.trim_start();
        let indent = line.len() - content.len();
        if let Some((block, at)) = &mut self.open {
            let example = block.id.starts_with("Example");
            let framing = content.starts_with("--- ") || content.starts_with("=== ");
            let example_line = example && indent == 0 && !matches!(content, "FAIL" | "PASS");
            if !framing && (indent > *at || (example_line && is_package(line).is_none())) {
                block.push(line);
                return;
            }
            self.close();
        }
        if let Some(name) = framing_name(line) {
            self.current = Some(Block::new(name));
        } else if let Some(name) = fail_name(content) {
            let mut block = Block::new(name);
            if let Some(current) = self.current.take_if(|c| c.id == name) {
                block = current;
            }
            block.push(line);
            self.open = Some((block, indent));
        } else if let Some(package) = is_package(line) {
            for mut block in std::mem::take(&mut self.package) {
                block.id = format!("{package}::{}", block.id);
                self.blocks.push(block);
            }
            self.current = None;
        } else if let Some(current) = &mut self.current
            && !content.starts_with("--- ")
        {
            current.push(line);
        }
    }

    fn close(&mut self) {
        if let Some((block, _)) = self.open.take() {
            self.package.push(block);
        }
    }

    fn finish(mut self) -> Blocks {
        self.close();
        for block in std::mem::take(&mut self.package) {
            self.blocks.push(block);
        }
        self.blocks
    }
}

/// `=== RUN   TestX` (`CONT`, `NAME`): the test whose lines follow.
fn framing_name(line: &str) -> Option<&str> {
    let rest = ["=== RUN ", "=== CONT ", "=== NAME "]
        .iter()
        .find_map(|f| line.strip_prefix(f))?;
    Some(rest.trim()).filter(|n| !n.is_empty())
}

/// `--- FAIL: TestX (0.00s)`: `TestX`.
fn fail_name(content: &str) -> Option<&str> {
    let rest = content.strip_prefix("--- FAIL: ")?;
    let (name, _) = rest.rsplit_once(" (")?;
    Some(name).filter(|n| !n.is_empty() && !n.contains(' '))
}

/// `FAIL\tPACKAGE\t0.01s` (or `ok  \tPACKAGE…`): the package.
fn is_package(line: &str) -> Option<&str> {
    let (status, rest) = line.split_once('\t')?;
    if !matches!(status.trim_end(), "ok" | "FAIL") {
        return None;
    }
    let package = rest.split('\t').next()?.trim();
    Some(package).filter(|p| !p.is_empty() && !p.contains(' '))
}
