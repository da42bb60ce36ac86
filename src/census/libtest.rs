//! Rust's libtest as `cargo test` prints it.
//!
//! `Running unittests src/lib.rs (target/debug/deps/crate-0123abcd…)` opens a test binary,
//! `Doc-tests crate` the doc tests; `test NAME ... ok` is a passing test; `test result: ok. N
//! passed; …` closes the binary with its count. An id is `BINARY::NAME`, the binary named as its
//! file without cargo's hash (the crate for its library's unit tests, the file name for
//! `tests/*.rs`; a binary's unit tests add its source: `crate (src/main.rs)`). A doc test is
//! `CRATE doc FILE - ITEM`: its `(line N)` is dropped, since any edit above it moves it; an item
//! with several examples numbers them in line order from the second on (`… - ITEM #2`).
//! `cargo test -q` prints no names: then only the counts are compared.

use super::{Found, Parse, Runner};

#[derive(Default)]
pub(super) struct Libtest {
    found: Option<Found>,
    /// The binary whose tests are running (`None` before the first `Running` line).
    unit: Option<String>,
    /// In a `Doc-tests` section: its results so far, `(name without line, line, passed)`.
    doc: Option<Vec<(String, u64, bool)>>,
    /// The passed counts of the `test result` lines, summed.
    counted: u64,
    results: bool,
}

impl Libtest {
    fn found(&mut self) -> &mut Found {
        self.found
            .get_or_insert_with(|| Found::new(Runner::Libtest))
    }

    fn test_line(&mut self, rest: &str) {
        let Some((name, outcome)) = rest.rsplit_once(" ... ") else {
            return;
        };
        let passed = outcome == "ok";
        if let Some(doc) = &mut self.doc {
            let (name, line) = without_line(name);
            doc.push((name, line, passed));
            return;
        }
        if passed {
            let id = match &self.unit {
                Some(unit) => format!("{unit}::{name}"),
                None => name.to_string(),
            };
            self.found().pass_owned(id);
        }
    }

    /// `test result: ok. 3 passed; 0 failed; …`: the binary's count, and its doc tests named.
    fn result_line(&mut self, rest: &str) {
        self.results = true;
        let passed = rest
            .split(';')
            .find_map(|part| part.trim().rsplit_once(' ').filter(|(_, w)| *w == "passed"))
            .and_then(|(n, _)| n.rsplit(' ').next()?.parse::<u64>().ok());
        if let Some(n) = passed {
            self.counted = self.counted.saturating_add(n);
            self.found().seen = true;
        }
        if let Some(doc) = self.doc.take() {
            self.name_doc_tests(doc);
        }
    }

    fn name_doc_tests(&mut self, mut doc: Vec<(String, u64, bool)>) {
        doc.sort();
        let krate = self.unit.clone().unwrap_or_default();
        let mut prev: Option<&str> = None;
        let mut nth = 0;
        let mut ids = Vec::new();
        for (name, _, passed) in &doc {
            nth = if prev == Some(name.as_str()) {
                nth + 1
            } else {
                1
            };
            prev = Some(name);
            if *passed {
                ids.push(match nth {
                    1 => format!("{krate} doc {name}"),
                    n => format!("{krate} doc {name} #{n}"),
                });
            }
        }
        for id in ids {
            self.found().pass(&id);
        }
    }
}

impl Parse for Libtest {
    fn line(&mut self, line: &str) {
        if let Some(rest) = line.strip_prefix("test result: ") {
            self.result_line(rest);
        } else if let Some(rest) = line.strip_prefix("test ") {
            self.test_line(rest);
        } else if line.starts_with("running ")
            && (line.ends_with(" tests") || line.ends_with(" test"))
        {
            self.found().seen = true;
        } else {
            let trimmed = line.trim_start();
            if let Some(rest) = trimmed.strip_prefix("Running ") {
                self.unit = Some(unit_name(rest));
                self.doc = None;
            } else if let Some(krate) = trimmed.strip_prefix("Doc-tests ") {
                self.unit = Some(krate.trim().to_string());
                self.doc = Some(Vec::new());
            }
        }
    }

    fn finish(mut self: Box<Self>) -> Found {
        if let Some(doc) = self.doc.take() {
            self.name_doc_tests(doc);
        }
        let (counted, results) = (self.counted, self.results);
        let mut found = self.found.unwrap_or_else(|| Found::new(Runner::Libtest));
        if results {
            // The binaries' own counts: more than the names read means `-q` named none.
            found.counted = Some(counted);
        }
        found
    }
}

/// The binary a `Running` line names: `unittests src/lib.rs (target/debug/deps/crate-hash)` is
/// `crate`, `tests/x.rs (…/x-hash)` is `x`, another unit-test source adds itself:
/// `crate (src/main.rs)`. An old cargo's `Running target/debug/deps/crate-hash` is `crate`.
fn unit_name(rest: &str) -> String {
    let rest = rest.trim();
    let (source, binary) = match rest.rsplit_once(" (") {
        Some((source, binary)) => (Some(source), binary.trim_end_matches(')')),
        None => (None, rest),
    };
    let file = binary.rsplit('/').next().unwrap_or(binary);
    let stem = match file.rsplit_once('-') {
        Some((stem, hash)) if hash.len() >= 8 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            stem
        }
        _ => file,
    };
    match source.and_then(|s| s.strip_prefix("unittests ")) {
        Some(src) if src != "src/lib.rs" => format!("{stem} ({src})"),
        _ => stem.to_string(),
    }
}

/// A doc test's name without its ` (line N)`, and N (0 when it has none).
fn without_line(name: &str) -> (String, u64) {
    if let Some(start) = name.rfind(" (line ") {
        let after = &name[start + " (line ".len()..];
        if let Some(end) = after.find(')')
            && let Ok(line) = after[..end].parse::<u64>()
        {
            let rest = &after[end + 1..];
            return (format!("{}{rest}", &name[..start]), line);
        }
    }
    (name.to_string(), 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binaries_are_named_without_their_hash() {
        assert_eq!(
            unit_name("unittests src/lib.rs (target/debug/deps/rs-a35a48c092d3f767)"),
            "rs"
        );
        assert_eq!(
            unit_name("tests/integ.rs (target/debug/deps/integ-243de877ca0502a3)"),
            "integ"
        );
        assert_eq!(
            unit_name("unittests src/main.rs (target/debug/deps/rs-0123456789abcdef)"),
            "rs (src/main.rs)"
        );
        assert_eq!(unit_name("target/debug/deps/old-0123456789abcdef"), "old");
    }

    #[test]
    fn doc_test_lines_are_dropped() {
        assert_eq!(
            without_line("src/lib.rs - add (line 3)"),
            ("src/lib.rs - add".into(), 3)
        );
        assert_eq!(
            without_line("src/lib.rs - add (line 3) - compile fail"),
            ("src/lib.rs - add - compile fail".into(), 3)
        );
        assert_eq!(
            without_line("src/lib.rs - (line x)"),
            ("src/lib.rs - (line x)".into(), 0)
        );
    }
}
