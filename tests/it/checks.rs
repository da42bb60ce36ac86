//! The `checks` gate (SPEC §4.6) on real repositories: pristine checkout, env, output, timeouts.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use closegate::config::{CheckSpec, Config};
use closegate::gates::Session;
use closegate::gates::checks::Checked;
use closegate::gates::runner::{Claimed, Target};
use closegate::gates::session::Trusted;
use closegate::report::CheckRun;
use git2::Oid;

use crate::fixture::Fixture;

fn spec(name: &str, run: &str, timeout_s: u64) -> CheckSpec {
    CheckSpec::new(name, run, timeout_s)
}

/// A check that may also write `dir` (SPEC §4.6 `writable`): where the test reads what it left.
fn spec_writing(name: &str, run: &str, timeout_s: u64, dir: &Path) -> CheckSpec {
    CheckSpec {
        writable: vec![dir.display().to_string()],
        ..CheckSpec::new(name, run, timeout_s)
    }
}

/// A fixture with `agent/x` holding `data.txt` = "committed", checked out in worktree `x`,
/// whose copy of `data.txt` has an uncommitted change.
fn agent_fixture() -> (Fixture, Oid, PathBuf) {
    let fx = Fixture::new();
    let commit = fx.commit("agent/x", &[("data.txt", Some("committed\n"))], "add data");
    let wt = fx.worktree("x", "agent/x");
    fx.write(&wt, "data.txt", "uncommitted\n");
    (fx, commit, wt)
}

/// The fixture's repository as closegate opens it.
fn repo(fx: &Fixture) -> closegate::repo::Repo {
    closegate::repo::Repo::discover(&fx.root()).unwrap()
}

/// `specs` on `commit` through a session on the base `main` whose configuration holds them, as
/// the claim of `agent/x` with slug `task-7`: the one runner, with the session's shield.
fn run_through_session(fx: &Fixture, commit: Oid, specs: &[CheckSpec]) -> anyhow::Result<Checked> {
    let repo = repo(fx);
    let main = repo.branch_tip("main").expect("main");
    let mut config = Config::default();
    config.checks = specs.to_vec();
    let trusted = Trusted {
        base: Some(("main".into(), main)),
        ..Trusted::given(config, None)
    };
    let session = Session::on_base(repo, fx.root(), trusted)?;
    let claimed = Claimed {
        commit,
        branch: "agent/x",
        slug: "task-7",
    };
    session.runner().run(&Target::Commit(claimed), specs, true)
}

fn run_checks(
    fx: &Fixture,
    commit: Oid,
    specs: &[CheckSpec],
) -> (Vec<CheckRun>, Vec<&'static str>, Vec<String>) {
    let checked = run_through_session(fx, commit, specs).unwrap();
    let findings = checked.findings;
    let codes = findings.iter().map(|f| f.code.as_str()).collect();
    let messages = findings.iter().map(|f| f.message.clone()).collect();
    (checked.runs, codes, messages)
}

/// Whether a process is running (a zombie awaiting its reaper counts as dead).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// The checkout directory a check wrote into `pwd_file` (`pwd > FILE`), asserted gone.
fn assert_checkout_removed(pwd_file: &Path) -> PathBuf {
    let checkout = PathBuf::from(std::fs::read_to_string(pwd_file).unwrap().trim());
    assert!(
        !checkout.exists(),
        "checkout {} was not removed",
        checkout.display()
    );
    checkout
}

/// Host pids of live processes whose command line is exactly `sleep <arg>`. A sandboxed check
/// sees only its own PID namespace, so its `$!` is not a host pid; a unique argument is.
fn sleepers(arg: &str) -> Vec<u32> {
    let want = format!("sleep\0{arg}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == want.as_bytes())
        })
        .filter(|pid| alive(*pid))
        .collect()
}

/// Whether every `sleep <arg>` process is gone within a few seconds.
fn sleepers_gone_soon(arg: &str) -> bool {
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        if sleepers(arg).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// The check wrote a pid (its background child started).
fn started(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|text| text.trim().parse::<u32>().is_ok())
}

#[test]
fn no_specs_run_nothing() {
    let (fx, commit, _) = agent_fixture();
    let (runs, codes, _) = run_checks(&fx, commit, &[]);
    assert!(runs.is_empty() && codes.is_empty());
}

