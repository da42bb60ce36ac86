//! A flaky test is not a verdict (SPEC §27.2): a failing run is run again on the same tree
//! (`flaky_retries`, default 2); a check that both fails and passes there is `check-flaky` (gap,
//! naming the test ids), never `check-failed`; a result of the integrity runs or the census that
//! rests on a test that flaked is `check-flaky` too; the report's runs carry `retries`,
//! `snapshot` and `parallel`.
//!
//! The suite is a TAP-printing script whose test `flaky` fails on chosen runs: a counter file in
//! a `writable` directory outside the checkout numbers every run of the check on every tree, so
//! which run fails is fixed, not left to chance.
//!
//! Attacks, one test each: a test made to fail only on the first run so the check looks flaky
//! (it is `check-flaky`, a gap: never VERIFIED, never mergeable); a check that passes only on a
//! retry; a check failing every run while printing other passing ids each time to look flaky
//! (stays `check-failed`); a base test the agent's code breaks every time under the overlay
//! (reruns do not launder it: `tests-weakened` stands); a `flaky_retries` out of bounds or of the
//! wrong type (exit 2 naming the key). Honest controls: a base test that flakes only in the
//! overlay is `check-flaky`, not `tests-weakened`; an overlay that is the base's own tree is
//! never run twice nor reported as a different result.

use std::path::{Path, PathBuf};

use git2::Oid;
use serde_json::Value;

use crate::scene::{Scene, StatusDoc, json_report};

/// `sh t.sh` prints TAP, one line per test named in `tests/list.txt`; the test `flaky` fails on
/// the runs whose number (the counter in `$D/n`) is listed in `$FAILS`, the test `broken` on
/// every run, and with `SHIFT` set each run also passes a test named after its number.
const SCRIPT: &str = r#"c=$(cat "$D/n" 2>/dev/null || echo 0); c=$((c+1)); echo "$c" > "$D/n"
echo 'TAP version 13'
n=0; fail=0
while read -r t; do
  n=$((n+1))
  bad=0
  [ "$t" = broken ] && bad=1
  if [ "$t" = flaky ]; then case " $FAILS " in *" $c "*) bad=1 ;; esac; fi
  if [ $bad = 1 ]; then echo "not ok $n - $t"; fail=1; else echo "ok $n - $t"; fi
done < tests/list.txt
if [ -n "$SHIFT" ]; then n=$((n+1)); echo "ok $n - run$c"; fi
echo "1..$n"
exit $fail
"#;

/// A repository whose suite's runs are counted in a directory of their own.
struct Suite {
    s: Scene,
    dir: PathBuf,
}

impl Suite {
    /// `main` holds the suite with `tests` listed; the check's `run` sets `vars` (`FAILS=…`).
    fn new(vars: &str, tests: &[&str], extra: &str) -> Suite {
        Suite::with(vars, tests, extra, "")
    }

    /// [`Suite::new`] with `in_check` added to the check's table.
    fn with(vars: &str, tests: &[&str], extra: &str, in_check: &str) -> Suite {
        let dir = crate::fixture::readable_by_checks()
            .join("flaky")
            .join(format!("{}-{}", std::process::id(), unique()));
        std::fs::create_dir_all(&dir).unwrap();
        let d = dir.display();
        let config = format!(
            "{extra}[[checks]]\nname = \"suite\"\nrun = 'D={d} {vars} sh t.sh'\ncensus = \"tap\"\n\
             timeout_s = 60\nwritable = ['{d}']\n{in_check}"
        );
        let list = lines(tests);
        let files = [
            (".closegate.toml", Some(config.as_str())),
            ("t.sh", Some(SCRIPT)),
            ("tests/list.txt", Some(list.as_str())),
            ("src/lib.rs", Some("pub fn x() {}\n")),
        ];
        let s = Scene::new().on_main(&files, "configure closegate");
        Suite { s, dir }
    }

    /// Agent `slug`'s return: `files` committed on `agent/<slug>`, a close-ok document.
    fn agent(&self, slug: &str, files: &[(&str, Option<&str>)]) -> (PathBuf, Oid) {
        let branch = format!("agent/{slug}");
        let tip = self.s.fx.commit(&branch, files, &format!("work of {slug}"));
        let wt = self.s.fx.worktree(slug, &branch);
        let path = wt.canonicalize().unwrap().display().to_string();
        let sha = &tip.to_string()[..12];
        StatusDoc::complete(slug, "close-ok")
            .last_commit(sha, &format!("work of {slug}"))
            .artifacts(&["src/lib.rs"])
            .close(sha, &branch, &path)
            .write(&wt);
        (wt, tip)
    }

    /// A return that changes the code only.
    fn code_return(&self) -> PathBuf {
        self.agent("a", &[("src/lib.rs", Some("pub fn x() -> u8 { 1 }\n"))])
            .0
    }

