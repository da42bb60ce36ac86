//! The test census (SPEC §26.4): the ids of the tests a check's run ran and passed, read from
//! its output by one parser per runner, and the comparison of a commit's census with the merge
//! base's.
//!
//! A check's output is fed to [`Reader`] as a stream of bytes; it is cut into lines (colour codes
//! and carriage-return rewrites removed, each line at most [`LINE_MAX`] bytes) and every parser of
//! the check's [`Mode`] reads each line. No parser keeps more than the ids it has found and a few
//! lines of state, so a run of any length is read in one pass without keeping its output. Every
//! parser takes any bytes without panicking (`fuzz/fuzz_targets/census.rs`, `tests` below).
//!
//! Which runners a check's output is read for: `census = "…"` on the check, else what its `run`
//! names ([`Mode::infer`]). A run that goes through a wrapper (`npm test`, `make test`, `tox`, …)
//! is read for every runner, and the runners the merge base's run shows are the ones compared.
//! What the output says is what the agent's code printed: a test that prints a forged pass line
//! is counted (docs/census.md says so); the census catches tests that stop running, not a suite
//! written to lie.

mod compare;
mod excerpt;
mod store;
mod text;

pub use compare::{Compared, compare};
pub use excerpt::{Block, Blocks, Failures, KEEP, excerpt};

use std::collections::BTreeSet;
use std::io::Read;
use std::sync::Arc;

use super::{Reading, Runner};

/// The longest line a parser sees, in bytes; the rest of a longer line is dropped.
pub const LINE_MAX: usize = 8 * 1024;
/// The longest test id kept, in bytes (cut at a character boundary).
pub const ID_MAX: usize = 1024;
/// The most ids one parser keeps of a run; past it the run's census is a count (an output
/// printing millions of names cannot fill memory or the record).
pub const IDS_MAX: usize = 200_000;

/// Which runners a check's output is read for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// No census (`census = "off"`, or a `run` that names no runner and no wrapper).
    Off,
    /// These runners, named by `census` or by the check's `run`.
    Named(Vec<Runner>),
    /// Every runner; the ones the merge base's run shows are compared (`census = "auto"`, or a
    /// `run` that goes through a wrapper such as `npm test` or `make test`).
    Auto,
}

impl Mode {
    /// The mode a check's `run` implies when the check has no `census` key: the runners it names
    /// (`cargo test`, `pytest`, `python -m unittest`, `go test`, `node --test`, `mocha`, `jest`,
    /// `vitest`, `tape`, `prove`); else [`Mode::Auto`] when it goes through a wrapper (`npm`,
    /// `yarn`, `pnpm`, `npx`, `bun`, `make`, `tox`, `nox`, `just`, …); else [`Mode::Off`].
    pub fn infer(run: &str) -> Mode {
        super::census_mode(run)
    }

    /// Whether the check's runs are read at all.
    pub fn is_on(&self) -> bool {
        *self != Mode::Off
    }

    /// The parsers that read a run's output in this mode: each runner's own (its plain
    /// output and the machine formats it offers), or under `auto` one of each kind.
    fn parsers(&self) -> Vec<Box<dyn Parse>> {
        let census = |r: Runner| r.row().census.as_ref();
        match self {
            Mode::Off => Vec::new(),
            Mode::Auto => Runner::with_census()
                .filter_map(census)
                .flat_map(|c| (c.parsers)(Reading::Auto))
                .collect(),
            Mode::Named(runners) => runners
                .iter()
                .filter_map(|&r| census(r))
                .flat_map(|c| (c.parsers)(Reading::Named))
                .collect(),
        }
    }
}

/// What one parser read: the runner, whether its output was there at all, the number of tests
/// that passed, and their ids when the output names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub(crate) runner: Runner,
    /// The runner's own marks were in the output (its summary, its header).
    pub(crate) seen: bool,
    /// Tests that ran and passed, as the runner counted them (its summary line), when it printed
    /// a count.
    pub(crate) counted: Option<u64>,
    /// The ids of the tests that passed, as read (sorted and made distinct at the end: one sort
    /// of a vector is cheaper than a tree kept sorted line by line).
    pub(crate) ids: Vec<String>,
    /// Passing tests whose ids were not kept (past [`IDS_MAX`]).
    dropped: u64,
}

/// The ids already given in one run: a name that repeats (two tests with the same title in one
/// suite) is told apart by its place, `#2`, `#3`, in the order the runner printed them.
#[derive(Debug, Default)]
pub struct Repeats(std::collections::HashMap<String, u32>);

