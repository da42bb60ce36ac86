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

use super::census::{Block, Blocks, Failures, Found, Parse};
use super::{
    Census, Graded, Hit, Invocation, Invoked, Keys, Language, RUNNER_CONFIG, Reading, Row, Runner,
};

pub(super) const ROW: Row = Row {
    runner: Runner::Libtest,
    name: "libtest",
    language: Language::Rust,
    recognise,
    graded: &GRADED,
    keys: &KEYS,
    wiring: &[],
    configs: &["Cargo.toml"],
    census: Some(Census {
        parsers,
        id_format: "`BINARY::NAME` (`crate::tests::a`); a doc test `CRATE doc FILE - ITEM`",
        names_tests: None,
        failures,
    }),
    under_test: &[
        "cfg!(test",
        "cfg(test",
        "cfg(not(test",
        "cfg_attr(test",
        "cfg(any(test",
        "cfg(all(test",
    ],
    only: Some(only),
};

/// Cargo's own configuration: what every `cargo` command reads.
pub(super) const GRADED: [Graded; 3] = [
    (".cargo/config.toml", RUNNER_CONFIG),
    ("**/rust-toolchain", RUNNER_CONFIG),
    ("**/rust-toolchain.toml", RUNNER_CONFIG),
];

/// `Cargo.toml`'s graded keys.
pub(super) const KEYS: [Keys; 1] = [Keys {
    file: "Cargo.toml",
    read: cargo_keys,
}];

/// `cargo test` (or `cargo t`, `cargo llvm-cov`); any other cargo command still grades cargo's
/// configuration.
fn recognise(invocation: &Invocation) -> Option<Hit> {
    if invocation.program() != "cargo" {
        return None;
    }
    match invocation.subcommand() {
        Some("test" | "t") => Hit::named(),
        Some("llvm-cov") if !invocation.has_arg("nextest") => Hit::named(),
        _ => Hit::graded_only(),
    }
}

fn parsers(_: Reading) -> Vec<Box<dyn Parse>> {
    vec![Box::new(Libtest::default())]
}

fn failures(_: Reading) -> Vec<Box<dyn Failures>> {
    vec![Box::new(LibtestFailures::default())]
}

/// `-- --exact NAME…`: libtest's filters, each the id without its binary.
fn only(ids: &[&str]) -> Vec<String> {
    let mut args = vec!["--".to_string(), "--exact".to_string()];
    args.extend(ids.iter().map(|id| {
        id.split_once("::")
            .map_or(*id, |(_, name)| name)
            .to_string()
    }));
    args
}

/// `Cargo.toml`: `[[test]]`, `[[bench]]`, the `test`/`doctest`/`harness` keys of `[lib]` and
/// `[[bin]]`, `autotests`, `autobenches`, `[profile.test]`, and `[workspace]`'s
/// `members`/`exclude`/`default-members`.
pub(super) fn cargo_keys(bytes: &[u8], _: &Invoked) -> Option<Vec<(String, String)>> {
    let table: toml::Table = std::str::from_utf8(bytes).ok()?.parse().ok()?;
    let show = |v: Option<&toml::Value>| v.map_or(String::new(), toml::Value::to_string);
    let at = |path: &[&str]| {
        let mut v: Option<&toml::Value> = None;
        for (i, key) in path.iter().enumerate() {
            v = if i == 0 {
                table.get(*key)
            } else {
                v.and_then(|v| v.get(*key))
            };
        }
        show(v)
    };
    let mut out = vec![
        ("[[test]]".to_string(), at(&["test"])),
        ("[[bench]]".to_string(), at(&["bench"])),
        (
            "package.autotests".to_string(),
            at(&["package", "autotests"]),
        ),
        (
            "package.autobenches".to_string(),
            at(&["package", "autobenches"]),
        ),
        ("profile.test".to_string(), at(&["profile", "test"])),
        ("package.build".to_string(), at(&["package", "build"])),
        ("lib.path".to_string(), at(&["lib", "path"])),
    ];
    for key in ["members", "exclude", "default-members"] {
        out.push((format!("workspace.{key}"), at(&["workspace", key])));
    }
    for key in ["test", "doctest", "harness"] {
        out.push((format!("lib.{key}"), at(&["lib", key])));
        let bins = table.get("bin").and_then(toml::Value::as_array);
        let values: Vec<String> = bins
            .into_iter()
            .flatten()
            .map(|b| show(b.get(key)))
            .collect();
        out.push((format!("[[bin]].{key}"), values.join(",")));
    }
    Some(out)
}

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

/// The failing tests' own output of `cargo test`: the `---- NAME stdout ----` block of each
/// test libtest reported `FAILED` in the binary being read, up to the next block or the
/// closing `failures:` list. A block header naming a test that did not fail in this binary (a
/// failing test printing `---- other stdout ----`, a process writing past the capture) is one
/// more line of the block it is in.
#[derive(Default)]
struct LibtestFailures {
    unit: Option<String>,
    /// The tests of this binary reported `FAILED`.
    failed: Vec<String>,
    open: Option<Block>,
    blocks: Blocks,
}

impl LibtestFailures {
    fn close(&mut self) {
        if let Some(block) = self.open.take() {
            self.blocks.push(block);
        }
    }

    fn id(&self, name: &str) -> String {
        match &self.unit {
            Some(unit) => format!("{unit}::{name}"),
            None => name.to_string(),
        }
    }
}

impl Failures for LibtestFailures {
    fn line(&mut self, line: &str) {
        if let Some(name) = block_header(line)
            && self.failed.iter().any(|f| f == name)
        {
            self.close();
            self.open = Some(Block::new(self.id(name)));
            return;
        }
        let ends = line == "failures:" || line.starts_with("test result: ");
        if let Some(block) = &mut self.open
            && !ends
        {
            block.push(line);
            return;
        }
        self.close();
        if let Some((name, outcome)) = line
            .strip_prefix("test ")
            .and_then(|r| r.rsplit_once(" ... "))
            && outcome == "FAILED"
        {
            self.failed.push(name.to_string());
        } else if let Some(rest) = line.trim_start().strip_prefix("Running ") {
            self.unit = Some(unit_name(rest));
            self.failed.clear();
        } else if let Some(krate) = line.trim_start().strip_prefix("Doc-tests ") {
            self.unit = Some(format!("{} doc", krate.trim()));
            self.failed.clear();
        }
    }

    fn finish(mut self: Box<Self>) -> Blocks {
        self.close();
        self.blocks
    }
}

/// `---- tests::a stdout ----` (or `stderr`): `tests::a`.
fn block_header(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("---- ")?.strip_suffix(" ----")?;
    rest.strip_suffix(" stdout")
        .or_else(|| rest.strip_suffix(" stderr"))
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
