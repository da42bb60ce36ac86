//! The command-line conventions (SPEC §11, §21) through the real binary: a closed stdout, the
//! global flags, completions, the man page and `version --verbose`.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::fixture::{Fixture, closegate, hermetic, parts};
use crate::teardown::Scene;

/// Run closegate in `cwd` with its stdout a pipe whose reading end is already closed: every
/// write fails with EPIPE, as behind `| head -1` once head has gone.
fn closed_stdout(cwd: &Path, args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
    cmd.args(args).current_dir(cwd);
    hermetic(&mut cmd, cwd);
    cmd.stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped());
    cmd.output().unwrap()
}

/// Through a shell: `closegate ARGS | head -1`, with `pipefail` so the status is closegate's.
fn piped_to_head(cwd: &Path, args: &str) -> (i32, String, String) {
    let mut cmd = Command::new("bash");
    let exe = env!("CARGO_BIN_EXE_closegate");
    cmd.arg("-c")
        .arg(format!("set -o pipefail; '{exe}' {args} | head -1"))
        .current_dir(cwd);
    hermetic(&mut cmd, cwd);
    parts(&cmd.output().unwrap())
}

/// A scene whose return is FAIL (exit 1): the worktree has an uncommitted change.
fn failing() -> Scene {
    let scene = Scene::honest_return();
    scene.fx.write(&scene.wt, "src/lib.rs", "uncommitted\n");
    scene
}

#[test]
fn a_closed_stdout_ends_check_quietly_with_the_verdicts_exit_code() {
    let scene = failing();
    for format in ["human", "json", "github", "sarif"] {
        let out = closed_stdout(&scene.wt, &["check", "--no-record", "--format", format]);
        let (code, _, err) = parts(&out);
        assert_eq!(
            code, 1,
            "--format {format}: FAIL's exit code, stderr: {err}"
        );
        assert_eq!(err, "", "--format {format}: nothing on stderr");
    }
    let out = closed_stdout(&scene.fx.root(), &["explain", "--list"]);
    assert_eq!(parts(&out), (0, String::new(), String::new()));
    let out = closed_stdout(&scene.fx.root(), &["explain", "checks-none"]);
    assert_eq!(parts(&out), (0, String::new(), String::new()));
    let out = closed_stdout(&scene.fx.root(), &["version", "--verbose"]);
    assert_eq!(parts(&out), (0, String::new(), String::new()));
    let out = closed_stdout(&scene.fx.root(), &["completions", "bash"]);
    assert_eq!(parts(&out), (0, String::new(), String::new()));
    // The agent's side too: the document `close --dry-run` prints and the harness snippet.
    let out = closed_stdout(&scene.wt, &["close", "--dry-run", "--state", "in-progress"]);
    assert_eq!(parts(&out), (0, String::new(), String::new()));
    let out = closed_stdout(&scene.fx.root(), &["agent", "hooks", "--target", "codex"]);
    assert_eq!(parts(&out), (0, String::new(), String::new()));
}

#[test]
fn log_piped_to_head_prints_one_line_and_no_broken_pipe() {
    let fx = Fixture::new();
    // Far more than a pipe buffer of records, so closegate is still writing when head exits.
    for i in 0..3000 {
        let line = serde_json::json!({"ts": "2026-11-29T00:00:00Z", "event": "check",
            "slug": format!("s-{i}"), "commit": "0".repeat(40), "verdict": "VERIFIED",
            "claimed": "close-ok", "codes": []});
        closegate::record::append(&fx.git_dir(), &line).unwrap();
    }
    for args in ["log", "log --json", "board", "explain --list"] {
        let (code, out, err) = piped_to_head(&fx.root(), args);
        assert_eq!(code, 0, "{args}: {err}");
        assert_eq!(out.lines().count(), 1, "{args}: {out}");
        assert!(!err.contains("Broken pipe"), "{args}: {err}");
        assert_eq!(err, "", "{args}");
    }
    let scene = failing();
    let (code, out, err) = piped_to_head(&scene.wt, "check --no-record");
    assert_eq!(code, 1, "{err}");
    assert!(out.starts_with("FAIL"), "{out}");
    assert_eq!(err, "");
}

