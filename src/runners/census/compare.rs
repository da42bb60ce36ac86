//! A commit's census against the merge base's: which tests that passed on the base did not pass
//! on the commit.

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
                // Paired by identity only, never by shape (SPEC §27.1): a base
                // `TestIssue1234567` the code makes skip is missing whatever new ids appear.
                let gone = difference(b_ids, c_ids);
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