#[test]
fn check_sees_the_commit_not_the_worktree_and_leaves_no_trace() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let (fx, commit, wt) = agent_fixture();
    let out = tempfile::tempdir().unwrap();
    let pwd_file = out.path().join("pwd");
    let main_index = fx.git_dir().join("index");
    let wt_index = fx.git_dir().join("worktrees/x/index");
    let before = (
        std::fs::read(&main_index).unwrap(),
        std::fs::read(&wt_index).unwrap(),
    );
    let worktrees_before = fx
        .repo
        .worktrees()
        .unwrap()
        .iter()
        .flatten()
        .map(String::from)
        .collect::<Vec<_>>();
    let refs_before = crate::fixture::git(&fx.root(), &["for-each-ref"]);
    let objects_before = crate::fixture::git(&fx.root(), &["count-objects"]);
    // git in the checkout sees the exact commit, detached, and a clean checkout.
    let run = format!(
        "cat data.txt; git rev-parse HEAD; git log -1 --format=%s; git status --porcelain; \
         git symbolic-ref -q HEAD || echo detached; pwd > '{}'",
        pwd_file.display()
    );

    let specs = [spec_writing("see", &run, 60, out.path())];
    let (runs, codes, _) = run_checks(&fx, commit, &specs);

    assert!(codes.is_empty(), "{codes:?}");
    assert_eq!(
        runs[0].output,
        ["committed", &commit.to_string(), "add data", "detached"]
    );
    assert_eq!((runs[0].exit_code, runs[0].timed_out), (Some(0), false));
    assert_eq!(
        (runs[0].name.as_str(), runs[0].command.as_str()),
        ("see", run.as_str())
    );
    let checkout = assert_checkout_removed(&pwd_file);
    assert!(
        !checkout.starts_with(fx.tmp.path()),
        "checkout inside the fixture"
    );
    let after = (
        std::fs::read(&main_index).unwrap(),
        std::fs::read(&wt_index).unwrap(),
    );
    assert!(before == after, "an index file changed");
    let worktrees_after = fx
        .repo
        .worktrees()
        .unwrap()
        .iter()
        .flatten()
        .map(String::from)
        .collect::<Vec<_>>();
    assert_eq!(worktrees_before, worktrees_after);
    assert_eq!(
        refs_before,
        crate::fixture::git(&fx.root(), &["for-each-ref"])
    );
    assert_eq!(
        objects_before,
        crate::fixture::git(&fx.root(), &["count-objects"])
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("data.txt")).unwrap(),
        "uncommitted\n"
    );
    assert!(
        !fx.root().join("data.txt").exists(),
        "main worktree was touched"
    );
}

#[test]
fn environment_names_the_commit_branch_slug_and_base() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let (fx, commit, _) = agent_fixture();
    // Beside the ceiling, git's one variable is SPEC §26.4's `GIT_CONFIG_GLOBAL=/dev/null`.
    let run = "echo \"$CLOSEGATE_COMMIT|$CLOSEGATE_BRANCH|$CLOSEGATE_SLUG|$CLOSEGATE_BASE\"; \
               echo \"global=$GIT_CONFIG_GLOBAL\"; env | grep '^GIT_' | \
               grep -v '^GIT_CEILING_DIRECTORIES=' | grep -vcx 'GIT_CONFIG_GLOBAL=/dev/null' || true";
    let (runs, codes, _) = run_checks(&fx, commit, &[spec("env", run, 60)]);
    assert!(codes.is_empty(), "{codes:?} {:?}", runs[0].output);
    assert_eq!(
        runs[0].output,
        [
            format!("{commit}|agent/x|task-7|main"),
            "global=/dev/null".to_string(),
            "0".to_string()
        ]
    );
}

#[test]
fn failing_check_keeps_exactly_the_last_40_lines() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let (fx, commit, _) = agent_fixture();
    let run = "i=1; while [ $i -le 100 ]; do echo line $i; i=$((i+1)); done; exit 3";
    let (runs, codes, messages) = run_checks(&fx, commit, &[spec("unit", run, 60)]);
    assert_eq!(codes, ["check-failed"]);
    assert!(
        messages[0].contains("`unit`") && messages[0].contains("code 3"),
        "{messages:?}"
    );
    assert_eq!(runs[0].exit_code, Some(3));
    let want: Vec<String> = (61..=100).map(|i| format!("line {i}")).collect();
    assert_eq!(runs[0].output, want);
}

#[test]
fn stdout_and_stderr_are_interleaved() {
    let (fx, commit, _) = agent_fixture();
    let run = "echo one; echo two >&2; echo three";
    let (runs, _, _) = run_checks(&fx, commit, &[spec("mix", run, 60)]);
    assert_eq!(runs[0].output, ["one", "two", "three"]);
}

#[test]
fn killed_by_a_signal_is_a_failure() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let (fx, commit, _) = agent_fixture();
    let (runs, codes, messages) = run_checks(&fx, commit, &[spec("crash", "kill -9 $$", 60)]);
    assert_eq!(codes, ["check-failed"]);
    assert!(messages[0].contains("signal 9"), "{messages:?}");
    assert_eq!(runs[0].exit_code, None);
}

