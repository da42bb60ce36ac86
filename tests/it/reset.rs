//! The warm-workspace reset against a previous run that was the agent's code (SPEC §19; issue
//! 24, items 1–3), on real repositories and the real file system.
//!
//! Attacks, each a test below:
//! - the agent commits a kept path as a symbolic link out of the workspace (or its check plants
//!   one); the next commit tracks a file under that path: the reset wrote through the link;
//! - a tree entry named `..` (or `.git`, `.`, holding `\`): the reset created files outside the
//!   workspace; a pristine checkout must refuse it too;
//! - a tracked golden file under a kept path, rewritten by one run, survived into the next;
//! - a path the previous commit tracked under a kept path, dropped by this commit, survived;
//! - a kept build output dated in the future looks fresher than the sources the reset writes.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid, Repository};

use crate::fixture::Fixture;

/// One entry of a tree to build: path, mode, content (a blob, or a link target).
type Spec<'a> = (&'a str, i32, &'a [u8]);

/// A tree from `files` (nested paths allowed), written with git2's tree builder.
fn tree(repo: &Repository, files: &[Spec]) -> Oid {
    let mut here: Vec<(String, i32, Oid)> = Vec::new();
    let mut subdirs: std::collections::BTreeMap<String, Vec<(String, i32, Vec<u8>)>> =
        Default::default();
    for (path, mode, content) in files {
        match path.split_once('/') {
            Some((dir, rest)) => subdirs.entry(dir.to_string()).or_default().push((
                rest.to_string(),
                *mode,
                content.to_vec(),
            )),
            None => here.push((path.to_string(), *mode, repo.blob(content).unwrap())),
        }
    }
    let mut builder = repo.treebuilder(None).unwrap();
    for (name, mode, id) in here {
        builder.insert(name, id, mode).unwrap();
    }
    for (dir, entries) in subdirs {
        let specs: Vec<Spec> = entries
            .iter()
            .map(|(p, m, c)| (p.as_str(), *m, c.as_slice()))
            .collect();
        builder.insert(dir, tree(repo, &specs), 0o040000).unwrap();
    }
    builder.write().unwrap()
}

fn commit_tree(repo: &Repository, tree_id: Oid) -> Oid {
    let sig =
        git2::Signature::new("A", "a@example.com", &git2::Time::new(1_700_000_000, 0)).unwrap();
    let tree = repo.find_tree(tree_id).unwrap();
    repo.commit(None, &sig, &sig, "c", &tree, &[]).unwrap()
}

fn commit(repo: &Repository, files: &[Spec]) -> Oid {
    commit_tree(repo, tree(repo, files))
}

/// A raw tree object from (mode, name, id) entries as given (git's own tools refuse such names).
fn raw_tree(repo: &Repository, entries: &[(&str, &[u8], Oid)]) -> Oid {
    let mut bytes = Vec::new();
    for (mode, name, id) in entries {
        bytes.extend_from_slice(mode.as_bytes());
        bytes.push(b' ');
        bytes.extend_from_slice(name);
        bytes.push(0);
        bytes.extend_from_slice(id.as_bytes());
    }
    repo.odb().unwrap().write(ObjectType::Tree, &bytes).unwrap()
}

struct Ws {
    fx: Fixture,
    repo: closegate::repo::Repo,
    /// `<tmp>/ws/work/checkout`: two levels below `outside`.
    checkout: PathBuf,
    /// `<tmp>/ws`, a directory outside the workspace the attacks aim at.
    outside: PathBuf,
}

impl Ws {
    fn new() -> Ws {
        let fx = Fixture::new();
        let outside = fx.tmp.path().join("ws");
        std::fs::create_dir_all(outside.join("work")).unwrap();
        let checkout = outside.join("work/checkout");
        let repo = closegate::repo::Repo::discover(&fx.root()).unwrap();
        Ws {
            fx,
            repo,
            checkout,
            outside,
        }
    }

    fn reset(&self, commit: Oid, keep: &[&str]) -> anyhow::Result<()> {
        let keep: Vec<String> = keep.iter().map(|k| k.to_string()).collect();
        self.repo.reset_workspace(commit, &self.checkout, &keep)
    }

    /// Every path under `outside` that is not in the checkout.
    fn outside_files(&self) -> Vec<PathBuf> {
        walkdir::WalkDir::new(&self.outside)
            .follow_links(false)
            .into_iter()
            .flatten()
            .map(|e| e.path().to_path_buf())
            .filter(|p| !p.starts_with(&self.checkout) && !p.starts_with(memo(&self.checkout)))
            .filter(|p| p != &self.outside && p != &self.outside.join("work"))
            .collect()
    }
}

fn memo(checkout: &Path) -> PathBuf {
    checkout.with_file_name("checkout.tree")
}

