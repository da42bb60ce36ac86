//! A census as the record keeps it, in a check's entry (SPEC §19: reused with the result).
//!
//! `{"counts": [{"runner": "pytest", "passed": 297, "ids": "0:tests/a.py::test_x\n22:y\n…"}]}`:
//! the sorted ids front-coded, each as the length in bytes of the prefix it shares with the id
//! before it, `:`, and the rest, one per line (a suite's ids share long prefixes: idna's 6,365
//! node ids take a tenth of their plain length). `ids` is null when the run named no ids. An entry
//! that does not decode to sorted, distinct, clean ids whose number is `passed` is no census, and
//! its check result is not reused (`gates/reuse.rs`).
//!
//! Reading a record checks every stored census ([`Stored`]) without building its ids; only the
//! entry that is reused is decoded ([`Stored::tally`]): a record holds the censuses of every run
//! of its check, and one lookup needs one.

use std::fmt::Write as _;

use serde::{Deserialize, Deserializer, Serialize};

use super::{Count, ID_MAX, Runner, Tally};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct StoredCount {
    runner: String,
    passed: u64,
    ids: Option<String>,
}

#[derive(Deserialize)]
struct Unchecked {
    counts: Vec<StoredCount>,
}

/// A census in its record form, checked when read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stored {
    counts: Vec<StoredCount>,
}

impl Stored {
    /// The record form of `tally`.
    pub fn of(tally: &Tally) -> Stored {
        let counts = tally
            .counts
            .iter()
            .map(|c| StoredCount {
                runner: c.runner.name().to_string(),
                passed: c.passed,
                ids: c.ids.as_deref().map(encode),
            })
            .collect();
        Stored { counts }
    }

    /// The census this form holds (checked when it was read, so it decodes).
    pub fn tally(&self) -> Tally {
        let counts = self
            .counts
            .iter()
            .filter_map(|c| {
                let ids = match &c.ids {
                    Some(text) => Some(decode(text)?.into()),
                    None => None,
                };
                Some(Count {
                    runner: Runner::parse(&c.runner)?,
                    passed: c.passed,
                    ids,
                })
            })
            .collect();
        Tally { counts }
    }
}

impl<'de> Deserialize<'de> for Stored {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Stored, D::Error> {
        let stored = Unchecked::deserialize(d)?;
        let bad = || serde::de::Error::custom("not a census");
        let mut last: Option<Runner> = None;
        for c in &stored.counts {
            let runner = Runner::parse(&c.runner).ok_or_else(bad)?;
            if last.is_some_and(|l| l >= runner) {
                return Err(bad());
            }
            last = Some(runner);
            if let Some(text) = &c.ids
                && check(text) != Some(c.passed)
            {
                return Err(bad());
            }
        }
        Ok(Stored {
            counts: stored.counts,
        })
    }
}

/// Sorted ids, front-coded (see the module's doc).
pub fn encode(ids: &[String]) -> String {
    let mut out = String::new();
    let mut prev = "";
    for id in ids {
        let mut shared = prev
            .bytes()
            .zip(id.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        while !id.is_char_boundary(shared) {
            shared -= 1;
        }
        let _ = write!(out, "{shared}:");
        out.push_str(&id[shared..]);
        out.push('\n');
        prev = id;
    }
    out
}

/// The ids of [`encode`]'s text; `None` unless they are sorted, distinct, non-empty, free of
/// control characters and at most [`ID_MAX`] bytes each.
pub fn decode(text: &str) -> Option<Vec<String>> {
    let mut ids: Vec<String> = Vec::new();
    walk(text, |id| ids.push(id.to_string()))?;
    Some(ids)
}

/// How many ids [`encode`]'s text holds, when it decodes (as [`decode`] says), without keeping
/// them.
fn check(text: &str) -> Option<u64> {
    let mut n: u64 = 0;
    walk(text, |_| n += 1)?;
    Some(n)
}

/// Each id of the text in turn, rebuilt in one buffer; `None` at the first that breaks the form.
fn walk(text: &str, mut each: impl FnMut(&str)) -> Option<()> {
    if text.is_empty() {
        return Some(());
    }
    let body = text.strip_suffix('\n')?;
    let mut prev = String::new();
    let mut id = String::new();
    let mut first = true;
    for line in body.split('\n') {
        let (shared, rest) = line.split_once(':')?;
        if shared.is_empty() || shared.len() > 5 || !shared.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let shared: usize = shared.parse().ok()?;
        if shared > prev.len() || !prev.is_char_boundary(shared) {
            return None;
        }
        id.clear();
        id.push_str(&prev[..shared]);
        id.push_str(rest);
        let clean = !id.is_empty()
            && id.len() <= ID_MAX
            && !id.chars().any(char::is_control)
            && id.trim() == id;
        if !clean || (!first && prev >= id) {
            return None;
        }
        each(&id);
        first = false;
        std::mem::swap(&mut prev, &mut id);
    }
    Some(())
}
