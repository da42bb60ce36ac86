//! `land` as a new user meets it (issue 50, SPEC §27.4): run from inside the worktree it lands,
//! it lands, keeps the worktree, names what kept it (the shell it was run from, or any other
//! process) and the one command that finishes the teardown; and no message prints a literal `\n`
//! or a terminal escape from a check's output.
//!
//! Attacks tried here: a process standing in the worktree while `land` tears it down (nothing of
//! it may go); the shell `land` was run from standing in it (never removed under it, never
//! signalled); a check that paints the reviewer's terminal (colour, cursor moves, an OSC 8 link,
//! a title) in `check`'s report and in `land`'s refusal.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::escrow::disk;
use crate::fixture::parts;
use crate::land::Land;

/// The landed branch's entry of a `land --json` object.
fn entry<'a>(v: &'a Value, branch: &str) -> &'a Value {
    let all = v["branches"].as_array().unwrap();
    all.iter().find(|b| b["branch"] == branch).unwrap()
}

/// `sleep 30` standing in `dir`, started by the test (not an ancestor of closegate).
fn sleeper(dir: &Path) -> Child {
    Command::new("sleep")
        .arg("30")
        .current_dir(dir)
        .stdin(Stdio::null())
        .spawn()
        .unwrap()
}

/// `sh -c SCRIPT` in `cwd` with the scene's environment and the built closegate first on PATH,
/// as a user's shell runs a command they paste.
fn shell(l: &Land, cwd: &Path, script: &str) -> Command {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_closegate"));
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![bin.parent().unwrap().to_path_buf()];
    dirs.extend(std::env::split_paths(&path));
    let mut cmd = Command::new("sh");
    cmd.args(["-c", script]).current_dir(cwd);
    l.env(&mut cmd, cwd);
    cmd.env("PATH", std::env::join_paths(dirs).unwrap())
        .stdin(Stdio::null());
    cmd
}

fn root(l: &Land) -> PathBuf {
    l.fx.root().canonicalize().unwrap()
}

#[test]
fn a_process_inside_keeps_the_worktree_whole_and_land_names_it_and_the_command_that_finishes() {
    let l = Land::new();
    let (wt, tip) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let wt = wt.canonicalize().unwrap();
    std::fs::create_dir_all(wt.join("target")).unwrap();
    std::fs::write(wt.join("target/build.log"), "ignored build output\n").unwrap();
    let before = disk(&wt);
    let mut holder = sleeper(&wt);
    let pid = holder.id();

    let (code, out, err) = l.run(&root(&l), &["land", "agent/x"]);
    assert_eq!(code, 0, "landed, the teardown refused: {out}{err}");
    assert!(out.starts_with("landed agent/x (x) as "), "{out}");
    // Exact: the refusal's codes are the teardown's refusals (no warning among them), the
    // process is named by pid, command and how, and the finishing command is whole.
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines.contains(&"  teardown refused (teardown-busy): the worktree is kept"),
        "{out}"
    );
    let named = format!(
        "  teardown-busy: process {pid} (`sleep 30`) has its current directory inside the worktree"
    );
    assert!(lines.contains(&named.as_str()), "{out}");
    let finish = format!(
        "cd {} && closegate teardown {} --delete-branch",
        root(&l).display(),
        wt.display()
    );
    let said = format!("  once that process has ended, finish the teardown: {finish}");
    assert!(lines.contains(&said.as_str()), "{out}");

    // Landed, and nothing of the worktree went: every file, byte for byte, and the branch.
    assert!(l.main() != tip && l.fx.repo.graph_descendant_of(l.main(), tip).unwrap());
    assert_eq!(disk(&wt), before, "no byte lost");
    let branch = l.fx.repo.refname_to_id("refs/heads/agent/x").ok();
    assert_eq!(
        branch,
        Some(tip),
        "a branch checked out in a live worktree is kept"
    );

    holder.kill().unwrap();
    holder.wait().unwrap();
    let (code, out, err) = parts(&shell(&l, &root(&l), &finish).output().unwrap());
    assert_eq!(
        code, 0,
        "the suggested command finishes the teardown: {out}{err}"
    );
    assert!(!wt.exists(), "{out}");
    assert!(
        l.fx.repo.refname_to_id("refs/heads/agent/x").is_err(),
        "{out}"
    );
}

