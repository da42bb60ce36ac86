//! A commit's census against the merge base's: which tests that passed on the base did not pass
//! on the commit.

use std::collections::HashMap;

use super::{Count, Mode, Runner, Tally};

/// The census of one check: the runners compared, the tests that passed on each side, and the
/// base's passing tests missing on the commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compared {
    pub runners: Vec<Runner>,
    /// Tests that ran and passed on the merge base's tree.
    pub base: u64,
    /// Tests that ran and passed on the commit.
    pub commit: u64,
    /// The ids of the missing tests that both sides name, sorted.
    pub missing: Vec<String>,
    /// How many tests are missing: `missing`, plus what counts alone show where a side names no
    /// ids (its runner printed only a count).
    pub missing_count: u64,
}

impl Compared {
    /// The runners' names, joined by `+` (`libtest`, `libtest+pytest`).
    pub fn runner(&self) -> String {
        let names: Vec<&str> = self.runners.iter().map(|r| r.name()).collect();
        names.join("+")
    }
}

/// The comparison for a check read in `mode`: under [`Mode::Named`] the named runners, under
/// [`Mode::Auto`] the runners the base's run showed (`None` when it showed none: the runner is
/// not one closegate knows). A runner whose output a side lacks passed 0 tests there.
pub fn compare(mode: &Mode, base: &Tally, commit: &Tally) -> Option<Compared> {
    let runners = match mode {
        Mode::Off => return None,
        Mode::Named(runners) => runners.clone(),
        Mode::Auto => base.runners(),
    };
    if runners.is_empty() {
        return None;
    }
    let mut out = Compared {
        runners: runners.clone(),
        base: 0,
        commit: 0,
        missing: Vec::new(),
        missing_count: 0,
    };
    for runner in runners {
        let b = base.get(runner);
        let c = commit.get(runner);
        let (b_passed, c_passed) = (passed(b), passed(c));
        out.base = out.base.saturating_add(b_passed);
        out.commit = out.commit.saturating_add(c_passed);
        let b_ids = b.and_then(|b| b.ids.as_deref());
        let c_ids = c.and_then(|c| c.ids.as_deref());
        match (b_ids, c_ids) {
            (Some(b_ids), Some(c_ids)) => {
                let gone = unmatched(difference(b_ids, c_ids), &difference(c_ids, b_ids));
                out.missing_count = out.missing_count.saturating_add(len(&gone));
                out.missing.extend(gone);
            }
            // Nothing passed on the commit: every test the base names is missing.
            (Some(b_ids), None) if c_passed == 0 => {
                out.missing_count = out.missing_count.saturating_add(len(b_ids));
                out.missing.extend(b_ids.iter().cloned());
            }
            _ => {
                let fewer = b_passed.saturating_sub(c_passed);
                out.missing_count = out.missing_count.saturating_add(fewer);
            }
        }
    }
    out.missing.sort();
    out.missing.dedup();
    Some(out)
}

fn passed(count: Option<&Count>) -> u64 {
    count.map_or(0, |c| c.passed)
}

fn len<T>(items: &[T]) -> u64 {
    u64::try_from(items.len()).unwrap_or(u64::MAX)
}

/// The ids of `gone` left when each new id of the commit takes the place of one gone id of the
/// same shape ([`shape`]): a test whose name holds a random value or the time of the run
/// (`is a number > 0.5159… should be a number`) has another id each run, and is the same test.
/// Only ids holding such a value ([`volatile`]) are matched: a test renamed from `t2` to `t3`
/// is one test gone and another added.
fn unmatched(gone: Vec<String>, new: &[String]) -> Vec<String> {
    if gone.is_empty() || new.is_empty() {
        return gone;
    }
    let mut free: HashMap<String, usize> = HashMap::new();
    for id in new.iter().filter(|id| volatile(id)) {
        *free.entry(shape(id)).or_default() += 1;
    }
    if free.is_empty() {
        return gone;
    }
    gone.into_iter()
        .filter(|id| {
            if !volatile(id) {
                return true;
            }
            match free.get_mut(&shape(id)) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    false
                }
                _ => true,
            }
        })
        .collect()
}

/// Whether `id` holds a number that names no test: one with a fraction (`0.5159`, the seconds
/// of `11:47:14.138Z`) or a run of six digits or more (`Date.now()`, a seed).
fn volatile(id: &str) -> bool {
    let bytes = id.as_bytes();
    let mut run = 0;
    for (i, b) in bytes.iter().enumerate() {
        if b.is_ascii_digit() {
            run += 1;
            if run >= 6 {
                return true;
            }
        } else {
            if *b == b'.' && run > 0 && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
                return true;
            }
            run = 0;
        }
    }
    false
}

/// An id with each run of ASCII digits written `#`.
fn shape(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    let mut in_digits = false;
    for c in id.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// The ids of sorted `base` that sorted `commit` lacks.
fn difference(base: &[String], commit: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut j = 0;
    for id in base {
        while j < commit.len() && commit[j] < *id {
            j += 1;
        }
        if commit.get(j) != Some(id) {
            out.push(id.clone());
        }
    }
    out
}
