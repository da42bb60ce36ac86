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
    let s = Scene::honest_return();
    // The submodule is the base's: `.gitmodules` is always on surface `ci` (SPEC §4.5), so an
    // agent adding it would need review. `main` moves to the commit that adds it.
    add_submodule(&s.fx, &s.wt);
    let with_sub = commit_all_but_status(&s.wt, "add a submodule");
    git(
        &s.fx.root(),
        &["update-ref", "refs/heads/main", &with_sub.to_string()],
    );
    std::fs::write(bytes_path(&s.wt, TRACKED), "tracked\n").unwrap();
    // The declared artifact is produced by this branch's own commit, after the base moved.
    std::fs::write(s.wt.join("src/lib.rs"), "pub fn x() -> u8 { 1 }\n").unwrap();
    let subject = "add x beside the submodule";
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
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
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
        let s = Scene::honest_return();
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

/// A linked worktree `wt/x` on `agent/x` with files in and out of `in/` (the sparse cone).
fn index_scene() -> (Fixture, PathBuf) {
    let fx = Fixture::new();
    fx.commit(
        "agent/x",
        &[
            (".gitignore", Some("*.log\nbuild/\n")),
            ("in/a.txt", Some("alpha\n")),
            ("in/b.txt", Some("beta\n")),
            ("in/deep/c.txt", Some("gamma\n")),
            ("out/d.txt", Some("delta\n")),
            ("out/deep/e.txt", Some("epsilon\n")),
            ("top.txt", Some("top\n")),
        ],
        "agent files",
    );
    let wt = fx.worktree("x", "agent/x");
    (fx, wt)
}

/// The worktree's own git dir (`.git/worktrees/x`).
fn admin(fx: &Fixture) -> PathBuf {
    fx.git_dir().join("worktrees/x")
}

/// Unstaged, staged (edit, addition, removal) and untracked changes, all inside `in/` and at the
/// top, where a sparse checkout keeps files.
fn changes(fx: &Fixture, wt: &Path) {
    fx.write(wt, "in/a.txt", "edited, unstaged\n");
    fx.write(wt, "in/b.txt", "edited and staged\n");
    fx.write(wt, "in/new.txt", "added\n");
    git(wt, &["add", "in/b.txt", "in/new.txt"]);
    git(wt, &["rm", "-q", "--cached", "top.txt"]);
    fx.write(wt, "in/untracked.txt", "u\n");
    fx.write(wt, "loose/one.txt", "1\n");
    fx.write(wt, "build/x.o", "ignored\n");
}

#[test]
fn a_split_index_is_read_and_agrees_with_git_status() {
    let (fx, wt) = index_scene();
    git(&wt, &["update-index", "--split-index"]);
    assert!(
        std::fs::read_dir(admin(&fx)).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with("sharedindex.")),
        "git wrote a shared index"
    );
    assert_eq!(scan(&wt), WorktreeStatus::default());
    assert_eq!(git_status(&wt), WorktreeStatus::default());
    changes(&fx, &wt);
    // A second split write: the replace and delete bitmaps now carry the staged changes.
    git(&wt, &["update-index", "--split-index"]);
    let expected = git_status(&wt);
    assert_eq!(
        expected.dirty,
        ["in/a.txt", "in/b.txt", "in/new.txt", "top.txt"],
        "{expected:?}"
    );
    assert_eq!(
        expected.untracked,
        ["in/untracked.txt", "loose/one.txt", "top.txt"]
    );
    assert_eq!(scan(&wt), expected);
}

/// `core.splitIndex=true` (git splits on every write) and libgit2's general path (a split index
/// handed to libgit2 in memory, under `core.symlinks=false`) agree too.
#[test]
fn a_split_index_agrees_under_core_splitindex_and_on_the_general_path() {
    let (fx, wt) = index_scene();
    git(&wt, &["config", "core.splitIndex", "true"]);
    git(&wt, &["update-index", "--split-index"]);
    changes(&fx, &wt);
    std::fs::remove_file(wt.join("in/deep/c.txt")).unwrap();
    let expected = git_status(&wt);
    assert!(expected.dirty.contains(&"in/deep/c.txt".to_string()));
    assert_eq!(scan(&wt), expected);
    git(&wt, &["config", "core.symlinks", "false"]);
    assert_eq!(scan(&wt), git_status(&wt));
}