#[test]
fn dash_c_acts_as_if_started_in_dir_and_relative_flags_follow_it() {
    let scene = Scene::honest_return();
    let tmp = scene.fx.tmp.path();
    // From outside any repository, -C names the worktree: same verdict as running inside it.
    let (code, out, err) = parts(&closegate(tmp, &["-C", "wt/x", "check", "--no-record"]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("VERIFIED"), "{out}");
    // Repeated -C, each relative to the one before, as git's; and after the subcommand too.
    let (code, out, _) = parts(&closegate(
        tmp,
        &["-C", "wt", "-C", "x", "check", "--no-record"],
    ));
    assert_eq!(code, 0, "{out}");
    let (code, _, _) = parts(&closegate(tmp, &["check", "--no-record", "-C", "wt/x"]));
    assert_eq!(code, 0);
    // A relative --config is read relative to DIR: a config there with a failing check.
    std::fs::write(
        scene.wt.join("failing.toml"),
        "[[checks]]\nname = \"no\"\nrun = \"false\"\n",
    )
    .unwrap();
    let (code, out, err) = parts(&closegate(
        tmp,
        &[
            "-C",
            "wt/x",
            "check",
            "--no-record",
            "--config",
            "failing.toml",
            "--format",
            "json",
        ],
    ));
    assert_eq!(code, 1, "{out}{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["checks"][0]["name"], "no");
    // A DIR that does not exist: exit 2 naming it.
    let (code, out, err) = parts(&closegate(tmp, &["-C", "nowhere", "log"]));
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("nowhere"), "{err}");
}

#[test]
fn color_always_paints_never_and_no_color_do_not() {
    let scene = Scene::honest_return();
    let esc = |out: &str| out.contains('\u{1b}');
    // The hermetic environment sets NO_COLOR and stdout is a pipe: auto gives no colour.
    let (_, out, _) = parts(&closegate(&scene.wt, &["check", "--no-record"]));
    assert!(!esc(&out), "{out}");
    let (code, out, _) = parts(&closegate(
        &scene.wt,
        &["--color", "always", "check", "--no-record"],
    ));
    assert_eq!(code, 0);
    assert!(
        esc(&out),
        "always paints even on a pipe with NO_COLOR: {out:?}"
    );
    let (_, out, _) = parts(&closegate(
        &scene.wt,
        &["check", "--no-record", "--color", "never"],
    ));
    assert!(!esc(&out), "{out}");
    let (code, _, err) = parts(&closegate(&scene.wt, &["--color", "sometimes", "check"]));
    assert_eq!(code, 2, "{err}");
}

#[test]
fn quiet_keeps_what_a_script_parses_and_the_exit_code() {
    let scene = failing();
    let quiet = |args: &[&str]| parts(&closegate(&scene.wt, args));
    assert_eq!(
        quiet(&["-q", "check", "--no-record"]),
        (1, String::new(), String::new())
    );
    assert_eq!(quiet(&["check", "--quiet", "--no-record"]).0, 1);
    assert_eq!(quiet(&["check", "--quiet", "--no-record"]).1, "");
    let (code, out, _) = quiet(&["-q", "check", "--no-record", "--format", "json"]);
    assert_eq!(code, 1);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["verdict"], "FAIL");
    let (_, out, _) = quiet(&["-q", "check", "--no-record", "--format", "github"]);
    assert!(out.starts_with("::"), "{out}");
    let (_, out, _) = quiet(&["-q", "check", "--no-record", "--format", "sarif"]);
    assert!(
        serde_json::from_str::<serde_json::Value>(&out).is_ok(),
        "{out}"
    );
    closegate(&scene.wt, &["check"]);
    assert_eq!(quiet(&["-q", "log"]), (0, String::new(), String::new()));
    let (code, out, _) = quiet(&["-q", "log", "--json"]);
    assert_eq!((code, out.lines().count()), (0, 1), "{out}");
    assert_eq!(
        quiet(&["-q", "explain", "--list"]),
        (0, String::new(), String::new())
    );
    let (code, out, _) = quiet(&["-q", "board", "--json"]);
    assert_eq!(code, 0);
    assert!(
        serde_json::from_str::<serde_json::Value>(&out).is_ok(),
        "{out}"
    );
    assert_eq!(quiet(&["-q", "board"]).1, "");
}

