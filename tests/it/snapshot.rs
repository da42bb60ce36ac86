//! Base snapshots (SPEC §27.2): warm state comes only from the base's own code, lives outside
//! the common directory, and no run on an agent's code writes what another branch's run reads.
//! Each test is an attack an agent could try, or a fault the store must survive.

use std::path::{Path, PathBuf};

use crate::fixture::{cache_root, closegate, parts, snapshots};
use crate::scene::{Scene, agent_status, json_report};

/// A check keeping `bin/`: it runs `bin/verdict` when one is there (a stand-in a build step
/// could have left), else the project's test. `test.sh` fails when `broken` exists.
const STAND_IN: &str = "[[checks]]\nname = \"warm\"\nkeep = [\"bin/\"]\nnetwork = false\n\
    run = 'mkdir -p bin; if [ -f bin/verdict ]; then exec sh bin/verdict; fi; sh test.sh'\n";

/// An agent on its own branch from `main` with `files`, its worktree and an honest status.
fn agent(s: &Scene, slug: &str, files: &[(&str, Option<&str>)]) -> PathBuf {
    let branch = format!("agent/{slug}");
    let tip = s.fx.commit(&branch, files, &format!("add {slug}"));
    let wt = s.fx.worktree(slug, &branch);
    agent_status(&wt, slug, "close-ok", tip, &format!("add {slug}"))
        .artifacts(&[files[0].0])
        .write(&wt);
    wt
}

fn check(s: &Scene, wt: &Path, args: &[&str]) -> (i32, serde_json::Value) {
    let mut all = vec!["check", "--format", "json"];
    all.extend_from_slice(args);
    json_report(&s.bin(wt, &all).output().unwrap())
}

fn scene(config: &str) -> Scene {
    Scene::new().on_main(
        &[
            (".closegate.toml", Some(config)),
            ("test.sh", Some("[ ! -f broken ]\n")),
        ],
        "configure closegate",
    )
}

/// Agent A's check plants a stand-in in the kept `bin/` (its test writes `bin/verdict`: `exit
/// 0`) and passes honestly; agent B's broken code is checked next, `--rerun` too. B fails:
/// A's run wrote only its own layer, dropped after it.
#[test]
fn a_stand_in_planted_in_a_kept_path_never_reaches_another_branch() {
    let config = STAND_IN.replace(
        "; sh test.sh'",
        "; [ -f plant.sh ] && sh plant.sh; sh test.sh'",
    );
    let s = scene(&config);
    let plant = "mkdir -p bin && echo 'exit 0' > bin/verdict\n";
    let a = agent(&s, "a", &[("plant.sh", Some(plant))]);
    let (_, report) = check(&s, &a, &[]);
    assert_eq!(report["checks"][0]["exit_code"], 0, "A ran: {report:#}");
    let b = agent(&s, "b", &[("broken", Some("x\n"))]);
    for args in [&[][..], &["--rerun"][..]] {
        let (code, report) = check(&s, &b, args);
        assert_eq!(code, 1, "{args:?}: B's broken code: {report:#}");
        assert_eq!(report["verdict"], "FAIL", "{report:#}");
    }
    // The snapshot holds the base's run alone.
    let snaps = snapshots(&cache_root(&s.fx.git_dir()), "warm");
    assert_eq!(snaps.len(), 1, "{snaps:?}");
    assert!(!snaps[0].join("checkout/bin/verdict").exists());
}

/// Nothing of the warm state lies in the common directory (SPEC §27.2): after checks, a land
/// and a teardown, `<common>/closegate/` holds no checkout, layer or snapshot.
#[test]
fn no_warm_state_lies_in_the_common_directory() {
    let s = scene(STAND_IN);
    let a = agent(&s, "a", &[("a.txt", Some("a\n"))]);
    let (code, report) = check(&s, &a, &[]);
    assert_eq!(code, 0, "{report:#}");
    let dir = s.fx.git_dir().join("closegate");
    for entry in walkdir::WalkDir::new(&dir).into_iter().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(
            !["checkout", "work", "snapshots", "runs", "bin"].contains(&name.as_str()),
            "warm state in the common directory: {}",
            entry.path().display()
        );
    }
    assert_eq!(snapshots(&cache_root(&s.fx.git_dir()), "warm").len(), 1);
}