/// A cone-mode sparse checkout of `in/` with a sparse index: `out/` is one folder entry.
fn sparse_scene() -> (Fixture, PathBuf) {
    let (fx, wt) = index_scene();
    git(
        &wt,
        &["sparse-checkout", "set", "--cone", "--sparse-index", "in"],
    );
    assert!(!wt.join("out").exists(), "out/ is outside the cone");
    let index = std::fs::read(admin(&fx).join("index")).unwrap();
    assert!(
        index.windows(4).any(|w| w == b"sdir"),
        "git wrote a sparse index"
    );
    (fx, wt)
}

#[test]
fn a_sparse_index_is_read_and_agrees_with_git_status() {
    let (fx, wt) = sparse_scene();
    assert_eq!(scan(&wt), WorktreeStatus::default());
    changes(&fx, &wt);
    let expected = git_status(&wt);
    assert_eq!(
        expected.dirty,
        ["in/a.txt", "in/b.txt", "in/new.txt", "top.txt"],
        "{expected:?}"
    );
    assert_eq!(scan(&wt), expected);
}

/// A staged change inside a sparse folder: HEAD moved back with `reset --soft`, so the folder
/// entry's tree differs from HEAD's, and each changed file under it is listed as git lists it.
#[test]
fn a_staged_change_under_a_sparse_folder_is_seen() {
    let (fx, wt) = index_scene();
    let before = git(&wt, &["rev-parse", "HEAD"]);
    fx.commit(
        "agent/x",
        &[
            ("out/deep/e.txt", Some("epsilon 2\n")),
            ("out/f.txt", Some("new\n")),
        ],
        "change out",
    );
    fx.checkout(&wt);
    git(
        &wt,
        &["sparse-checkout", "set", "--cone", "--sparse-index", "in"],
    );
    git(&wt, &["reset", "-q", "--soft", before.trim()]);
    let index = std::fs::read(admin(&fx).join("index")).unwrap();
    assert!(
        index.windows(4).any(|w| w == b"sdir"),
        "still a sparse index"
    );
    let expected = git_status(&wt);
    assert_eq!(
        expected.dirty,
        ["out/deep/e.txt", "out/f.txt"],
        "{expected:?}"
    );
    assert_eq!(scan(&wt), expected);
}

/// The close gate on both index kinds: a clean return verifies, a change is
/// `close-worktree-dirty` — never `close-worktree-absent` ("unsupported mandatory extension").
#[test]
fn check_verifies_and_refuses_on_split_and_sparse_indexes() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    for kind in ["split", "sparse"] {
        let s = Scene::honest_return();
        match kind {
            "split" => git(&s.wt, &["update-index", "--split-index"]),
            _ => git(
                &s.wt,
                &["sparse-checkout", "set", "--cone", "--sparse-index", "src"],
            ),
        };
        let (code, codes, report) = check_codes(&s);
        assert_eq!((code, codes.as_slice()), (0, &[][..]), "{kind}: {report}");
        std::fs::write(s.wt.join("src/lib.rs"), "pub fn x() { changed() }\n").unwrap();
        let (code, codes, report) = check_codes(&s);
        assert_eq!(code, 1, "{kind}: {report}");
        assert_eq!(codes, ["close-worktree-dirty"], "{kind}: {report}");
        std::fs::write(s.wt.join("src/new.rs"), "\n").unwrap();
        let (_, codes, _) = check_codes(&s);
        assert_eq!(
            codes,
            ["close-worktree-dirty", "close-worktree-untracked"],
            "{kind}"
        );
    }
}

/// A corrupt index (a flipped byte: the checksum no longer matches) is no verdict on the
/// worktree: the scan fails naming the file, as `git fsck` refuses such an index (`git status`
/// does not look at the checksum).
#[test]
fn an_index_whose_checksum_does_not_match_is_an_error() {
    let (fx, wt) = index_scene();
    let path = admin(&fx).join("index");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[30] ^= 0x40;
    std::fs::write(&path, bytes).unwrap();
    assert!(
        !crate::fixture::git_output(&wt, &["fsck", "--no-dangling"])
            .status
            .success()
    );
    let err = format!("{:#}", status_of(&wt, EXEMPT).unwrap_err());
    assert!(
        err.contains("checksum") && err.contains("worktrees/x/index"),
        "{err}"
    );
}