#[test]
fn completions_and_man_come_from_the_clap_definition() {
    let fx = Fixture::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (code, out, err) = parts(&closegate(&fx.root(), &["completions", shell]));
        assert_eq!(code, 0, "{shell}: {err}");
        // fish spells a long flag `-l format`, the others `--format`.
        for word in ["closegate", "check", "teardown", "format", "color"] {
            assert!(out.contains(word), "{shell} completion lacks {word}");
        }
    }
    let (code, _, err) = parts(&closegate(&fx.root(), &["completions", "tcsh"]));
    assert_eq!(code, 2, "{err}");
    let (code, out, _) = parts(&closegate(&fx.root(), &["man"]));
    assert_eq!(code, 0);
    assert!(out.contains(".TH closegate 1"), "roff with a title header");
    for word in ["check", "teardown", "approve", "completions"] {
        assert!(out.contains(word), "man page lacks {word}");
    }
}

#[test]
fn version_verbose_names_the_build_commit_libgit2_and_features() {
    let fx = Fixture::new();
    let (code, out, _) = parts(&closegate(&fx.root(), &["--version"]));
    assert_eq!(
        (code, out.trim()),
        (0, concat!("closegate ", env!("CARGO_PKG_VERSION")))
    );
    let (code, out, _) = parts(&closegate(&fx.root(), &["version"]));
    assert_eq!(
        (code, out.trim()),
        (0, concat!("closegate ", env!("CARGO_PKG_VERSION")))
    );
    let (code, out, _) = parts(&closegate(&fx.root(), &["version", "--verbose"]));
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], concat!("closegate ", env!("CARGO_PKG_VERSION")));
    let commit = lines[1].strip_prefix("commit: ").expect(&out);
    assert!(
        commit == "unknown"
            || (commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
        "{commit}"
    );
    let (major, minor, patch) = git2::Version::get().libgit2_version();
    assert!(
        lines[2].starts_with(&format!("libgit2: {major}.{minor}.{patch} ")),
        "{out}"
    );
    assert!(lines[3].starts_with("features: "), "{out}");
}

/// Records at known times: (ts, verdict, slug), appended in this order.
fn dated_records(fx: &Fixture) {
    for (ts, verdict, slug) in [
        ("2026-11-27T23:59:59Z", "FAIL", "a"),
        ("2026-11-28T00:00:00Z", "VERIFIED", "bb-long-slug"),
        ("2026-11-28T12:30:00Z", "UNVERIFIED", "c"),
        ("2026-11-29T08:00:00Z", "PENDING_REVIEW", "dd"),
        ("2026-11-29T09:00:00Z", "VERIFIED", "e"),
    ] {
        let line = serde_json::json!({"ts": ts, "event": "check", "slug": slug,
            "commit": "ab".repeat(20), "branch": format!("agent/{slug}"), "verdict": verdict,
            "claimed": "close-ok", "codes": []});
        closegate::record::append(&fx.git_dir(), &line).unwrap();
    }
}

fn slugs(out: &str) -> Vec<String> {
    out.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["slug"].to_string())
        .map(|s| s.trim_matches('"').to_string())
        .collect()
}

#[test]
fn log_limit_keeps_the_n_most_recent_records() {
    let fx = Fixture::new();
    dated_records(&fx);
    let (code, out, _) = parts(&closegate(&fx.root(), &["log", "--json", "--limit", "2"]));
    assert_eq!(code, 0);
    assert_eq!(slugs(&out), ["dd", "e"]);
    let (_, out, _) = parts(&closegate(&fx.root(), &["log", "--limit", "1"]));
    assert_eq!(out.lines().count(), 1);
    assert!(out.contains(" e "), "{out}");
    // The limit applies after the filters: the most recent VERIFIED record.
    let (_, out, _) = parts(&closegate(
        &fx.root(),
        &["log", "--json", "--verdict", "VERIFIED", "--limit", "1"],
    ));
    assert_eq!(slugs(&out), ["e"]);
    let (_, out, _) = parts(&closegate(&fx.root(), &["log", "--json", "--limit", "0"]));
    assert_eq!(out, "");
    let (_, out, _) = parts(&closegate(&fx.root(), &["log", "--json", "--limit", "99"]));
    assert_eq!(slugs(&out).len(), 5);
    let (code, _, _) = parts(&closegate(&fx.root(), &["log", "--limit", "-1"]));
    assert_eq!(code, 2);
}