const FILE: i32 = 0o100644;
const EXEC: i32 = 0o100755;
const LINK: i32 = 0o120000;

#[test]
fn a_kept_path_committed_as_a_link_is_never_written_through() {
    let w = Ws::new();
    let git = &w.fx.repo;
    // The link from checkout/cache reaches <tmp>/ws, outside the workspace.
    let a = commit(git, &[("cache", LINK, b"../.."), ("a.txt", FILE, b"a\n")]);
    let b = commit(
        git,
        &[
            ("cache/post-checkout", EXEC, b"#!/bin/sh\necho pwned\n"),
            ("a.txt", FILE, b"a\n"),
        ],
    );
    w.reset(a, &["cache"]).unwrap();
    assert!(
        w.checkout
            .join("cache")
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink()
    );
    w.reset(b, &["cache"]).unwrap();
    assert!(
        !w.outside.join("post-checkout").exists(),
        "written through the link"
    );
    assert_eq!(w.outside_files(), Vec::<PathBuf>::new());
    let meta = w.checkout.join("cache").symlink_metadata().unwrap();
    assert!(meta.is_dir(), "the tracked directory replaced the link");
    assert_eq!(
        std::fs::read_to_string(w.checkout.join("cache/post-checkout")).unwrap(),
        "#!/bin/sh\necho pwned\n"
    );
}

