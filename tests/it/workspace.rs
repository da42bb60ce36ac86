//! Warm workspaces (SPEC §19, §27.2): a check with `keep` runs at
//! `$XDG_CACHE_HOME/closegate/<repository id>/checks/<name>/checkout`, reset exactly to each
//! commit — tracked files the commit's (content, mode, symlinks), everything else gone but the
//! kept paths, which hold what the base's own run (the base snapshot) left and nothing an
//! earlier run on an agent's code wrote.

use std::path::Path;

use crate::fixture::{closegate, parts};
use crate::teardown::{Scene, write_status};

/// A check `warm` keeping `target/` that writes what it sees to `<dir>/seen-<n>` (n = its run
/// number), then does its worst: an untracked file, a tracked file rewritten and made
/// executable, the executable made plain for git (owner x gone; group and other x left, which git
/// ignores), the symlink pointed elsewhere, and a build output in
/// `target/`.
fn config(dir: &Path) -> String {
    let d = dir.display();
    format!(
        "[[checks]]\nname = \"warm\"\nkeep = [\"target/\"]\ntimeout_s = 60\nwritable = ['{d}']\n\
         run = '''\nn=$(ls '{d}' | grep -c '^seen-'); n=$((n+1))\n\
         {{ find . -path ./.git -prune -o -print | LC_ALL=C sort; stat -c '%n %a' data.txt run.sh; \
         readlink link; cat data.txt; echo \"built:$(tr '\\n' , < target/built 2>/dev/null)\"; git status --porcelain; }} > '{d}/seen-'$n\n\
         echo junk > junk.txt; echo evil > data.txt; chmod 755 data.txt; chmod 611 run.sh\n\
         rm link; ln -s /etc link; mkdir -p target; echo $n >> target/built\n'''\n"
    )
}

fn seen(dir: &Path, n: usize) -> String {
    std::fs::read_to_string(dir.join(format!("seen-{n}"))).unwrap()
}

#[test]
fn the_workspace_is_reset_exactly_and_keeps_only_the_kept_paths() {
    let dir = tempfile::tempdir().unwrap();
    let s = Scene::honest_return_with(Some(&config(dir.path())));
    // The branch's first commit: data, an executable, a symlink and a file the next one drops.
    let files = [
        ("data.txt", Some("data\n")),
        ("gone.txt", Some("gone\n")),
        ("run.sh", Some("#!/bin/sh\n")),
    ];
    let first = s.fx.commit("agent/x", &files, "files");
    crate::fixture::git(&s.wt, &["checkout", "-q", "agent/x"]);
    crate::fixture::git(&s.wt, &["reset", "-q", "--hard", &first.to_string()]);
    std::fs::set_permissions(
        s.wt.join("run.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::os::unix::fs::symlink("data.txt", s.wt.join("link")).unwrap();
    crate::fixture::git(&s.wt, &["add", "-A", "run.sh", "link"]);
    crate::fixture::git(&s.wt, &["commit", "-q", "-m", "exec and link"]);
    let a = s.fx.repo.revparse_single("agent/x").unwrap().id();
    write_status(&s.wt, "x", "close-ok", a, "exec and link");
    let (code, out, err) = parts(&closegate(&s.wt, &["check", "--format", "json"]));
    assert!(code == 0 || code == 1, "{out}{err}");
    // The first check of the base: the base's own run builds the snapshot (seen-1), then the
    // agent's commit runs on it (seen-2).
    let base = seen(dir.path(), 1);
    assert!(
        base.contains("built:\n"),
        "the base run starts empty:\n{base}"
    );
    let one = seen(dir.path(), 2);
    assert!(one.contains("./gone.txt"), "{one}");
    assert!(
        one.contains("data.txt 644") && one.contains("run.sh 755"),
        "{one}"
    );
    assert!(
        one.contains("built:1,"),
        "the base snapshot's target/:\n{one}"
    );

    // The next commit drops gone.txt; the check must see exactly that commit plus target/ as the
    // base's run left it: the agent's earlier run wrote its own layer, which is gone.
    crate::fixture::git(&s.wt, &["rm", "-q", "gone.txt"]);
    crate::fixture::git(&s.wt, &["commit", "-q", "-m", "drop gone"]);
    let b = s.fx.repo.revparse_single("agent/x").unwrap().id();
    write_status(&s.wt, "x", "close-ok", b, "drop gone");
    let (code, out, err) = parts(&closegate(&s.wt, &["check", "--format", "json"]));
    assert!(code == 0 || code == 1, "{out}{err}");
    assert!(!dir.path().join("seen-4").exists(), "the base ran twice");
    let two = seen(dir.path(), 3);
    assert!(!two.contains("gone.txt"), "a dropped file survived:\n{two}");
    assert!(
        !two.contains("junk.txt"),
        "an untracked file survived:\n{two}"
    );
    assert!(two.contains("data.txt 644\nrun.sh 755\n"), "modes:\n{two}");
    assert!(
        two.contains("\ndata.txt\ndata\n"),
        "symlink or content:\n{two}"
    );
    assert!(
        two.contains("built:1,\n"),
        "target/ is not the base snapshot's alone:\n{two}"
    );
    assert!(!two.contains("evil"), "{two}");
    // The workspace's git sees the commit, clean but for the kept target/.
    let status: Vec<_> = two
        .lines()
        .filter(|l| l.starts_with("?? ") || l.starts_with(" M"))
        .collect();
    assert!(status.iter().all(|l| l.contains("target")), "{status:?}");
    // The snapshot holds the base's build alone; nothing of it lies in the common directory.
    let cache = crate::fixture::cache_root(&s.fx.git_dir());
    let snaps = crate::fixture::snapshots(&cache, "warm");
    assert_eq!(snaps.len(), 1, "{snaps:?}");
    let built = snaps[0].join("checkout/target/built");
    assert_eq!(std::fs::read_to_string(&built).unwrap(), "1\n");
    assert!(!s.fx.git_dir().join("closegate/work").exists());

    // Teardown leaves the snapshot; gc keeps it while its base is the base's tip.
    let (code, out, err) = s.teardown(&[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(built.exists(), "teardown removed the snapshot");
    let root = s.fx.root();
    let (code, out, err) = parts(&closegate(&root, &["gc"]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(built.exists(), "gc removed the snapshot of the base's tip");
}

/// `keep` names paths inside the checkout only: nothing a check could use to make the reset
/// keep (or remove) something outside the workspace, nor the workspace's own `.git`.
#[test]
fn keep_paths_outside_the_checkout_are_an_error_naming_the_key() {
    for bad in ["../up", "/abs", ".git", "a/../b", "", "./target"] {
        let config = format!("[[checks]]\nname = \"warm\"\nrun = \"true\"\nkeep = [\"{bad}\"]\n");
        let s = Scene::honest_return_with(Some(&config));
        let (code, out, err) = parts(&closegate(&s.wt, &["check"]));
        assert_eq!(code, 2, "keep = {bad:?}: {out}{err}");
        assert!(err.contains("keep"), "{err}");
    }
}