#[test]
fn land_run_from_a_shell_inside_the_worktree_keeps_it_names_that_shell_and_never_signals_it() {
    let l = Land::new();
    let (wt, tip) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let wt = wt.canonicalize().unwrap();
    let before = disk(&wt);
    // As the quick start's reader did: `cd` into the agent's worktree, then `land`. The `; exit`
    // keeps sh from exec'ing closegate in its place: sh stays its parent, standing in `wt`.
    let child = shell(&l, &wt, "closegate land --json agent/x; exit $?")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let sh = child.id();
    let (code, out, err) = parts(&child.wait_with_output().unwrap());
    assert_eq!(code, 0, "the shell survived and land landed: {out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    let b = entry(&v, "agent/x");
    assert_eq!(b["outcome"], "landed", "{v:#}");
    assert_eq!(
        b["teardown_codes"],
        serde_json::json!(["teardown-busy"]),
        "{v:#}"
    );
    let holders = b["teardown_holders"].as_array().unwrap();
    assert_eq!(
        holders.len(),
        1,
        "the shell, and not closegate itself: {v:#}"
    );
    assert_eq!(holders[0]["pid"], sh, "{v:#}");
    assert_eq!(holders[0]["starter"], true, "{v:#}");
    assert_eq!(holders[0]["why"], "current directory", "{v:#}");
    let command = holders[0]["command"].as_str().unwrap();
    assert!(
        command.starts_with("sh -c closegate land --json agent/x"),
        "{v:#}"
    );
    let finish = b["teardown_finish"].as_str().unwrap();
    assert_eq!(
        finish,
        format!(
            "cd {} && closegate teardown {} --delete-branch",
            root(&l).display(),
            wt.display()
        )
    );
    assert!(l.fx.repo.graph_descendant_of(l.main(), tip).unwrap());
    assert_eq!(disk(&wt), before, "no byte lost under the shell");

    // That very command, run by a shell standing in the worktree, leaves it and finishes.
    let (code, out, err) = parts(&shell(&l, &wt, finish).output().unwrap());
    assert_eq!(code, 0, "{out}{err}");
    assert!(!wt.exists(), "{out}");
    assert!(
        l.fx.repo.refname_to_id("refs/heads/agent/x").is_err(),
        "{out}"
    );
}

#[test]
fn the_shell_that_runs_teardown_from_inside_stays_exempt() {
    // SPEC §24 is unchanged for `teardown` itself: run from inside the worktree it names, the
    // shell that started it is exempt and named in a warning, and the worktree goes.
    let l = Land::new();
    let (wt, _) = l.verified("x", &[("src/x.rs", Some("fn x() {}\n"))]);
    let wt = wt.canonicalize().unwrap();
    let script = "closegate teardown --allow-unverified; exit $?";
    let (code, out, err) = parts(&shell(&l, &wt, script).output().unwrap());
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("it is exempt"), "{out}");
    assert!(!wt.exists(), "{out}");
}

/// A check that paints: colour, an erased line and a cursor move, an OSC 8 link closed by ST, a
/// window title closed by BEL, then fails when `src/a.rs` and `src/b.rs` are both there.
const PAINT: &str = r#"[[checks]]
name = "paint"
run = '''printf '\033[31mred line\033[0m\n\033[2K\033[1Gmoved\n\033]8;;https://example.com\007a link\033]8;;\033\\ done\n\033]0;pwned\007title\n'; if [ -e src/a.rs ] && [ -e src/b.rs ]; then exit 1; fi'''
timeout_s = 60

"#;

/// Neither a terminal escape nor a BEL nor a literal `\n`, and the painted words all there.
fn clean(text: &str, what: &str) {
    assert!(
        !text.contains('\x1b') && !text.contains('\x07'),
        "{what}: {text:?}"
    );
    let shown = ["\\x1b", "\\u{1b}", "\\u{7}"];
    assert!(shown.iter().all(|s| !text.contains(s)), "{what}: {text:?}");
    assert!(!text.contains("\\n"), "a literal \\n in {what}: {text:?}");
    for word in ["red line", "moved", "a link done", "title"] {
        assert!(text.contains(word), "{what} lost {word:?}: {text:?}");
    }
}

#[test]
fn a_check_that_paints_shows_no_escape_in_checks_report() {
    let l = Land::with_prefix(PAINT);
    let a = ("src/a.rs", Some("fn a() {}\n"));
    let b = ("src/b.rs", Some("fn b() {}\n"));
    let (wt, _) = l.agent("ab", &[a, b]);
    let (code, out, err) = l.run(&wt, &["check"]);
    assert_eq!(code, 1, "{out}{err}");
    clean(&out, "the human report");
    let (code, report) = l.check_json(&wt, &[]);
    assert_eq!(code, 1, "{report:#}");
    let paint = report["checks"].as_array().unwrap();
    let paint = paint.iter().find(|c| c["name"] == "paint").unwrap();
    let lines: Vec<&str> = (paint["output"].as_array().unwrap().iter())
        .map(|l| l.as_str().unwrap())
        .collect();
    clean(&lines.join("\n"), "the JSON output");
    assert!(lines.contains(&"a link done"), "{lines:?}");
}

#[test]
fn land_check_failed_is_one_line_with_no_escape_in_both_formats() {
    let l = Land::with_prefix(PAINT);
    l.verified("a", &[("src/a.rs", Some("fn a() {}\n"))]);
    l.verified("b", &[("src/b.rs", Some("fn b() {}\n"))]);
    l.verified("c", &[("src/c.rs", Some("fn c() {}\n"))]);
    let (code, v) = l.land(&["agent/a", "agent/b"]);
    assert_eq!(code, 1, "{v:#}");
    let b = entry(&v, "agent/b");
    assert_eq!(b["outcome"], "refused", "{v:#}");
    let failed = b["findings"].as_array().unwrap();
    let failed = failed.iter().find(|f| f["code"] == "land-check-failed");
    let message = failed.unwrap()["message"].as_str().unwrap();
    assert!(!message.contains('\n'), "{message:?}");
    assert!(
        message.contains("red line | moved | a link done"),
        "{message:?}"
    );
    clean(message, "land --json's message");
    for check in b["checks"].as_array().unwrap() {
        let output: Vec<&str> = (check["output"].as_array().unwrap().iter())
            .map(|l| l.as_str().unwrap())
            .collect();
        assert!(output.iter().all(|l| !l.contains('\x1b')), "{output:?}");
    }
    let whole = v.to_string();
    assert!(
        !whole.contains("\\u001b") && !whole.contains("\\u0007"),
        "{whole}"
    );

    // The human lines: the finding on one line of its own.
    l.fx.checkout(&l.fx.root());
    let (code, out, err) = l.run(&root(&l), &["land", "agent/b", "agent/c"]);
    assert_eq!(code, 1, "{out}{err}");
    let line = out.lines().find(|l| l.starts_with("  land-check-failed: "));
    let line = line.unwrap_or_else(|| panic!("{out}"));
    clean(line, "land's human line");
    assert!(line.contains("red line | moved | a link done"), "{out}");
    assert!(out.contains("landed agent/c"), "{out}");
}
