//! TAP, the Test Anything Protocol: tape, `node --test` (its default report when not on a
//! terminal), `mocha --reporter tap`, `vitest --reporter=tap`, node-tap, and each file of
//! `prove -v`.
//!
//! `ok N - description` is a passing test unless its directive says `# SKIP` or `# TODO`. Its id
//! is the description under the names of what encloses it, joined by ` > `: node's
//! `# Subtest: NAME` lines (by indentation), vitest's `ok N - NAME {` blocks, or tape's `# NAME`
//! comment line before its assertions (`first test > should be equal`). A description that
//! repeats under the same parent is numbered from its second occurrence (`… #2`), so each
//! assertion of a tape test counts; one with no description is its number. Node's suites (`type:
//! 'suite'` in the YAML block after the result) are not tests. YAML blocks are never read as
//! results.

use std::collections::HashMap;

use super::census::{Block, Blocks, Failures, Found, Parse};
use super::{Census, Hit, Invocation, Language, Reading, Row, Runner, js};

pub(super) const ROW: Row = Row {
    runner: Runner::Tap,
    name: "tap",
    language: Language::Js,
    recognise,
    graded: &js::GRADED,
    keys: &js::KEYS,
    wiring: &[],
    configs: &[".taprc"],
    census: Some(Census {
        parsers,
        id_format: "the description under what encloses it, joined by ` > ` (`first test > should be equal`)",
        names_tests: None,
        failures,
    }),
    under_test: &[],
    only: None,
};

/// tape, node-tap and ava, whose test globs go on `tests` (SPEC §26.4); nyc's and c8's wrapped
/// command's arguments are test files too.
fn recognise(invocation: &Invocation) -> Option<Hit> {
    let args = invocation.args();
    let (census, globs): (Reading, &[String]) = match invocation.program() {
        "tape" | "tap" => (Reading::Named, args),
        "ava" => (Reading::Nothing, args),
        "nyc" | "c8" => {
            let at = super::command::skip_options(args, &[]);
            (Reading::Nothing, args.get(at + 1..).unwrap_or_default())
        }
        _ => return None,
    };
    let mut hit = Hit {
        census,
        ..Hit::default()
    };
    for word in globs.iter().filter(|w| !w.starts_with('-')) {
        let mut glob = word.as_str();
        while let Some(rest) = glob.strip_prefix("./") {
            glob = rest;
        }
        let glob = glob.trim_end_matches('/');
        let outside = glob.starts_with('/') || glob.split('/').any(|c| c == ".." || c == ".");
        if !glob.is_empty() && !outside && !hit.test_globs.iter().any(|g| g == glob) {
            hit.test_globs.push(glob.to_string());
        }
    }
    Some(hit)
}

/// Under `auto` one parser names its runner from what it reads (`node` when node's `# Subtest:`
/// lines appear).
fn parsers(reading: Reading) -> Vec<Box<dyn Parse>> {
    match reading {
        Reading::Auto => vec![Box::new(Tap::new(None))],
        _ => vec![Box::new(Tap::new(Some(Runner::Tap)))],
    }
}

fn failures(reading: Reading) -> Vec<Box<dyn Failures>> {
    match reading {
        Reading::Auto => vec![Box::new(TapFailures::new(None))],
        _ => vec![Box::new(TapFailures::new(Some(Runner::Tap)))],
    }
}

pub(super) struct Tap {
    /// The runner the results belong to; `None`: `node` if node's `# Subtest:` lines appear,
    /// else `tap`.
    runner: Option<Runner>,
    found: Found,
    /// A TAP header or plan was read.
    marked: bool,
    /// Node's open `# Subtest:` names with their indentation.
    subtests: Vec<(usize, String)>,
    node_seen: bool,
    /// Vitest's open `ok N - NAME {` blocks.
    blocks: Vec<String>,
    /// tape's test name (the last comment line at the left margin).
    group: Option<String>,
    /// The indentation of the result a YAML block belongs to, while inside it.
    yaml: Option<usize>,
    /// The last result, kept until no YAML block of its can say it was a suite.
    pending: Option<(usize, String, bool)>,
    /// How often each id was seen, for numbering repeats.
    seen_ids: HashMap<String, u32>,
    /// What `prove -v` puts before every id: the test file. Its comment lines are Test::More's
    /// diagnostics (on stderr, anywhere), never a test's name.
    prefix: Option<String>,
}

impl Tap {
    pub(super) fn new(runner: Option<Runner>) -> Tap {
        Tap {
            runner,
            found: Found::new(runner.unwrap_or(Runner::Tap)),
            marked: false,
            subtests: Vec::new(),
            node_seen: false,
            blocks: Vec::new(),
            group: None,
            yaml: None,
            pending: None,
            seen_ids: HashMap::new(),
            prefix: None,
        }
    }