/// Whether the worktree's index file carries the extension `signature`.
fn has_extension(fx: &Fixture, signature: &[u8; 4]) -> bool {
    let index = std::fs::read(admin(fx).join("index")).unwrap();
    index.windows(4).any(|w| w == signature)
}

/// Issue 18: the index as git writes it with every optional extension on: TREE, UNTR
/// (untracked cache), FSMN (fsmonitor), EOIE and IEOT (`index.threads`, past 1,000 entries).
#[test]
fn an_index_with_every_optional_extension_agrees_with_git_status() {
    let fx = Fixture::new();
    let files: Vec<(String, String)> = (0..1500)
        .map(|i| (format!("many/m{:02}/f{i}.txt", i / 50), format!("{i}\n")))
        .collect();
    let mut all: Vec<(&str, Option<&str>)> = files
        .iter()
        .map(|(path, text)| (path.as_str(), Some(text.as_str())))
        .collect();
    all.extend([
        (".gitignore", Some("*.log\nbuild/\n")),
        ("in/a.txt", Some("alpha\n")),
        ("in/b.txt", Some("beta\n")),
        ("top.txt", Some("top\n")),
    ]);
    fx.commit("agent/x", &all, "many files");
    let wt = fx.worktree("x", "agent/x");
    let hook = fx.tmp.path().join("fsmonitor.sh");
    std::fs::write(&hook, "#!/bin/sh\nprintf '/\\0'\n").unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    for (key, value) in [
        ("core.untrackedCache", "true"),
        ("core.fsmonitor", hook.to_str().unwrap()),
        ("core.fsmonitorHookVersion", "1"),
        ("index.threads", "4"),
        ("index.recordOffsetTable", "true"),
        ("index.recordEndOfIndexEntries", "true"),
    ] {
        git(&wt, &["config", key, value]);
    }
    git(&wt, &["read-tree", "HEAD"]); // primes the cache-tree (TREE)
    git(&wt, &["update-index", "--untracked-cache", "--fsmonitor"]);
    fx.write(&wt, "loose/one.txt", "1\n");
    git(&wt, &["status", "--porcelain"]); // writes the untracked cache
    for signature in [b"TREE", b"UNTR", b"FSMN", b"EOIE", b"IEOT"] {
        let name = String::from_utf8_lossy(signature);
        assert!(has_extension(&fx, signature), "{name}");
    }
    assert_eq!(scan(&wt), git_status(&wt));
    std::fs::remove_file(wt.join("loose/one.txt")).unwrap();
    changes(&fx, &wt);
    fx.write(&wt, "many/m07/f350.txt", "edited\n");
    std::fs::remove_file(wt.join("many/m29/f1499.txt")).unwrap();
    git(&wt, &["status", "--porcelain"]);
    for signature in [b"UNTR", b"FSMN", b"EOIE", b"IEOT"] {
        let name = String::from_utf8_lossy(signature);
        assert!(has_extension(&fx, signature), "{name}");
    }
    let expected = git_status(&wt);
    assert_eq!(expected.dirty.len(), 6, "{expected:?}");
    assert_eq!(scan(&wt), expected);
}

/// Issue 18: REUC, the resolve-undo extension git keeps after a conflict is resolved; and the
/// conflict itself (stages 1–3) before that.
#[test]
fn a_conflict_and_its_resolve_undo_extension_agree_with_git_status() {
    let (fx, wt) = index_scene();
    git(&wt, &["checkout", "-q", "-b", "side"]);
    fx.write(&wt, "in/a.txt", "side\n");
    commit_all(&wt, "side");
    git(&wt, &["checkout", "-q", "agent/x"]);
    fx.write(&wt, "in/a.txt", "ours\n");
    commit_all(&wt, "ours");
    let merge = crate::fixture::git_output(&wt, &["merge", "-q", "side"]);
    assert!(!merge.status.success(), "the merge conflicts");
    let expected = git_status(&wt);
    assert_eq!(expected.dirty, ["in/a.txt"]);
    assert_eq!(scan(&wt), expected);
    fx.write(&wt, "in/a.txt", "resolved\n");
    git(&wt, &["add", "in/a.txt"]);
    assert!(has_extension(&fx, b"REUC"));
    fx.write(&wt, "in/untracked.txt", "u\n");
    let expected = git_status(&wt);
    assert_eq!(expected.dirty, ["in/a.txt"]);
    assert_eq!(scan(&wt), expected);
}

