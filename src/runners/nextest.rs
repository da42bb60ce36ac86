//! cargo-nextest (`cargo nextest run`): Rust's tests, each in its own process. Cargo's files are
//! graded as for `cargo test`; its output is its own.
//!
//! `PASS [   0.008s] (1/4) nxt tests::b` is a passing test (`TRY 2 PASS` one that passed on a
//! retry), `FAIL`/`SIGSEGV`/`TIMEOUT`/`ABORT` a failing one; the `(n/m)` counter is absent in
//! older versions. The id is the binary id and the test name, as nextest prints them
//! (`nxt tests::b`, `nxt::it t1`). `Summary [ … ] 4 tests run: 3 passed, 1 failed` closes the
//! run; the results it lists again after it are not read twice.

use super::census::{Block, Blocks, Failures, Found, Parse};
use super::{Census, Hit, Invocation, Language, Reading, Row, Runner, libtest};

pub(super) const ROW: Row = Row {
    runner: Runner::Nextest,
    name: "nextest",
    language: Language::Rust,
    recognise,
    graded: &libtest::GRADED,
    keys: &libtest::KEYS,
    wiring: &[".config/nextest.toml"],
    configs: &[],
    census: Some(Census {
        parsers,
        id_format: "the binary id and the test name (`crate tests::a`, `crate::it t1`)",
        names_tests: None,
        failures,
    }),
    under_test: &["NEXTEST_RUN_ID", "NEXTEST_EXECUTION_MODE"],
    only: Some(only),
};

/// `cargo nextest run` (or `cargo-nextest nextest run`, `cargo llvm-cov nextest`).
fn recognise(invocation: &Invocation) -> Option<Hit> {
    let cargo = matches!(invocation.program(), "cargo" | "cargo-nextest");
    (cargo && invocation.has_arg("nextest"))
        .then(Hit::named)
        .flatten()
}

fn parsers(_: Reading) -> Vec<Box<dyn Parse>> {
    vec![Box::new(Nextest::default())]
}

/// `-- --exact NAME…`: nextest hands libtest's filters on; each the test name without its
/// binary id.
fn failures(_: Reading) -> Vec<Box<dyn Failures>> {
    vec![Box::new(NextestFailures::default())]
}

fn only(ids: &[&str]) -> Vec<String> {
    let mut args = vec!["--".to_string(), "--exact".to_string()];
    args.extend(
        ids.iter()
            .map(|id| id.split_once(' ').map_or(*id, |(_, name)| name).to_string()),
    );
    args
}

struct Nextest {
    found: Found,
    /// The `Summary` line was read: what follows repeats results.
    done: bool,
}

impl Default for Nextest {
    fn default() -> Nextest {
        Nextest {
            found: Found::new(Runner::Nextest),
            done: false,
        }
    }
}

impl Parse for Nextest {
    fn line(&mut self, line: &str) {
        if self.done {
            return;
        }
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix("Summary [") {
            self.done = true;
            if let Some(n) = summary_passed(rest) {
                self.found.count(n);
            }
            return;
        }
        let line = match line.strip_prefix("TRY ") {
            Some(rest) => rest.split_once(' ').map_or("", |(_, r)| r.trim_start()),
            None => line,
        };
        let Some(rest) = line.strip_prefix("PASS [") else {
            if line.starts_with("Starting ") && line.contains(" tests across ") {
                self.found.seen = true;
            }
            return;
        };
        let Some((time, rest)) = rest.split_once(']') else {
            return;
        };
        if !time.trim().ends_with('s') {
            return;
        }
        let rest = rest.trim_start();
        let rest = match rest.strip_prefix('(') {
            Some(counter) => counter.split_once(") ").map_or("", |(_, r)| r),
            None => rest,
        };
        if rest.contains(' ') {
            self.found.pass(rest);
        }
    }

    fn finish(self: Box<Self>) -> Found {
        self.found
    }
}

/// `3 tests run: 2 passed, 1 failed`: the passed count.
/// The failing tests' own output of nextest: a failing result line (`FAIL`, `SIGSEGV`,
/// `TIMEOUT`, `ABORT`, …) and the indented `stdout ───`/`stderr ───` sections after it, up to the
/// next result line; libtest's own lines in them (`running 1 test`, `test x ... FAILED`, the
/// `failures:` list, `test result:`) are left out. Nothing after `Summary` (its list repeats the
/// failures without output) is read.
#[derive(Default)]
struct NextestFailures {
    open: Option<(Block, String)>,
    done: bool,
    blocks: Blocks,
}

