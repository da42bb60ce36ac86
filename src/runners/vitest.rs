//! vitest's report (its TAP report goes through the TAP reader).
//!
//! With `--reporter=verbose` each test is `✓ path > suite > name 2ms`: the id is that path
//! (`vt/a.test.js > outer > passes`), numbered from the second when one repeats. The default
//! report names only files (`✓ vt/b.test.js (1 test) 5ms`), which are not ids; `Tests  1 failed
//! | 4 passed (7)` gives the count either way.

use std::collections::HashMap;

use super::census::{Block, Blocks, Failures, Found, Parse};
use super::{Census, Hit, Invocation, Language, Reading, Row, Runner, js, tap};

pub(super) const ROW: Row = Row {
    runner: Runner::Vitest,
    name: "vitest",
    language: Language::Js,
    recognise,
    graded: &js::GRADED,
    keys: &js::KEYS,
    wiring: &["**/vitest.config.*"],
    configs: &[
        "package.json",
        "vitest.config.js",
        "vitest.config.ts",
        "vitest.config.mjs",
    ],
    census: Some(Census {
        parsers,
        id_format: "the file, suites and test joined by ` > ` (`src/sum.test.ts > sum > adds`)",
        names_tests: Some("--reporter=verbose"),
        failures,
    }),
    under_test: &["process.env.VITEST"],
    only: Some(only),
};

fn recognise(invocation: &Invocation) -> Option<Hit> {
    (invocation.program() == "vitest")
        .then(Hit::named)
        .flatten()
}

fn parsers(reading: Reading) -> Vec<Box<dyn Parse>> {
    match reading {
        Reading::Auto => vec![Box::new(Vitest::default())],
        _ => vec![
            Box::new(Vitest::default()),
            Box::new(tap::Tap::new(Some(Runner::Vitest))),
        ],
    }
}

/// `-t`: the tests' own names.
fn failures(reading: Reading) -> Vec<Box<dyn Failures>> {
    match reading {
        Reading::Auto => vec![Box::new(VitestFailures::default())],
        _ => vec![
            Box::new(VitestFailures::default()),
            Box::new(tap::TapFailures::new(Some(Runner::Vitest))),
        ],
    }
}

fn only(ids: &[&str]) -> Vec<String> {
    vec!["-t".to_string(), js::name_pattern(ids)]
}

pub(super) struct Vitest {
    found: Found,
    seen_ids: HashMap<String, u32>,
}

impl Default for Vitest {
    fn default() -> Vitest {
        Vitest {
            found: Found::new(Runner::Vitest),
            seen_ids: HashMap::new(),
        }
    }
}

impl Parse for Vitest {
    fn line(&mut self, line: &str) {
        let content = line.trim();
        if let Some(rest) = content.strip_prefix("Tests ") {
            if rest.trim_end().ends_with(')') {
                self.found.count(passed(rest));
            }
        } else if content.starts_with("Test Files ") {
            self.found.seen = true;
        } else if let Some(rest) = content.strip_prefix("✓ ") {
            if !rest.contains(" > ") {
                return;
            }
            let id = without_time(rest);
            let n = self.seen_ids.entry(id.to_string()).or_insert(0);
            *n += 1;
            let id = if *n == 1 {
                id.to_string()
            } else {
                format!("{id} #{n}")
            };
            self.found.pass(&id);
        }
    }

    fn finish(self: Box<Self>) -> Found {
        self.found
    }
}

/// `name 12ms` / `name 1.2s` without its time.
/// The failing tests' own output of vitest: each ` FAIL  path > suite > test` line of its
/// failures report and what follows it (the error, the diff, the code frame) up to the next
/// `FAIL` line or a `⎯` rule; tests that failed alike are listed together and share those lines.
/// The id is the `path > suite > test` the line names, as the census names tests.
#[derive(Default)]
struct VitestFailures {
    /// The tests whose lines are being read; more than one when they share their error.
    open: Vec<Block>,
    blocks: Blocks,
}

impl VitestFailures {
    fn close(&mut self) {
        for block in std::mem::take(&mut self.open) {
            self.blocks.push(block);
        }
    }
}

impl Failures for VitestFailures {
    fn line(&mut self, line: &str) {
        let content = line.trim();
        if let Some(id) = content.strip_prefix("FAIL ").map(str::trim)
            && id.contains(" > ")
        {
            if self.open.iter().any(|b| !b.is_empty()) {
                self.close();
            }
            let id = id.strip_suffix(" [ suite ]").unwrap_or(id);
            self.open.push(Block::new(id));
            return;
        }
        if content.starts_with('⎯') || content.starts_with("Test Files ") {
            self.close();
            return;
        }
        for block in &mut self.open {
            block.push(line);
        }
    }

    fn finish(mut self: Box<Self>) -> Blocks {
        self.close();
        self.blocks
    }
}

fn without_time(text: &str) -> &str {
    match text.rsplit_once(' ') {
        Some((head, tail)) => {
            let number = tail.strip_suffix("ms").or(tail.strip_suffix('s'));
            match number {
                Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit() || b == b'.') => {
                    head
                }
                _ => text,
            }
        }
        None => text,
    }
}

/// The passed count of ` 1 failed | 4 passed | 1 skipped (7)`.
fn passed(rest: &str) -> u64 {
    let rest = rest.rsplit_once('(').map_or(rest, |(head, _)| head);
    rest.split('|')
        .filter_map(|item| item.trim().split_once(' '))
        .find(|(_, what)| *what == "passed")
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or(0)
}
