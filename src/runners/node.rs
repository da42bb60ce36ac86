//! `node --test` with its `spec` report (`--test-reporter=spec`, the default on a terminal).
//!
//! `▶ NAME` opens a suite (or a test with subtests) that its own `✔ NAME (…)` line closes;
//! `✔ NAME (1.2ms)` at a deeper indentation is a passing test, `✖` a failing one, `﹣ … # SKIP`
//! a skipped one. The id is the names of the open suites and the test's, joined by ` > `
//! (`suite A > deeper > inner y`), numbered from the second when one repeats. `ℹ tests N` marks
//! the report; nothing after `✖ failing tests:` (a repeat of the failures) is read.

use super::census::{Block, Blocks, Failures, Found, Parse, Repeats};
use super::{Census, Hit, Invocation, Language, Reading, Row, Runner, js, tap};

pub(super) const ROW: Row = Row {
    runner: Runner::Node,
    name: "node",
    language: Language::Js,
    recognise,
    graded: &js::GRADED,
    keys: &js::KEYS,
    wiring: &[],
    configs: &[],
    census: Some(Census {
        parsers,
        id_format: "the suite and test names joined by ` > ` (`math > adds`)",
        names_tests: None,
        failures,
    }),
    under_test: &[],
    only: Some(only),
};

/// `node --test`.
fn recognise(invocation: &Invocation) -> Option<Hit> {
    let test = invocation
        .args()
        .iter()
        .any(|w| w == "--test" || w.starts_with("--test="));
    (invocation.program() == "node" && test)
        .then(Hit::named)
        .flatten()
}

/// Its spec report and, off a terminal, its TAP; under `auto` the TAP row's parser names node.
fn parsers(reading: Reading) -> Vec<Box<dyn Parse>> {
    match reading {
        Reading::Auto => vec![Box::new(NodeSpec::default())],
        _ => vec![
            Box::new(tap::Tap::new(Some(Runner::Node))),
            Box::new(NodeSpec::default()),
        ],
    }
}

/// `--test-name-pattern`: the tests' own names.
fn failures(reading: Reading) -> Vec<Box<dyn Failures>> {
    match reading {
        Reading::Auto => vec![Box::new(NodeFailures::default())],
        _ => vec![
            Box::new(tap::TapFailures::new(Some(Runner::Node))),
            Box::new(NodeFailures::default()),
        ],
    }
}

fn only(ids: &[&str]) -> Vec<String> {
    vec![format!("--test-name-pattern={}", js::name_pattern(ids))]
}

pub(super) struct NodeSpec {
    found: Found,
    open: Vec<(usize, String)>,
    done: bool,
    seen_ids: Repeats,
}

impl Default for NodeSpec {
    fn default() -> NodeSpec {
        NodeSpec {
            found: Found::new(Runner::Node),
            open: Vec::new(),
            done: false,
            seen_ids: Repeats::default(),
        }
    }
}

impl NodeSpec {
    fn test(&mut self, indent: usize, rest: &str, passed: bool) {
        let (name, directive) = match rest.rsplit_once(" # ") {
            Some((name, d)) if matches!(d.trim(), "SKIP" | "TODO") => (name, true),
            _ => (rest, false),
        };
        let name = without_duration(name);
        if let Some((i, open)) = self.open.last()
            && *i == indent
            && open == name
        {
            self.open.pop();
            return;
        }
        if !passed || directive {
            return;
        }
        let id = self.seen_ids.numbered(self.id(indent, name));
        self.found.pass(&id);
    }

    /// The id of the test `name` at `indent`: the open suites' names and its own.
    fn id(&self, indent: usize, name: &str) -> String {
        let mut parts: Vec<&str> = self
            .open
            .iter()
            .filter(|(i, _)| *i < indent)
            .map(|(_, n)| n.as_str())
            .collect();
        parts.push(name);
        parts.join(" > ")
    }
}

/// The failing tests' own output of node's `spec` report: each `✖ NAME (…)` line of a test (not
/// the line that closes a failing suite) and the lines indented under it (the error and its
/// stack), up to `✖ failing tests:`, after which node repeats them.
#[derive(Default)]
struct NodeFailures {
    spec: NodeSpec,
    open: Option<(Block, usize)>,
    blocks: Blocks,
}

impl Failures for NodeFailures {
    fn line(&mut self, line: &str) {
        if self.spec.done {
            return;
        }
        let content = line.trim_start();
        let indent = line.len() - content.len();
        if let Some((block, at)) = &mut self.open {
            if indent > *at || content.is_empty() {
                block.push(&line[(*at).min(line.len())..]);
                return;
            }
            if let Some((block, _)) = self.open.take() {
                self.blocks.push(block);
            }
        }
        let failing = content.trim_end().strip_prefix("✖ ").map(without_duration);
        let closes = |name: &str| {
            (self.spec.open.last()).is_some_and(|(i, open)| *i == indent && open == name)
        };
        if let Some(name) = failing.filter(|n| !closes(n) && *n != "failing tests:") {
            let mut block = Block::new(self.spec.id(indent, name));
            block.push(content);
            self.open = Some((block, indent));
        }
        self.spec.line(line);
    }

    fn finish(mut self: Box<Self>) -> Blocks {
        if let Some((block, _)) = self.open.take() {
            self.blocks.push(block);
        }
        self.blocks
    }
}

impl Parse for NodeSpec {
    fn line(&mut self, line: &str) {
        if self.done {
            return;
        }
        let content = line.trim_start();
        let indent = line.len() - content.len();
        let content = content.trim_end();
        if let Some(rest) = content.strip_prefix("ℹ ") {
            if rest.starts_with("tests ") {
                self.found.seen = true;
            }
        } else if content == "✖ failing tests:" {
            self.done = true;
        } else if let Some(name) = content.strip_prefix("▶ ") {
            self.open.retain(|(i, _)| *i < indent);
            self.open.push((indent, name.to_string()));
        } else if let Some(rest) = content.strip_prefix("✔ ") {
            self.test(indent, rest, true);
        } else if let Some(rest) = content.strip_prefix("✖ ") {
            self.test(indent, rest, false);
        }
    }

    fn finish(self: Box<Self>) -> Found {
        self.found
    }
}

/// `name (1.23ms)` without its duration.
pub(super) fn without_duration(name: &str) -> &str {
    match name.rsplit_once(" (") {
        Some((head, tail)) if tail.ends_with("ms)") || tail.ends_with("s)") => {
            let number = tail
                .trim_end_matches(')')
                .trim_end_matches('s')
                .trim_end_matches('m');
            let number = number.trim();
            if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                head
            } else {
                name
            }
        }
        _ => name,
    }
}