#[test]
fn a_link_the_check_planted_at_a_kept_path_is_never_written_through() {
    let w = Ws::new();
    let git = &w.fx.repo;
    let a = commit(git, &[("a.txt", FILE, b"a\n")]);
    let b = commit(
        git,
        &[
            ("a.txt", FILE, b"a\n"),
            ("cache/hook", EXEC, b"#!/bin/sh\n"),
        ],
    );
    w.reset(a, &["cache"]).unwrap();
    // The check's code plants the link (an untracked kept path).
    std::os::unix::fs::symlink("../..", w.checkout.join("cache")).unwrap();
    // A link below a tracked directory too.
    std::fs::create_dir(w.checkout.join("sub")).unwrap();
    w.reset(b, &["cache"]).unwrap();
    assert!(!w.outside.join("hook").exists());
    assert_eq!(w.outside_files(), Vec::<PathBuf>::new());
    assert!(
        w.checkout
            .join("cache")
            .symlink_metadata()
            .unwrap()
            .is_dir()
    );
    // Untracked and kept, a planted link stays a link and nothing is reached through it.
    w.reset(a, &["cache"]).unwrap();
    assert!(
        !w.checkout.join("cache").exists(),
        "the dropped tracked path was removed"
    );
    std::os::unix::fs::symlink("../..", w.checkout.join("cache")).unwrap();
    w.reset(a, &["cache"]).unwrap();
    assert!(
        w.checkout
            .join("cache")
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(w.outside_files(), Vec::<PathBuf>::new());
}

#[test]
fn a_tracked_directory_swapped_for_a_link_is_replaced_not_followed() {
    let w = Ws::new();
    let git = &w.fx.repo;
    let a = commit(git, &[("src/a.txt", FILE, b"a\n")]);
    let b = commit(
        git,
        &[("src/a.txt", FILE, b"a\n"), ("src/b.txt", FILE, b"b\n")],
    );
    w.reset(a, &[]).unwrap();
    std::fs::remove_dir_all(w.checkout.join("src")).unwrap();
    std::os::unix::fs::symlink("../..", w.checkout.join("src")).unwrap();
    w.reset(b, &[]).unwrap();
    assert_eq!(w.outside_files(), Vec::<PathBuf>::new());
    assert!(w.checkout.join("src").symlink_metadata().unwrap().is_dir());
    assert_eq!(
        std::fs::read_to_string(w.checkout.join("src/b.txt")).unwrap(),
        "b\n"
    );
}

#[test]
fn a_tree_entry_named_dot_dot_is_an_error_before_anything_is_written() {
    for bad in [&b".."[..], b".", b".git", b".GIT", b".Git", b"a\\b"] {
        let w = Ws::new();
        let git = &w.fx.repo;
        let good = commit(git, &[("a.txt", FILE, b"a\n")]);
        w.reset(good, &[]).unwrap();
        let before: Vec<_> = walkdir::WalkDir::new(&w.checkout)
            .sort_by_file_name()
            .into_iter()
            .flatten()
            .filter(|e| !e.path().starts_with(w.checkout.join(".git")))
            .map(|e| (e.path().to_path_buf(), e.metadata().unwrap().mtime_nsec()))
            .collect();
        let pwned = git.blob(b"pwned\n").unwrap();
        let inner = raw_tree(git, &[("100644", b"pwned.txt", pwned)]);
        let a = git.blob(b"changed\n").unwrap();
        // `a.txt` sorts after `..` and `.git`: the good entry comes later in the tree.
        let outer = raw_tree(git, &[("40000", bad, inner), ("100644", b"a.txt", a)]);
        let evil = commit_tree(git, outer);
        let err = format!("{:#}", w.reset(evil, &[]).unwrap_err());
        let shown = String::from_utf8_lossy(bad).into_owned();
        assert!(err.contains(&format!("`{shown}`")), "{shown}: {err}");
        assert_eq!(w.outside_files(), Vec::<PathBuf>::new(), "{shown}");
        let after: Vec<_> = walkdir::WalkDir::new(&w.checkout)
            .sort_by_file_name()
            .into_iter()
            .flatten()
            .filter(|e| !e.path().starts_with(w.checkout.join(".git")))
            .map(|e| (e.path().to_path_buf(), e.metadata().unwrap().mtime_nsec()))
            .collect();
        assert_eq!(before, after, "{shown}: the reset wrote before refusing");
        // The pristine checkout refuses it the same way.
        let dir = w.fx.tmp.path().join("pristine");
        let err = format!("{:#}", w.repo.checkout_pristine(evil, &dir).unwrap_err());
        assert!(err.contains(&format!("`{shown}`")), "{shown}: {err}");
        assert!(!dir.join("a.txt").exists());
    }
}

#[test]
fn a_tracked_file_under_a_kept_path_is_reset_and_untracked_outputs_kept() {
    let w = Ws::new();
    let git = &w.fx.repo;
    let a = commit(
        git,
        &[
            ("cache/expected.txt", FILE, b"golden\n"),
            ("cache/old.txt", FILE, b"old\n"),
        ],
    );
    let b = commit(git, &[("cache/expected.txt", FILE, b"golden\n")]);
    w.reset(a, &["cache"]).unwrap();
    // One run rewrites the golden file and leaves a build output.
    std::fs::write(w.checkout.join("cache/expected.txt"), "gutted\n").unwrap();
    std::fs::write(w.checkout.join("cache/build.o"), "output\n").unwrap();
    std::fs::set_permissions(
        w.checkout.join("cache/old.txt"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    w.reset(b, &["cache"]).unwrap();
    assert_eq!(
        std::fs::read_to_string(w.checkout.join("cache/expected.txt")).unwrap(),
        "golden\n"
    );
    assert_eq!(
        std::fs::read_to_string(w.checkout.join("cache/build.o")).unwrap(),
        "output\n"
    );
    assert!(
        !w.checkout.join("cache/old.txt").exists(),
        "a path the previous reset wrote and this commit drops survived under a kept path"
    );
}

#[test]
fn written_files_are_later_than_every_kept_mtime_and_future_kept_entries_are_dated_back() {
    let w = Ws::new();
    let git = &w.fx.repo;
    let a = commit(git, &[("src/main.c", FILE, b"one\n")]);
    let b = commit(git, &[("src/main.c", FILE, b"two\n")]);
    w.reset(a, &["target"]).unwrap();
    std::fs::create_dir_all(w.checkout.join("target/deep")).unwrap();
    let out = w.checkout.join("target/deep/main.o");
    std::fs::write(&out, "built\n").unwrap();
    // The check dates its output a day into the future.
    let future = std::time::SystemTime::now() + std::time::Duration::from_secs(86_400);
    std::fs::File::options()
        .write(true)
        .open(&out)
        .unwrap()
        .set_modified(future)
        .unwrap();
    w.reset(b, &["target"]).unwrap();
    let kept = std::fs::metadata(&out).unwrap().modified().unwrap();
    let written = std::fs::metadata(w.checkout.join("src/main.c"))
        .unwrap()
        .modified()
        .unwrap();
    assert!(kept < future, "the future-dated output was not dated back");
    assert!(
        written > kept,
        "the source the reset wrote is not later than the kept output"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "built\n");
}

#[test]
fn an_unchanged_tracked_file_keeps_its_mtime_and_a_changed_mode_is_reset() {
    let w = Ws::new();
    let git = &w.fx.repo;
    let a = commit(
        git,
        &[
            ("same.txt", FILE, b"same\n"),
            ("run.sh", EXEC, b"#!/bin/sh\n"),
        ],
    );
    w.reset(a, &[]).unwrap();
    let before = std::fs::metadata(w.checkout.join("same.txt"))
        .unwrap()
        .mtime_nsec();
    std::fs::set_permissions(
        w.checkout.join("run.sh"),
        std::fs::Permissions::from_mode(0o4777),
    )
    .unwrap();
    w.reset(a, &[]).unwrap();
    let after = std::fs::metadata(w.checkout.join("same.txt"))
        .unwrap()
        .mtime_nsec();
    assert_eq!(before, after);
    let mode = std::fs::metadata(w.checkout.join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o755);
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config { cases: 64, ..Default::default() })]
    /// Hostile trees, links, modes and kept-path shapes never write outside the workspace (the
    /// `workspace_reset` fuzz target runs the same scenario).
    #[test]
    fn no_tree_and_no_planted_link_writes_outside_the_workspace(
        data in proptest::collection::vec(proptest::num::u8::ANY, 0..96)
    ) {
        let fx = Fixture::new();
        let repo = closegate::repo::Repo::discover(&fx.root()).unwrap();
        let scratch = fx.tmp.path().join("scratch");
        std::fs::create_dir(&scratch).unwrap();
        let outcome = closegate::repo::reset_fuzz::run(&repo, &scratch, &data);
        proptest::prop_assert!(outcome.is_ok(), "{:?}", outcome);
    }
}

/// `entries` (name, mode, id) as a raw tree in git's order (a directory sorts as `name/`).
fn sorted_raw_tree(repo: &Repository, mut entries: Vec<(Vec<u8>, &str, Oid)>) -> Oid {
    let key = |e: &(Vec<u8>, &str, Oid)| {
        let mut k = e.0.clone();
        if e.1 == "40000" {
            k.push(b'/');
        }
        k
    };
    entries.sort_by_key(key);
    let borrowed: Vec<(&str, &[u8], Oid)> = entries
        .iter()
        .map(|(n, m, id)| (*m, n.as_slice(), *id))
        .collect();
    raw_tree(repo, &borrowed)
}

#[test]
fn closegate_check_of_a_commit_with_a_dot_dot_entry_is_exit_2_naming_it() {
    for keep in ["", "keep = [\"target/\"]\n"] {
        let config =
            format!("[[checks]]\nname = \"smoke\"\nrun = \"true\"\ntimeout_s = 60\n{keep}");
        let (fx, _) = Fixture::with_agent(Some(&config));
        let git = &fx.repo;
        let main = git
            .find_reference("refs/heads/main")
            .unwrap()
            .peel_to_commit()
            .unwrap();
        let mut entries: Vec<(Vec<u8>, &str, Oid)> = main
            .tree()
            .unwrap()
            .iter()
            .map(|e| {
                let mode = if e.filemode() == 0o040000 {
                    "40000"
                } else {
                    "100644"
                };
                (e.name_bytes().to_vec(), mode, e.id())
            })
            .collect();
        let pwned = git.blob(b"pwned\n").unwrap();
        let inner = raw_tree(git, &[("100644", b"pwned.txt", pwned)]);
        entries.push((b"..".to_vec(), "40000", inner));
        let lib = git.blob(b"pub fn x() {}\n").unwrap();
        entries.push((b"lib.rs".to_vec(), "100644", lib));
        let work_tree = sorted_raw_tree(git, entries.clone());
        let sig =
            git2::Signature::new("A", "a@example.com", &git2::Time::new(1_700_000_000, 0)).unwrap();
        let work = git
            .commit(
                None,
                &sig,
                &sig,
                "work",
                &git.find_tree(work_tree).unwrap(),
                &[&main],
            )
            .unwrap();
        let sha = &work.to_string()[..12];
        let doc = crate::scene::StatusDoc::complete("x", "close-ok")
            .last_commit(sha, "add x")
            .artifacts(&["lib.rs"])
            .close(sha, "agent/x", "/nonexistent/wt/x")
            .render();
        entries.push((
            b"_EXEC_STATUS.md".to_vec(),
            "100644",
            git.blob(doc.as_bytes()).unwrap(),
        ));
        let status_tree = sorted_raw_tree(git, entries);
        let work_commit = git.find_commit(work).unwrap();
        let tip = git
            .commit(
                None,
                &sig,
                &sig,
                "status",
                &git.find_tree(status_tree).unwrap(),
                &[&work_commit],
            )
            .unwrap();
        git.reference("refs/heads/agent/x", tip, true, "evil")
            .unwrap();
        let out = crate::fixture::closegate(
            &fx.root(),
            &["check", "--rev", "agent/x", "--no-worktree", "--rerun"],
        );
        let (code, stdout, stderr) = crate::fixture::parts(&out);
        assert_eq!(code, 2, "keep {keep:?}: {stdout}{stderr}");
        assert!(stderr.contains("`..`"), "keep {keep:?}: {stderr}");
        assert!(!fx.tmp.path().join("pwned.txt").exists());
        assert!(!fx.git_dir().join("closegate/pwned.txt").exists());
        assert!(!fx.git_dir().join("closegate/work/smoke/pwned.txt").exists());
    }
}
