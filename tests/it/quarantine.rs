//! SPEC §26.4: the objects of trees closegate only checks — overlays and reverse overlays (§23),
//! composed trees (§22, the board's CONFLICT), stand-in commits — go to a quarantine object
//! directory (the repository's objects as an alternate) and are dropped after the run, never
//! into the shared object store. `land` writes the commit it moves the base to into the store,
//! only once it passed and right before the move.
//!
//! Each test lists the store (every loose object and pack) before and after, and the quarantine
//! folder `<common>/closegate/quarantine/` after: it must be empty, on success, on error and
//! (after the next run) after a kill.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::fixture::{git, git_output};
use crate::land::Land;
use crate::scene::Scene;

/// Every loose object id and pack file of the object store at `git_dir`.
fn store(git_dir: &Path) -> BTreeSet<String> {
    let mut all = BTreeSet::new();
    let objects = git_dir.join("objects");
    for dir in std::fs::read_dir(&objects).unwrap().flatten() {
        let name = dir.file_name().to_string_lossy().into_owned();
        if name.len() == 2 && name.bytes().all(|b| b.is_ascii_hexdigit()) {
            for file in std::fs::read_dir(dir.path()).unwrap().flatten() {
                all.insert(format!("{name}{}", file.file_name().to_string_lossy()));
            }
        } else if name == "pack" {
            for file in std::fs::read_dir(dir.path()).unwrap().flatten() {
                all.insert(format!("pack/{}", file.file_name().to_string_lossy()));
            }
        }
    }
    all
}

/// What is left in the quarantine folder.
fn quarantines(git_dir: &Path) -> Vec<PathBuf> {
    closegate::repo::quarantine::list(git_dir)
}

/// Whether the store (as git reads it, outside closegate) holds object `id`.
fn in_store(cwd: &Path, id: &str) -> bool {
    git_output(cwd, &["cat-file", "-e", id]).status.success()
}

/// A check that passes when git inside the check reads the tree of the commit it runs on (on
/// an overlay, the quarantined stand-in commit), and prints it.
/// The reverse overlay is asked for (SPEC §27.1 runs it only when asked): both overlays' stand-in
/// commits must stay out of the store.
const CONFIG: &str = "[[checks]]\nname = \"smoke\"\nrun = \"git rev-parse -q --verify 'HEAD^{tree}'\"\n\
     [protected.integrity]\nfail_to_pass = true\n";

/// An agent that changes the base's test and adds `src/lib.rs`: `check` runs the overlay and
/// the reverse overlay.
fn test_editing_agent(config: &str) -> Scene {
    let s = Scene::new()
        .on_main(
            &[
                (".closegate.toml", Some(config)),
                ("tests/a_test.sh", Some("exit 0\n")),
            ],
            "configure closegate",
        )
        .on_agent(
            &[
                ("src/lib.rs", Some("pub fn x() {}\n")),
                ("tests/a_test.sh", Some("exit 0 # edited\n")),
            ],
            "add x",
        )
        .worktree()
        .sandboxed();
    crate::teardown::write_status(&s.wt, "x", "close-ok", s.tip, "add x");
    s
}

