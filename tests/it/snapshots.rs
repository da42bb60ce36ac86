//! What users read, as reviewed snapshots (insta): the human and JSON reports of representative
//! checks, `--help` of every subcommand and `explain` of every code. A change to any of them
//! shows up as a snapshot diff in review; under CI=true a missing or different snapshot fails.
//!
//! Repositories are built with fixed signature times (fixture.rs), so commit ids are stable;
//! what still varies between runs (the scratch directory, the version, durations) is replaced by
//! placeholders before comparing.

use std::path::Path;

use clap::CommandFactory;

use crate::fixture::{closegate, parts};
use crate::scene::{Scene, StatusDoc};

/// One passing check, run unconfined: whether bwrap is there differs between machines, and
/// the report names the sandbox it used.
const PASSING_CONFIG: &str = "sandbox = \"off\"\n\n[[checks]]\nname = \"smoke\"\n\
                              run = \"test -f src/lib.rs\"\ntimeout_s = 60\n";

/// An agent branch `agent/x` (`extra` then committed on it as "touch more") with a linked
/// worktree.
fn scene(config: Option<&str>, extra: &[(&str, Option<&str>)]) -> Scene {
    let mut s = Scene::with_agent(config);
    if !extra.is_empty() {
        s = s.on_agent(extra, "touch more");
    }
    s.worktree()
}

/// The report tests' verbs on a scene.
trait Reports {
    fn status(&self, sha: &str);
    fn honest(&self);
    fn check(&self, format: &str) -> (i32, String);
}

impl Reports for Scene {
    /// Write the status document with the close line naming `sha`.
    fn status(&self, sha: &str) {
        StatusDoc::complete("x", "close-ok")
            .last_commit(&self.tip.to_string()[..12], &self.subject(self.tip))
            .close(sha, "agent/x", &self.wt_str())
            .write(&self.wt);
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
    let s = scene(Some(PASSING_CONFIG), &[]);
    s.honest();
    snapshot_reports("verified", &s, 0);
}

#[test]
fn report_fail_unknown_commit() {
    let s = scene(Some(PASSING_CONFIG), &[]);
    s.status("deadbeefdeadbeef");
    snapshot_reports("fail_unknown_commit", &s, 1);
}

#[test]
fn report_pending_review_protected_change() {
    let ci = [(".github/workflows/ci.yml", Some("on: push\n"))];
    let s = scene(Some(PASSING_CONFIG), &ci);
    s.honest();
    snapshot_reports("pending_review", &s, 3);
}

#[test]
fn report_unverified_no_checks() {
    let s = scene(None, &[]);
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
        // The help is for users: it points at the manual, never at the contract document.
        assert!(!out.contains("SPEC"), "{args:?} cites SPEC:\n{out}");
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

/// SPEC §21's reviewer outputs, as a person sees them: the approve question (on a real
/// pseudo-terminal), `reject`, a teardown headed REFUSED, and the board's reason column. The
/// checks run unconfined here, as in the reports above: the sandbox word differs by machine.
mod reviewer {
    use super::normalise;
    use crate::fixture::{closegate, parts};
    use crate::teardown::{PASSING_CONFIG, Scene, write_status};

    fn scene() -> Scene {
        Scene::honest_return_with(Some(&format!("sandbox = \"off\"\n{PASSING_CONFIG}")))
    }

    /// [`crate::approve::pending`], unconfined.
    fn pending() -> Scene {
        let s = scene()
            .on_main_only(&[("tests/smoke.rs", Some("assert!(true);\n"))], "add test")
            .on_agent(&[("tests/smoke.rs", Some("// weakened\n"))], "add x");
        s.fx.checkout(&s.wt);
        write_status(&s.wt, "x", "close-ok", s.tip, "add x");
        s
    }

    /// Every RFC 3339 UTC time (`2026-12-01T12:30:58Z`) as `[TS]`.
    fn times(text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = String::new();
        let mut i = 0;
        while i < text.len() {
            let window = bytes.get(i..i + 20);
            let is_time = window.is_some_and(|w| {
                w.iter().enumerate().all(|(k, b)| match k {
                    4 | 7 => *b == b'-',
                    10 => *b == b'T',
                    13 | 16 => *b == b':',
                    19 => *b == b'Z',
                    _ => b.is_ascii_digit(),
                })
            });
            if is_time {
                out.push_str("[TS]");
                i += 20;
            } else {
                let c = text[i..].chars().next().unwrap();
                out.push(c);
                i += c.len_utf8();
            }
        }
        out
    }

    #[test]
    fn approve_prompt() {
        let s = pending();
        let args = ["approve", "--by", "Ada"];
        let out = crate::review::on_pty(&s.wt, &args, "n\n");
        let text = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
        assert_eq!(out.status.code(), Some(1), "{text}");
        // The terminal echoes the typed answer wherever it lands; the answer is not output.
        let text: Vec<&str> = text.lines().filter(|l| *l != "n").collect();
        let text = text
            .join("\n")
            .replace("approve? [y/N] n\n", "approve? [y/N] ");
        insta::assert_snapshot!("approve_prompt", normalise(&text, s.fx.tmp.path()));
    }

    #[test]
    fn reject_human() {
        let s = scene();
        let args = [
            "reject",
            "--yes",
            "--by",
            "Grace",
            "--note",
            "use the parser, not a regex",
        ];
        let (code, out, err) = parts(&closegate(&s.wt, &args));
        assert_eq!(code, 0, "{err}");
        insta::assert_snapshot!("reject_human", normalise(&out, s.fx.tmp.path()));
        let (code, out, _) = parts(&closegate(&s.wt, &["check", "--no-record"]));
        assert_eq!(code, 1);
        let out = times(&normalise(&out, s.fx.tmp.path()));
        insta::assert_snapshot!("check_rejected_human", out);
    }

    #[test]
    fn teardown_refused() {
        let s = scene();
        s.fx.write(&s.wt, "notes.txt", "the agent's scratch notes\n");
        let (code, out, _) = s.teardown(&[]);
        assert_eq!(code, 1);
        insta::assert_snapshot!("teardown_refused", normalise(&out, s.fx.tmp.path()));
    }

    #[test]
    fn board_reason_column() {
        let s = pending();
        assert_eq!(parts(&closegate(&s.wt, &["check"])).0, 3);
        let (code, out, _) = parts(&closegate(&s.fx.root(), &["board"]));
        assert_eq!(code, 0);
        insta::assert_snapshot!("board_reason_column", normalise(&out, s.fx.tmp.path()));
    }
}