#[test]
fn every_check_runs_and_each_failure_is_named() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let (fx, commit, _) = agent_fixture();
    let specs = [
        spec("a", "true", 60),
        spec("b", "exit 1", 60),
        spec("c", "echo c", 60),
    ];
    let (runs, codes, messages) = run_checks(&fx, commit, &specs);
    let names: Vec<&str> = runs.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(codes, ["check-failed"]);
    assert!(messages[0].contains("`b`"));
    assert_eq!(runs[2].output, ["c"]);
}

#[test]
fn timeout_kills_the_whole_group() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let (fx, commit, _) = agent_fixture();
    let out = tempfile::tempdir().unwrap();
    let pid_file = out.path().join("bg.pid");
    let run = format!(
        "sleep 30.0101 & echo $! > '{}'; sleep 30",
        pid_file.display()
    );
    let specs = [spec_writing("slow", &run, 1, out.path())];
    let (runs, codes, messages) = run_checks(&fx, commit, &specs);
    assert_eq!(codes, ["check-timeout"]);
    assert!(
        messages[0].contains("`slow`") && messages[0].contains("1 s"),
        "{messages:?}"
    );
    assert!(runs[0].timed_out);
    assert_eq!(runs[0].exit_code, None);
    assert!(runs[0].duration_ms >= 1000);
    assert!(started(&pid_file), "the background child did not start");
    assert!(
        sleepers_gone_soon("30.0101"),
        "background child survived the timeout"
    );
}

#[test]
fn background_child_does_not_outlive_a_passing_check() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let (fx, commit, _) = agent_fixture();
    let out = tempfile::tempdir().unwrap();
    let pid_file = out.path().join("bg.pid");
    let run = format!("sleep 30.0202 & echo $! > '{}'; exit 0", pid_file.display());
    let (_, codes, _) = run_checks(&fx, commit, &[spec_writing("bg", &run, 60, out.path())]);
    assert!(codes.is_empty());
    assert!(started(&pid_file), "the background child did not start");
    assert!(
        sleepers_gone_soon("30.0202"),
        "background child outlived its check"
    );
}

#[test]
fn read_only_leftovers_are_still_removed() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let (fx, commit, _) = agent_fixture();
    let out = tempfile::tempdir().unwrap();
    let pwd_file = out.path().join("pwd");
    let run = format!(
        "mkdir -p ro/deep && touch ro/deep/f && chmod 500 ro/deep ro; pwd > '{}'",
        pwd_file.display()
    );
    let (_, codes, _) = run_checks(&fx, commit, &[spec_writing("ro", &run, 60, out.path())]);
    assert!(codes.is_empty());
    assert_checkout_removed(&pwd_file);
}

#[test]
fn unknown_commit_is_an_error_naming_it() {
    let (fx, _, _) = agent_fixture();
    let missing = Oid::from_str("1111111111111111111111111111111111111111").unwrap();
    let specs = [spec("t", "true", 60)];
    let err = run_through_session(&fx, missing, &specs).unwrap_err();
    assert!(
        format!("{err:#}").contains("1111111111111111111111111111111111111111"),
        "{err:#}"
    );
}

/// SPEC §4.6: a `writable` path that contains the repository opens what lies beside it, never
/// the common dir or a worktree inside it.
#[test]
fn writable_above_the_repository_leaves_it_read_only() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let (fx, commit, wt) = agent_fixture();
    let outside = fx.tmp.path().join("cache");
    std::fs::create_dir(&outside).unwrap();
    let config = fx.git_dir().join("config");
    let config_before = std::fs::read(&config).unwrap();
    let run = format!(
        "echo cached > '{cache}/hit' && \
         if echo x >> '{config}'; then echo config: ESCAPED; else echo config: blocked; fi; \
         if echo x > '{wt}/data.txt'; then echo worktree: ESCAPED; else echo worktree: blocked; fi",
        cache = outside.display(),
        config = config.display(),
        wt = wt.display(),
    );
    let specs = [spec_writing("w", &run, 60, fx.tmp.path())];
    let (runs, codes, _) = run_checks(&fx, commit, &specs);
    assert!(codes.is_empty(), "{codes:?} {:?}", runs[0].output);
    let kept: Vec<&String> = runs[0]
        .output
        .iter()
        .filter(|l| l.starts_with("config: ") || l.starts_with("worktree: "))
        .collect();
    assert_eq!(kept, ["config: blocked", "worktree: blocked"]);
    assert_eq!(
        std::fs::read_to_string(outside.join("hit")).unwrap(),
        "cached\n"
    );
    assert_eq!(std::fs::read(&config).unwrap(), config_before);
    assert_eq!(
        std::fs::read_to_string(wt.join("data.txt")).unwrap(),
        "uncommitted\n"
    );
}