impl Repeats {
    /// `id` the first time, `id #n` the n-th.
    pub(crate) fn numbered(&mut self, id: String) -> String {
        let n = self.0.entry(id.clone()).or_insert(0);
        *n += 1;
        if *n == 1 { id } else { format!("{id} #{n}") }
    }
}

impl Found {
    pub(crate) fn new(runner: Runner) -> Found {
        Found {
            runner,
            seen: false,
            counted: None,
            ids: Vec::new(),
            dropped: 0,
        }
    }

    /// Add a passing test's id, made fit to keep ([`text::clean_id`]).
    pub(crate) fn pass(&mut self, id: &str) {
        if self.ids.len() >= IDS_MAX {
            self.dropped = self.dropped.saturating_add(1);
        } else if let Some(id) = text::clean_id(id) {
            self.ids.push(id);
        }
    }

    /// [`Found::pass`] for an id already made, kept without a copy when it is clean.
    pub(crate) fn pass_owned(&mut self, id: String) {
        if self.ids.len() < IDS_MAX && text::is_clean(&id) {
            self.ids.push(id);
        } else {
            self.pass(&id);
        }
    }

    /// The ids sorted and distinct.
    fn settle(&mut self) {
        self.ids.sort_unstable();
        self.ids.dedup();
    }

    /// Add to the runner's own count of passing tests.
    pub(crate) fn count(&mut self, n: u64) {
        self.seen = true;
        self.counted = Some(self.counted.unwrap_or(0).saturating_add(n));
    }
}

/// One parser: it reads lines and says at the end what it found.
pub trait Parse {
    fn line(&mut self, line: &str);
    fn finish(self: Box<Self>) -> Found;
}

/// One runner's census of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Count {
    pub runner: Runner,
    /// How many tests ran and passed.
    pub passed: u64,
    /// Their ids, sorted; `None` when the output does not name every passing test (`pytest -q`,
    /// `cargo test -q`, jest without `--verbose`): then only [`Count::passed`] is compared.
    pub ids: Option<Arc<[String]>>,
}

/// The census of one run: one [`Count`] per runner its output showed (or its mode named).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub counts: Vec<Count>,
}

impl Tally {
    /// The count of `runner`, if the run has one.
    pub fn get(&self, runner: Runner) -> Option<&Count> {
        self.counts.iter().find(|c| c.runner == runner)
    }

    /// The runners of this census, in [`Runner::ALL`] order.
    pub fn runners(&self) -> Vec<Runner> {
        self.counts.iter().map(|c| c.runner).collect()
    }

    /// Every id passed through `mask` (the check's secret values replaced, SPEC §4.6); ids that
    /// become equal are kept once.
    pub fn mask(&mut self, mask: impl Fn(&str) -> String) {
        for count in &mut self.counts {
            let Some(ids) = &mut count.ids else {
                continue;
            };
            // One pass over all the ids (no id holds a newline); most runs mask nothing.
            let joined = ids.join("\n");
            let masked = mask(&joined);
            if masked == joined {
                continue;
            }
            let set: BTreeSet<String> = masked.split('\n').map(str::to_string).collect();
            count.passed = u64::try_from(set.len()).unwrap_or(u64::MAX);
            *ids = set.into_iter().collect();
        }
    }
}

/// Cuts a run's output into lines as it comes: each at most [`LINE_MAX`] bytes (the rest of a
/// longer line dropped), as a terminal shows it ([`text::visible`]).
#[derive(Default)]
struct Splitter {
    /// The bytes of the line being read (at most [`LINE_MAX`]).
    line: Vec<u8>,
}

impl Splitter {
    /// Feed the next bytes of the output; `each` gets every line they end.
    fn feed(&mut self, mut bytes: &[u8], each: &mut impl FnMut(&str)) {
        while let Some(i) = memchr::memchr(b'\n', bytes) {
            self.take(&bytes[..i]);
            self.end_line(each);
            bytes = &bytes[i + 1..];
        }
        self.take(bytes);
    }

    fn take(&mut self, bytes: &[u8]) {
        let room = LINE_MAX - self.line.len();
        self.line.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn end_line(&mut self, each: &mut impl FnMut(&str)) {
        each(&text::visible(&self.line));
        self.line.clear();
    }

    /// The output has ended: its last line, when it has no newline.
    fn finish(&mut self, each: &mut impl FnMut(&str)) {
        if !self.line.is_empty() {
            self.end_line(each);
        }
    }
}

/// Every line of `from`, cut as the census reads it, to `each`.
fn each_line(mut from: impl Read, mut each: impl FnMut(&str)) -> std::io::Result<()> {
    let mut splitter = Splitter::default();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        splitter.feed(&buf[..n], &mut each);
    }
    splitter.finish(&mut each);
    Ok(())
}

