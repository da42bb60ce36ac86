//! mocha's default `spec` report (its TAP report goes through the TAP reader).
//!
//! Suites and tests nest by indentation, two spaces a level: a line without a mark is a suite's
//! title, `✓ title` (`✔` in newer mochas) a passing test, `1) title` a failing one, `- title` a
//! pending one. The id is the suite titles and the test's, joined by ` > ` (`outer > inner >
//! deep passes`), numbered from the second when one repeats. `N passing (12ms)` gives the count
//! and ends the part that is read: the failure details after it quote the tests' own words.

use super::census::{Block, Blocks, Failures, Found, Parse, Repeats};
use super::node::without_duration;
use super::{
    Census, Graded, Hit, Invocation, Language, RUNNER_CONFIG, Reading, Row, Runner, js, tap,
};

pub(super) const ROW: Row = Row {
    runner: Runner::Mocha,
    name: "mocha",
    language: Language::Js,
    recognise,
    graded: &GRADED,
    keys: &js::KEYS,
    wiring: &["**/.mocharc*"],
    configs: &[
        ".mocharc",
        ".mocharc.js",
        ".mocharc.cjs",
        ".mocharc.json",
        ".mocharc.jsonc",
        ".mocharc.yaml",
        ".mocharc.yml",
    ],
    census: Some(Census {
        parsers,
        id_format: "the suite and test titles joined by ` > ` (`Array > #indexOf() > finds`)",
        names_tests: None,
        failures,
    }),
    under_test: &[],
    only: Some(only),
};

const GRADED: [Graded; 11] = {
    let mut all = [("**/.mocharc*", RUNNER_CONFIG); 11];
    let mut i = 0;
    while i < js::GRADED.len() {
        all[i + 1] = js::GRADED[i];
        i += 1;
    }
    all
};

fn recognise(invocation: &Invocation) -> Option<Hit> {
    matches!(invocation.program(), "mocha" | "_mocha")
        .then(Hit::named)
        .flatten()
}

fn parsers(reading: Reading) -> Vec<Box<dyn Parse>> {
    match reading {
        Reading::Auto => vec![Box::new(Mocha::default())],
        _ => vec![
            Box::new(Mocha::default()),
            Box::new(tap::Tap::new(Some(Runner::Mocha))),
        ],
    }
}

/// `--grep`: the tests' own titles.
fn failures(reading: Reading) -> Vec<Box<dyn Failures>> {
    match reading {
        Reading::Auto => vec![Box::new(MochaFailures::default())],
        _ => vec![
            Box::new(MochaFailures::default()),
            Box::new(tap::TapFailures::new(Some(Runner::Mocha))),
        ],
    }
}

fn only(ids: &[&str]) -> Vec<String> {
    vec!["--grep".to_string(), js::name_pattern(ids)]
}

pub(super) struct Mocha {
    found: Found,
    suites: Vec<String>,
    done: bool,
    seen_ids: Repeats,
}

impl Default for Mocha {
    fn default() -> Mocha {
        Mocha {
            found: Found::new(Runner::Mocha),
            suites: Vec::new(),
            done: false,
            seen_ids: Repeats::default(),
        }
    }
}

impl Mocha {
    fn pass(&mut self, depth: usize, title: &str) {
        let mut parts: Vec<&str> = self.suites.iter().take(depth).map(String::as_str).collect();
        parts.push(title);
        let id = parts.join(" > ");
        let id = self.seen_ids.numbered(id);
        self.found.pass(&id);
    }
}

impl Parse for Mocha {
    fn line(&mut self, line: &str) {
        let content = line.trim_start();
        let indent = line.len() - content.len();
        let content = content.trim_end();
        if let Some(n) = passing(content) {
            self.found.count(n);
            self.done = true;
            return;
        }
        if self.done || indent < 2 || content.is_empty() {
            return;
        }
        let depth = indent / 2 - 1;
        if let Some(title) = content
            .strip_prefix("✓ ")
            .or_else(|| content.strip_prefix("✔ "))
        {
            self.pass(depth, without_duration(title));
        } else if content.starts_with("- ") || failed_mark(content) {
            // Pending or failing: not passed.
        } else {
            self.suites.truncate(depth);
            while self.suites.len() < depth {
                self.suites.push(String::new());
            }
            self.suites.push(content.to_string());
        }
    }

    fn finish(self: Box<Self>) -> Found {
        self.found
    }
}

/// `12 passing (33ms)`.
/// The failing tests' own output of mocha's `spec` report: after `N failing`, each `N) suite`
/// detail — its titles, one a line down to the test's, which ends in `:`, then the error and its
/// stack — up to the next. The id is the titles joined by ` > `, as the census names tests.
#[derive(Default)]
struct MochaFailures {
    /// `N failing` was read: the details follow.
    details: bool,
    /// The detail being read, and whether its titles are still being read.
    open: Option<(Block, bool)>,
    titles: Vec<String>,
    blocks: Blocks,
}

impl MochaFailures {
    fn close(&mut self) {
        if let Some((mut block, _)) = self.open.take() {
            block.id = std::mem::take(&mut self.titles).join(" > ");
            self.blocks.push(block);
        }
    }
}

impl Failures for MochaFailures {
    fn line(&mut self, line: &str) {
        let content = line.trim();
        if !self.details {
            let failing = content.split_once(' ').is_some_and(|(n, rest)| {
                rest == "failing" && n.bytes().all(|b| b.is_ascii_digit())
            });
            self.details = failing;
            return;
        }
        if failed_mark(content) && line.starts_with("  ") && !line.starts_with("   ") {
            self.close();
            let title = content.split_once(") ").map_or("", |(_, t)| t);
            self.titles.push(title.trim_end_matches(':').to_string());
            self.open = Some((Block::new(""), !title.ends_with(':')));
            return;
        }
        let Some((block, in_titles)) = &mut self.open else {
            return;
        };
        if *in_titles {
            *in_titles = !content.ends_with(':');
            self.titles.push(content.trim_end_matches(':').to_string());
        } else {
            block.push(line.strip_prefix("  ").unwrap_or(line));
        }
    }

    fn finish(mut self: Box<Self>) -> Blocks {
        self.close();
        self.blocks
    }
}

fn passing(content: &str) -> Option<u64> {
    let (n, rest) = content.split_once(' ')?;
    if !rest.starts_with("passing (") || !rest.ends_with(')') {
        return None;
    }
    n.parse().ok()
}

/// `3) title`.
fn failed_mark(content: &str) -> bool {
    content
        .split_once(") ")
        .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}
