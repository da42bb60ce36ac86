//! jest's report.
//!
//! `PASS path` / `FAIL path` opens a test file; with `--verbose` (jest's default when it runs one
//! file) its tests follow, nesting by indentation two spaces a level: a line without a mark is a
//! `describe` title, `✓ name (3 ms)` a passing test, `✕` a failing, `○` a skipped and `✎` a todo
//! one. The id is the file, the `describe` titles and the test's name joined by ` > `
//! (`src/__tests__/abuse.test.js > Provides descriptive error messages > …`). The `● …` failure
//! details are not read. `Tests: … 4 passed, 7 total` gives the count, so a run without
//! `--verbose` still gives a count.

use super::census::{Block, Blocks, Failures, Found, Parse, Repeats};
use super::node::without_duration;
use super::{Census, Graded, Hit, Invocation, Language, RUNNER_CONFIG, Reading, Row, Runner, js};

pub(super) const ROW: Row = Row {
    runner: Runner::Jest,
    name: "jest",
    language: Language::Js,
    recognise,
    graded: &GRADED,
    keys: &js::KEYS,
    wiring: &[
        "**/__mocks__/**",
        "**/setupTests.*",
        "**/jest.setup.*",
        "**/jest.config.*",
    ],
    configs: &[
        "package.json",
        "jest.config.js",
        "jest.config.ts",
        "jest.config.mjs",
        "jest.config.cjs",
        "jest.config.json",
    ],
    census: Some(Census {
        parsers,
        id_format: "the file, describe blocks and test joined by ` > ` (`sum.test.js > sum > adds`)",
        names_tests: Some("--verbose"),
        failures,
    }),
    under_test: &["JEST_WORKER_ID", "typeof jest"],
    only: Some(only),
};

/// Jest reads Babel's configuration to transform the tests.
const GRADED: [Graded; 13] = {
    let mut all = [("**/babel.config.*", RUNNER_CONFIG); 13];
    all[1] = ("**/.babelrc", RUNNER_CONFIG);
    all[2] = ("**/.babelrc.*", RUNNER_CONFIG);
    let mut i = 0;
    while i < js::GRADED.len() {
        all[i + 3] = js::GRADED[i];
        i += 1;
    }
    all
};

/// `jest`, and the programs that run it (`react-scripts test`, `craco test`).
fn recognise(invocation: &Invocation) -> Option<Hit> {
    match invocation.program() {
        "jest" => Hit::named(),
        "react-scripts" | "craco" => Hit::graded_only(),
        _ => None,
    }
}

fn parsers(_: Reading) -> Vec<Box<dyn Parse>> {
    vec![Box::new(Jest::default())]
}

/// `--testNamePattern`: the tests' own names.
fn failures(_: Reading) -> Vec<Box<dyn Failures>> {
    vec![Box::new(JestFailures::default())]
}

fn only(ids: &[&str]) -> Vec<String> {
    vec!["--testNamePattern".to_string(), js::name_pattern(ids)]
}

pub(super) struct Jest {
    found: Found,
    file: Option<String>,
    suites: Vec<String>,
    seen_ids: Repeats,
}

impl Default for Jest {
    fn default() -> Jest {
        Jest {
            found: Found::new(Runner::Jest),
            file: None,
            suites: Vec::new(),
            seen_ids: Repeats::default(),
        }
    }
}

impl Jest {
    fn pass(&mut self, depth: usize, name: &str) {
        let Some(file) = &self.file else {
            return;
        };
        let mut parts: Vec<&str> = vec![file];
        parts.extend(self.suites.iter().take(depth).map(String::as_str));
        parts.push(name);
        let id = parts.join(" > ");
        let id = self.seen_ids.numbered(id);
        self.found.pass(&id);
    }
}

impl Parse for Jest {
    fn line(&mut self, line: &str) {
        let content = line.trim_start();
        let indent = line.len() - content.len();
        let content = content.trim_end();
        if indent == 0 {
            if let Some(path) = content
                .strip_prefix("PASS ")
                .or_else(|| content.strip_prefix("FAIL "))
            {
                let path = without_duration(path.trim());
                self.file = Some(path.to_string());
                self.suites.clear();
            } else if let Some(rest) = content.strip_prefix("Tests:") {
                self.found.count(passed(rest));
            } else if content.starts_with("Test Suites:") {
                self.found.seen = true;
            }
            return;
        }
        if self.file.is_none() || content.is_empty() {
            return;
        }
        let depth = (indent / 2).saturating_sub(1);
        if content.starts_with("● ") {
            // The failure details: the test's own words, until the next file.
            self.file = None;
        } else if let Some(name) = content
            .strip_prefix("✓ ")
            .or_else(|| content.strip_prefix("√ "))
        {
            self.pass(depth, without_duration(name));
        } else if !["✕ ", "× ", "○ ", "✎ "]
            .iter()
            .any(|m| content.starts_with(m))
        {
            // Not a failing, skipped or todo test: a `describe` title.
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

/// The passed count of `Tests:       1 failed, 4 passed, 7 total`.
/// The failing tests' own output of jest: each `● describe › test` block under a `FAIL path`
/// line — the assertion, the expected and received values, the code frame — up to the next `●`
/// at its indentation or the next line at the margin. The id is the file, the describe titles
/// and the test's name joined by ` > `, as the census names tests; `● Test suite failed to run`
/// is the file's.
#[derive(Default)]
struct JestFailures {
    file: Option<String>,
    open: Option<(Block, usize)>,
    blocks: Blocks,
}

impl JestFailures {
    fn close(&mut self) {
        if let Some((block, _)) = self.open.take() {
            self.blocks.push(block);
        }
    }
}

impl Failures for JestFailures {
    fn line(&mut self, line: &str) {
        let content = line.trim_start();
        let indent = line.len() - content.len();
        if let Some(title) = content.trim_end().strip_prefix("● ")
            && indent > 0
            && let Some(file) = self.file.clone()
        {
            self.close();
            let id = match title {
                "Test suite failed to run" => file,
                _ => format!(
                    "{file} > {}",
                    title.split(" › ").collect::<Vec<_>>().join(" > ")
                ),
            };
            self.open = Some((Block::new(id), indent));
            return;
        }
        if indent == 0 && !content.is_empty() {
            self.close();
            self.file = content
                .strip_prefix("FAIL ")
                .map(|path| without_duration(path.trim()).to_string());
            return;
        }
        if let Some((block, at)) = &mut self.open {
            block.push(line.get(*at + 2..).unwrap_or(content));
        }
    }

    fn finish(mut self: Box<Self>) -> Blocks {
        self.close();
        self.blocks
    }
}

fn passed(rest: &str) -> u64 {
    rest.split(',')
        .filter_map(|item| item.trim().split_once(' '))
        .find(|(_, what)| *what == "passed")
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or(0)
}
