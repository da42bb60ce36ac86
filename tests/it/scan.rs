//! The worktree scan (`repo::status_of`) and the tree diff behind the protected gate, both
//! rewritten for speed (SPEC §11), against what git itself reports on real repositories.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use closegate::repo::{Repo, WorktreeStatus, status_of};
use git2::Oid;

use crate::fixture::{Fixture, change_lines, git, git_changes};

const EXEMPT: &str = "_EXEC_STATUS.md";

/// A linked worktree `wt/x` on `agent/x` holding a few files in folders and a `.gitignore`.
fn scene() -> (Fixture, PathBuf) {
    let fx = Fixture::new();
    fx.commit(
        "agent/x",
        &[
            (".gitignore", Some("*.log\nbuild/\n")),
            ("src/a.txt", Some("alpha\n")),
            ("src/b.txt", Some("beta\n")),
            ("src/deep/c.txt", Some("gamma\n")),
            ("docs/d.txt", Some("delta\n")),
        ],
        "agent files",
    );
    let wt = fx.worktree("x", "agent/x");
    // Age the checkout past the index's second, as any worktree older than a second is.
    age(&wt);
    (fx, wt)
}

/// Set every file's mtime two seconds back and rewrite the index so no entry is racy.
fn age(wt: &Path) {
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(2);
    for entry in walkdir::WalkDir::new(wt).into_iter().flatten() {
        if entry.file_type().is_file()
            && !entry.path().components().any(|c| c.as_os_str() == ".git")
        {
            let file = std::fs::File::options()
                .write(true)
                .open(entry.path())
                .unwrap();
            file.set_modified(past).unwrap();
        }
    }
    git(wt, &["update-index", "--really-refresh"]);
}

fn status(wt: &Path) -> WorktreeStatus {
    status_of(wt, EXEMPT).unwrap()
}

fn dirty(paths: &[&str]) -> WorktreeStatus {
    WorktreeStatus {
        dirty: paths.iter().map(|p| p.to_string()).collect(),
        untracked: Vec::new(),
    }
}

#[test]
fn a_fresh_worktree_is_clean() {
    let (_fx, wt) = scene();
    assert_eq!(status(&wt), WorktreeStatus::default());
}

#[test]
fn an_unstaged_edit_is_dirty() {
    let (fx, wt) = scene();
    fx.write(&wt, "src/deep/c.txt", "changed, and longer\n");
    assert_eq!(status(&wt), dirty(&["src/deep/c.txt"]));
}

#[test]
fn staged_edits_additions_and_removals_are_dirty() {
    let (fx, wt) = scene();
    fx.write(&wt, "src/a.txt", "staged\n");
    fx.write(&wt, "new/added.txt", "added\n");
    git(&wt, &["add", "src/a.txt", "new/added.txt"]);
    git(&wt, &["rm", "-q", "--cached", "docs/d.txt"]);
    let got = status(&wt);
    assert_eq!(got.dirty, ["docs/d.txt", "new/added.txt", "src/a.txt"]);
    // The file taken out of the index stays on disk: untracked now.
    assert_eq!(got.untracked, ["docs/d.txt"]);
}

/// Staged swaps of a file and a folder, both ways: HEAD's folder is the index's file and the
/// other way round, so each side has a child the other holds as the other kind.
#[test]
fn staged_swaps_of_files_and_folders_are_dirty() {
    let (fx, wt) = scene();
    std::fs::remove_dir_all(wt.join("src/deep")).unwrap();
    fx.write(&wt, "src/deep", "a file now\n");
    std::fs::remove_file(wt.join("docs/d.txt")).unwrap();
    fx.write(&wt, "docs/d.txt/inner.txt", "a folder now\n");
    git(&wt, &["add", "-A", "src", "docs"]);
    let expected = git_status(&wt);
    assert_eq!(
        expected.dirty,
        [
            "docs/d.txt",
            "docs/d.txt/inner.txt",
            "src/deep",
            "src/deep/c.txt"
        ]
    );
    assert!(expected.untracked.is_empty(), "{expected:?}");
    assert_eq!(status(&wt), expected);
}

#[test]
fn a_deleted_file_is_dirty() {
    let (_fx, wt) = scene();
    std::fs::remove_file(wt.join("src/b.txt")).unwrap();
    assert_eq!(status(&wt), dirty(&["src/b.txt"]));
}

