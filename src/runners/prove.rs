//! Perl's `prove`.
//!
//! `t/a.t .. ok` is a test file that passed: its id is the file. With `-v` the file's own TAP
//! follows its `t/a.t .. ` line, up to a lone `ok` (or prove's `Dubious`/`Failed` verdict): each
//! passing assertion is an id too, `t/a.t > description` (read as TAP, `census/tap.rs`).
//! `Files=2, Tests=5` and `All tests successful.` mark the report.

use super::census::{Found, Parse};
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
fn file_line(content: &str) -> Option<(&str, &str)> {
    let (file, rest) = content.split_once(" ..")?;
    if file.is_empty() || file.contains(' ') || file.starts_with('#') {
        return None;
    }
    let verdict = rest.trim_start_matches('.').trim();
    Some((file, verdict))
}
