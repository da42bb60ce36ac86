//! `closegate notes push|fetch` and `check --attest --push` under contention (SPEC §20): eight
//! jobs on eight machines attest different commits and push to one bare repository at once;
//! every attestation is on the remote afterwards.
//!
//! Attacks: a concurrent push overwriting another's notes (lost attestation); a note merged by
//! concatenation twice (duplicate lines); a remote with no notes yet.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::attest::{Signed, agent_branch};
use crate::fixture::{git, git_output, hermetic, parts};

/// The note lines on every commit under refs/notes/closegate in `repo` (a bare one too).
fn remote_notes(repo: &Path) -> Vec<(String, Vec<String>)> {
    let list = git_output(repo, &["notes", "--ref", "refs/notes/closegate", "list"]);
    let list = String::from_utf8_lossy(&list.stdout).into_owned();
    list.lines()
        .map(|l| {
            let target = l.split_whitespace().nth(1).unwrap().to_string();
            let note = git(
                repo,
                &["notes", "--ref", "refs/notes/closegate", "show", &target],
            );
            (target, note.lines().map(str::to_string).collect())
        })
        .collect()
}

#[test]
fn eight_jobs_attesting_at_once_lose_no_attestation() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = Signed::new();
    let mut tips = Vec::new();
    for n in 0..8 {
        // The attestation is on the work commit (the status-only tip stands for it).
        let (work, _) = agent_branch(&s.fx, &format!("a{n}"));
        tips.push(work);
    }
    let base = s.fx.tmp.path();
    let remote = base.join("remote.git");
    git(
        base,
        &[
            "clone",
            "-q",
            "--bare",
            s.root().to_str().unwrap(),
            remote.to_str().unwrap(),
        ],
    );
    let key = s.ci.key_arg();
    let mut jobs = Vec::new();
    for n in 0..8 {
        let clone = base.join(format!("ci{n}"));
        git(
            base,
            &[
                "clone",
                "-q",
                remote.to_str().unwrap(),
                clone.to_str().unwrap(),
            ],
        );
        let rev = format!("agent/a{n}");
        git(&clone, &["branch", "-q", &rev, &format!("origin/{rev}")]);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
        cmd.args([
            "check",
            "--rev",
            &rev,
            "--no-worktree",
            "--format",
            "json",
            "--attest",
            "--key",
            &key,
            "--push",
            "origin",
        ])
        .current_dir(&clone);
        hermetic(&mut cmd, &clone);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        jobs.push(cmd.spawn().unwrap());
    }
    for job in jobs {
        let (exit, out, err) = parts(&job.wait_with_output().unwrap());
        assert_eq!(exit, 0, "{out}\n{err}");
        assert!(err.contains("pushed refs/notes/closegate"), "{err}");
    }
    let notes = remote_notes(&remote);
    for tip in &tips {
        let note = notes.iter().find(|(t, _)| *t == tip.to_string());
        let (_, lines) = note.unwrap_or_else(|| panic!("no note on {tip}: {} notes", notes.len()));
        assert_eq!(lines.len(), 1, "one attestation line, once: {lines:?}");
    }
    // Every clone's attestation verifies from the remote: fetch into the first repository.
    let (exit, out, err) = parts(&crate::fixture::closegate(
        &s.root(),
        &["notes", "fetch", remote.to_str().unwrap()],
    ));
    assert_eq!(exit, 0, "{out}{err}");
    for n in 0..8 {
        let rev = format!("agent/a{n}");
        let out = crate::fixture::closegate(
            &s.root(),
            &[
                "check",
                "--rev",
                &rev,
                "--no-worktree",
                "--require-attestation",
                "--no-record",
            ],
        );
        let (exit, out, err) = parts(&out);
        assert_eq!(exit, 0, "{rev}: {out}{err}");
    }
}

#[test]
fn notes_on_the_same_commit_from_two_sides_are_merged_as_a_set_of_lines() {
    let s = Signed::new();
    let base = s.fx.tmp.path();
    let remote = base.join("remote.git");
    git(
        base,
        &[
            "clone",
            "-q",
            "--bare",
            s.root().to_str().unwrap(),
            remote.to_str().unwrap(),
        ],
    );
    let remote_s = remote.to_str().unwrap();
    // Nothing on the remote yet: fetch says so, push of no notes is an error.
    let (exit, out, _) = parts(&crate::fixture::closegate(
        &s.root(),
        &["notes", "fetch", remote_s],
    ));
    assert_eq!(exit, 0, "{out}");
    assert!(out.contains("nothing fetched"), "{out}");
    let tip = s.tip.to_string();
    let other = base.join("other");
    git(base, &["clone", "-q", remote_s, other.to_str().unwrap()]);
    let add = |dir: &Path, line: &str| {
        git(
            dir,
            &[
                "notes",
                "--ref",
                "refs/notes/closegate",
                "append",
                "-m",
                line,
                &tip,
            ],
        );
    };
    add(&s.root(), "shared line");
    add(&s.root(), "from one");
    add(&other, "shared line");
    add(&other, "from two");
    for dir in [&other, &s.root()] {
        let (exit, out, err) = parts(&crate::fixture::closegate(
            dir,
            &["notes", "push", remote_s],
        ));
        assert_eq!(exit, 0, "{out}{err}");
    }
    let notes = remote_notes(&remote);
    let lines: Vec<&str> = notes[0]
        .1
        .iter()
        .map(String::as_str)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(lines, ["from one", "from two", "shared line"], "{notes:?}");
    // The other side fetches and has them all; fetching twice changes nothing.
    for _ in 0..2 {
        let (exit, out, err) = parts(&crate::fixture::closegate(&other, &["notes", "fetch"]));
        assert_eq!(exit, 0, "{out}{err}");
    }
    let local = remote_notes(&other);
    let lines: Vec<&str> = local[0]
        .1
        .iter()
        .map(String::as_str)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(lines, ["from one", "from two", "shared line"]);
    // An unknown remote is an error naming it.
    let (exit, _, err) = parts(&crate::fixture::closegate(
        &s.root(),
        &["notes", "push", "nowhere"],
    ));
    assert_eq!(exit, 2);
    assert!(err.contains("nowhere"), "{err}");
}