#[test]
fn a_file_turned_symlink_is_dirty() {
    let (_fx, wt) = scene();
    std::fs::remove_file(wt.join("src/b.txt")).unwrap();
    std::os::unix::fs::symlink("a.txt", wt.join("src/b.txt")).unwrap();
    assert_eq!(status(&wt), dirty(&["src/b.txt"]));
}

#[test]
fn a_mode_change_is_dirty() {
    let (_fx, wt) = scene();
    let path = wt.join("docs/d.txt");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(status(&wt), dirty(&["docs/d.txt"]));
}

#[test]
fn a_folder_replaced_by_a_file_makes_its_files_dirty() {
    let (fx, wt) = scene();
    std::fs::remove_dir_all(wt.join("src/deep")).unwrap();
    fx.write(&wt, "src/deep", "now a file\n");
    let got = status(&wt);
    assert_eq!(got.dirty, ["src/deep/c.txt"]);
    assert_eq!(got.untracked, ["src/deep"]);
}

/// Moved away and a symlink left in its place: lstat through the symlink still finds each file
/// with its stat data unchanged, yet git sees the folder's files deleted.
#[test]
fn a_folder_moved_behind_a_symlink_makes_its_files_dirty() {
    let (_fx, wt) = scene();
    std::fs::rename(wt.join("src/deep"), wt.join("moved")).unwrap();
    std::os::unix::fs::symlink("../moved", wt.join("src/deep")).unwrap();
    let expected = git_status(&wt);
    assert_eq!(expected.dirty, ["src/deep/c.txt"]);
    assert_eq!(expected.untracked, ["moved/c.txt", "src/deep"]);
    assert_eq!(status(&wt), expected);
}

/// The index sorts by bytes, so `lib-x` and `lib.d` come between `lib` and `lib/…`, and `lib0`
/// after: tracked files and folders with such names must not be taken for one another.
#[test]
fn names_sorting_around_a_folder_are_told_apart() {
    let fx = Fixture::new();
    fx.commit(
        "agent/x",
        &[
            ("lib/one.txt", Some("1\n")),
            ("lib/sub/two.txt", Some("2\n")),
            ("lib-x.txt", Some("x\n")),
            ("lib.d/three.txt", Some("3\n")),
            ("lib0/four.txt", Some("4\n")),
            ("lib0.txt", Some("0\n")),
        ],
        "names around lib",
    );
    let wt = fx.worktree("x", "agent/x");
    age(&wt);
    assert_eq!(status(&wt), WorktreeStatus::default());
    fx.write(&wt, "lib/new.txt", "n\n");
    fx.write(&wt, "lib-y.txt", "y\n");
    fx.write(&wt, "lib.d/new.txt", "n\n");
    fx.write(&wt, "lib0/sub/new.txt", "n\n");
    fx.write(&wt, "lib.d/three.txt", "three, edited\n");
    std::fs::remove_file(wt.join("lib-x.txt")).unwrap();
    std::fs::remove_dir_all(wt.join("lib/sub")).unwrap();
    fx.write(&wt, "lib/sub", "now a file\n");
    let expected = git_status(&wt);
    assert_eq!(
        expected.dirty,
        ["lib-x.txt", "lib.d/three.txt", "lib/sub/two.txt"]
    );
    assert_eq!(
        expected.untracked,
        [
            "lib-y.txt",
            "lib.d/new.txt",
            "lib/new.txt",
            "lib/sub",
            "lib0/sub/new.txt"
        ]
    );
    assert_eq!(status(&wt), expected);
}

#[test]
fn untracked_files_are_listed_one_by_one_inside_untracked_folders() {
    let (fx, wt) = scene();
    fx.write(&wt, "notes.txt", "n\n");
    fx.write(&wt, "fresh/one.txt", "1\n");
    fx.write(&wt, "fresh/deeper/two.txt", "2\n");
    fx.write(&wt, "src/deep/three.txt", "3\n");
    let got = status(&wt);
    assert!(got.dirty.is_empty(), "{got:?}");
    assert_eq!(
        got.untracked,
        [
            "fresh/deeper/two.txt",
            "fresh/one.txt",
            "notes.txt",
            "src/deep/three.txt"
        ]
    );
}

#[test]
fn ignored_files_and_folders_are_left_out() {
    let (fx, wt) = scene();
    fx.write(&wt, "build/out.o", "o\n");
    fx.write(&wt, "build/nested/more.o", "o\n");
    fx.write(&wt, "run.log", "l\n");
    fx.write(&wt, "src/deep/trace.log", "l\n");
    fx.write(&wt, "fresh/inner.log", "l\n");
    fx.write(&wt, "fresh/kept.txt", "k\n");
    assert_eq!(status(&wt).untracked, ["fresh/kept.txt"]);
}

