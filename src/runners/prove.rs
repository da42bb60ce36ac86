//! Perl's `prove`.
//!
//! `t/a.t .. ok` is a test file that passed: its id is the file. With `-v` the file's own TAP
//! follows its `t/a.t .. ` line, up to a lone `ok` (or prove's `Dubious`/`Failed` verdict): each
//! passing assertion is an id too, `t/a.t > description` (read as TAP, `census/tap.rs`).
//! `Files=2, Tests=5` and `All tests successful.` mark the report.

use super::census::{Block, Blocks, Failures, Found, KEEP, Parse};
use super::tap::Tap;
use super::{Census, Hit, Invocation, Language, Reading, Row, Runner};

pub(super) const ROW: Row = Row {
    runner: Runner::Prove,
    name: "prove",
    language: Language::Perl,
    recognise,
    graded: &[],
    keys: &[],
    wiring: &[],
    configs: &[".proverc"],
    census: Some(Census {
        parsers,
        id_format: "the test file and the TAP description (`t/a.t > parses`)",
        names_tests: Some("-v"),
        failures,
    }),
    under_test: &[],
    only: Some(only),
};

fn recognise(invocation: &Invocation) -> Option<Hit> {
    (invocation.program() == "prove").then(Hit::named).flatten()
}

fn parsers(_: Reading) -> Vec<Box<dyn Parse>> {
    vec![Box::new(Prove::default())]
}

/// The test files of the ids: prove runs files, not single tests.
fn failures(_: Reading) -> Vec<Box<dyn Failures>> {
    vec![Box::new(ProveFailures::default())]
}

fn only(ids: &[&str]) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for id in ids {
        let file = id.split(" > ").next().unwrap_or(id).to_string();
        if !files.contains(&file) {
            files.push(file);
        }
    }
    files
}

pub(super) struct Prove {
    found: Found,
    /// The file whose verbose TAP is being read, with its reader.
    open: Option<(String, Tap)>,
}

impl Default for Prove {
    fn default() -> Prove {
        Prove {
            found: Found::new(Runner::Prove),
            open: None,
        }
    }
}

impl Prove {
    fn close(&mut self, passed: bool) {
        if let Some((file, tap)) = self.open.take() {
            for id in tap.into_ids() {
                self.found.pass(&id);
            }
            if passed {
                self.found.pass(&file);
            }
        }
    }
}

impl Parse for Prove {
    fn line(&mut self, line: &str) {
        let content = line.trim_end();
        if content == "All tests successful." || content.starts_with("Files=") {
            self.close(false);
            self.found.seen = true;
            return;
        }
        if let Some((file, verdict)) = file_line(content) {
            self.close(false);
            if verdict.starts_with("ok") {
                self.found.pass(file);
            } else if verdict.is_empty() {
                self.open = Some((file.to_string(), Tap::for_file(file)));
            }
            return;
        }
        let Some((_, tap)) = &mut self.open else {
            return;
        };
        if content == "ok" {
            self.close(true);
        } else if content.starts_with("Dubious,")
            || content.starts_with("Failed ")
            || content.starts_with("skipped:")
        {
            self.close(false);
        } else {
            tap.line(line);
        }
    }

    fn finish(mut self: Box<Self>) -> Found {
        self.close(false);
        self.found
    }
}

/// `t/a.t .. ok` (prove pads the name with dots): the file and the verdict after the dots.
/// The failing tests' own output of prove: for each test file that did not pass, the
/// diagnostics printed since the file before it ended (`#   Failed test 'adds'`, `got`,
/// `expected`: Test::More writes them to stderr, so they come before the file's line), its `not
/// ok` lines (`-v`), and prove's verdict (`Dubious, test returned 1`, `Failed 1/3 subtests`).
/// The id is the file.
#[derive(Default)]
struct ProveFailures {
    /// Diagnostics since the last file ended.
    diagnostics: Vec<String>,
    /// The file being read, and whether prove said it failed.
    open: Option<(Block, bool)>,
    blocks: Blocks,
}

impl ProveFailures {
    fn close(&mut self) {
        if let Some((block, true)) = self.open.take() {
            self.blocks.push(block);
        }
        self.diagnostics.clear();
    }
}

impl Failures for ProveFailures {
    fn line(&mut self, line: &str) {
        let content = line.trim_end();
        if let Some((file, verdict)) = file_line(content) {
            self.close_file(file, verdict);
            return;
        }
        if content.starts_with('#') && self.diagnostics.len() < KEEP {
            self.diagnostics.push(content.to_string());
        }
        let Some((block, failed)) = &mut self.open else {
            return;
        };
        if content == "ok" {
            self.open = None;
            self.diagnostics.clear();
        } else if content.starts_with("Dubious,") || content.starts_with("Failed ") {
            block.push(content);
            *failed = true;
        } else if content.starts_with("not ok") || content.starts_with('#') {
            block.push(content);
        } else if content == "All tests successful." || content == "Test Summary Report" {
            self.close();
        }
    }

    fn finish(mut self: Box<Self>) -> Blocks {
        self.close();
        self.blocks
    }
}

impl ProveFailures {
    /// `t/a.t .. VERDICT`: the file before it ends, this one opens (or passed already).
    fn close_file(&mut self, file: &str, verdict: &str) {
        let diagnostics = std::mem::take(&mut self.diagnostics);
        self.close();
        let failed = ["Dubious", "Failed", "No subtests run", "Bailout"]
            .iter()
            .any(|v| verdict.starts_with(v));
        let path = file.contains('/') || file.contains('.');
        if !path || !(verdict.is_empty() || failed) {
            return;
        }
        let mut block = Block::new(file);
        diagnostics.iter().for_each(|d| block.push(d));
        if !verdict.is_empty() {
            block.push(verdict);
        }
        self.open = Some((block, failed));
    }
}

fn file_line(content: &str) -> Option<(&str, &str)> {
    let (file, rest) = content.split_once(" ..")?;
    if file.is_empty() || file.contains(' ') || file.starts_with('#') {
        return None;
    }
    let verdict = rest.trim_start_matches('.').trim();
    Some((file, verdict))
}
