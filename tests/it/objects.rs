//! `Repo::changes` reads only the subtrees that differ, the agent's loose trees itself and
//! everything else through libgit2 (src/repo/objects.rs). Whatever mix of loose and packed
//! objects a repository holds, the changes and path lookups must be git's.

use std::io::Write;

use closegate::repo::Repo;
use flate2::Compression;
use flate2::write::ZlibEncoder;
use git2::Oid;

use crate::fixture::{Fixture, change_lines, git, git_changes};

/// A base on `main` and an agent commit on `agent/x` that edits, adds, deletes (a whole folder
/// too), renames, turns a folder into a file and a file into a folder.
fn scene(fx: &Fixture) -> (Oid, Oid) {
    const LONG: &str = "a line long enough to be recognised after a move\n";
    let base = fx.commit(
        "main",
        &[
            ("keep/same.txt", Some("same\n")),
            ("keep/deep/same.txt", Some("same\n")),
            ("mod/file.txt", Some("one\n")),
            ("gone/a.txt", Some("a\n")),
            ("gone/sub/b.txt", Some("b\n")),
            ("was_dir/inner.txt", Some("inner\n")),
            ("was_file", Some("a file\n")),
            ("moved/long.txt", Some(LONG)),
        ],
        "base",
    );
    let tip = fx.commit(
        "agent/x",
        &[
            ("mod/file.txt", Some("two\n")),
            ("gone/a.txt", None),
            ("gone/sub/b.txt", None),
            ("was_dir/inner.txt", None),
            ("was_dir", Some("now a file\n")),
            ("was_file", None),
            ("was_file/inside.txt", Some("now a folder\n")),
            ("added/x/y.txt", Some("y\n")),
            ("moved/long.txt", None),
            ("elsewhere/long.txt", Some(LONG)),
        ],
        "agent",
    );
    (base, tip)
}

fn our_changes(fx: &Fixture, from: Oid, to: Oid) -> Vec<String> {
    let repo = Repo::discover(&fx.root()).unwrap();
    let mut lines = change_lines(&repo.changes(Some(from), to).unwrap());
    lines.sort();
    lines
}

/// Every path lookup the gates make, against `git rev-parse <commit>:<path>`.
fn assert_lookups_agree(fx: &Fixture, commit: Oid) {
    let repo = Repo::discover(&fx.root()).unwrap();
    for path in [
        "keep/same.txt",
        "keep/deep",
        "keep/deep/",
        "mod/file.txt",
        "was_dir",
        "was_file/inside.txt",
        "added/x/y.txt",
        "gone/a.txt",
        "keep/same.txt/below",
        "nothing/here",
    ] {
        let spec = format!("{commit}:{}", path.trim_end_matches('/'));
        let out = crate::fixture::git_output(&fx.root(), &["rev-parse", "--verify", "-q", &spec]);
        let theirs = out.status.success().then(|| {
            let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
            let kind = git(&fx.root(), &["cat-file", "-t", &id]);
            (id, kind.trim() == "tree")
        });
        let ours = repo
            .tree_entry(commit, path)
            .map(|(id, is_dir)| (id.to_string(), is_dir));
        assert_eq!(ours, theirs, "{path} in {commit}");
    }
    let blob = repo
        .read_blob(commit, "mod/file.txt")
        .map(String::from_utf8);
    let theirs = git(&fx.root(), &["show", &format!("{commit}:mod/file.txt")]);
    assert_eq!(blob, Some(Ok(theirs)));
    assert_eq!(
        repo.read_blob(commit, "keep/deep"),
        None,
        "a folder is no blob"
    );
}

/// As after a gc: every object in one pack, none loose.
fn pack_everything(fx: &Fixture) {
    git(&fx.root(), &["repack", "-adq"]);
    git(&fx.root(), &["prune-packed"]);
    let loose = git(&fx.root(), &["count-objects"]);
    assert!(loose.starts_with("0 objects"), "{loose}");
}

#[test]
fn loose_objects_give_gits_changes_and_lookups() {
    let fx = Fixture::new();
    let (base, tip) = scene(&fx);
    assert_eq!(
        our_changes(&fx, base, tip),
        git_changes(&fx.root(), base, tip)
    );
    assert!(our_changes(&fx, tip, tip).is_empty());
    assert_lookups_agree(&fx, tip);
    assert_lookups_agree(&fx, base);
}

#[test]
fn packed_objects_give_gits_changes_and_lookups() {
    let fx = Fixture::new();
    let (base, tip) = scene(&fx);
    pack_everything(&fx);
    assert_eq!(
        our_changes(&fx, base, tip),
        git_changes(&fx.root(), base, tip)
    );
    assert_lookups_agree(&fx, tip);
}

/// The usual shape: the base packed by a gc, the agent's commit loose, and a loose commit whose
/// unchanged trees are packed (the lookup guesses loose, misses and asks libgit2).
#[test]
fn a_mix_of_packed_and_loose_objects_gives_gits_changes_and_lookups() {
    let fx = Fixture::new();
    let (base, _) = scene(&fx);
    pack_everything(&fx);
    let tip = fx.commit("agent/x", &[("mod/file.txt", Some("three\n"))], "more");
    assert_eq!(
        our_changes(&fx, base, tip),
        git_changes(&fx.root(), base, tip)
    );
    assert_lookups_agree(&fx, tip);
}

/// A corrupt loose tree (not zlib, or zlib around entries that do not parse) is an error from
/// the diff that names the tree, never a panic or a silent "no changes".
#[test]
fn a_corrupt_loose_tree_is_an_error() {
    let deflated = |text: &[u8]| {
        let mut enc = ZlibEncoder::new(Vec::new(), Compression::fast());
        enc.write_all(text).unwrap();
        enc.finish().unwrap()
    };
    for bytes in [b"not a zlib stream".to_vec(), deflated(b"tree 5\0hello")] {
        let fx = Fixture::new();
        let (base, tip) = scene(&fx);
        let tree = fx.repo.find_commit(tip).unwrap().tree_id().to_string();
        let path = fx
            .git_dir()
            .join("objects")
            .join(&tree[..2])
            .join(&tree[2..]);
        let mut perms = std::fs::metadata(&path).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(&path, perms).unwrap();
        std::fs::write(&path, bytes).unwrap();
        let repo = Repo::discover(&fx.root()).unwrap();
        let err = repo.changes(Some(base), tip).unwrap_err();
        assert!(format!("{err:#}").contains(&tree), "{err:#}");
        assert_eq!(repo.tree_entry(tip, "mod/file.txt"), None);
    }
}