/// Attack surface: `check` on a branch that edits tests builds two trees and two stand-in
/// commits. The checks run on them (git inside the check reads the stand-in commit), and
/// afterwards the store holds not one object more, the overlay's tree is not in it, and no
/// quarantine is left.
#[test]
fn check_with_overlays_writes_nothing_into_the_object_store() {
    let s = test_editing_agent(CONFIG);
    let before = store(&s.fx.git_dir());
    let (code, report) = s.check_json(&s.wt, &[]);
    assert_eq!(report["integrity"]["base_tests"], "pass", "{report:#}");
    assert_eq!(
        report["integrity"]["new_tests_on_base"], "pass",
        "{report:#}"
    );
    let runs = report["integrity"]["checks"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{report:#}");
    for run in runs {
        assert_eq!(run["exit_code"], 0, "{report:#}");
        let tree = run["tree"].as_str().unwrap();
        assert_eq!(
            run["output"][0], tree,
            "git in the check read the stand-in commit"
        );
        assert!(
            !in_store(&s.root(), tree),
            "overlay tree {tree} reached the store"
        );
    }
    assert_eq!(store(&s.fx.git_dir()), before, "the store gained objects");
    assert!(quarantines(&s.fx.git_dir()).is_empty());
    assert_eq!(code, 3, "a test edit still needs review: {report:#}");
    // Control: what the check ran on really was new (the commit's own tree is in the store).
    assert!(in_store(&s.root(), &format!("{}^{{tree}}", s.tip)));
}

/// The board composes each verified branch onto the moved base to find CONFLICT, and the radar
/// merges every pair: nothing of it reaches the store. (The radar's answer shows the merges ran:
/// `three` conflicts with `one`; `one` and `two` merge cleanly, a tree written in quarantine.)
#[test]
fn board_composes_in_quarantine() {
    let l = Land::new();
    l.verified("one", &[("src/one.rs", Some("fn one() {}\n"))]);
    l.verified("two", &[("src/two.rs", Some("fn two() {}\n"))]);
    l.verified("three", &[("src/one.rs", Some("fn three() {}\n"))]);
    // The base moves, so composing is no fast-forward.
    let moved =
        l.fx.commit("main", &[("other.txt", Some("other\n"))], "other");
    l.fx.checkout(&l.fx.root());
    let before = store(&l.fx.git_dir());
    let (code, out, err) = l.run(&l.fx.root(), &["board", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = l.run(&l.fx.root(), &["board", "--conflicts", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let pairs: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(pairs["conflicts"].as_array().unwrap().len(), 1, "{pairs:#}");
    assert_eq!(pairs["conflicts"][0]["paths"][0], "src/one.rs", "{pairs:#}");
    assert_eq!(store(&l.fx.git_dir()), before, "the store gained objects");
    assert!(quarantines(&l.fx.git_dir()).is_empty());
    assert_eq!(l.main(), moved);
}

/// `land --dry-run` composes and checks the composed tree in quarantine: the store gains
/// nothing and the composed commit it names is not in it. A real `land` then writes exactly
/// what the new base tip needs — the composed commit, its new trees and the blob a content
/// merge wrote — and nothing else (no tree that was only checked): `git fsck` finds the
/// history whole, and every new object is reachable from the new tip. (`--no-teardown`: the
/// teardown that follows a landing writes its escrow into the store, on purpose.)
#[test]
fn land_writes_only_the_commit_it_moves_the_base_to() {
    let l = Land::new();
    let lines = "pub fn old_name() {}\n// a\n// b\n// c\n// d\n// e\n";
    let base = l.fx.commit("main", &[("src/lib.rs", Some(lines))], "lines");
    l.fx.checkout(&l.fx.root());
    let (_, top) = l.verified(
        "top",
        &[("src/lib.rs", Some(&lines.replace("// a", "// a top")))],
    );
    let moved = l.fx.commit(
        "main",
        &[("src/lib.rs", Some(&lines.replace("// e", "// e bottom")))],
        "bottom",
    );
    l.fx.checkout(&l.fx.root());
    let before = store(&l.fx.git_dir());
    let (code, v) = l.land(&["--dry-run", "agent/top"]);
    assert_eq!(code, 0, "{v:#}");
    let composed = v["branches"][0]["composed"].as_str().unwrap().to_string();
    assert!(
        !in_store(&l.root(), &composed),
        "a dry run's commit reached the store"
    );
    assert_eq!(store(&l.fx.git_dir()), before, "the store gained objects");
    assert!(quarantines(&l.fx.git_dir()).is_empty());

    let (code, v) = l.land(&["agent/top", "--strategy", "merge", "--no-teardown"]);
    assert_eq!(code, 0, "{v:#}");
    let tip = l.main();
    assert_ne!(tip, moved);
    assert!(quarantines(&l.fx.git_dir()).is_empty());
    let fsck = git_output(&l.root(), &["fsck", "--full", "--no-dangling"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
    let merged = git(&l.root(), &["show", &format!("{tip}:src/lib.rs")]);
    assert!(
        merged.contains("// a top") && merged.contains("// e bottom"),
        "{merged}"
    );
    // Every object the landing added is one the new tip needs.
    let reachable = git(
        &l.root(),
        &[
            "rev-list",
            "--objects",
            &tip.to_string(),
            "--not",
            &moved.to_string(),
            &top.to_string(),
        ],
    );
    let reachable: BTreeSet<String> = reachable
        .lines()
        .map(|l| l.split(' ').next().unwrap().to_string())
        .collect();
    let added: Vec<String> = store(&l.fx.git_dir())
        .difference(&before)
        .cloned()
        .collect();
    assert!(!added.is_empty());
    for id in &added {
        assert!(
            reachable.contains(id),
            "{id} was added but the tip does not need it"
        );
    }
    assert!(added.contains(&tip.to_string()));
    assert!(l.fx.repo.graph_descendant_of(tip, base).unwrap());
}

/// `land --strategy rebase` replays two commits: both replayed commits reach the store before the
/// base names them (the first one through the second's parent), and `git fsck` is clean.
#[test]
fn a_rebase_landing_promotes_every_replayed_commit() {
    let l = Land::new();
    l.fx.commit("agent/two", &[("src/a.rs", Some("fn a() {}\n"))], "a");
    let (wt, _) = l.agent("two", &[("src/b.rs", Some("fn b() {}\n"))]);
    let (code, out, err) = l.run(&wt, &["check"]);
    assert_eq!(code, 0, "{out}{err}");
    l.fx.commit("main", &[("other.txt", Some("other\n"))], "other");
    l.fx.checkout(&l.fx.root());
    let (code, v) = l.land(&["agent/two", "--strategy", "rebase"]);
    assert_eq!(code, 0, "{v:#}");
    let log = git(&l.root(), &["log", "--format=%s", "-3", "main"]);
    assert_eq!(log, "add two\na\nother\n");
    let fsck = git_output(&l.root(), &["fsck", "--full", "--no-dangling"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
    assert!(quarantines(&l.fx.git_dir()).is_empty());
}

/// The agent's base test blocks (`sleep`) on the overlay only, after telling the test it runs.
fn blocking_agent(flag: &Path) -> Scene {
    let block = format!(
        "touch '{f}/overlay'; if [ -f '{f}/block' ]; then sleep 60; fi; exit 0\n",
        f = flag.display()
    );
    let config = format!(
        "[[checks]]\nname = \"t\"\nrun = 'sh \"$PWD/tests/t.sh\"'\nwritable = ['{}']\n",
        flag.display()
    );
    let s = Scene::new()
        .on_main(
            &[
                (".closegate.toml", Some(&config)),
                ("tests/t.sh", Some(&block)),
            ],
            "configure closegate",
        )
        .on_agent(
            &[
                ("src/lib.rs", Some("pub fn x() {}\n")),
                ("tests/t.sh", Some("exit 0\n")),
            ],
            "add x",
        )
        .worktree()
        .sandboxed();
    crate::teardown::write_status(&s.wt, "x", "close-ok", s.tip, "add x");
    s
}

/// Start `closegate check` and wait until the overlay's check runs; the quarantine exists then.
fn start_until_overlay(s: &Scene, flag: &Path) -> std::process::Child {
    let mut cmd: Command = s.bin(&s.wt, &["check", "--no-record"]);
    cmd.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let child = cmd.spawn().unwrap();
    let started = Instant::now();
    while !flag.join("overlay").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the overlay never ran"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        quarantines(&s.fx.git_dir()).len(),
        1,
        "the overlay's quarantine"
    );
    child
}

/// Stopped by a signal in the middle of the overlay's run (an error: exit 2), closegate still
/// removes its quarantine. Killed outright, it cannot: the next run that makes a quarantine
/// removes the one whose owner is gone, and ends with none left.
#[test]
fn no_quarantine_survives_an_interrupted_or_killed_run() {
    let flag = tempfile::tempdir().unwrap();
    let s = blocking_agent(flag.path());
    let before = store(&s.fx.git_dir());
    std::fs::write(flag.path().join("block"), "").unwrap();
    for signal in ["-TERM", "-KILL"] {
        let _ = std::fs::remove_file(flag.path().join("overlay"));
        let mut child = start_until_overlay(&s, flag.path());
        let pid = child.id().to_string();
        assert!(
            Command::new("kill")
                .args([signal, &pid])
                .status()
                .unwrap()
                .success()
        );
        let status = child.wait().unwrap();
        match signal {
            "-TERM" => {
                assert_eq!(status.code(), Some(2), "an interrupted check is an error");
                assert!(quarantines(&s.fx.git_dir()).is_empty(), "removed on error");
            }
            _ => assert_eq!(quarantines(&s.fx.git_dir()).len(), 1, "a kill leaves it"),
        }
    }
    std::fs::remove_file(flag.path().join("block")).unwrap();
    let (code, out, err) = s.run(&s.wt, &["check", "--no-record"]);
    assert_eq!(code, 3, "{out}{err}");
    let left = quarantines(&s.fx.git_dir());
    assert!(
        left.is_empty(),
        "the killed run's quarantine is gone: {left:?}"
    );
    assert_eq!(store(&s.fx.git_dir()), before);
}
