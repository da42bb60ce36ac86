//! The excerpt of a failed run (SPEC §27.2): the failing tests' own output, read from the run's
//! output by one reader per runner (the row's `failures`, beside its census parser), instead of
//! the run's last lines — a failing test followed by a hundred lines of other tests' output is
//! still shown.
//!
//! A reader sees every line as the census does ([`super::visible`]: terminal escapes removed) and
//! gives [`Block`]s: a failing test's id (its census id) and its lines, bounded (the first and
//! last [`KEEP`] lines of a test, the first [`BLOCKS_MAX`] failing tests). [`excerpt`] lays them
//! out in a budget of lines: each shown test's `failing test: ID` line at the margin, its own
//! lines indented under it (so nothing a test prints reads as another test's header), a test cut
//! to fit keeps its first and last lines around a `[N lines left out]` line, and a last line
//! names the failing tests left out. `None` when no reader found a failing test's output: the
//! caller keeps the run's last lines instead.

use std::collections::VecDeque;
use std::io::Read;

use super::{Mode, Reading, Runner};

/// The lines kept of each end of one failing test's output: the excerpt never shows more.
pub const KEEP: usize = 40;
/// The failing tests whose lines are kept; the rest are counted.
pub const BLOCKS_MAX: usize = 40;
/// The longest line kept, in bytes (cut at a character boundary).
const LINE_KEPT: usize = 2048;

/// One failing test's own output: its id and its lines, the middle of a long one counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub id: String,
    head: Vec<String>,
    tail: VecDeque<String>,
    /// Lines between `head` and `tail` that were not kept.
    dropped: u64,
    /// Blank lines not yet added: kept only when a line follows them.
    blanks: usize,
}

impl Block {
    pub fn new(id: impl Into<String>) -> Block {
        Block {
            id: id.into(),
            head: Vec::new(),
            tail: VecDeque::new(),
            dropped: 0,
            blanks: 0,
        }
    }

    /// Add the test's next line; blank lines before its first and after its last are left out,
    /// and blank lines in a row kept as one.
    pub fn push(&mut self, line: &str) {
        let mut line = line.trim_end();
        if line.is_empty() {
            self.blanks += usize::from(!self.is_empty());
            return;
        }
        // Blank lines in a row are one.
        if std::mem::take(&mut self.blanks) > 0 {
            self.keep("");
        }
        if line.len() > LINE_KEPT {
            let mut end = LINE_KEPT;
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            line = &line[..end];
        }
        self.keep(line);
    }

    fn keep(&mut self, line: &str) {
        if self.head.len() < KEEP {
            self.head.push(line.to_string());
            return;
        }
        if self.tail.len() == KEEP {
            self.tail.pop_front();
            self.dropped = self.dropped.saturating_add(1);
        }
        self.tail.push_back(line.to_string());
    }

