//! Python's `unittest` (also Django's and other runners built on its text runner).
//!
//! With `-v` each test is `test_x (pkg.module.Class.test_x) ... ok` (Python before 3.11:
//! `test_x (pkg.module.Class) ... ok`); a docstring puts its first line, and the result, on the
//! next line; a failing subtest is an indented line of its own. The id is the dotted path
//! `pkg.module.Class.test_x`. `Ran N tests in 0.002s` and `OK` / `FAILED (failures=1, …)` give the
//! count, so a run without `-v` still gives a count.

use super::census::{Block, Blocks, Failures, Found, Parse};
use super::{Census, Hit, Invocation, Language, Reading, Row, Runner};

pub(super) const ROW: Row = Row {
    runner: Runner::Unittest,
    name: "unittest",
    language: Language::Python,
    recognise,
    graded: &[],
    keys: &[],
    wiring: &[],
    configs: &[],
    census: Some(Census {
        parsers,
        id_format: "`module.Class.test_name` (`tests.test_a.TestA.test_b`)",
        names_tests: Some("-v"),
        failures,
    }),
    under_test: &[],
    only: Some(only),
};

/// `python -m unittest` (the command reader gives the module as the program).
fn recognise(invocation: &Invocation) -> Option<Hit> {
    (invocation.program() == "unittest")
        .then(Hit::named)
        .flatten()
}

fn parsers(_: Reading) -> Vec<Box<dyn Parse>> {
    vec![Box::new(Unittest::default())]
}

/// The dotted ids themselves: `python -m unittest a.B.test_c` runs that test.
fn failures(_: Reading) -> Vec<Box<dyn Failures>> {
    vec![Box::new(UnittestFailures::default())]
}

fn only(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|id| (*id).to_string()).collect()
}

#[derive(Default)]
pub(super) struct Unittest {
    found: Option<Found>,
    /// A test whose result is not on its own line yet (a docstring follows, or subtests).
    pending: Option<String>,
    /// `Ran N tests` of the run whose closing line is awaited.
    ran: Option<u64>,
}

impl Unittest {
    fn found(&mut self) -> &mut Found {
        self.found
            .get_or_insert_with(|| Found::new(Runner::Unittest))
    }

    fn result(&mut self, id: String, outcome: &str) {
        if outcome == "ok" {
            self.found().pass(&id);
        }
    }

    /// `OK`, `OK (skipped=1)` or `FAILED (failures=1, errors=2)` after `Ran N tests`.
    fn closing(&mut self, line: &str) -> bool {
        let Some(ran) = self.ran else {
            return false;
        };
        let details = if line == "OK" || line == "FAILED" {
            ""
        } else if let Some(rest) = line.strip_prefix("OK (").or(line.strip_prefix("FAILED (")) {
            rest.strip_suffix(')').unwrap_or(rest)
        } else {
            return false;
        };
        let mut not_passed: u64 = 0;
        for item in details.split(", ").filter(|i| !i.is_empty()) {
            if let Some((_, n)) = item.split_once('=') {
                not_passed = not_passed.saturating_add(n.parse().unwrap_or(0));
            }
        }
        self.ran = None;
        self.found().count(ran.saturating_sub(not_passed));
        true
    }
}

impl Parse for Unittest {
    fn line(&mut self, line: &str) {
        if let Some(ran) = ran_line(line) {
            self.ran = Some(ran);
            self.found().seen = true;
            self.pending = None;
            return;
        }
        if self.closing(line) {
            return;
        }
        if line.starts_with(' ') {
            // A failing subtest of the pending test: that test did not pass.
            if line.trim_start().contains(") ... ") {
                self.pending = None;
            }
            return;
        }
        if let Some((id, outcome)) = header(line) {
            match outcome {
                Some(outcome) => {
                    self.pending = None;
                    self.result(id, outcome);
                }
                None => self.pending = Some(id),
            }
            return;
        }
        // The docstring line of the pending test, ending with its result.
        if let Some((_, outcome)) = line.rsplit_once(" ... ")
            && let Some(id) = self.pending.take()
        {
            self.result(id, outcome);
        }
    }

    fn finish(self: Box<Self>) -> Found {
        self.found.unwrap_or_else(|| Found::new(Runner::Unittest))
    }
}

/// `Ran 5 tests in 0.002s`.
/// The failing tests' own output of unittest: each `FAIL: test (module.Class.test)` or `ERROR:`
/// block under a `=====` rule — the traceback — up to the next rule. The id is the census's.
#[derive(Default)]
struct UnittestFailures {
    /// The last line was a `=====` rule: a block's header may follow.
    ruled: bool,
    open: Option<Block>,
    /// The `-----` rule under the header was read: the traceback follows.
    body: bool,
    blocks: Blocks,
}

impl Failures for UnittestFailures {
    fn line(&mut self, line: &str) {
        let rule = |c: char| line.len() >= 20 && line.chars().all(|l| l == c);
        if rule('=') || (rule('-') && self.body) || line.starts_with("Ran ") {
            if let Some(block) = self.open.take() {
                self.blocks.push(block);
            }
            self.ruled = rule('=');
            self.body = false;
            return;
        }
        let head = line.strip_prefix("FAIL: ").or(line.strip_prefix("ERROR: "));
        if let (true, Some((id, None))) = (self.ruled, head.and_then(header)) {
            self.open = Some(Block::new(id));
        } else if let Some(block) = &mut self.open {
            match self.body {
                true => block.push(line),
                false => self.body = rule('-'),
            }
        }
        self.ruled = false;
    }

    fn finish(mut self: Box<Self>) -> Blocks {
        if let Some(block) = self.open.take() {
            self.blocks.push(block);
        }
        self.blocks
    }
}

fn ran_line(line: &str) -> Option<u64> {
    let rest = line.strip_prefix("Ran ")?;
    let (n, rest) = rest.split_once(' ')?;
    let rest = rest
        .strip_prefix("tests in ")
        .or(rest.strip_prefix("test in "))?;
    rest.strip_suffix('s')?;
    n.parse().ok()
}

/// A test's header line `name (dotted.path[.name])[ ... outcome]`: its id, and its outcome when
/// on this line (the text after ` ... `, empty when subtests follow).
fn header(line: &str) -> Option<(String, Option<&str>)> {
    let (name, rest) = line.split_once(" (")?;
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let (path, after) = rest.split_once(')')?;
    if path.is_empty()
        || !path
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
    {
        return None;
    }
    let id = if path.ends_with(&format!(".{name}")) {
        path.to_string()
    } else {
        format!("{path}.{name}")
    };
    let outcome = match after {
        "" => None,
        _ => Some(after.strip_prefix(" ... ")?.trim_end()),
    };
    Some((id, outcome))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_old_and_new() {
        assert_eq!(
            header("test_a (tests.t.C.test_a) ... ok"),
            Some(("tests.t.C.test_a".into(), Some("ok")))
        );
        assert_eq!(
            header("test_a (tests.t.C) ... ERROR"),
            Some(("tests.t.C.test_a".into(), Some("ERROR")))
        );
        assert_eq!(
            header("test_doc (t.B.test_doc)"),
            Some(("t.B.test_doc".into(), None))
        );
        assert_eq!(header("ERROR: test_err (t.B.test_err)"), None);
        assert_eq!(header("Traceback (most recent call last):"), None);
    }

    #[test]
    fn ran_lines() {
        assert_eq!(ran_line("Ran 6365 tests in 2.201s"), Some(6365));
        assert_eq!(ran_line("Ran 1 test in 0.000s"), Some(1));
        assert_eq!(ran_line("Ran away"), None);
    }
}