/// Issue 18: an index of version 3 (an intent-to-add entry needs the extended flags) and the
/// same changes in an index of version 4 (prefix-compressed paths).
#[test]
fn index_versions_3_and_4_agree_with_git_status() {
    for version in ["3", "4"] {
        let (fx, wt) = index_scene();
        fx.write(&wt, "in/ita.txt", "intent\n");
        git(&wt, &["add", "-N", "in/ita.txt"]);
        if version == "4" {
            git(&wt, &["update-index", "--index-version", "4"]);
        }
        changes(&fx, &wt);
        let index = std::fs::read(admin(&fx).join("index")).unwrap();
        assert_eq!(index[7].to_string(), version);
        let expected = git_status(&wt);
        assert!(
            expected.dirty.contains(&"in/ita.txt".to_string()),
            "{expected:?}"
        );
        assert_eq!(scan(&wt), expected, "version {version}");
    }
}

/// Teardown on both index kinds: a clean worktree is removed, an untracked file refuses it.
#[test]
fn teardown_works_on_split_and_sparse_indexes() {
    for kind in ["split", "sparse"] {
        let s = Scene::honest_return();
        match kind {
            "split" => git(&s.wt, &["update-index", "--split-index"]),
            _ => git(
                &s.wt,
                &["sparse-checkout", "set", "--cone", "--sparse-index", "src"],
            ),
        };
        std::fs::write(s.wt.join("src/new.rs"), "\n").unwrap();
        let (code, stdout, stderr) = s.teardown(&[]);
        assert_eq!(code, 1, "{kind}: {stdout}\n{stderr}");
        assert!(stdout.contains("teardown-untracked"), "{kind}: {stdout}");
        std::fs::remove_file(s.wt.join("src/new.rs")).unwrap();
        let (code, stdout, stderr) = s.teardown(&[]);
        assert_eq!(code, 0, "{kind}: {stdout}\n{stderr}");
        assert!(!s.wt.exists(), "{kind}: removed");
    }
}

/// A folder a sparse index keeps as one entry, on disk anyway: git judges each file in it, and
/// so does the scan — an edited file of the folder is dirty, a new one untracked, an unchanged
/// one nothing. (A crafted sparse index must not pass edits off as untracked files.)
#[test]
fn files_on_disk_under_a_sparse_folder_are_judged_one_by_one() {
    let (fx, wt) = sparse_scene();
    fx.write(&wt, "out/d.txt", "delta\n");
    fx.write(&wt, "out/deep/e.txt", "edited\n");
    fx.write(&wt, "out/new.txt", "new\n");
    fx.write(&wt, "out/x.log", "ignored\n");
    // The scan first, while the index is still sparse (git status may write it expanded).
    assert!(has_extension(&fx, b"sdir"));
    let scanned = scan(&wt);
    let expected = git_status(&wt);
    assert_eq!(expected.dirty, ["out/deep/e.txt"], "{expected:?}");
    assert_eq!(expected.untracked, ["out/new.txt"], "{expected:?}");
    assert_eq!(scanned, expected);
}

/// An index whose entries are out of order (git refuses it) is an error, not a scan whose
/// binary searches miss a staged file: swap two entries of a v2 index and fix the checksum.
#[test]
fn an_index_out_of_order_is_an_error() {
    let (fx, wt) = index_scene();
    git(&wt, &["update-index", "--index-version", "2"]);
    let path = admin(&fx).join("index");
    let bytes = std::fs::read(&path).unwrap();
    // Entries of v2 are 62 bytes and a NUL-padded name; split them at each `mode` field start.
    let mut at = 12;
    let mut spans = Vec::new();
    let count = u32::from_be_bytes(bytes[8..12].try_into().unwrap()) as usize;
    for _ in 0..count {
        let nul = bytes[at + 62..].iter().position(|&b| b == 0).unwrap();
        let len = (62 + nul + 8) / 8 * 8;
        spans.push(at..at + len);
        at += len;
    }
    let mut swapped = bytes[..12].to_vec();
    swapped.extend_from_slice(&bytes[spans[1].clone()]);
    swapped.extend_from_slice(&bytes[spans[0].clone()]);
    for span in &spans[2..] {
        swapped.extend_from_slice(&bytes[span.clone()]);
    }
    swapped.extend_from_slice(&bytes[at..bytes.len() - 20]);
    let digest = sha1_of(&swapped);
    swapped.extend_from_slice(&digest);
    std::fs::write(&path, swapped).unwrap();
    let err = format!("{:#}", status_of(&wt, EXEMPT).unwrap_err());
    assert!(err.contains("out of order"), "{err}");
}