/// A check whose `writable` holds the cache (`~/.cache`) still cannot write the base snapshot
/// its run starts from, nor any other repository's: its tries fail and the snapshots are
/// unchanged (the glob reaches every repository's under the cache, as the tests running beside
/// it showed the first version of this rule missing).
#[test]
fn a_check_cannot_write_a_base_snapshot_even_under_a_writable_cache() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let cache = crate::fixture::cache_home();
    let config = format!(
        "[[checks]]\nname = \"warm\"\nkeep = [\"bin/\"]\nnetwork = false\nwritable = ['{}']\n\
         run = 'mkdir -p bin; for f in {}/closegate/*/checks/warm/snapshots/*/checkout/bin; do \
         echo owned > \"$f\"/verdict 2>/dev/null; done; sh test.sh'\n",
        cache.display(),
        cache.display()
    );
    // Another repository of the same user, with a snapshot of its own.
    let other = scene(STAND_IN);
    let o = agent(&other, "o", &[("o.txt", Some("o\n"))]);
    assert_eq!(check(&other, &o, &[]).0, 0);
    let s = scene(&config);
    let a = agent(&s, "a", &[("a.txt", Some("a\n"))]);
    let (code, report) = check(&s, &a, &[]);
    assert_eq!(code, 0, "{report:#}");
    for fx in [&s.fx, &other.fx] {
        let snaps = snapshots(&cache_root(&fx.git_dir()), "warm");
        assert_eq!(snaps.len(), 1);
        assert!(
            !snaps[0].join("checkout/bin/verdict").exists(),
            "a check wrote a base snapshot"
        );
    }
}

/// A snapshot half-written (a build killed before it completed) or corrupt (its `complete`
/// names another id) is never used: the next check rebuilds it from the base's code.
#[test]
fn a_half_written_or_corrupt_snapshot_is_rebuilt_never_used() {
    for fault in ["half", "corrupt"] {
        let s = scene(STAND_IN);
        let a = agent(&s, "a", &[("a.txt", Some("a\n"))]);
        let (code, report) = check(&s, &a, &[]);
        assert_eq!(code, 0, "{report:#}");
        let snap = snapshots(&cache_root(&s.fx.git_dir()), "warm").remove(0);
        // The fault, and a stand-in that would pass anything, in the damaged snapshot.
        std::fs::write(snap.join("checkout/bin/verdict"), "exit 0\n").unwrap();
        match fault {
            "half" => std::fs::remove_file(snap.join("complete")).unwrap(),
            _ => std::fs::write(snap.join("complete"), "closegate snapshot 0000\n").unwrap(),
        }
        let b = agent(&s, "b", &[("broken", Some("x\n"))]);
        let (code, report) = check(&s, &b, &["--rerun"]);
        assert_eq!(code, 1, "{fault}: a damaged snapshot was used: {report:#}");
        let rebuilt = snapshots(&cache_root(&s.fx.git_dir()), "warm");
        assert_eq!(rebuilt.len(), 1, "{fault}");
        assert!(!rebuilt[0].join("checkout/bin/verdict").exists(), "{fault}");
    }
}

/// `prepare` runs with the network and `run` without (SPEC §27.2): the prepare step's output
/// reaches the run through the checkout; a `prepare` that fails is `check-failed` naming
/// `prepare`, with its output.
#[test]
fn prepare_runs_before_run_and_its_failure_names_prepare() {
    let ok = "[[checks]]\nname = \"warm\"\nkeep = [\"deps/\"]\nnetwork = false\n\
              prepare = 'mkdir -p deps && echo fetched > deps/lib'\n\
              run = 'grep -q fetched deps/lib && sh test.sh'\n";
    let s = scene(ok);
    let a = agent(&s, "a", &[("a.txt", Some("a\n"))]);
    let (code, report) = check(&s, &a, &[]);
    assert_eq!(code, 0, "{report:#}");
    let bad = "[[checks]]\nname = \"warm\"\nnetwork = false\n\
               prepare = 'echo cannot fetch; exit 7'\nrun = 'sh test.sh'\n";
    let s = scene(bad);
    let a = agent(&s, "a", &[("a.txt", Some("a\n"))]);
    let (code, report) = check(&s, &a, &[]);
    assert_eq!(code, 1, "{report:#}");
    let finding = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "check-failed")
        .unwrap_or_else(|| panic!("{report:#}"));
    let message = finding["message"].as_str().unwrap();
    assert!(
        message.contains("`prepare`") && message.contains("7"),
        "{message}"
    );
    assert!(
        report["checks"][0]["output"]
            .to_string()
            .contains("cannot fetch"),
        "{report:#}"
    );
}