#[test]
fn log_since_takes_a_date_or_a_date_time() {
    let fx = Fixture::new();
    dated_records(&fx);
    let since = |date: &str| {
        let (code, out, err) = parts(&closegate(&fx.root(), &["log", "--json", "--since", date]));
        assert_eq!(code, 0, "{date}: {err}");
        slugs(&out)
    };
    assert_eq!(since("2026-11-28"), ["bb-long-slug", "c", "dd", "e"]);
    assert_eq!(since("2026-11-28T12:30:00Z"), ["c", "dd", "e"]);
    assert_eq!(since("2026-11-28T12:30:01Z"), ["dd", "e"]);
    assert_eq!(since("2026-11-28T12:30"), ["c", "dd", "e"]);
    // 09:30+01:00 is 08:30Z.
    assert_eq!(since("2026-11-29T09:30:00+01:00"), ["e"]);
    assert_eq!(since("2026-11-30"), Vec::<String>::new());
    for bad in ["yesterday", "2026-02-30", "2026-11-28T25:00", "29.11.2026"] {
        let (code, _, err) = parts(&closegate(&fx.root(), &["log", "--since", bad]));
        assert_eq!(code, 2, "{bad}");
        assert!(err.contains("--since"), "{err}");
    }
}

#[test]
fn log_verdict_in_any_case_and_aligned_columns() {
    let fx = Fixture::new();
    dated_records(&fx);
    let (code, out, _) = parts(&closegate(
        &fx.root(),
        &["log", "--json", "--verdict", "verified"],
    ));
    assert_eq!(code, 0);
    assert_eq!(slugs(&out), ["bb-long-slug", "e"]);
    let (_, out, _) = parts(&closegate(
        &fx.root(),
        &["log", "--json", "--verdict", "Pending_Review"],
    ));
    assert_eq!(slugs(&out), ["dd"]);
    let (code, _, err) = parts(&closegate(&fx.root(), &["log", "--verdict", "green"]));
    assert_eq!(code, 2);
    assert!(err.contains("--verdict green"), "{err}");

    let (_, out, _) = parts(&closegate(&fx.root(), &["log"]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5);
    // Every column starts at the same offset on every line: the slug, the commit, the branch.
    for needle in ["abababababab", "agent/"] {
        let at: Vec<usize> = lines.iter().map(|l| l.find(needle).unwrap()).collect();
        assert!(at.iter().all(|&a| a == at[0]), "{needle} at {at:?}:\n{out}");
    }
    let verdict_at: Vec<usize> = lines
        .iter()
        .map(|l| l.find(['F', 'V', 'U', 'P']).unwrap())
        .collect();
    assert!(verdict_at.iter().all(|&a| a == verdict_at[0]), "{out}");
    assert!(
        lines[1].contains(" VERIFIED       bb-long-slug abababababab agent/bb-long-slug -"),
        "{out}"
    );
}

fn approvals(scene: &Scene) -> Vec<serde_json::Value> {
    crate::teardown::audit(&scene.fx)
        .into_iter()
        .filter(|r| r["event"] == "approve")
        .collect()
}

#[test]
fn approve_without_by_or_user_name_is_an_error_and_records_nothing() {
    let scene = crate::approve::pending();
    // SPEC §21: without user.name the approver is GIT_COMMITTER_NAME / GIT_AUTHOR_NAME, which
    // the hermetic environment sets; here neither is.
    let (code, out, err) = parts(&crate::approve::closegate_named(
        &scene.wt,
        &["approve"],
        &[],
    ));
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("user.name") && err.contains("--by"), "{err}");
    assert!(approvals(&scene).is_empty());
}

