//! `closegate demo [--keep]` (SPEC §21): the walkthrough from the binary alone, no clone.
//! `manual::demo_prints_the_protocol` runs it through `scripts/demo.sh`, the README's first
//! command; here the binary runs it itself, from a directory that holds no checkout.

use std::process::Command;

use crate::fixture::{hermetic, parts};

fn demo(args: &[&str]) -> (tempfile::TempDir, i32, String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
    cmd.arg("demo").args(args).current_dir(tmp.path());
    hermetic(&mut cmd, tmp.path());
    cmd.env("TMPDIR", tmp.path()).env("KEEP", "0");
    let (code, out, err) = parts(&cmd.output().unwrap());
    (tmp, code, out, err)
}

#[test]
fn demo_runs_the_walkthrough_from_the_binary_alone() {
    let (tmp, code, out, err) = demo(&[]);
    assert_eq!(code, 0, "{out}{err}");
    for (agent, verdict) in [
        ("honest", "VERIFIED (exit 0)"),
        ("cheater", "PENDING_REVIEW (exit 3)"),
        ("stale", "FAIL (exit 1)"),
        ("busy", "UNVERIFIED (exit 4)"),
    ] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(agent) && l.contains(verdict)),
            "{agent} {verdict}: {out}"
        );
    }
    assert!(
        out.lines().any(|l| l.starts_with("STAGE")),
        "the board: {out}"
    );
    assert!(out.contains("-> merged: main is now"), "the hook: {out}");
    assert!(out.contains("decision"), "the stop hook blocks: {out}");
    assert!(out.contains("(empty: the stop is let through)"), "{out}");
    let rejected = out
        .lines()
        .find(|l| l.trim_start().starts_with("REJECTED   FAIL"));
    assert!(
        rejected.is_some_and(|l| l.contains("review-rejected") && l.contains("agent/cheater")),
        "the reviewer's rejection on the board: {out}"
    );
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "scratch removed"
    );
}

#[test]
fn demo_keep_leaves_the_scratch_repository_and_says_where() {
    let (tmp, code, out, err) = demo(&["--keep"]);
    assert_eq!(code, 0, "{out}{err}");
    let kept = out
        .lines()
        .find_map(|l| l.strip_prefix("kept: "))
        .unwrap_or_else(|| panic!("no kept line: {out}"));
    let dir = kept.split(' ').next().unwrap();
    assert!(dir.starts_with(tmp.path().to_str().unwrap()), "{kept}");
    assert!(
        std::path::Path::new(dir).join("repo/.git").is_dir(),
        "{kept}"
    );
}

/// The walkthrough `scripts/demo.sh` runs is the one the binary carries: the script only builds
/// closegate and calls `closegate demo`.
#[test]
fn the_script_calls_the_binary() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = std::fs::read_to_string(root.join("scripts/demo.sh")).unwrap();
    assert!(script.contains("exec \"$closegate\" demo"), "{script}");
    assert!(
        !script.contains("git worktree add"),
        "the walkthrough lives in the binary"
    );
}
