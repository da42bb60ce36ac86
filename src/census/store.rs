//! A census as the record keeps it, in a check's entry (SPEC §19: reused with the result).
//!
//! `{"counts": [{"runner": "pytest", "passed": 297, "ids": "0:tests/a.py::test_x\n22:y\n…"}]}`:
//! the sorted ids front-coded, each as the length in bytes of the prefix it shares with the id
//! before it, `:`, and the rest, one per line (a suite's ids share long prefixes: idna's 6,365
//! node ids take a tenth of their plain length). `ids` is null when the run named no ids. An entry
//! that does not decode to sorted, distinct, clean ids whose number is `passed` is no census, and
//! its check result is not reused (`gates/reuse.rs`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Count, ID_MAX, Runner, Tally};

#[derive(Serialize, Deserialize)]
struct StoredCount {
    runner: String,
    passed: u64,
    ids: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct Stored {
    counts: Vec<StoredCount>,
}

impl Serialize for Tally {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let counts = self
            .counts
            .iter()
            .map(|c| StoredCount {
                runner: c.runner.name().to_string(),
                passed: c.passed,
                ids: c.ids.as_deref().map(encode),
            })
            .collect();
        Stored { counts }.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Tally {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Tally, D::Error> {
        let stored = Stored::deserialize(d)?;
        let mut counts: Vec<Count> = Vec::with_capacity(stored.counts.len());
        for c in stored.counts {
            let bad = || serde::de::Error::custom("not a census");
            let runner = Runner::parse(&c.runner).ok_or_else(bad)?;
            if counts.iter().any(|k| k.runner >= runner) {
                return Err(bad());
            }
            let ids = match c.ids {
                Some(text) => {
                    let ids = decode(&text).ok_or_else(bad)?;
                    if u64::try_from(ids.len()).ok() != Some(c.passed) {
                        return Err(bad());
                    }
                    Some(ids.into())
                }
                None => None,
            };
            counts.push(Count {
                runner,
                passed: c.passed,
                ids,
            });
        }
        Ok(Tally { counts })
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
        out.push_str(&shared.to_string());
        out.push(':');
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
    if text.is_empty() {
        return Some(ids);
    }
    let body = text.strip_suffix('\n')?;
    for line in body.split('\n') {
        let (shared, rest) = line.split_once(':')?;
        if shared.is_empty() || shared.len() > 5 || !shared.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let shared: usize = shared.parse().ok()?;
        let prev = ids.last().map_or("", String::as_str);
        if shared > prev.len() || !prev.is_char_boundary(shared) {
            return None;
        }
        let id = format!("{}{rest}", &prev[..shared]);
        let clean = !id.is_empty()
            && id.len() <= ID_MAX
            && !id.chars().any(char::is_control)
            && id.trim() == id;
        if !clean || ids.last().is_some_and(|p| *p >= id) {
            return None;
        }
        ids.push(id);
    }
    Some(ids)
}