#[test]
fn the_status_document_is_exempt_untracked_or_tracked() {
    let (fx, wt) = scene();
    fx.write(&wt, EXEMPT, "# STATUS\n");
    assert_eq!(status(&wt), WorktreeStatus::default());
    git(&wt, &["add", EXEMPT]);
    git(&wt, &["commit", "-q", "-m", "status"]);
    fx.write(&wt, EXEMPT, "# STATUS, edited\n");
    assert_eq!(status(&wt), WorktreeStatus::default());
}

/// An edit in the same second as the index write, same size, and stat data the index holds:
/// only the content can tell, and it must be read.
#[test]
fn a_racily_clean_entry_is_checked_by_content() {
    let (fx, wt) = scene();
    fx.write(&wt, "src/a.txt", "ALPHA\n"); // same size as "alpha\n"
    record_stat_as(&fx, &wt, "src/a.txt", "alpha\n");
    assert_eq!(git_status(&wt), dirty(&["src/a.txt"]));
    assert_eq!(status(&wt), dirty(&["src/a.txt"]));
    // The same race with unchanged content is clean.
    fx.write(&wt, "src/b.txt", "beta\n");
    record_stat_as(&fx, &wt, "src/b.txt", "beta\n");
    assert_eq!(status(&wt), dirty(&["src/a.txt"]));
}

/// Write the index entry of `rel` with the file's stat data but the blob of `content`, as git
/// would have recorded it just before an edit within the index's own timestamp: the file's mtime
/// is not older than the index file's.
fn record_stat_as(fx: &Fixture, wt: &Path, rel: &str, content: &str) {
    use std::os::unix::fs::MetadataExt;
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    let file = std::fs::File::options()
        .write(true)
        .open(wt.join(rel))
        .unwrap();
    file.set_modified(later).unwrap();
    let repo = git2::Repository::open(wt).unwrap();
    let mut index = repo.index().unwrap();
    let meta = std::fs::symlink_metadata(wt.join(rel)).unwrap();
    let id = fx.repo.blob(content.as_bytes()).unwrap();
    let time = |s: i64, ns: i64| git2::IndexTime::new(s as i32, ns as u32);
    index
        .add(&git2::IndexEntry {
            ctime: time(meta.ctime(), meta.ctime_nsec()),
            mtime: time(meta.mtime(), meta.mtime_nsec()),
            dev: meta.dev() as u32,
            ino: meta.ino() as u32,
            mode: 0o100644,
            uid: meta.uid(),
            gid: meta.gid(),
            file_size: meta.size() as u32,
            id,
            flags: rel.len() as u16,
            flags_extended: 0,
            path: rel.as_bytes().to_vec(),
        })
        .unwrap();
    index.write().unwrap();
}

/// `git status --porcelain --untracked-files=all --no-renames`, split into dirty and untracked.
fn git_status(wt: &Path) -> WorktreeStatus {
    let out = git(
        wt,
        &[
            "status",
            "--porcelain",
            "--untracked-files=all",
            "--no-renames",
        ],
    );
    let mut status = WorktreeStatus::default();
    for line in out.lines() {
        let (code, path) = line.split_at(3);
        if path == EXEMPT {
            continue;
        }
        match code {
            "?? " => status.untracked.push(path.to_string()),
            "!! " => {}
            _ => status.dirty.push(path.to_string()),
        }
    }
    status
}