    /// A TAP reader for one file of `prove -v`: every id starts with `file > `.
    pub(super) fn for_file(file: &str) -> Tap {
        let mut tap = Tap::new(Some(Runner::Prove));
        tap.prefix = Some(file.to_string());
        tap
    }

    /// The passing ids read so far (for `prove`, which folds each file's into its own).
    pub(super) fn into_ids(mut self) -> Vec<String> {
        self.commit();
        self.found.ids
    }

    fn commit(&mut self) {
        if let Some((_, id, passed)) = self.pending.take()
            && passed
        {
            self.found.pass(&id);
        }
    }

    fn result(&mut self, indent: usize, content: &str) -> bool {
        let Some((passed, rest)) = result_parts(content) else {
            return false;
        };
        self.commit();
        let (number, rest) = match rest.split_once(' ') {
            Some((n, r)) if n.bytes().all(|b| b.is_ascii_digit()) => (n, r),
            _ if rest.bytes().all(|b| b.is_ascii_digit()) => (rest, ""),
            _ => ("", rest),
        };
        let (rest, opens) = match rest.strip_suffix(" {") {
            Some(r) => (r, true),
            None if rest == "{" => ("", true),
            None => (rest, false),
        };
        let (desc, directive) = split_directive(rest);
        let desc = desc.strip_prefix("- ").unwrap_or(desc).trim();
        let desc = if desc.is_empty() || desc == "-" {
            number
        } else {
            desc
        };
        let skipped = directive.is_some_and(|d| {
            let d = d.trim_start().to_ascii_lowercase();
            d.starts_with("skip") || d.starts_with("todo")
        });
        if opens {
            // Vitest: a file or suite block, not a test.
            self.blocks.push(desc.to_string());
            return true;
        }
        let id = self.id(indent, desc);
        self.pending = Some((indent, id, passed && !skipped));
        true
    }

    /// `desc` under its parents, numbered when it repeats.
    fn id(&mut self, indent: usize, desc: &str) -> String {
        let mut parts: Vec<&str> = Vec::new();
        if let Some(prefix) = &self.prefix {
            parts.push(prefix);
        }
        if let Some(group) = &self.group {
            parts.push(group);
        }
        parts.extend(self.blocks.iter().map(String::as_str));
        parts.extend(
            self.subtests
                .iter()
                .filter(|(i, _)| *i < indent)
                .map(|(_, name)| name.as_str()),
        );
        parts.push(desc);
        let id = parts.join(" > ");
        let n = self.seen_ids.entry(id.clone()).or_insert(0);
        *n += 1;
        match *n {
            1 => id,
            n => format!("{id} #{n}"),
        }
    }

    fn comment(&mut self, indent: usize, comment: &str) {
        if let Some(name) = comment.strip_prefix("Subtest: ") {
            self.node_seen = true;
            // Node's results name no tape group: a comment before (a test's `console.log`,
            // which node prints as a comment) names nothing.
            self.group = None;
            self.subtests.retain(|(i, _)| *i < indent);
            self.subtests.push((indent, name.trim().to_string()));
            return;
        }
        let key = comment.split_whitespace().next().unwrap_or("");
        let summary = [
            "tests",
            "pass",
            "fail",
            "ok",
            "skipped",
            "skip",
            "todo",
            "cancelled",
            "suites",
            "duration_ms",
            "time=",
        ];
        let node = self.node_seen || self.runner == Some(Runner::Node);
        let group = !summary.contains(&key) && !comment.is_empty() && self.prefix.is_none();
        if indent == 0 && group && !node {
            // tape: the name of the test whose assertions follow.
            self.group = Some(comment.to_string());
        }
    }
}

impl Parse for Tap {
    fn line(&mut self, line: &str) {
        let content = line.trim_start();
        let indent = line.len() - content.len();
        let content = content.trim_end();
        if let Some(owner) = self.yaml {
            if content == "..." && indent > owner {
                self.yaml = None;
            } else if content == "type: 'suite'" && indent > owner {
                self.pending = None;
            }
            return;
        }
        if content == "---"
            && let Some((owner, _, _)) = &self.pending
            && indent > *owner
        {
            self.yaml = Some(*owner);
            return;
        }
        if self.result(indent, content) {
            return;
        }
        if content.starts_with("TAP version ") || is_plan(content) {
            self.marked = true;
        } else if let Some(comment) = content.strip_prefix('#') {
            self.commit();
            self.comment(indent, comment.trim());
        } else if content == "}" {
            self.commit();
            self.blocks.pop();
        } else if content.starts_with("Bail out!") {
            self.marked = true;
        }
    }