/// `gc` removes the snapshots of bases no branch is near, keeping the newest of each check.
#[test]
fn gc_removes_snapshots_of_bases_no_branch_is_near() {
    let s = scene(STAND_IN);
    let (code, out, err) = parts(&closegate(&s.fx.root(), &["validate", "--run"]));
    assert_eq!(code, 0, "{out}{err}");
    let first = snapshots(&cache_root(&s.fx.git_dir()), "warm");
    assert_eq!(first.len(), 1);
    for n in 1..=2 {
        s.fx.commit("main", &[("n.txt", Some(&format!("{n}\n")))], "move");
        let (code, out, err) = parts(&closegate(&s.fx.root(), &["validate", "--run"]));
        assert_eq!(code, 0, "{out}{err}");
    }
    assert_eq!(snapshots(&cache_root(&s.fx.git_dir()), "warm").len(), 3);
    let (code, out, err) = parts(&closegate(&s.fx.root(), &["gc"]));
    assert_eq!(code, 0, "{out}{err}");
    let left = snapshots(&cache_root(&s.fx.git_dir()), "warm");
    assert_eq!(left.len(), 1, "{out}");
    assert!(!left.contains(&first[0]), "{out}");
}

/// The base runs once (SPEC §27.2): two agents checked at the same time on a base nobody has
/// checked yet — one builds the base snapshot, the other waits for it instead of running the
/// base again; within one check, the merge base's run is the run that built the snapshot.
#[test]
fn two_checks_at_once_take_the_base_run_once() {
    let log =
        crate::fixture::readable_by_checks().join(format!("base-runs-{}", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let config = format!(
        "[[checks]]\nname = \"warm\"\nkeep = [\"bin/\"]\nnetwork = false\nwritable = ['{}']\n\
         run = 'echo \"$CLOSEGATE_COMMIT\" >> {}; sleep 1; sh test.sh'\n",
        log.parent().unwrap().display(),
        log.display()
    );
    let s = scene(&config);
    let base = s.fx.repo.revparse_single("main").unwrap().id().to_string();
    let a = agent(&s, "a", &[("a.txt", Some("a\n"))]);
    let b = agent(&s, "b", &[("b.txt", Some("b\n"))]);
    let spawn = |wt: &Path| s.bin(wt, &["check", "--format", "json"]).spawn().unwrap();
    let (one, two) = (spawn(&a), spawn(&b));
    for child in [one, two] {
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    let runs = std::fs::read_to_string(&log).unwrap();
    let on_base = runs.lines().filter(|l| *l == base).count();
    assert_eq!(on_base, 1, "the base ran {on_base} times:\n{runs}");
    assert_eq!(runs.lines().count(), 3, "{runs}");
    let _ = std::fs::remove_file(&log);
}

/// `prepare` is keyed by the lock files (SPEC §27.2): on a base snapshot it is skipped while no
/// lock file changed, and it runs when one did — in any folder, not only at the root (an agent
/// that changes a nested `package-lock.json` must not be tested against the base's
/// dependencies).
#[test]
fn prepare_runs_again_when_any_lock_file_changes_and_only_then() {
    let dir = crate::fixture::readable_by_checks().join(format!("prepares-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("log");
    let config = format!(
        "[[checks]]\nname = \"warm\"\nkeep = [\"deps/\"]\nnetwork = false\nwritable = ['{}']\n\
         prepare = 'echo \"$CLOSEGATE_COMMIT\" >> {}; mkdir -p deps && cat sub/*lock* > deps/lib'\n\
         run = 'cat sub/*lock* | cmp - deps/lib && sh test.sh'\n",
        dir.display(),
        log.display()
    );
    let s = Scene::new().on_main(
        &[
            (".closegate.toml", Some(&config)),
            ("test.sh", Some("true\n")),
            ("sub/package-lock.json", Some("v1\n")),
        ],
        "configure closegate",
    );
    let plain = agent(&s, "plain", &[("a.txt", Some("a\n"))]);
    let (code, report) = check(&s, &plain, &[]);
    assert_eq!(code, 0, "{report:#}");
    let lines = || std::fs::read_to_string(&log).unwrap().lines().count();
    assert_eq!(lines(), 1, "only the base's build fetched");
    let locked = agent(&s, "locked", &[("sub/package-lock.json", Some("v2\n"))]);
    let (code, report) = check(&s, &locked, &[]);
    assert_eq!(
        code, 0,
        "the nested lock file's change was fetched: {report:#}"
    );
    assert_eq!(lines(), 2, "the agent's changed lock file fetched again");
    let _ = std::fs::remove_dir_all(&dir);
}