/// Every kind of change at once, then the same with an index git wrote as version 4 and with a
/// setting that hands the scan to libgit2's general status.
fn mixed(fx: &Fixture, wt: &Path) {
    fx.write(wt, "src/a.txt", "edited\n");
    fx.write(wt, "docs/d.txt", "staged edit\n");
    fx.write(wt, "docs/new.txt", "staged add\n");
    git(wt, &["add", "docs/d.txt", "docs/new.txt"]);
    std::fs::remove_file(wt.join("src/b.txt")).unwrap();
    std::fs::set_permissions(
        wt.join("src/deep/c.txt"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    fx.write(wt, "fresh/one.txt", "1\n");
    fx.write(wt, "fresh/two/three.txt", "3\n");
    fx.write(wt, "build/x.o", "o\n");
    fx.write(wt, "fresh/x.log", "l\n");
    fx.write(wt, EXEMPT, "# STATUS\n");
}

#[test]
fn the_scan_agrees_with_git_status() {
    let (fx, wt) = scene();
    mixed(&fx, &wt);
    let expected = git_status(&wt);
    assert_eq!(expected.dirty.len(), 5, "{expected:?}");
    assert_eq!(status(&wt), expected);
}

#[test]
fn the_scan_agrees_with_git_status_on_an_index_v4() {
    let (fx, wt) = scene();
    git(&wt, &["update-index", "--index-version", "4"]);
    mixed(&fx, &wt);
    assert_eq!(status(&wt), git_status(&wt));
}

/// Past the size where the scan lstats on two threads (300 entries): the same answers.
#[test]
fn the_scan_agrees_with_git_status_on_a_larger_index() {
    let fx = Fixture::new();
    let files: Vec<(String, String)> = (0..400)
        .map(|i| (format!("many/m{:02}/f{i}.txt", i / 10), format!("{i}\n")))
        .collect();
    let mut all: Vec<(&str, Option<&str>)> = files
        .iter()
        .map(|(path, text)| (path.as_str(), Some(text.as_str())))
        .collect();
    all.extend([
        (".gitignore", Some("*.log\nbuild/\n")),
        ("src/a.txt", Some("alpha\n")),
        ("src/b.txt", Some("beta\n")),
        ("src/deep/c.txt", Some("gamma\n")),
        ("docs/d.txt", Some("delta\n")),
    ]);
    fx.commit("agent/x", &all, "many files");
    let wt = fx.worktree("x", "agent/x");
    age(&wt);
    assert_eq!(status(&wt), WorktreeStatus::default());
    mixed(&fx, &wt);
    fx.write(&wt, "many/m07/f70.txt", "edited\n");
    std::fs::remove_file(wt.join("many/m39/f399.txt")).unwrap();
    fx.write(&wt, "many/m20/new.txt", "new\n");
    let expected = git_status(&wt);
    assert_eq!(expected.dirty.len(), 7, "{expected:?}");
    assert_eq!(status(&wt), expected);
}

#[test]
fn libgit2s_general_status_agrees_with_git_status() {
    let (fx, wt) = scene();
    git(&wt, &["config", "core.symlinks", "false"]);
    mixed(&fx, &wt);
    assert_eq!(status(&wt), git_status(&wt));
}

/// A parentless commit holding exactly `files` (path, mode, content; a gitlink's content is
/// the commit id it records), for diffs where modes matter.
fn commit_with_modes(fx: &Fixture, files: &[(&str, u32, &str)]) -> Oid {
    let repo = &fx.repo;
    let mut index = git2::Index::new().unwrap();
    for (path, mode, content) in files {
        let id = match mode {
            0o160000 => Oid::from_str(content).unwrap(),
            _ => repo.blob(content.as_bytes()).unwrap(),
        };
        let entry = git2::IndexEntry {
            ctime: git2::IndexTime::new(0, 0),
            mtime: git2::IndexTime::new(0, 0),
            dev: 0,
            ino: 0,
            mode: *mode,
            uid: 0,
            gid: 0,
            file_size: 0,
            id,
            flags: path.len() as u16,
            flags_extended: 0,
            path: path.as_bytes().to_vec(),
        };
        index.add(&entry).unwrap();
    }
    let tree = repo.find_tree(index.write_tree_to(repo).unwrap()).unwrap();
    let sig = git2::Signature::new("A", "a@example.com", &git2::Time::new(0, 0)).unwrap();
    repo.commit(None, &sig, &sig, "modes", &tree, &[]).unwrap()
}

/// `Repo::changes` builds the changes from its own walk when rename detection cannot pair
/// anything; it must give exactly what libgit2's diff gives (kinds, paths, order), and what git
/// gives. The names sort differently by bytes and in git's tree order (`a-b`, `a.txt`, `a/`).
#[test]
fn changes_without_renames_agree_with_libgit2_and_git() {
    const FILE: u32 = 0o100644;
    const EXEC: u32 = 0o100755;
    const LINK: u32 = 0o120000;
    const SUBMODULE: u32 = 0o160000;
    let one = "1111111111111111111111111111111111111111";
    let two = "2222222222222222222222222222222222222222";
    let fx = Fixture::new();
    let base = commit_with_modes(
        &fx,
        &[
            ("a-b", FILE, "dash\n"),
            ("a.txt", FILE, "dot\n"),
            ("a/x.txt", FILE, "x\n"),
            ("a/b/c.txt", FILE, "c\n"),
            ("run.sh", FILE, "echo\n"),
            ("link", LINK, "a.txt"),
            ("tool", FILE, "file then link\n"),
            ("vendor/lib", SUBMODULE, one),
            ("same/s.txt", FILE, "same\n"),
        ],
    );
    // Modifications, a mode-only change, a submodule moved: no source, no target.
    let modified = commit_with_modes(
        &fx,
        &[
            ("a-b", FILE, "dash 2\n"),
            ("a.txt", FILE, "dot 2\n"),
            ("a/x.txt", FILE, "x 2\n"),
            ("a/b/c.txt", FILE, "c 2\n"),
            ("run.sh", EXEC, "echo\n"),
            ("link", LINK, "a-b"),
            ("tool", FILE, "file then link\n"),
            ("vendor/lib", SUBMODULE, two),
            ("same/s.txt", FILE, "same\n"),
        ],
    );
    // Additions beside modifications: targets only.
    let added = commit_with_modes(
        &fx,
        &[
            ("a-b", FILE, "dash\n"),
            ("a.txt", FILE, "dot 2\n"),
            ("a/x.txt", FILE, "x\n"),
            ("a/b/c.txt", FILE, "c\n"),
            ("a/b/new.txt", FILE, "new\n"),
            ("a0", FILE, "new\n"),
            ("run.sh", FILE, "echo\n"),
            ("link", LINK, "a.txt"),
            ("tool", FILE, "file then link\n"),
            ("vendor/lib", SUBMODULE, one),
            ("same/s.txt", FILE, "same\n"),
        ],
    );
    // Deletions (a whole folder too) beside a modification: sources only.
    let deleted = commit_with_modes(
        &fx,
        &[
            ("a-b", FILE, "dash\n"),
            ("a.txt", FILE, "dot 2\n"),
            ("run.sh", FILE, "echo\n"),
            ("tool", FILE, "file then link\n"),
            ("same/s.txt", FILE, "same\n"),
        ],
    );
    // A file that became a symlink, and a folder that became a file: libgit2 decides these.
    let retyped = commit_with_modes(
        &fx,
        &[
            ("a-b", FILE, "dash\n"),
            ("a.txt", FILE, "dot\n"),
            ("a", FILE, "x\n"),
            ("run.sh", FILE, "echo\n"),
            ("link", LINK, "a.txt"),
            ("tool", LINK, "run.sh"),
            ("vendor/lib", SUBMODULE, one),
            ("same/s.txt", FILE, "same\n"),
        ],
    );
    let repo = Repo::discover(&fx.root()).unwrap();
    let pairs = [
        (Some(base), modified),
        (Some(base), added),
        (Some(base), deleted),
        (Some(base), retyped),
        (Some(modified), base),
        (None, base),
        (Some(base), base),
    ];
    let text = |changes: Vec<closegate::repo::Change>| change_lines(&changes);
    for (from, to) in pairs {
        let ours = text(repo.changes(from, to).unwrap());
        let libgit2 = text(repo.changes_by_libgit2(from, to).unwrap());
        assert_eq!(ours, libgit2, "{from:?} -> {to:?}");
        if let Some(from) = from {
            let mut sorted = ours.clone();
            sorted.sort();
            assert_eq!(sorted, git_changes(&fx.root(), from, to), "{from} -> {to}");
        }
    }
    let mode_only = text(repo.changes(Some(base), modified).unwrap());
    assert!(mode_only.contains(&"modified run.sh".to_string()));
    assert!(mode_only.contains(&"modified vendor/lib".to_string()));
}

/// A worktree fresh from `git worktree add` (every entry racily clean, issue 28): its content is
/// hashed by the scan itself, and a same-size edit among hundreds of untouched files is found.
#[test]
fn a_fresh_worktree_is_judged_by_content_without_libgit2_per_file() {
    let fx = Fixture::new();
    let files: Vec<(String, Option<String>)> = (0..600)
        .map(|i| (format!("d{}/f{i}.txt", i % 7), Some(format!("file {i}\n"))))
        .collect();
    let refs: Vec<(&str, Option<&str>)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_deref()))
        .collect();
    fx.commit("agent/x", &refs, "many files");
    let wt = fx.worktree("x", "agent/x");
    assert_eq!(status(&wt), WorktreeStatus::default());
    fx.write(&wt, "d3/f10.txt", "FILE 10\n");
    record_stat_as(&fx, &wt, "d3/f10.txt", "file 10\n");
    assert_eq!(git_status(&wt), dirty(&["d3/f10.txt"]));
    assert_eq!(status(&wt), dirty(&["d3/f10.txt"]));
}