/// The plain SHA-1 of `bytes` (`git hash-object` would hash a blob header too), by `sha1sum`.
fn sha1_of(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut child = std::process::Command::new("sha1sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    let hex = String::from_utf8(out.stdout).unwrap();
    (0..20)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// `git ls-files --stage -z` (with `--sparse`: a sparse index's folder entries as they are) as
/// (path, id, stage, mode), in index order.
fn git_ls_files(wt: &Path) -> Vec<(Vec<u8>, String, u16, u32)> {
    let out = crate::fixture::git_output(wt, &["ls-files", "--stage", "--sparse", "-z"]);
    assert!(out.status.success());
    let records = out.stdout.split(|&b| b == 0).filter(|r| !r.is_empty());
    let entry = |record: &[u8]| {
        let tab = record.iter().position(|&b| b == b'\t').unwrap();
        let head = std::str::from_utf8(&record[..tab]).unwrap().to_string();
        let fields: Vec<&str> = head.split(' ').collect();
        let path = record[tab + 1..].to_vec();
        let mode = u32::from_str_radix(fields[0], 8).unwrap();
        (
            path,
            fields[1].to_string(),
            fields[2].parse().unwrap(),
            mode,
        )
    };
    records.map(entry).collect()
}

/// Issue 18: the fast scan's own index reader (not libgit2, to which it leaves what it does not
/// read) reads the index files real git writes, extension by extension and version by version,
/// to the entries `git ls-files --stage` lists; its trailing checksum is verified, and a null
/// one (`index.skipHash`) is accepted as git accepts it; and the scan agrees with `git status`.
#[test]
fn the_index_reader_reads_every_layout_git_writes() {
    use closegate::repo::fuzzing::read_index;
    type Setup = fn(&Fixture, &Path);
    let layouts: [(&str, Setup, &[u8; 4]); 9] = [
        (
            "TREE",
            |_, wt| {
                git(wt, &["read-tree", "HEAD"]);
            },
            b"TREE",
        ),
        (
            "REUC",
            |fx, wt| {
                git(wt, &["checkout", "-q", "-b", "side"]);
                fx.write(wt, "in/a.txt", "side\n");
                commit_all(wt, "side");
                git(wt, &["checkout", "-q", "agent/x"]);
                fx.write(wt, "in/a.txt", "ours\n");
                commit_all(wt, "ours");
                let _ = crate::fixture::git_output(wt, &["merge", "-q", "side"]);
                fx.write(wt, "in/a.txt", "resolved\n");
                git(wt, &["add", "in/a.txt"]);
            },
            b"REUC",
        ),
        (
            "UNTR",
            |fx, wt| {
                git(wt, &["config", "core.untrackedCache", "true"]);
                git(wt, &["update-index", "--untracked-cache"]);
                fx.write(wt, "loose/one.txt", "1\n");
                git(wt, &["status", "--porcelain"]);
            },
            b"UNTR",
        ),
        (
            "EOIE/IEOT",
            |fx, wt| {
                git(wt, &["config", "index.threads", "2"]);
                git(wt, &["config", "index.recordOffsetTable", "true"]);
                git(wt, &["config", "index.recordEndOfIndexEntries", "true"]);
                for i in 0..40 {
                    fx.write(wt, &format!("many/f{i}.txt"), "x\n");
                }
                git(wt, &["add", "many"]);
            },
            b"IEOT",
        ),
        (
            "FSMN",
            |fx, wt| {
                let hook = fx.tmp.path().join("fsmonitor.sh");
                std::fs::write(&hook, "#!/bin/sh\nprintf '/\\0'\n").unwrap();
                let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
                std::fs::set_permissions(&hook, mode).unwrap();
                git(wt, &["config", "core.fsmonitor", hook.to_str().unwrap()]);
                git(wt, &["config", "core.fsmonitorHookVersion", "1"]);
                git(wt, &["update-index", "--fsmonitor"]);
            },
            b"FSMN",
        ),
        (
            "v3 intent-to-add",
            |fx, wt| {
                fx.write(wt, "in/ita.txt", "intent\n");
                git(wt, &["add", "-N", "in/ita.txt"]);
            },
            b"DIRC",
        ),
        (
            "v4",
            |_, wt| {
                git(wt, &["update-index", "--index-version", "4"]);
            },
            b"DIRC",
        ),
        (
            "split",
            |_, wt| {
                git(wt, &["update-index", "--split-index"]);
            },
            b"link",
        ),
        (
            "sparse",
            |_, wt| {
                let args = ["sparse-checkout", "set", "--cone", "--sparse-index", "in"];
                git(wt, &args);
            },
            b"sdir",
        ),
    ];
    for (name, setup, signature) in layouts {
        let (fx, wt) = index_scene();
        setup(&fx, &wt);
        fx.write(&wt, "in/a.txt", "edited, unstaged\n");
        fx.write(&wt, "in/untracked.txt", "u\n");
        assert!(has_extension(&fx, signature), "{name}: no {signature:?}");
        let read = read_index(&admin(&fx)).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        let read = read.unwrap_or_else(|| panic!("{name}: left to libgit2"));
        let ours: Vec<_> = (read.into_iter())
            .map(|e| (e.path, e.oid.to_string(), e.stage, e.mode))
            .collect();
        assert_eq!(ours, git_ls_files(&wt), "{name}");
        assert_eq!(scan(&wt), git_status(&wt), "{name}");
    }
    let index = std::fs::read(admin(&index_scene().0).join("index")).unwrap();
    assert_eq!(index[7], 2, "the plain layout is version 2");
}

/// Issue 18: `index.skipHash` (git 2.40+): git writes a null trailing checksum; the reader
/// accepts it as git does, reads the entries, and the scan agrees with `git status`. Any other
/// wrong checksum is an error (`an_index_whose_checksum_does_not_match_is_an_error`).
#[test]
fn an_index_with_a_null_checksum_from_index_skiphash_is_read() {
    let (fx, wt) = index_scene();
    git(&wt, &["config", "index.skipHash", "true"]);
    fx.write(&wt, "in/new.txt", "added\n");
    git(&wt, &["add", "in/new.txt"]);
    let index = std::fs::read(admin(&fx).join("index")).unwrap();
    assert_eq!(
        index[index.len() - 20..],
        [0; 20],
        "git wrote a null checksum"
    );
    let read = closegate::repo::fuzzing::read_index(&admin(&fx)).unwrap();
    let paths: Vec<Vec<u8>> = read.unwrap().into_iter().map(|e| e.path).collect();
    let expected: Vec<Vec<u8>> = git_ls_files(&wt).into_iter().map(|e| e.0).collect();
    assert_eq!(paths, expected);
    fx.write(&wt, "in/a.txt", "edited\n");
    assert_eq!(scan(&wt), git_status(&wt));
}

/// SPEC §11: a path that is not UTF-8 is reported escaped like any other. Two agent-added test
/// files that differ only in an invalid byte are two `protected-surface` findings naming
/// `tests/\xff.sh` and `tests/\xfe.sh`, not one lossy `tests/\u{fffd}.sh` twice.
#[test]
fn protected_paths_that_are_not_utf8_are_reported_escaped_and_distinct() {
    let s = Scene::honest_return();
    std::fs::create_dir_all(s.wt.join("tests")).unwrap();
    std::fs::write(bytes_path(&s.wt, b"tests/\xff.sh"), "a\n").unwrap();
    std::fs::write(bytes_path(&s.wt, b"tests/\xfe.sh"), "b\n").unwrap();
    std::fs::write(s.wt.join("src/lib.rs"), "pub fn x() -> u8 { 2 }\n").unwrap();
    let subject = "add x and two tests";
    let tip = commit_all_but_status(&s.wt, subject);
    write_status(&s.wt, "x", "close-ok", tip, subject);
    let (_, codes, report) = check_codes(&s);
    assert!(codes.contains(&"protected-surface".to_string()), "{report}");
    let mut paths: Vec<&str> = report["protected"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["path"].as_str())
        .collect();
    paths.sort();
    assert_eq!(paths, ["tests/\\xfe.sh", "tests/\\xff.sh"], "{report}");
    let text = report.to_string();
    assert!(!text.contains('\u{fffd}'), "{text}");
}
