//! pytest's terminal report.
//!
//! With `-v` each test is a line `NODEID PASSED [ 50%]` (`[gw0] [ 50%] PASSED NODEID` under
//! xdist); with `-rA` or `-rp` the short summary has `PASSED NODEID`. The id is pytest's node id
//! (`tests/test_a.py::TestK::test_m[1-2]`). Lines are read only where pytest writes them: in the
//! progress part and the short summary, never inside the FAILURES, ERRORS or PASSES sections,
//! which quote the tests' own output. The closing line (`== 1 failed, 9 passed in 0.07s ==`,
//! `296 passed, 1 deselected in 2.1s`, `no tests ran in 0.01s`) gives the count, so `-q` (no
//! names) still gives a count.

use super::census::{Block, Blocks, Failures, Found, Parse};
use super::{
    Census, Graded, Hit, Invocation, Invoked, Keys, Language, RUNNER_CONFIG, Reading, Row, Runner,
};

pub(super) const ROW: Row = Row {
    runner: Runner::Pytest,
    name: "pytest",
    language: Language::Python,
    recognise,
    graded: &GRADED,
    keys: &KEYS,
    wiring: &[
        "**/conftest.py",
        "**/__init__.py",
        "**/pytest.ini",
        "**/.pytest.ini",
        "**/pytest.toml",
        "**/.pytest.toml",
    ],
    configs: &[
        "pytest.ini",
        ".pytest.ini",
        "pytest.toml",
        ".pytest.toml",
        "tox.ini",
        "setup.cfg",
        "pyproject.toml",
    ],
    census: Some(Census {
        parsers,
        id_format: "pytest's node id (`tests/test_a.py::TestX::test_y[param]`)",
        names_tests: Some("-v"),
        failures,
    }),
    under_test: &[
        "PYTEST_CURRENT_TEST",
        "\"pytest\" in sys.modules",
        "'pytest' in sys.modules",
        "_called_from_test",
    ],
    only: Some(only),
};

const GRADED: [Graded; 7] = [
    ("**/pytest.ini", RUNNER_CONFIG),
    ("**/.pytest.ini", RUNNER_CONFIG),
    ("**/pytest.toml", RUNNER_CONFIG),
    ("**/.pytest.toml", RUNNER_CONFIG),
    ("**/tox.ini", RUNNER_CONFIG),
    ("**/noxfile.py", RUNNER_CONFIG),
    ("**/conftest.py", RUNNER_CONFIG),
];

const KEYS: [Keys; 2] = [
    Keys {
        file: "pyproject.toml",
        read: pyproject_keys,
    },
    Keys {
        file: "setup.cfg",
        read: setup_cfg_keys,
    },
];

/// `pytest`, `py.test`, `python -m pytest` (unwrapped by the command reader); `tox` and `nox`
/// run pytest through their own configuration: every runner's census, pytest's graded input.
fn recognise(invocation: &Invocation) -> Option<Hit> {
    match invocation.program() {
        "pytest" | "py.test" => Hit::named(),
        "tox" | "nox" => Hit::wrapper(),
        _ => None,
    }
}

fn parsers(_: Reading) -> Vec<Box<dyn Parse>> {
    vec![Box::new(Pytest::default())]
}

/// The node ids themselves: pytest runs exactly the ids it is given.
fn failures(_: Reading) -> Vec<Box<dyn Failures>> {
    vec![Box::new(PytestFailures::default())]
}

fn only(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|id| (*id).to_string()).collect()
}

/// `pyproject.toml`: `[tool.pytest.ini_options]`, `[tool.tox]`, `[tool.coverage*]`.
fn pyproject_keys(bytes: &[u8], _: &Invoked) -> Option<Vec<(String, String)>> {
    let table: toml::Table = std::str::from_utf8(bytes).ok()?.parse().ok()?;
    let tool = table.get("tool").and_then(toml::Value::as_table);
    let mut out = Vec::new();
    let get = |key: &str| tool.and_then(|t| t.get(key)).map(|v| v.to_string());
    // `[tool.pytest.ini_options]`, and the rest of `[tool.pytest]` (pytest 9 reads it natively).
    let pytest = tool
        .and_then(|t| t.get("pytest"))
        .and_then(toml::Value::as_table);
    let ini = pytest
        .and_then(|p| p.get("ini_options"))
        .map(|v| v.to_string());
    out.push(("tool.pytest.ini_options".into(), ini.unwrap_or_default()));
    let mut rest = pytest.cloned().unwrap_or_default();
    rest.remove("ini_options");
    out.push(("tool.pytest".into(), rest.to_string()));
    out.push(("tool.tox".into(), get("tox").unwrap_or_default()));
    for (key, value) in tool.into_iter().flatten() {
        if key.starts_with("coverage") {
            out.push((format!("tool.{key}"), value.to_string()));
        }
    }
    Some(out)
}

