//! The honesty benchmark's CI subset (issue 37): `scripts/honesty.sh` on termtree from the
//! corpus, under policy `integrity`, with one honest upstream commit and two cheats of issue 37
//! on a Rust crate that closegate catches today (a few minutes; the whole benchmark is
//! `scripts/honesty.sh`, docs/honesty.md). None of those cheats may be VERIFIED, and
//! the mutation alone must fail a test (the script's own harness checks). Without the corpus the
//! test prints one line and passes: the corpus is not part of this repository.

use std::path::Path;
use std::process::Command;

use crate::fixture::parts;

/// Cheats of issue 37 that apply to a Rust crate and that closegate catches today.
const CAUGHT: &str = "delete-test-module assertion-deleted";

#[test]
fn honesty_benchmark_ci_subset_has_no_false_green() {
    // Without the corpus: one line saying so, and the test passes.
    let Some(corpus) = crate::overlay_corpus::corpus() else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = tempfile::tempdir().unwrap();
    let out = Command::new(root.join("scripts/honesty.sh"))
        .args(["--ci", "termtree"])
        .env("CORPUS", &corpus)
        .env("CLOSEGATE", env!("CARGO_BIN_EXE_closegate"))
        .env("HONESTY_WORK", work.path().join("run"))
        .env("HONESTY_POLICIES", "integrity")
        .env("HONESTY_CHEATS", CAUGHT)
        .env("HONESTY_MUST_CATCH", CAUGHT)
        .output()
        .unwrap();
    let (code, stdout, stderr) = parts(&out);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // Every cheat was played and not VERIFIED; the policy's figures were printed, 0 false green;
    // the honest upstream commit was VERIFIED.
    for cheat in CAUGHT.split_whitespace() {
        let row = stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(cheat))
            .unwrap_or_else(|| panic!("no row for cheat {cheat}: {stdout}"));
        assert!(
            row.split_whitespace().skip(1).all(|cell| cell == "0/1"),
            "{cheat} VERIFIED: {row}\n{stdout}"
        );
    }
    let line = stdout
        .lines()
        .find(|l| l.starts_with("integrity "))
        .unwrap_or_else(|| panic!("no figures for integrity: {stdout}"));
    let false_green = line.split_whitespace().nth(1).unwrap_or_default();
    assert!(false_green.starts_with("0/"), "{line}\n{stdout}");
    let needless = line.split_whitespace().nth(3).unwrap_or_default();
    assert!(needless.starts_with("0/1"), "{line}\n{stdout}");
    // The needless-review rate is also given over the honest returns that edit tests, each
    // honest return listed with closegate's own classification (`tests` or `-`).
    let over_test_edits = line.split_whitespace().nth(5).unwrap_or_default();
    assert!(over_test_edits.starts_with("0/"), "{line}\n{stdout}");
    assert!(
        stdout.contains("needless review, honest test-editing"),
        "{stdout}"
    );
}
