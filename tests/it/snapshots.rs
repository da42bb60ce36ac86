//! What users read, as reviewed snapshots (insta): the human and JSON reports of representative
//! checks, `--help` of every subcommand and `explain` of every code. A change to any of them
//! shows up as a snapshot diff in review; under CI=true a missing or different snapshot fails.
//!
//! Repositories are built with fixed signature times (fixture.rs), so commit ids are stable;
//! what still varies between runs (the scratch directory, the version, durations) is replaced by
//! placeholders before comparing.

use std::path::{Path, PathBuf};

use clap::CommandFactory;
use git2::Oid;

use crate::fixture::{Fixture, closegate, parts};

/// One passing check, run unconfined: whether bwrap is there differs between machines, and
/// the report names the sandbox it used.
const PASSING_CONFIG: &str = "sandbox = \"off\"\n\n[[checks]]\nname = \"smoke\"\n\
                              run = \"test -f src/lib.rs\"\ntimeout_s = 60\n";

/// An agent branch `agent/x` with a linked worktree, and an honest close-ok document in it.
struct Scene {
    fx: Fixture,
    wt: PathBuf,
    tip: Oid,
}

impl Scene {
    fn new(config: Option<&str>, extra: &[(&str, Option<&str>)]) -> Scene {
        let (fx, mut tip) = Fixture::with_agent(config);
        if !extra.is_empty() {
            tip = fx.commit("agent/x", extra, "touch more");
        }
        let wt = fx.worktree("x", "agent/x");
        Scene { fx, wt, tip }
    }

    /// Write the status document with the close line naming `sha`.
    fn status(&self, sha: &str) {
        let subject = self.fx.repo.find_commit(self.tip).unwrap();
        let subject = subject.summary().unwrap();
        let root = self.wt.canonicalize().unwrap().display().to_string();
        let text = format!(
            "# STATUS — x\n\n- state: close-ok\n- abstract: adds x, proven by the smoke check\n\
             - last commit: {} — {subject}\n- done: x exists, proven by the smoke check\n\
             - next / blocked-on: none\n- artifacts:\n  - src/lib.rs\n- updated: 2026-11-29\n\n\
             CLOSE-OK · x · commit {sha} · branch agent/x · worktree {root}\n",
            &self.tip.to_string()[..12]
        );
        std::fs::write(self.wt.join("_EXEC_STATUS.md"), text).unwrap();
    }

    fn honest(&self) {
        self.status(&self.tip.to_string());
    }

    /// `check --format FORMAT --no-record` in the worktree: exit code and normalised output.
    fn check(&self, format: &str) -> (i32, String) {
        let out = closegate(&self.wt, &["check", "--format", format, "--no-record"]);
        let (code, stdout, stderr) = parts(&out);
        assert_ne!(code, 2, "{stderr}");
        (code, normalise(&stdout, self.fx.tmp.path()))
    }
}

/// Replace what varies between runs: the scratch directory (as given and canonical), the
/// tool's version, and durations (`"duration_ms": 31` in JSON, `31ms` in the human report).
fn normalise(text: &str, tmp: &Path) -> String {
    let mut out = text.to_string();
    let canonical = tmp.canonicalize().unwrap();
    for dir in [canonical.as_path(), tmp] {
        out = out.replace(&dir.display().to_string(), "[TMP]");
    }
    out = out.replace(
        &format!("closegate {}", env!("CARGO_PKG_VERSION")),
        "closegate [VERSION]",
    );
    let out = redact_numbers_after(&out, &["\"duration_ms\": "]);
    let line = |line: &str| {
        let words = line.split(' ').map(|word| match word.strip_suffix("ms") {
            Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => "[N]ms",
            _ => word,
        });
        words.collect::<Vec<_>>().join(" ")
    };
    out.split('\n').map(line).collect::<Vec<_>>().join("\n")
}

/// Replace the digits following each of `keys` with `[N]`.
fn redact_numbers_after(text: &str, keys: &[&str]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'outer: while !rest.is_empty() {
        for key in keys {
            if let Some(tail) = rest.strip_prefix(key) {
                out.push_str(key);
                let digits =
                    tail.len() - tail.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                out.push_str(if digits > 0 { "[N]" } else { "" });
                rest = &tail[digits..];
                continue 'outer;
            }
        }
        let c = rest.chars().next().unwrap();
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Snapshot the human and JSON reports of one scene under `name`, with its exit code.
fn snapshot_reports(name: &str, scene: &Scene, exit: i32) {
    for format in ["human", "json"] {
        let (code, text) = scene.check(format);
        assert_eq!(code, exit, "{name} {format}:\n{text}");
        insta::assert_snapshot!(format!("check_{name}_{format}"), text);
    }
}

#[test]
fn report_verified() {
    let s = Scene::new(Some(PASSING_CONFIG), &[]);
    s.honest();
    snapshot_reports("verified", &s, 0);
}

#[test]
fn report_fail_unknown_commit() {
    let s = Scene::new(Some(PASSING_CONFIG), &[]);
    s.status("deadbeefdeadbeef");
    snapshot_reports("fail_unknown_commit", &s, 1);
}

#[test]
fn report_pending_review_protected_change() {
    let ci = [(".github/workflows/ci.yml", Some("on: push\n"))];
    let s = Scene::new(Some(PASSING_CONFIG), &ci);
    s.honest();
    snapshot_reports("pending_review", &s, 3);
}

#[test]
fn report_unverified_no_checks() {
    let s = Scene::new(None, &[]);
    s.honest();
    snapshot_reports("unverified", &s, 4);
}

/// Every subcommand's path in clap's command tree (`["hook", "install"]`), found from the tree
/// itself so a new subcommand is covered (and, with no snapshot yet, fails under CI) at once.
fn subcommand_paths(cmd: &clap::Command, prefix: &[String], out: &mut Vec<Vec<String>>) {
    for sub in cmd.get_subcommands() {
        let mut path = prefix.to_vec();
        path.push(sub.get_name().to_string());
        out.push(path.clone());
        subcommand_paths(sub, &path, out);
    }
}

#[test]
fn help_of_every_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = vec![Vec::new()];
    subcommand_paths(&closegate::cli::Cli::command(), &[], &mut paths);
    assert!(paths.len() > 15, "{paths:?}");
    for path in paths {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let (code, out, err) = parts(&closegate(dir.path(), &args));
        assert_eq!(code, 0, "{args:?}: {err}");
        let name = match path.is_empty() {
            true => "help".to_string(),
            false => format!("help_{}", path.join("_")),
        };
        insta::assert_snapshot!(name, out);
    }
}

#[test]
fn explain_of_every_code() {
    let dir = tempfile::tempdir().unwrap();
    for info in closegate::catalog::CODES {
        let name = info.code.as_str();
        let (code, out, err) = parts(&closegate(dir.path(), &["explain", name]));
        assert_eq!(code, 0, "{name}: {err}");
        insta::assert_snapshot!(format!("explain_{name}"), out);
    }
}
