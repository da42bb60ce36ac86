//! The worktree scan on the layouts SPEC §11 and §15 name, each compared with
//! `git status --porcelain` on the same worktree: paths that are not UTF-8 (on the fast scan and
//! on libgit2's general path: a submodule, `core.ignorecase`, `core.symlinks=false`), split
//! indexes, sparse indexes, and index files carrying every extension git writes.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use closegate::repo::{WorktreeStatus, path_text, status_of};
use serde_json::Value;

use crate::fixture::{Fixture, closegate, git, parts, report_codes};
use crate::teardown::{Scene, write_status};

const EXEMPT: &str = "_EXEC_STATUS.md";

/// A tracked file whose name is not UTF-8, and an untracked one.
const TRACKED: &[u8] = b"caf\xe9-tracked.txt";
const UNTRACKED: &[u8] = b"caf\xe9.txt";

fn bytes_path(dir: &Path, rel: &[u8]) -> PathBuf {
    dir.join(OsStr::from_bytes(rel))
}

/// `git status --porcelain -z --untracked-files=all --no-renames` as a status, paths as bytes
/// turned into text the way closegate reports them.
pub fn git_status(wt: &Path) -> WorktreeStatus {
    let out = crate::fixture::git_output(
        wt,
        &[
            "status",
            "--porcelain",
            "-z",
            "--untracked-files=all",
            "--no-renames",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut status = WorktreeStatus::default();
    for record in out.stdout.split(|&b| b == 0).filter(|r| !r.is_empty()) {
        let (code, path) = record.split_at(3);
        if path == EXEMPT.as_bytes() {
            continue;
        }
        match code {
            b"?? " => status.untracked.push(path_text(path)),
            b"!! " => {}
            _ => status.dirty.push(path_text(path)),
        }
    }
    status.dirty.sort();
    status.untracked.sort();
    status
}

fn scan(wt: &Path) -> WorktreeStatus {
    let mut status = status_of(wt, EXEMPT).unwrap();
    status.dirty.sort();
    status.untracked.sort();
    status
}

/// Commit everything staged in `wt` with the CLI (hermetic identity and dates).
fn commit_all(wt: &Path, msg: &str) -> git2::Oid {
    git(wt, &["add", "-A"]);
    git(
        wt,
        &["-c", "commit.gpgsign=false", "commit", "-q", "-m", msg],
    );
    git2::Oid::from_str(git(wt, &["rev-parse", "HEAD"]).trim()).unwrap()
}

/// A repository of its own at `<tmp>/<name>` with one commit, to be added as a submodule.
fn sub_repo(fx: &Fixture, name: &str) -> PathBuf {
    let dir = fx.tmp.path().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("lib.txt"), "sub\n").unwrap();
    commit_all(&dir, "sub");
    dir
}

fn add_submodule(fx: &Fixture, wt: &Path) {
    let source = sub_repo(fx, "other");
    git(
        wt,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            source.to_str().unwrap(),
            "sub",
        ],
    );
}

/// The scene's agent worktree with a tracked non-UTF-8 file and a submodule committed, and a
/// status document naming that commit.
fn non_utf8_scene() -> Scene {
    let s = Scene::new();
    std::fs::write(bytes_path(&s.wt, TRACKED), "tracked\n").unwrap();
    add_submodule(&s.fx, &s.wt);
    let subject = "add x with a submodule";
    let tip = commit_all_but_status(&s.wt, subject);
    write_status(&s.wt, "x", "close-ok", tip, subject);
    s
}

/// `commit_all` leaving the (untracked, exempt) status document out.
fn commit_all_but_status(wt: &Path, msg: &str) -> git2::Oid {
    let doc = wt.join(EXEMPT);
    let kept = std::fs::read(&doc).ok();
    let _ = std::fs::remove_file(&doc);
    let tip = commit_all(wt, msg);
    if let Some(bytes) = kept {
        std::fs::write(doc, bytes).unwrap();
    }
    tip
}

fn check_codes(s: &Scene) -> (i32, Vec<String>, Value) {
    let wt = s.wt.to_str().unwrap();
    let out = closegate(
        &s.fx.root(),
        &["check", wt, "--format", "json", "--no-record"],
    );
    let (code, stdout, stderr) = parts(&out);
    let report: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}\n{stdout}\n{stderr}"));
    (code, report_codes(&report), report)
}