    fn finish(mut self: Box<Self>) -> Found {
        self.commit();
        let mut found = std::mem::replace(&mut self.found, Found::new(Runner::Tap));
        found.runner = match self.runner {
            Some(runner) => runner,
            None if self.node_seen => Runner::Node,
            None => Runner::Tap,
        };
        found.seen = self.marked;
        found
    }
}

/// `ok …` or `not ok …`: whether it passed and the rest of the line.
/// The failing tests' own output of TAP: each `not ok` line (not a `# TODO` or `# SKIP` one)
/// and the lines indented under it (its YAML block: `error`, `expected`, `actual`, `stack`),
/// its id as the census reads it. Only when the output has `TAP version` or a plan line at the
/// margin (mocha prints its plan last), so a `not ok` line another report prints is not a result; a node suite that failed because a
/// subtest did (`failureType: 'subtestsFailed'`) is left out, its subtest says why.
pub(super) struct TapFailures {
    tap: Tap,
    on: bool,
    open: Option<(Block, usize)>,
    blocks: Blocks,
}

impl TapFailures {
    pub(super) fn new(runner: Option<Runner>) -> TapFailures {
        TapFailures {
            tap: Tap::new(runner),
            on: false,
            open: None,
            blocks: Blocks::default(),
        }
    }

    fn close(&mut self) {
        if let Some((block, _)) = self.open.take()
            && !block
                .lines()
                .any(|l| l.contains("failureType: 'subtestsFailed'"))
        {
            self.blocks.push(block);
        }
    }
}

impl Failures for TapFailures {
    fn line(&mut self, line: &str) {
        let content = line.trim_start();
        let indent = line.len() - content.len();
        if let Some((block, at)) = &mut self.open {
            if indent > *at || content.is_empty() {
                block.push(&line[(*at).min(line.len())..]);
                self.tap.line(line);
                return;
            }
            self.close();
        }
        self.tap.line(line);
        let content = content.trim_end();
        if indent == 0 && (content.starts_with("TAP version ") || is_plan(content)) {
            self.on = true;
        }
        let failing = result_parts(content).is_some_and(|(passed, rest)| {
            let directive = split_directive(rest)
                .1
                .map(|d| d.trim_start().to_ascii_lowercase());
            !passed && !directive.is_some_and(|d| d.starts_with("skip") || d.starts_with("todo"))
        });
        if let (true, Some((_, id, false))) = (failing, &self.tap.pending) {
            let mut block = Block::new(id.clone());
            block.push(content);
            self.open = Some((block, indent));
        }
    }

    fn finish(mut self: Box<Self>) -> Blocks {
        self.close();
        match self.on {
            true => self.blocks,
            false => Blocks::default(),
        }
    }
}

fn result_parts(content: &str) -> Option<(bool, &str)> {
    let (passed, rest) = if let Some(rest) = content.strip_prefix("not ok") {
        (false, rest)
    } else {
        (true, content.strip_prefix("ok")?)
    };
    if rest.is_empty() {
        return Some((passed, ""));
    }
    Some((passed, rest.strip_prefix(' ')?))
}

/// The description and the directive after an unescaped ` # `.
fn split_directive(rest: &str) -> (&str, Option<&str>) {
    let mut from = 0;
    while let Some(i) = rest[from..].find(" #") {
        let at = from + i;
        if !rest[..at].ends_with('\\') {
            return (&rest[..at], Some(&rest[at + 2..]));
        }
        from = at + 2;
    }
    if let Some(d) = rest.strip_prefix('#') {
        return ("", Some(d));
    }
    (rest, None)
}

/// A plan line `1..N` (with an optional `# reason`).
fn is_plan(content: &str) -> bool {
    let Some(rest) = content.strip_prefix("1..") else {
        return false;
    };
    let n = rest.split(' ').next().unwrap_or("");
    !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_split_at_an_unescaped_hash() {
        assert_eq!(
            split_directive("- a # SKIP why"),
            ("- a", Some(" SKIP why"))
        );
        assert_eq!(split_directive("- a \\# b"), ("- a \\# b", None));
        assert_eq!(
            split_directive("- passes # time=7.29ms"),
            ("- passes", Some(" time=7.29ms"))
        );
    }

    #[test]
    fn results_and_plans() {
        assert_eq!(result_parts("ok 1 - a"), Some((true, "1 - a")));
        assert_eq!(result_parts("not ok 2"), Some((false, "2")));
        assert_eq!(result_parts("okay"), None);
        assert!(is_plan("1..6") && is_plan("1..0 # skip all") && !is_plan("1..x"));
    }
}