#[test]
fn approve_defaults_by_to_user_name_and_shows_what_it_approves() {
    let scene = crate::approve::pending();
    crate::fixture::git(&scene.wt, &["config", "user.name", "Grace Hopper"]);
    let (code, out, err) = parts(&closegate(&scene.wt, &["approve", "--yes"]));
    assert_eq!(code, 0, "{out}{err}");
    // What is reviewed first, then the verdict the next check gives (SPEC §26.5).
    assert!(out.starts_with("PENDING_REVIEW"), "{out}");
    assert!(
        out.contains("the next `closegate check` gives VERIFIED"),
        "{out}"
    );
    let records = approvals(&scene);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["by"], "Grace Hopper");

    // The protected change as `git diff --stat` shows it, and the exact command to see it.
    let base = scene.fx.repo.refname_to_id("refs/heads/main").unwrap();
    let mb = scene.fx.repo.merge_base(base, scene.tip).unwrap();
    let (mb, tip) = (mb.to_string(), scene.tip.to_string());
    let stat = crate::fixture::git(
        &scene.wt,
        &["diff", "--stat", &mb, &tip, "--", "tests/smoke.rs"],
    );
    for line in stat.lines() {
        assert!(
            out.lines().any(|l| l == line),
            "missing {line:?} in:\n{out}"
        );
    }
    let command = format!("git diff {mb} {tip} -- tests/smoke.rs");
    assert!(
        out.contains(&format!("see them in full: {command}")),
        "{out}"
    );
    let full = crate::fixture::git(&scene.wt, &["diff", &mb, &tip, "--", "tests/smoke.rs"]);
    assert!(full.contains("+// weakened"), "{full}");
    // The changes come before the approval is announced; the approval is announced once.
    let changes_at = out.find("protected changes approved:").expect(&out);
    let approved: Vec<&str> = out.lines().filter(|l| l.starts_with("approved")).collect();
    assert_eq!(approved.len(), 1, "{out}");
    assert!(
        approved[0].starts_with(&format!("approved {tip} by Grace Hopper at ")),
        "{out}"
    );
    let announced = out.find(approved[0]).unwrap();
    assert!(changes_at < announced);
    // No stale "a human reviews" hint once approved, neither here nor in a later check.
    assert!(!out[announced..].contains("a human reviews"), "{out}");
    let (code, out, _) = parts(&closegate(&scene.wt, &["check"]));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("protected-surface"), "{out}");
    assert!(!out.contains("a human reviews"), "{out}");
    // --by still wins over user.name.
    let (code, _, _) = parts(&closegate(&scene.wt, &["approve", "--yes", "--by", "Ada"]));
    assert_eq!(code, 0);
    assert_eq!(approvals(&scene)[1]["by"], "Ada");
}

#[test]
fn a_pending_review_still_asks_for_a_human() {
    let scene = crate::approve::pending();
    let (code, out, _) = parts(&closegate(&scene.wt, &["check", "--no-record"]));
    assert_eq!(code, 3);
    // SPEC §26.5: the hint says a human runs approve (or reject), and that an agent never does.
    assert!(
        out.contains("a human reviews the change and, on a terminal, runs `closegate approve"),
        "{out}"
    );
    assert!(out.contains("an agent never runs either"), "{out}");
}

/// The properties of a `::level props::message` workflow command, and its message.
fn workflow_command(line: &str) -> (String, std::collections::BTreeMap<String, String>, String) {
    let rest = line.strip_prefix("::").expect(line);
    let (head, message) = rest.split_once("::").expect(line);
    let (level, props) = head.split_once(' ').expect(line);
    let props = props
        .split(',')
        .map(|p| {
            let (k, v) = p.split_once('=').expect(p);
            (k.to_string(), v.to_string())
        })
        .collect();
    (level.to_string(), props, message.to_string())
}

/// A return that lists an artifact the commit does not have (`docs/x.md`): `artifact-missing`,
/// with a line of the status document and the artifact's path.
fn missing_artifact() -> Scene {
    let scene = Scene::honest_return();
    let doc = scene.wt.join("_EXEC_STATUS.md");
    let text = std::fs::read_to_string(&doc).unwrap();
    let text = text.replace("  - src/lib.rs\n", "  - src/lib.rs\n  - docs/x.md\n");
    std::fs::write(&doc, text).unwrap();
    scene
}