/// Bullet of issue 12: with a submodule present the scan is libgit2's general status, which
/// used to skip every path that is not UTF-8: a modified one read clean (VERIFIED), an untracked
/// one was deleted by teardown.
#[test]
fn non_utf8_paths_are_seen_with_a_submodule_present() {
    let s = non_utf8_scene();
    assert_eq!(scan(&s.wt), WorktreeStatus::default());
    let (code, codes, _) = check_codes(&s);
    assert_eq!(
        (code, codes.as_slice()),
        (0, &[][..]),
        "the honest return verifies"
    );

    std::fs::write(bytes_path(&s.wt, TRACKED), "edited, and longer\n").unwrap();
    let expected = git_status(&s.wt);
    assert_eq!(expected.dirty, ["caf\\xe9-tracked.txt"]);
    assert_eq!(scan(&s.wt), expected);
    let (code, codes, report) = check_codes(&s);
    assert_eq!(code, 1);
    assert_eq!(codes, ["close-worktree-dirty"]);
    let message = report["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains("caf\\xe9-tracked.txt"), "{message}");
    git(&s.wt, &["checkout", "--", "."]);

    std::fs::write(bytes_path(&s.wt, UNTRACKED), "work\n").unwrap();
    let expected = git_status(&s.wt);
    assert_eq!(expected.untracked, ["caf\\xe9.txt"]);
    assert_eq!(scan(&s.wt), expected);
    let (_, codes, _) = check_codes(&s);
    assert_eq!(codes, ["close-worktree-untracked"]);
    let (code, stdout, stderr) = s.teardown(&[]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("teardown-untracked") && stdout.contains("caf\\xe9.txt"),
        "{stdout}\n{stderr}"
    );
    assert_eq!(
        std::fs::read(bytes_path(&s.wt, UNTRACKED)).unwrap(),
        b"work\n",
        "the untracked file is kept"
    );
}

/// The same on the fast scan and under each setting that hands the scan to libgit2.
#[test]
fn non_utf8_paths_are_seen_under_every_setting() {
    for setting in [None, Some("core.ignorecase"), Some("core.symlinks")] {
        let s = Scene::new();
        std::fs::write(bytes_path(&s.wt, TRACKED), "tracked\n").unwrap();
        std::fs::write(s.wt.join("plain.txt"), "plain\n").unwrap();
        commit_all_but_status(&s.wt, "more");
        match setting {
            Some("core.ignorecase") => git(&s.wt, &["config", "core.ignorecase", "true"]),
            Some(name) => git(&s.wt, &["config", name, "false"]),
            None => String::new(),
        };
        std::fs::write(bytes_path(&s.wt, TRACKED), "edited, and longer\n").unwrap();
        std::fs::write(bytes_path(&s.wt, UNTRACKED), "work\n").unwrap();
        std::fs::create_dir(bytes_path(&s.wt, b"dir\xff")).unwrap();
        std::fs::write(bytes_path(&s.wt, b"dir\xff/in\xfe.txt"), "w\n").unwrap();
        let expected = git_status(&s.wt);
        assert_eq!(expected.dirty, ["caf\\xe9-tracked.txt"], "{setting:?}");
        assert_eq!(
            expected.untracked,
            ["caf\\xe9.txt", "dir\\xff/in\\xfe.txt"],
            "{setting:?}"
        );
        assert_eq!(scan(&s.wt), expected, "{setting:?}");
    }
}

/// A skip-worktree file whose name is not UTF-8 and whose content changed is found by teardown
/// (it used to look the file up under a lossy name, find nothing, and call it unchanged).
#[test]
fn a_hidden_change_to_a_non_utf8_file_refuses_teardown() {
    let s = non_utf8_scene();
    // The name goes to git on stdin: a `&str` argument cannot carry its bytes.
    let mut cmd = std::process::Command::new("git");
    cmd.current_dir(&s.wt)
        .args(["update-index", "--skip-worktree", "--stdin"])
        .stdin(std::process::Stdio::piped());
    crate::fixture::hermetic(&mut cmd, &s.wt);
    let mut child = cmd.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&[TRACKED, b"\n"].concat())
        .unwrap();
    assert!(child.wait().unwrap().success());
    std::fs::write(bytes_path(&s.wt, TRACKED), "hidden edit\n").unwrap();
    let (code, stdout, stderr) = s.teardown(&[]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("teardown-hidden-changes") && stdout.contains("caf\\xe9-tracked.txt"),
        "{stdout}\n{stderr}"
    );
    assert_eq!(
        std::fs::read(bytes_path(&s.wt, TRACKED)).unwrap(),
        b"hidden edit\n"
    );
}