/// `setup.cfg`: the `[tool:pytest]` section, as its lines.
fn setup_cfg_keys(bytes: &[u8], _: &Invoked) -> Option<Vec<(String, String)>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut section = String::new();
    let mut inside = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            inside = trimmed == "[tool:pytest]";
            continue;
        }
        if inside {
            section.push_str(line);
            section.push('\n');
        }
    }
    Some(vec![("tool:pytest".into(), section)])
}

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
/// The failing tests' own output of pytest: each `____ test_x ____` section of its FAILURES and
/// ERRORS reports — the test's code, the `E` lines, its captured output — up to the next. When
/// the short test summary lists the failures (`FAILED tests/t.py::test_x - …`, pytest's default),
/// a section is a test's only when that list names it, its id the node id listed; a title the
/// list does not name is a line the test before it printed (`print("____ test_other ____")`) and
/// stays in that test's lines.
#[derive(Default)]
struct PytestFailures {
    reading: bool,
    sections: Vec<Block>,
    /// The node ids the short test summary lists as failed or in error.
    failed: Vec<String>,
    summary: bool,
}

impl Failures for PytestFailures {
    fn line(&mut self, line: &str) {
        if let Some(title) = header(line) {
            self.reading = matches!(title, "FAILURES" | "ERRORS");
            self.summary |= title == "short test summary info";
            return;
        }
        if self.summary {
            let listed = ["FAILED", "ERROR", "SUBFAILED"]
                .iter()
                .any(|w| line.starts_with(w));
            let id = listed.then(|| line.split_once(' ').map_or("", |(_, id)| id));
            if let Some(id) = id.map(|i| i.split_once(" - ").map_or(i, |(id, _)| id))
                && self.failed.len() < 100_000
            {
                self.failed.push(id.trim().to_string());
            }
            return;
        }
        if !self.reading {
            return;
        }
        match section_title(line) {
            Some(title) if self.sections.len() < 10_000 => self.sections.push(Block::new(title)),
            _ => {
                if let Some(block) = self.sections.last_mut() {
                    block.push(line);
                }
            }
        }
    }

    fn finish(self: Box<Self>) -> Blocks {
        let mut blocks = Blocks::default();
        if !self.summary || self.failed.is_empty() {
            self.sections.into_iter().for_each(|b| blocks.push(b));
            return blocks;
        }
        let mut kept: Vec<Block> = Vec::new();
        for section in self.sections {
            let title = section.id.clone();
            let title = title.strip_prefix("ERROR at setup of ").unwrap_or(&title);
            let title = title.strip_prefix("ERROR at teardown of ").unwrap_or(title);
            // A subtest's section: `B.test_sub (i=1)`.
            let (title, sub) = match title.split_once(" (") {
                Some((t, s)) if s.ends_with(')') => (t, Some(s)),
                _ => (title, None),
            };
            let listed = self.failed.iter().find(|id| titled(id) == title);
            match (listed, kept.last_mut()) {
                (Some(id), _) => {
                    let mut section = section;
                    section.id = match sub {
                        Some(sub) => format!("{id} ({sub}"),
                        None => id.clone(),
                    };
                    kept.push(section);
                }
                (None, Some(before)) => {
                    before.push(&format!("{0} {1} {0}", "_".repeat(10), section.id));
                    section.lines().for_each(|l| before.push(l));
                }
                (None, None) => {}
            }
        }
        kept.into_iter().for_each(|b| blocks.push(b));
        blocks
    }
}

/// `______ TestK.test_method ______`: `TestK.test_method`.
fn section_title(line: &str) -> Option<&str> {
    let inner = line.strip_prefix("___")?.strip_suffix("___")?;
    let title = inner.trim_matches('_').trim();
    (!title.is_empty() && inner.starts_with(['_', ' '])).then_some(title)
}

/// The section title pytest gives a node id: its parts after the file, joined by `.`.
fn titled(id: &str) -> String {
    id.split_once("::")
        .map_or(id, |(_, rest)| rest)
        .replace("::", ".")
}

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