fn json_finding(scene_dir: &Path, code: &str) -> serde_json::Value {
    let (_, out, _) = parts(&closegate(
        scene_dir,
        &["check", "--no-record", "--format", "json"],
    ));
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {report}"))
        .clone()
}

#[test]
fn github_locates_a_finding_with_a_line_in_the_status_document() {
    let scene = missing_artifact();
    let finding = json_finding(&scene.wt, "artifact-missing");
    assert_eq!(finding["path"], "docs/x.md");
    let line = finding["line"]
        .as_u64()
        .expect("artifact-missing names its line");
    let (code, out, _) = parts(&closegate(
        &scene.wt,
        &["check", "--no-record", "--format", "github"],
    ));
    assert_eq!(code, 1, "{out}");
    let command = out
        .lines()
        .find(|l| l.contains("title=artifact-missing"))
        .expect(&out);
    let (level, props, message) = workflow_command(command);
    assert_eq!(level, "error");
    assert_eq!(
        props["file"], "_EXEC_STATUS.md",
        "not the missing file: {command}"
    );
    assert_eq!(props["line"], line.to_string());
    assert_eq!(props["title"], "artifact-missing");
    assert!(
        message.contains("docs/x.md"),
        "the path goes into the message: {message}"
    );
    assert_ne!(props["file"], "docs/x.md");
}

#[test]
fn github_locates_a_finding_with_only_a_path_at_that_path() {
    let scene = crate::approve::pending();
    let finding = json_finding(&scene.wt, "protected-surface");
    assert_eq!(finding["path"], "tests/smoke.rs");
    assert!(finding["line"].is_null());
    let (_, out, _) = parts(&closegate(
        &scene.wt,
        &["check", "--no-record", "--format", "github"],
    ));
    let command = out
        .lines()
        .find(|l| l.contains("title=protected-surface"))
        .expect(&out);
    let (level, props, _) = workflow_command(command);
    assert_eq!(level, "warning");
    assert_eq!(props["file"], "tests/smoke.rs");
    assert!(!props.contains_key("line"), "{command}");
}

fn sarif(dir: &Path) -> serde_json::Value {
    let (_, out, _) = parts(&closegate(
        dir,
        &["check", "--no-record", "--format", "sarif"],
    ));
    serde_json::from_str(&out).unwrap()
}

fn sarif_result<'a>(log: &'a serde_json::Value, rule: &str) -> &'a serde_json::Value {
    log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == rule)
        .unwrap_or_else(|| panic!("no {rule} in {log}"))
}

#[test]
fn sarif_locations_are_repository_relative_with_version_control_provenance() {
    let scene = missing_artifact();
    let line = json_finding(&scene.wt, "artifact-missing")["line"].clone();
    let log = sarif(&scene.wt);
    let result = sarif_result(&log, "artifact-missing");
    assert_eq!(result["level"], "error");
    let locations = result["locations"].as_array().unwrap();
    assert_eq!(locations.len(), 1);
    let physical = &locations[0]["physicalLocation"];
    assert_eq!(physical["artifactLocation"]["uri"], "_EXEC_STATUS.md");
    assert_eq!(physical["artifactLocation"]["uriBaseId"], "%SRCROOT%");
    assert_eq!(physical["region"]["startLine"], line);
    assert!(
        result["message"]["text"]
            .as_str()
            .unwrap()
            .contains("docs/x.md")
    );

    let run = &log["runs"][0];
    let root = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        .as_str()
        .unwrap();
    let wt = scene.wt.canonicalize().unwrap();
    assert_eq!(root, format!("file://{}/", wt.display()));
    let vcs = &run["versionControlProvenance"][0];
    assert_eq!(vcs["revisionId"], scene.tip.to_string());
    assert_eq!(vcs["branch"], "agent/x");
    assert_eq!(vcs["repositoryUri"], root);
    assert_eq!(vcs["mappedTo"]["uriBaseId"], "%SRCROOT%");

    let scene = crate::approve::pending();
    let log = sarif(&scene.wt);
    let result = sarif_result(&log, "protected-surface");
    let physical = &result["locations"][0]["physicalLocation"];
    assert_eq!(physical["artifactLocation"]["uri"], "tests/smoke.rs");
    assert_eq!(physical["artifactLocation"]["uriBaseId"], "%SRCROOT%");
    assert!(physical.get("region").is_none(), "{physical}");
}