/// Bytes that differ from the blob are not a change when `core.autocrlf` makes git see them as
/// equal: the hashed verdict defers to libgit2 (which applies the conversion) there.
#[test]
fn a_racy_entry_under_autocrlf_is_judged_with_the_conversion() {
    let (fx, wt) = scene();
    git(&wt, &["config", "core.autocrlf", "true"]);
    fx.write(&wt, "src/a.txt", "alpha\r\n");
    record_stat_as(&fx, &wt, "src/a.txt", "alpha\n");
    assert_eq!(git_status(&wt), WorktreeStatus::default());
    assert_eq!(status(&wt), WorktreeStatus::default());
}

/// Make every entry of `wt`'s index racily clean, as in a worktree whose checkout took under a
/// second: the index file's mtime set back before every file's, so no stat data is trusted.
fn make_racy(wt: &Path) {
    let index = git(
        wt,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
    );
    let past = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
    let file = std::fs::File::options()
        .write(true)
        .open(index.trim())
        .unwrap();
    file.set_modified(past).unwrap();
}

/// The hashed racy path (issue 28) opens each file without following symlinks: a symlink put in
/// place of a racily clean file, pointing at a file with the blob's very bytes, is a change.
#[test]
fn a_racy_file_turned_symlink_to_identical_bytes_is_dirty() {
    let (fx, wt) = scene();
    let outside = fx.tmp.path().join("beta-copy.txt");
    std::fs::write(&outside, "beta\n").unwrap();
    std::fs::remove_file(wt.join("src/b.txt")).unwrap();
    std::os::unix::fs::symlink(&outside, wt.join("src/b.txt")).unwrap();
    make_racy(&wt);
    assert_eq!(status(&wt), dirty(&["src/b.txt"]));
    assert_eq!(git_status(&wt), dirty(&["src/b.txt"]));
}