    /// How many lines the test printed.
    pub fn len(&self) -> u64 {
        (self.head.len() + self.tail.len()) as u64 + self.dropped
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The lines kept, in order (a long test's middle is missing).
    pub fn lines(&self) -> impl Iterator<Item = &str> {
        self.head.iter().chain(&self.tail).map(String::as_str)
    }

    /// At most `room` lines (`room` ≥ 2): every line when they fit, else the first and last
    /// around a line saying how many were left out.
    fn shown(&self, room: usize) -> Vec<String> {
        let len = usize::try_from(self.len()).unwrap_or(usize::MAX);
        if len <= room {
            return self.lines().map(indent).collect();
        }
        let last = (room - 1) / 2;
        let first = room - 1 - last;
        let mut out: Vec<String> = self.head.iter().take(first).map(|l| indent(l)).collect();
        out.push(format!("  [{} lines left out]", len - first - last));
        let all: Vec<&str> = match self.dropped {
            0 => self.lines().collect(),
            _ => self.tail.iter().map(String::as_str).collect(),
        };
        out.extend(all[all.len() - last..].iter().map(|l| indent(l)));
        out
    }
}

fn indent(line: &str) -> String {
    format!("  {line}")
}

/// The failing tests a reader found, in the order it found them: the first [`BLOCKS_MAX`]
/// kept, the rest counted by id.
#[derive(Debug, Default)]
pub struct Blocks {
    kept: Vec<Block>,
    more: Vec<String>,
}

impl Blocks {
    pub fn push(&mut self, block: Block) {
        if self.kept.len() < BLOCKS_MAX {
            self.kept.push(block);
        } else if self.more.len() < BLOCKS_MAX {
            self.more.push(block.id);
        }
    }

    /// The blocks kept, and the ids of those only counted.
    pub fn into_parts(self) -> (Vec<Block>, Vec<String>) {
        (self.kept, self.more)
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty() && self.more.is_empty()
    }

    pub fn kept_mut(&mut self) -> &mut Vec<Block> {
        &mut self.kept
    }
}

/// One runner's reader of its failing tests' own output.
pub trait Failures {
    fn line(&mut self, line: &str);
    fn finish(self: Box<Self>) -> Blocks;
}

/// The readers of failing tests' output for `mode`: each runner's own, or under `auto` one of
/// each kind (as [`Mode`] picks the census parsers).
fn readers(mode: &Mode) -> Vec<(Runner, Box<dyn Failures>)> {
    let (runners, reading): (Vec<Runner>, Reading) = match mode {
        Mode::Off => return Vec::new(),
        Mode::Auto => (Runner::with_census().collect(), Reading::Auto),
        Mode::Named(runners) => (runners.clone(), Reading::Named),
    };
    let mut out = Vec::new();
    for runner in runners {
        if let Some(census) = runner.row().census.as_ref() {
            out.extend((census.failures)(reading).into_iter().map(|r| (runner, r)));
        }
    }
    out
}

/// The failing tests' own output in `from`, laid out in at most `budget` lines (at least 4);
/// `None` when no reader of `mode` found a failing test with output.
pub fn excerpt(
    mode: &Mode,
    from: impl Read,
    budget: usize,
) -> std::io::Result<Option<Vec<String>>> {
    let mut readers = readers(mode);
    if readers.is_empty() {
        return Ok(None);
    }
    super::each_line(from, |line| {
        for (_, reader) in &mut readers {
            reader.line(line);
        }
    })?;
    let mut found: Vec<(Runner, Blocks)> = readers
        .into_iter()
        .map(|(runner, reader)| (runner, reader.finish()))
        .collect();
    // `prove -v` prints each file's TAP: under `auto` that is prove's, not a TAP producer's.
    if *mode == Mode::Auto
        && found
            .iter()
            .any(|(r, b)| *r == Runner::Prove && !b.is_empty())
    {
        found.retain(|(r, _)| *r != Runner::Tap);
    }
    let mut blocks: Vec<Block> = Vec::new();
    let mut more: Vec<String> = Vec::new();
    for (_, found) in found {
        let (kept, counted) = found.into_parts();
        for block in kept {
            if !block.is_empty() && !blocks.contains(&block) {
                blocks.push(block);
            }
        }
        more.extend(counted);
    }
    if blocks.is_empty() {
        return Ok(None);
    }
    Ok(Some(lay_out(blocks, more, budget.max(4))))
}

/// The blocks in `budget` lines: as many tests as fit with their header and two lines each, the
/// room left shared so that no test takes more than another that was cut, a last line naming
/// the tests left out.
fn lay_out(mut blocks: Vec<Block>, mut more: Vec<String>, budget: usize) -> Vec<String> {
    let len = |b: &Block| usize::try_from(b.len()).unwrap_or(usize::MAX);
    let cost = |blocks: &[Block], cap: usize| -> usize {
        blocks.iter().map(|b| 1 + len(b).min(cap.max(2))).sum()
    };
    let mut shown = blocks.len();
    let note = |shown: usize, total: usize, more: &[String]| {
        usize::from(shown < total || !more.is_empty())
    };
    let total = blocks.len();
    while shown > 1 && cost(&blocks[..shown], 2) + note(shown, total, &more) > budget {
        shown -= 1;
    }
    let room = budget.saturating_sub(note(shown, total, &more));
    let left: Vec<String> = blocks.drain(shown..).map(|b| b.id).collect();
    more.splice(0..0, left);
    let mut cap = 2;
    while cap < room && cost(&blocks, cap + 1) <= room {
        cap += 1;
    }
    let mut spare = room.saturating_sub(cost(&blocks, cap));
    let mut out = Vec::with_capacity(budget);
    for block in &blocks {
        let mut mine = cap.max(2).min(len(block));
        if len(block) > mine && spare > 0 {
            mine += 1;
            spare -= 1;
        }
        out.push(format!("failing test: {}", block.id));
        out.extend(block.shown(mine.max(2).min(room.saturating_sub(1))));
    }
    if !more.is_empty() {
        out.push(left_out(&more));
    }
    out.truncate(budget);
    out
}

/// `[2 more failing tests left out: a, b]`.
fn left_out(more: &[String]) -> String {
    let named: Vec<&str> = more.iter().take(10).map(String::as_str).collect();
    let rest = match more.len() > named.len() {
        true => ", …",
        false => "",
    };
    let s = if more.len() == 1 { "" } else { "s" };
    format!(
        "[{} more failing test{s} left out: {}{rest}]",
        more.len(),
        named.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(id: &str, n: usize) -> Block {
        let mut b = Block::new(id);
        for i in 1..=n {
            b.push(&format!("{id} line {i}"));
        }
        b
    }

    #[test]
    fn one_short_test_is_shown_whole() {
        let out = lay_out(vec![block("a", 3)], Vec::new(), 40);
        assert_eq!(
            out,
            ["failing test: a", "  a line 1", "  a line 2", "  a line 3"]
        );
    }

    #[test]
    fn a_long_test_keeps_its_ends_and_says_what_was_left_out() {
        let out = lay_out(vec![block("a", 500)], Vec::new(), 40);
        assert_eq!(out.len(), 40);
        assert_eq!(out[0], "failing test: a");
        assert_eq!(out[1], "  a line 1");
        assert!(
            out.contains(&"  [462 lines left out]".to_string()),
            "{out:?}"
        );
        assert_eq!(out[39], "  a line 500");
    }

    #[test]
    fn many_tests_share_the_budget_and_the_rest_are_named() {
        let blocks: Vec<Block> = (0..30).map(|i| block(&format!("t{i}"), 10)).collect();
        let out = lay_out(blocks, vec!["late".into()], 40);
        assert!(out.len() <= 40);
        let headers = out
            .iter()
            .filter(|l| l.starts_with("failing test: "))
            .count();
        assert_eq!(headers, 13, "{out:#?}");
        let last = out.last().unwrap();
        assert!(
            last.starts_with("[18 more failing tests left out: t13, t14"),
            "{last}"
        );
    }

    #[test]
    fn a_short_test_leaves_its_room_to_a_long_one() {
        let out = lay_out(vec![block("short", 1), block("long", 100)], Vec::new(), 40);
        assert_eq!(out.len(), 40);
        assert_eq!(out[..2], ["failing test: short", "  short line 1"]);
        assert_eq!(out[39], "  long line 100");
    }
}