#[test]
fn sarif_from_the_binary_validates_against_the_2_1_0_schema() {
    let missing = missing_artifact();
    let pending = crate::approve::pending();
    for log in [sarif(&missing.wt), sarif(&pending.wt)] {
        let errors = crate::render::sarif_schema_errors(&log);
        assert!(errors.is_empty(), "{errors:#?}\n{log}");
    }
    // `lint` locates findings in an absolute file outside any repository.
    let doc = missing.fx.tmp.path().join("loose doc.md");
    std::fs::write(&doc, "no h1 here\n").unwrap();
    let (code, out, err) = parts(&closegate(
        missing.fx.tmp.path(),
        &["lint", doc.to_str().unwrap(), "--format", "sarif"],
    ));
    assert_eq!(code, 1, "{out}{err}");
    let log: serde_json::Value = serde_json::from_str(&out).unwrap();
    let errors = crate::render::sarif_schema_errors(&log);
    assert!(errors.is_empty(), "{errors:#?}\n{log}");
}

const TWO_CHECKS: &str =
    "[[checks]]\nname = \"test\"\nrun = \"true\"\n\n[[checks]]\nname = \"lint\"\nrun = \"true\"\n";

fn validate(fx: &Fixture, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["validate"];
    all.extend_from_slice(args);
    parts(&closegate(&fx.root(), &all))
}

