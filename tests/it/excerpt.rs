//! The excerpt of a failed run (SPEC §27.2): for a test runner closegate reads, the report's
//! `output` is the failing tests' own lines, not the run's last lines, with terminal escapes
//! removed; a passing run, or a runner closegate does not read, keeps its last lines. A real `go
//! test -json` run whose failing test is followed by a hundred lines of a passing test's output.
//!
//! Attack: a passing test prints `--- FAIL: TestOther (0.00s)` and an indented line (go 1.19's
//! text-to-JSON converter turns that into a failure of `TestOther`): the excerpt still shows the
//! real failing test's lines and not the forged one.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::fixture::{Part, require};
use crate::scene::{Scene, StatusDoc, json_report};

const CALC: &str = "package calc\n\nfunc Add(a, b int) int { return a + b }\n";

/// `TestAdd` fails when `Add` is wrong; `TestNoise` after it prints a hundred lines; `TestForge`
/// passes, printing a forged failure of another test.
const TESTS: &str = "package calc\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n)\n\n\
func TestForge(t *testing.T) {\n\tfmt.Println(\"--- FAIL: TestOther (0.00s)\")\n\tfmt.Println(\"    forged reason\")\n}\n\n\
func TestAdd(t *testing.T) {\n\tfmt.Println(\"\\x1b[31mprinted by TestAdd\\x1b[0m\")\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n\n\
func TestNoise(t *testing.T) {\n\tfor i := 0; i < 100; i++ {\n\t\tfmt.Println(\"noise\", i)\n\t}\n}\n";

struct Suite {
    s: Scene,
    cache: PathBuf,
}

impl Suite {
    fn new(config: &str) -> Suite {
        let cache = crate::fixture::readable_by_checks().join("excerpt-go-cache");
        std::fs::create_dir_all(&cache).unwrap();
        let config = format!("{config}writable = ['{}']\n", cache.display());
        let files = [
            (".closegate.toml", Some(config.as_str())),
            ("go.mod", Some("module example.com/calc\n\ngo 1.19\n")),
            ("calc.go", Some(CALC)),
            ("calc_test.go", Some(TESTS)),
        ];
        let s = Scene::new().on_main(&files, "configure closegate");
        Suite { s, cache }
    }

    /// Agent `slug`'s return: `calc.go` as given, a close-ok document; the report of `check`.
    fn check(&self, slug: &str, calc: &str) -> Value {
        let branch = format!("agent/{slug}");
        let tip = self
            .s
            .fx
            .commit(&branch, &[("calc.go", Some(calc))], "work");
        let wt = self.s.fx.worktree(slug, &branch);
        let path = wt.canonicalize().unwrap().display().to_string();
        let sha = &tip.to_string()[..12];
        StatusDoc::complete(slug, "close-ok")
            .last_commit(sha, "work")
            .artifacts(&["calc.go"])
            .close(sha, &branch, &path)
            .write(&wt);
        self.run(&wt)
    }

    fn run(&self, wt: &Path) -> Value {
        let mut cmd = self
            .s
            .bin(wt, &["check", "--format", "json", "--no-record"]);
        cmd.env_remove("CARGO_TARGET_DIR")
            .env("GOCACHE", self.cache.join("build"))
            .env("GOPATH", self.cache.join("path"))
            .env("GOFLAGS", "-mod=mod");
        json_report(&cmd.output().unwrap()).1
    }
}

fn output(report: &Value) -> Vec<String> {
    let lines = report["checks"][0]["output"]
        .as_array()
        .unwrap_or_else(|| panic!("{report}"));
    lines
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
}

const GO: &str = "[[checks]]\nname = \"go\"\nrun = \"go test -json ./...\"\ntimeout_s = 300\nflaky_retries = 0\n";

#[test]
fn a_failing_go_test_is_the_excerpt_not_the_last_lines() {
    if require(Part::Tool("go")).is_none() {
        return;
    }
    let suite = Suite::new(GO);
    let report = suite.check(
        "x",
        "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
    );
    assert_ne!(report["checks"][0]["exit_code"], 0, "{report}");
    let out = output(&report);
    assert_eq!(
        out,
        [
            "failing test: example.com/calc::TestAdd",
            "  printed by TestAdd",
            "      calc_test.go:16: Add(2, 3) = -1, want 5",
            "  --- FAIL: TestAdd (0.00s)",
        ],
        "{report}"
    );
    // The attack: the forged failure and the passing tests' output are not the excerpt.
    assert!(
        !out.iter()
            .any(|l| l.contains("TestOther") || l.contains("forged") || l.contains("noise"))
    );
}

#[test]
fn a_passing_run_and_a_runner_not_read_keep_their_last_lines() {
    if require(Part::Tool("go")).is_none() {
        return;
    }
    let suite = Suite::new(GO);
    let report = suite.check("x", CALC);
    assert_eq!(report["checks"][0]["exit_code"], 0, "{report}");
    let out = output(&report);
    assert_eq!(out.len(), 40, "{report}");
    assert!(
        out.last().unwrap().contains("\"Action\":\"pass\""),
        "{out:#?}"
    );
    assert!(out.iter().any(|l| l.contains("noise 99")), "{out:#?}");
    // Census off: a failed run keeps its last lines, escapes removed.
    let off = GO.replace(
        "flaky_retries = 0\n",
        "flaky_retries = 0\ncensus = \"off\"\n",
    );
    let suite = Suite::new(&off);
    let report = suite.check(
        "y",
        "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
    );
    let out = output(&report);
    assert_eq!(out.len(), 40, "{report}");
    assert!(
        out.last().unwrap().contains("\"Action\":\"fail\""),
        "{out:#?}"
    );
    assert!(!out.iter().any(|l| l.contains('\u{1b}')));
}