/// Reads a run's output as it comes, for the parsers of one [`Mode`].
pub struct Reader {
    mode: Mode,
    parsers: Vec<Box<dyn Parse>>,
    lines: Splitter,
}

impl Reader {
    /// A reader for `mode`; `None` when the mode reads nothing.
    pub fn new(mode: &Mode) -> Option<Reader> {
        let parsers = mode.parsers();
        if parsers.is_empty() {
            return None;
        }
        Some(Reader {
            mode: mode.clone(),
            parsers,
            lines: Splitter {
                line: Vec::with_capacity(256),
            },
        })
    }

    /// Feed the next bytes of the output.
    pub fn feed(&mut self, bytes: &[u8]) {
        let parsers = &mut self.parsers;
        self.lines.feed(bytes, &mut |line: &str| {
            for parser in parsers.iter_mut() {
                parser.line(line);
            }
        });
    }

    /// The census, once the output has ended.
    pub fn finish(mut self) -> Tally {
        let parsers = &mut self.parsers;
        self.lines.finish(&mut |line: &str| {
            for parser in parsers.iter_mut() {
                parser.line(line);
            }
        });
        let found: Vec<Found> = self.parsers.into_iter().map(|p| p.finish()).collect();
        tally(&self.mode, found)
    }
}

/// Read all of `from` for `mode`; `None` when the mode reads nothing.
pub fn read(mode: &Mode, from: impl Read) -> std::io::Result<Option<Tally>> {
    let Some(mut reader) = Reader::new(mode) else {
        return Ok(None);
    };
    each_line(from, |line| {
        for parser in &mut reader.parsers {
            parser.line(line);
        }
    })?;
    let found: Vec<Found> = reader.parsers.into_iter().map(|p| p.finish()).collect();
    Ok(Some(tally(&reader.mode, found)))
}

/// The parsers' findings folded into one [`Count`] per runner: under [`Mode::Auto`] only the
/// runners whose output was there, under [`Mode::Named`] every named runner (one whose output
/// is missing passed 0 tests).
fn tally(mode: &Mode, mut found: Vec<Found>) -> Tally {
    let mut counts: Vec<Count> = Vec::new();
    for runner in Runner::ALL {
        let named = matches!(mode, Mode::Named(r) if r.contains(&runner));
        let seen = found.iter().any(|f| f.runner == runner && f.seen);
        if !named && !seen {
            continue;
        }
        let (mine, rest): (Vec<Found>, Vec<Found>) =
            found.into_iter().partition(|f| f.runner == runner);
        found = rest;
        let read = mine.into_iter().filter(|f| f.seen || !f.ids.is_empty());
        counts.push(fold(runner, read));
    }
    // `prove -v` prints each file's TAP: under `auto` that is prove's, not a TAP producer's.
    if *mode == Mode::Auto && counts.iter().any(|c| c.runner == Runner::Prove) {
        counts.retain(|c| c.runner != Runner::Tap);
    }
    Tally { counts }
}

/// One runner's findings from its parsers: the ids of all, named when every parser that counted
/// named as many tests as it counted.
fn fold(runner: Runner, found: impl Iterator<Item = Found>) -> Count {
    let mut ids: Vec<String> = Vec::new();
    let mut counted: u64 = 0;
    let mut named = true;
    let mut parsers = 0;
    for mut f in found {
        f.settle();
        let n = u64::try_from(f.ids.len())
            .unwrap_or(u64::MAX)
            .saturating_add(f.dropped);
        match f.counted {
            Some(c) if n < c => named = false,
            _ if f.dropped > 0 => named = false,
            _ => {}
        }
        counted = counted.saturating_add(f.counted.unwrap_or(n).max(n));
        ids.append(&mut f.ids);
        parsers += 1;
    }
    if parsers > 1 {
        ids.sort_unstable();
        ids.dedup();
    }
    if named {
        let passed = u64::try_from(ids.len()).unwrap_or(u64::MAX);
        Count {
            runner,
            passed,
            ids: Some(ids.into()),
        }
    } else {
        Count {
            runner,
            passed: counted,
            ids: None,
        }
    }
}

pub use store::{Stored, decode, encode};

/// A line of a check's output as a terminal shows it: terminal escapes removed, only what
/// follows the last carriage return (SPEC §27.4: no message prints a terminal escape from a
/// check's output). The census reads every line this way; the kept excerpt is cut the same way.
pub fn visible(line: &[u8]) -> std::borrow::Cow<'_, str> {
    text::visible(line)
}

#[cfg(test)]
mod excerpt_tests;
#[cfg(test)]
mod tests;