#[test]
fn validate_passes_a_sound_set_up() {
    let fx = Fixture::new();
    fx.commit(
        "main",
        &[
            (".closegate.toml", Some(TWO_CHECKS)),
            (
                ".closegate/contracts/inv.toml",
                Some("goal = \"x\"\nbranch = \"agent/inv\"\nscope = [\"src/**\"]\nrequired_checks = [\"test\"]\n"),
            ),
            (".closegate/contracts/other.toml", Some("required_checks = [\"lint\", \"test\"]\n")),
        ],
        "set up",
    );
    let (code, out, err) = validate(&fx, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.starts_with("ok: configuration main:.closegate.toml (2 checks), 2 contracts"),
        "{out}"
    );
    assert_eq!(validate(&fx, &["-q"]), (0, String::new(), String::new()));
    // No configuration at all: the built-in defaults are sound.
    let fx = Fixture::new();
    let (code, out, _) = validate(&fx, &[]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn validate_names_file_key_and_reason_for_each_problem() {
    let fx = Fixture::new();
    fx.commit(
        "main",
        &[
            (".closegate.toml", Some(TWO_CHECKS)),
            (
                ".closegate/contracts/a.toml",
                Some("branch = \"agent/x\"\nrequired_checks = [\"test\", \"typecheck\"]\n"),
            ),
            (
                ".closegate/contracts/b.toml",
                Some("branch = \"agent/x\"\n"),
            ),
            (".closegate/contracts/c.toml", Some("scope = [\"src/[\"]\n")),
            (".closegate/contracts/d.toml", Some("colour = \"blue\"\n")),
            (".closegate/contracts/notes.md", Some("not a contract\n")),
        ],
        "set up",
    );
    let (code, out, err) = validate(&fx, &[]);
    assert_eq!(code, 1, "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    let find = |file: &str, key: &str| {
        lines
            .iter()
            .find(|l| {
                l.starts_with(&format!(
                    "contract-malformed: main:.closegate/contracts/{file}: {key}"
                ))
            })
            .unwrap_or_else(|| panic!("no {file} {key} problem in:\n{out}"))
            .to_string()
    };
    let missing = find("a.toml", "required_checks: ");
    assert!(
        missing.contains("`typecheck`") && !missing.contains("`test` is"),
        "{missing}"
    );
    let twice = find("a.toml", "branch: ");
    assert!(
        twice.contains("agent/x") && twice.contains("contracts/b.toml"),
        "{twice}"
    );
    let twice = find("b.toml", "branch: ");
    assert!(twice.contains("contracts/a.toml"), "{twice}");
    let glob = find("c.toml", "");
    assert!(glob.contains("scope"), "{glob}");
    let unknown = find("d.toml", "");
    assert!(unknown.contains("colour"), "{unknown}");
    assert!(!out.contains("notes.md"), "{out}");
    assert_eq!(lines.len(), 5, "{out}");
    // -q keeps the problems: they are what a script reads.
    assert_eq!(validate(&fx, &["-q"]).1, out);
}

#[test]
fn validate_reports_a_bad_configuration_and_reads_the_flags() {
    let fx = Fixture::new();
    fx.commit(
        "main",
        &[(
            ".closegate.toml",
            Some("[protected]\ntests = [\"tests/[\"]\n"),
        )],
        "bad glob",
    );
    let (code, out, _) = validate(&fx, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("main:.closegate.toml") && out.contains("tests"),
        "{out}"
    );

    fx.commit(
        "next",
        &[(
            ".closegate.toml",
            Some("[[checks]]\nname = \"test\"\nrun = \"true\"\nfrobnicate = 1\n"),
        )],
        "unknown key",
    );
    let (code, out, _) = validate(&fx, &["--base", "next"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("next:.closegate.toml") && out.contains("frobnicate"),
        "{out}"
    );

    // --config and --contract files instead of the base tip's.
    std::fs::write(fx.root().join("ok.toml"), TWO_CHECKS).unwrap();
    std::fs::write(
        fx.root().join("task.toml"),
        "required_checks = [\"bench\"]\n",
    )
    .unwrap();
    let (code, out, _) = validate(&fx, &["--config", "ok.toml", "--contract", "task.toml"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.starts_with("contract-malformed: task.toml: required_checks: check `bench`"),
        "{out}"
    );
    std::fs::write(
        fx.root().join("task.toml"),
        "required_checks = [\"lint\"]\n",
    )
    .unwrap();
    let (code, out, _) = validate(&fx, &["--config", "ok.toml", "--contract", "task.toml"]);
    assert_eq!(code, 0, "{out}");
    // A --base that names no branch is a problem; an unreadable file or no repository is exit 2.
    let (code, out, _) = validate(&fx, &["--base", "nope", "--config", "ok.toml"]);
    assert_eq!(code, 1);
    assert!(out.contains("--base nope"), "{out}");
    let (code, _, err) = validate(&fx, &["--config", "missing.toml"]);
    assert_eq!(code, 2);
    assert!(err.contains("missing.toml"), "{err}");
    let outside = tempfile::tempdir().unwrap();
    let (code, _, err) = parts(&closegate(outside.path(), &["validate"]));
    assert_eq!(code, 2, "{err}");
}

/// validate's exit-2 errors carry the file name raw and main escapes it once on stderr; its
/// problems on stdout (a --base naming no branch) are escaped once too.
#[test]
fn validate_escapes_an_ansi_input_exactly_once() {
    let fx = Fixture::new();
    fx.commit("main", &[(".closegate.toml", Some(TWO_CHECKS))], "base");
    let (code, _, err) = validate(&fx, &["--config", "\x1b[31mmissing.toml"]);
    assert_eq!(code, 2, "{err}");
    assert!(!err.contains('\x1b'), "raw escape on stderr: {err:?}");
    // The name is quoted twice (the context and the OS error), each time escaped once.
    assert!(err.contains("\\u{1b}[31mmissing.toml"), "{err}");
    assert!(!err.contains("\\\\u{1b}"), "escaped twice: {err}");
    let (code, out, _) = validate(&fx, &["--base", "\x1b[31mnope"]);
    assert_eq!(code, 1, "{out}");
    assert!(!out.contains('\x1b'), "raw escape on stdout: {out:?}");
    assert_eq!(out.matches("--base \\u{1b}[31mnope").count(), 1, "{out}");
}

/// Issue 18: no function in src/ is over 60 lines; scripts/fn-lengths.sh counts them and exits 1
/// naming each one that is.
#[test]
fn no_function_in_src_is_over_sixty_lines() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new("bash")
        .arg(root.join("scripts/fn-lengths.sh"))
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
