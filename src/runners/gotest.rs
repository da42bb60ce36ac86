//! `go test`: its JSON events (`-json`), its verbose lines (`-v`), or its package lines.
//!
//! An id is `PACKAGE::TEST` (`example.com/m::TestSub/two_words`, subtests included). With
//! `-json` each `{"Action":"pass","Package":…,"Test":…}` event is one; with `-v` the `--- PASS:
//! TestX (0.00s)` lines of a package are named when its `ok  \tPACKAGE` line comes. Plain
//! `go test ./...` prints no test names: then each package that passed (`ok  \tPACKAGE`) is one
//! id, so a package that leaves the run (a nested `go.mod`) is missing, a test inside one is not.

use serde::Deserialize;

use super::census::{Found, Parse};
use super::{Census, Graded, Hit, Invocation, Language, RUNNER_CONFIG, Reading, Row, Runner, js};

pub(super) const ROW: Row = Row {
    runner: Runner::Go,
    name: "go",
    language: Language::Go,
    recognise,
    graded: &GRADED,
    keys: &[],
    wiring: &[],
    configs: &[],
    census: Some(Census {
        parsers,
        id_format: "`PACKAGE::TEST`, subtests as go names them (`example.com/m::TestParse/two`)",
        names_tests: Some("-json"),
    }),
    under_test: &["testing.Testing()", "flag.Lookup(\"test.", "\".test\")"],
    only: Some(only),
};

/// A `go.mod` below the root makes a module of its own, which `./...` leaves out; `go.work`
/// decides which modules build.
const GRADED: [Graded; 2] = [
    ("*/**/go.mod", RUNNER_CONFIG),
    ("**/go.work", RUNNER_CONFIG),
];

/// `go test`; any other go command still grades the modules' files.
fn recognise(invocation: &Invocation) -> Option<Hit> {
    if invocation.program() != "go" {
        return None;
    }
    let at = super::command::skip_options(invocation.args(), &["-C"]);
    match invocation.args().get(at).map(String::as_str) {
        Some("test") => Hit::named(),
        _ => Hit::graded_only(),
    }
}

fn parsers(_: Reading) -> Vec<Box<dyn Parse>> {
    vec![Box::new(GoTest::default())]
}

/// `-run '^(TestA|TestB)$'`: the top-level test names of the ids (`PACKAGE::TEST/SUBTEST`).
fn only(ids: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for id in ids {
        let test = id.rsplit_once("::").map_or(*id, |(_, t)| t);
        let name = js::regex_literal(test.split('/').next().unwrap_or(test));
        if !names.contains(&name) {
            names.push(name);
        }
    }
    vec!["-run".to_string(), format!("^({})$", names.join("|"))]
}

#[derive(Default)]
pub(super) struct GoTest {
    found: Option<Found>,
    /// `-v`: the tests that passed since the last package line.
    pending: Vec<String>,
    /// `-v`: a `--- ` result line was read since the last package line.
    verbose: bool,
}

/// The fields of a `go test -json` event the census reads.
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "Action")]
    action: &'a str,
    #[serde(rename = "Package", default)]
    package: Option<&'a str>,
    #[serde(rename = "Test", default)]
    test: Option<&'a str>,
}

impl GoTest {
    fn found(&mut self) -> &mut Found {
        self.found.get_or_insert_with(|| Found::new(Runner::Go))
    }

    fn event(&mut self, line: &str) {
        // Most events are output: parse only what can be a result.
        let results = [
            "\"Action\":\"pass\"",
            "\"Action\":\"fail\"",
            "\"Action\":\"skip\"",
        ];
        if !results.iter().any(|r| line.contains(r)) {
            if line.contains("\"Action\":") {
                self.found().seen = true;
            }
            return;
        }
        let Ok(event) = serde_json::from_str::<Event<'_>>(line) else {
            return;
        };
        self.found().seen = true;
        if let (Some(package), Some(test), "pass") = (event.package, event.test, event.action) {
            self.found().pass_owned(format!("{package}::{test}"));
        }
    }

    /// `ok  \tPKG\t0.01s`, `FAIL\tPKG\t…`, `?   \tPKG\t[no test files]`: the package's tests
    /// named, or the package itself when the run is not verbose.
    fn package_line(&mut self, line: &str) -> bool {
        let Some((status, rest)) = line.split_once('\t') else {
            return false;
        };
        let status = status.trim_end();
        if !matches!(status, "ok" | "FAIL" | "?") {
            return false;
        }
        let package = rest.split('\t').next().unwrap_or("").trim();
        if package.is_empty() || package.contains(' ') {
            return false;
        }
        self.found().seen = true;
        let pending = std::mem::take(&mut self.pending);
        let verbose = std::mem::take(&mut self.verbose);
        if verbose {
            // The tests that passed, in a package that failed too.
            for test in pending {
                self.found().pass_owned(format!("{package}::{test}"));
            }
        } else if status == "ok" && !rest.contains("[no test files]") {
            self.found().pass(package);
        }
        true
    }

    /// `--- PASS: TestX (0.00s)`, indented for subtests.
    fn result_line(&mut self, line: &str) {
        let Some(rest) = line.trim_start().strip_prefix("--- ") else {
            return;
        };
        let Some((status, rest)) = rest.split_once(": ") else {
            return;
        };
        if !matches!(status, "PASS" | "FAIL" | "SKIP") {
            return;
        }
        self.verbose = true;
        let Some((name, _)) = rest.rsplit_once(" (") else {
            return;
        };
        if status == "PASS" && !name.is_empty() {
            self.pending.push(name.to_string());
        }
    }
}

impl Parse for GoTest {
    fn line(&mut self, line: &str) {
        if line.starts_with('{') {
            self.event(line);
        } else if !self.package_line(line) {
            self.result_line(line);
        }
    }

    fn finish(self: Box<Self>) -> Found {
        self.found.unwrap_or_else(|| Found::new(Runner::Go))
    }
}