impl NextestFailures {
    fn close(&mut self) {
        if let Some((block, _)) = self.open.take() {
            self.blocks.push(block);
        }
    }
}

impl Failures for NextestFailures {
    fn line(&mut self, line: &str) {
        if self.done {
            return;
        }
        let content = line.trim();
        if let Some((status, id)) = result_line(content) {
            self.close();
            if !matches!(
                status,
                "PASS" | "SKIP" | "SLOW" | "START" | "RETRY" | "FLAKY"
            ) {
                let name = id.split_once(' ').map_or(id, |(_, n)| n).to_string();
                self.open = Some((Block::new(id), name));
            }
            return;
        }
        if content.starts_with("Summary [")
            || content.starts_with("Cancelling")
            || content.starts_with('─')
        {
            self.done = content.starts_with("Summary [");
            self.close();
            return;
        }
        let Some((block, name)) = &mut self.open else {
            return;
        };
        let libtest = (content.starts_with("running ") && content.contains(" test"))
            || (content.starts_with("test ") && content.contains(" ... "))
            || content.starts_with("test result: ")
            || content == "failures:"
            || content == name.as_str();
        if !libtest {
            block.push(line.strip_prefix("    ").unwrap_or(line));
        }
    }

    fn finish(mut self: Box<Self>) -> Blocks {
        self.close();
        self.blocks
    }
}

/// `FAIL [   0.239s] (4/4) nxt tests::c` (`TRY 2 FAIL …`): the status and the id.
fn result_line(content: &str) -> Option<(&str, &str)> {
    let content = match content.strip_prefix("TRY ") {
        Some(rest) => rest.split_once(' ')?.1.trim_start(),
        None => content,
    };
    let (status, rest) = content.split_once(" [")?;
    if status.is_empty() || !status.bytes().all(|b| b.is_ascii_uppercase()) {
        return None;
    }
    let (time, rest) = rest.split_once(']')?;
    if !time.trim().ends_with('s') {
        return None;
    }
    let rest = rest.trim_start();
    let id = match rest.strip_prefix('(') {
        Some(counter) => counter.split_once(") ")?.1,
        None => rest,
    };
    Some((status, id.trim())).filter(|(_, id)| id.contains(' '))
}

fn summary_passed(rest: &str) -> Option<u64> {
    let (_, counts) = rest.split_once(" run: ")?;
    counts.split(',').find_map(|part| {
        let part = part.trim();
        let n = part.strip_suffix(" passed").or_else(|| {
            let (n, tail) = part.split_once(" passed")?;
            tail.trim_start().starts_with('(').then_some(n)
        })?;
        n.trim().parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::super::census::{Mode, read};
    use super::*;

    const OUT: &str = "    Starting 4 tests across 2 binaries (1 test skipped)
        PASS [   0.008s] (1/4) nxt tests::b
        PASS [   0.009s] (2/4) nxt tests::a
  TRY 2 PASS [   0.008s] (3/4) nxt::it t1
        FAIL [   0.239s] (4/4) nxt tests::c
    test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 3 filtered out
────────────
     Summary [   0.154s] 4 tests run: 3 passed, 1 failed, 1 skipped
        FAIL [   0.145s] (4/4) nxt tests::c
        PASS [   0.001s] nxt tests::late
";

    #[test]
    fn nextest_output_names_its_passing_tests() {
        let tally = read(&Mode::Named(vec![Runner::Nextest]), OUT.as_bytes())
            .unwrap()
            .unwrap();
        let count = tally.get(Runner::Nextest).unwrap();
        let ids: Vec<&str> = count
            .ids
            .as_deref()
            .unwrap()
            .iter()
            .map(String::as_str)
            .collect();
        assert_eq!(ids, ["nxt tests::a", "nxt tests::b", "nxt::it t1"]);
        assert_eq!(count.passed, 3);
    }

    #[test]
    fn nextest_is_recognised_through_cargo_and_runs_only_named_tests() {
        assert_eq!(
            super::super::census_mode("timeout 900 cargo nextest run --locked"),
            Mode::Named(vec![Runner::Nextest])
        );
        let invoked = super::super::Invoked::of(["cargo nextest run"]);
        assert!(
            invoked
                .graded_files()
                .iter()
                .any(|(g, _)| *g == "**/rust-toolchain.toml")
        );
        assert_eq!(
            only(&["nxt tests::a", "nxt::it t1"]),
            ["--", "--exact", "tests::a", "t1"]
        );
        assert_eq!(
            summary_passed(" 0.1s] 5 tests run: 5 passed (1 flaky), 0 skipped"),
            Some(5)
        );
    }
}
