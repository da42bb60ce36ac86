//! pytest's terminal report.
//!
//! With `-v` each test is a line `NODEID PASSED [ 50%]` (`[gw0] [ 50%] PASSED NODEID` under
//! xdist); with `-rA` or `-rp` the short summary has `PASSED NODEID`. The id is pytest's node id
//! (`tests/test_a.py::TestK::test_m[1-2]`). Lines are read only where pytest writes them: in the
//! progress part and the short summary, never inside the FAILURES, ERRORS or PASSES sections,
//! which quote the tests' own output. The closing line (`== 1 failed, 9 passed in 0.07s ==`,
//! `296 passed, 1 deselected in 2.1s`, `no tests ran in 0.01s`) gives the count, so `-q` (no
//! names) still gives a count.

use super::{Found, Parse, Runner};

#[derive(Default)]
pub(super) struct Pytest {
    found: Option<Found>,
    section: Section,
}

#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum Section {
    /// Before the first section header, and after `test session starts`: progress lines.
    #[default]
    Progress,
    /// The short test summary: `PASSED NODEID` lines.
    Summary,
    /// FAILURES, ERRORS, PASSES, warnings and any other section: the tests' own words.
    Quoted,
}

impl Pytest {
    fn found(&mut self) -> &mut Found {
        self.found.get_or_insert_with(|| Found::new(Runner::Pytest))
    }
}

impl Parse for Pytest {
    fn line(&mut self, line: &str) {
        // Undecorated (`-q`) only where pytest itself writes: a quoted test's output may say
        // anything.
        let decorated = line.starts_with("==");
        if (decorated || self.section != Section::Quoted)
            && let Some(n) = closing_count(line)
        {
            self.found().count(n);
            return;
        }
        if let Some(title) = header(line) {
            self.section = match title {
                "test session starts" => {
                    self.found().seen = true;
                    Section::Progress
                }
                "short test summary info" => Section::Summary,
                _ => Section::Quoted,
            };
            return;
        }
        let id = match self.section {
            Section::Progress => progress_pass(line),
            Section::Summary => line.strip_prefix("PASSED ").filter(|id| is_node_id(id)),
            Section::Quoted => None,
        };
        if let Some(id) = id {
            self.found().pass(id);
        }
    }

    fn finish(self: Box<Self>) -> Found {
        self.found.unwrap_or_else(|| Found::new(Runner::Pytest))
    }
}

/// The title of a section header line `==== title ====`.
fn header(line: &str) -> Option<&str> {
    let inner = line.strip_prefix("==")?.strip_suffix("==")?;
    Some(inner.trim_matches('=').trim())
}

/// The node id of a passing progress line: `NODEID PASSED [ 50%]`, or xdist's
/// `[gw0] [ 50%] PASSED NODEID`.
fn progress_pass(line: &str) -> Option<&str> {
    if line.starts_with("[gw") {
        let (_, id) = line.split_once("] PASSED ")?;
        return Some(id.trim()).filter(|id| is_node_id(id));
    }
    let mut rest = line.trim_end();
    if rest.ends_with("%]") {
        rest = rest[..rest.rfind('[')?].trim_end();
    }
    let id = rest.strip_suffix(" PASSED")?;
    Some(id).filter(|id| is_node_id(id))
}

/// A node id: a path, then `::` and a name; never indented.
fn is_node_id(id: &str) -> bool {
    id.contains("::") && !id.starts_with(char::is_whitespace) && !id.starts_with("::")
}

/// The passed count of pytest's closing line: `[== ]N passed, M failed, … in 1.2s[ (0:00:01)][ ==]`;
/// `no tests ran in …` is 0. Any other line is `None`.
fn closing_count(line: &str) -> Option<u64> {
    let inner = line.trim().trim_matches('=').trim();
    let (counts, took) = inner.rsplit_once(" in ")?;
    let took = took.split_once(" (").map_or(took, |(t, _)| t);
    let secs = took.strip_suffix('s')?;
    if secs.is_empty() || !secs.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    if counts == "no tests ran" {
        return Some(0);
    }
    let mut passed = 0;
    for item in counts.split(", ") {
        let (n, what) = item.split_once(' ')?;
        let n: u64 = n.parse().ok()?;
        if what.is_empty() || !what.bytes().all(|b| b.is_ascii_lowercase() || b == b' ') {
            return None;
        }
        if what == "passed" {
            passed = n;
        }
    }
    Some(passed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closing_lines_count_passed_tests_only() {
        let lines = [
            (
                "===== 1 failed, 9 passed, 1 skipped, 2 subtests passed in 0.07s =====",
                Some(9),
            ),
            ("296 passed, 1 deselected in 2.10s", Some(296)),
            ("= 297 passed in 122.10s (0:02:02) =", Some(297)),
            ("no tests ran in 0.01s", Some(0)),
            ("=== 3 warnings in 0.5s ===", Some(0)),
            ("logged in 2s", None),
            ("tests/test_a.py::test_one PASSED in 3s", None),
        ];
        for (line, want) in lines {
            assert_eq!(closing_count(line), want, "{line}");
        }
    }

    #[test]
    fn progress_lines_name_passing_node_ids() {
        assert_eq!(
            progress_pass("tests/test_a.py::test_param[a b] PASSED             [ 41%]"),
            Some("tests/test_a.py::test_param[a b]")
        );
        assert_eq!(
            progress_pass("[gw1] [ 50%] PASSED tests/t.py::test_x"),
            Some("tests/t.py::test_x")
        );
        assert_eq!(
            progress_pass("tests/test_a.py::test_fail FAILED [ 58%]"),
            None
        );
        assert_eq!(progress_pass("    x PASSED"), None);
        assert_eq!(progress_pass("tests/test_a.py ....F [100%]"), None);
    }
}