    fn check(&self, wt: &Path, args: &[&str]) -> (i32, Value) {
        let mut all = vec!["check", "--format", "json"];
        all.extend_from_slice(args);
        let mut cmd = self.s.bin(wt, &all);
        cmd.env_remove("CARGO_TARGET_DIR");
        json_report(&cmd.output().unwrap())
    }

    /// How many runs of the check there were, on every tree.
    fn runs(&self) -> u32 {
        let text = std::fs::read_to_string(self.dir.join("n")).unwrap_or_default();
        text.trim().parse().unwrap_or(0)
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

fn lines(tests: &[&str]) -> String {
    tests.iter().map(|t| format!("{t}\n")).collect()
}

fn codes(report: &Value) -> Vec<String> {
    crate::fixture::report_codes(report)
}

fn message(report: &Value, code: &str) -> String {
    let found = report["findings"].as_array().unwrap().iter();
    let found: Vec<&Value> = found.filter(|f| f["code"] == code).collect();
    assert!(!found.is_empty(), "no {code}: {report}");
    found[0]["message"].as_str().unwrap().to_string()
}

/// A verdict that is not VERIFIED and a return that is not mergeable: `check-flaky` is a gap.
fn not_verified(report: &Value) {
    assert_ne!(report["verdict"], "VERIFIED", "{report}");
    assert_eq!(report["mergeable"], false, "{report}");
    let flaky = report["findings"].as_array().unwrap().iter();
    for f in flaky.filter(|f| f["code"] == "check-flaky") {
        assert_eq!(f["severity"], "gap", "{f}");
        assert_eq!(f["gate"], "checks", "{f}");
    }
}

#[test]
fn a_check_that_fails_once_then_passes_is_check_flaky_never_check_failed_nor_verified() {
    // Attack: the agent's test fails only on the first run, so the check looks flaky.
    let suite = Suite::new("FAILS=1", &["adds", "flaky"], "");
    let wt = suite.code_return();
    let (code, report) = suite.check(&wt, &[]);
    assert_ne!(code, 0, "{report}");
    let codes = codes(&report);
    assert!(codes.contains(&"check-flaky".to_string()), "{report}");
    assert!(!codes.contains(&"check-failed".to_string()), "{report}");
    assert!(!codes.contains(&"tests-missing".to_string()), "{report}");
    not_verified(&report);
    let msg = message(&report, "check-flaky");
    assert!(msg.contains("`flaky`"), "{msg}");
    let run = &report["checks"][0];
    assert_eq!(run["retries"], 1, "{run}");
    assert_eq!(run["snapshot"], Value::Null, "{run}");
    assert_eq!(run["parallel"], false, "{run}");
    assert!(
        run["output"].to_string().contains("not ok 2 - flaky"),
        "the kept run is the failing one: {run}"
    );
}

#[test]
fn a_check_that_passes_only_on_its_last_retry_is_not_verified() {
    let suite = Suite::new(r#"FAILS="1 2""#, &["adds", "flaky"], "");
    let wt = suite.code_return();
    let (_, report) = suite.check(&wt, &[]);
    assert!(
        codes(&report).contains(&"check-flaky".to_string()),
        "{report}"
    );
    assert_eq!(report["checks"][0]["retries"], 2, "{report}");
    not_verified(&report);
}

#[test]
fn a_check_that_fails_every_time_stays_check_failed_after_two_retries() {
    let suite = Suite::new("FAILS=", &["adds", "broken"], "");
    let wt = suite.code_return();
    let (code, report) = suite.check(&wt, &[]);
    assert_eq!(code, 1, "{report}");
    let codes = codes(&report);
    assert!(codes.contains(&"check-failed".to_string()), "{report}");
    assert!(!codes.contains(&"check-flaky".to_string()), "{report}");
    assert_eq!(report["verdict"], "FAIL", "{report}");
    assert_eq!(report["checks"][0]["retries"], 2, "{report}");
    let msg = message(&report, "check-failed");
    assert!(msg.contains("failed again on 2 reruns"), "{msg}");
}

#[test]
fn a_check_failing_every_run_with_shifting_passing_ids_stays_check_failed() {
    // Attack: each run passes a test named after its number, so ids differ between runs.
    let suite = Suite::new("FAILS= SHIFT=1", &["adds", "broken"], "");
    let wt = suite.code_return();
    let (_, report) = suite.check(&wt, &[]);
    assert!(
        codes(&report).contains(&"check-failed".to_string()),
        "{report}"
    );
    assert_eq!(report["verdict"], "FAIL", "{report}");
    // The shifting ids themselves are flaky: `tests-missing` may not rest on them either.
    assert!(
        !codes(&report).contains(&"tests-missing".to_string()),
        "{report}"
    );
}

#[test]
fn flaky_retries_zero_makes_no_rerun_and_a_check_key_overrides_the_top_level_one() {
    let suite = Suite::new("FAILS=1", &["adds", "flaky"], "flaky_retries = 0\n");
    let wt = suite.code_return();
    let (_, report) = suite.check(&wt, &[]);
    assert!(
        codes(&report).contains(&"check-failed".to_string()),
        "{report}"
    );
    assert_eq!(report["checks"][0]["retries"], 0, "{report}");
    // The commit's one run, then the base's (its census and its red-on-base run are one run).
    assert_eq!(suite.runs(), 2, "{report}");

    let top = "flaky_retries = 0\n";
    let suite = Suite::with("FAILS=1", &["adds", "flaky"], top, "flaky_retries = 1\n");
    let wt = suite.code_return();
    let (_, report) = suite.check(&wt, &[]);
    assert!(
        codes(&report).contains(&"check-flaky".to_string()),
        "{report}"
    );
    assert_eq!(report["checks"][0]["retries"], 1, "{report}");
}

#[test]
fn flaky_retries_out_of_bounds_or_of_the_wrong_type_is_exit_2_naming_the_key() {
    for (extra, check_key, named) in [
        ("flaky_retries = 11\n", "", "`flaky_retries`"),
        ("flaky_retries = -1\n", "", "`flaky_retries`"),
        ("flaky_retries = \"2\"\n", "", "flaky_retries"),
        ("", "flaky_retries = 99\n", "`checks[0].flaky_retries`"),
    ] {
        let suite = Suite::with("FAILS=", &["adds"], extra, check_key);
        let wt = suite.code_return();
        let mut cmd = suite.s.bin(&wt, &["check"]);
        cmd.env_remove("CARGO_TARGET_DIR");
        let (code, _, err) = crate::fixture::parts(&cmd.output().unwrap());
        assert_eq!(code, 2, "{extra}{check_key}: {err}");
        assert!(err.contains(named), "{extra}{check_key}: {err}");
    }
}

#[test]
fn a_base_test_that_flakes_in_the_overlay_is_check_flaky_not_tests_weakened() {
    // Runs: 1 the commit, 2 the base (census), 3 the overlay (fails `flaky`), 4 its rerun.
    let suite = Suite::new("FAILS=3", &["adds", "flaky"], "");
    let (wt, _) = suite.agent(
        "a",
        &[
            ("src/lib.rs", Some("pub fn x() -> u8 { 1 }\n")),
            ("tests/list.txt", Some("adds\nflaky\nnew\n")),
        ],
    );
    let (_, report) = suite.check(&wt, &[]);
    let codes = codes(&report);
    assert!(codes.contains(&"check-flaky".to_string()), "{report}");
    assert!(!codes.contains(&"tests-weakened".to_string()), "{report}");
    assert!(!codes.contains(&"tests-missing".to_string()), "{report}");
    not_verified(&report);
    assert!(
        message(&report, "check-flaky").contains("overlay"),
        "{report}"
    );
    let overlay = report["integrity"]["checks"].as_array().unwrap().iter();
    let overlay: Vec<&Value> = overlay.filter(|r| r["on"] == "overlay").collect();
    assert_eq!(overlay[0]["retries"], 1, "{report}");
    assert!(overlay[0].get("snapshot").is_some(), "{report}");
}

#[test]
fn a_base_test_the_code_breaks_every_time_stays_tests_weakened() {
    // Attack: reruns must not launder a consistent failure. The agent's code makes the base's
    // `flaky` test fail in every overlay run (runs 3, 4, 5), while its own list drops it; the
    // base's own code passes it again when it is rerun there (run 6).
    let suite = Suite::new(r#"FAILS="3 4 5""#, &["adds", "flaky"], "");
    let (wt, _) = suite.agent(
        "a",
        &[
            ("src/lib.rs", Some("pub fn x() -> u8 { 1 }\n")),
            ("tests/list.txt", Some("adds\nnew\n")),
        ],
    );
    let (_, report) = suite.check(&wt, &[]);
    let codes = codes(&report);
    assert!(codes.contains(&"tests-weakened".to_string()), "{report}");
    assert!(!codes.contains(&"check-flaky".to_string()), "{report}");
    assert_eq!(suite.runs(), 6, "{report}");
    assert_ne!(report["verdict"], "VERIFIED", "{report}");
}

#[test]
fn an_overlay_that_is_the_base_tree_reuses_the_base_run_and_never_differs_from_it() {
    // The agent changes only a test: the overlay (its code, the base's tests) is the base's tree.
    let suite = Suite::new("FAILS=", &["adds", "flaky"], "");
    let (wt, _) = suite.agent("a", &[("tests/list.txt", Some("adds\nflaky\nnew\n"))]);
    let (_, report) = suite.check(&wt, &[]);
    let runs = report["integrity"]["checks"].as_array().unwrap();
    let on = |word: &str| runs.iter().find(|r| r["on"] == word).cloned();
    let (base, overlay) = (on("base").unwrap(), on("overlay").unwrap());
    assert_eq!(base["tree"], overlay["tree"], "{report}");
    assert_eq!(base["exit_code"], overlay["exit_code"], "{report}");
    assert_eq!(base["output"], overlay["output"], "{report}");
    // The commit's run and the base's: the overlay is not run a second time.
    assert_eq!(suite.runs(), 2, "{report}");
}