/// A FIFO in place of a racily clean file: opened without blocking, judged by its kind.
#[test]
fn a_racy_file_turned_fifo_is_dirty_without_blocking() {
    let (_fx, wt) = scene();
    std::fs::remove_file(wt.join("src/b.txt")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(wt.join("src/b.txt"))
        .status()
        .unwrap();
    assert!(made.success());
    make_racy(&wt);
    assert_eq!(status(&wt), dirty(&["src/b.txt"]));
}

/// The executable bit turned on a racily clean file whose bytes are unchanged: the mode, taken
/// from the open file, is a change.
#[test]
fn a_racy_mode_change_with_identical_bytes_is_dirty() {
    let (_fx, wt) = scene();
    let path = wt.join("src/a.txt");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    make_racy(&wt);
    assert_eq!(status(&wt), dirty(&["src/a.txt"]));
    assert_eq!(git_status(&wt), dirty(&["src/a.txt"]));
}

/// A racily clean file edited to another size is a change without being read (the size
/// shortcut), and a racily clean entry whose recorded size is 0 — git writes 0 when it has not
/// read the file (`read-tree`) or smudges a racy entry — is read, not taken for a change.
#[test]
fn a_racy_size_change_is_dirty_and_a_zero_recorded_size_is_read() {
    let (fx, wt) = scene();
    git(&wt, &["read-tree", "HEAD"]); // every entry's stat data zeroed, sizes 0
    make_racy(&wt);
    assert_eq!(status(&wt), WorktreeStatus::default());
    git(&wt, &["update-index", "--really-refresh"]); // the sizes recorded again
    fx.write(&wt, "docs/d.txt", "a longer delta\n");
    make_racy(&wt);
    assert_eq!(status(&wt), dirty(&["docs/d.txt"]));
    assert_eq!(git_status(&wt), dirty(&["docs/d.txt"]));
}

/// Under `core.autocrlf` a racily clean file of another size (CRLF endings) is not judged by
/// its bytes (the size shortcut defers to libgit2 there, as the hash does), and the verdict is
/// git's: a recorded size that differs is a change to git too, conversion or not.
#[test]
fn a_racy_size_change_under_autocrlf_agrees_with_git() {
    let (fx, wt) = scene();
    git(&wt, &["config", "core.autocrlf", "true"]);
    fx.write(&wt, "src/a.txt", "alpha\r\n");
    make_racy(&wt);
    assert_eq!(status(&wt), dirty(&["src/a.txt"]));
    assert_eq!(git_status(&wt), dirty(&["src/a.txt"]));
}
