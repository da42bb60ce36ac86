//! `closegate sweep` (SPEC §24) on a repository with worktrees in every stage: only MERGED and
//! STOPPED ones are torn down (MERGED branches deleted, STOPPED ones kept), `--dry-run` changes
//! nothing, and idle RUNNING or BLOCKED worktrees are reported, never removed.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::fixture::git;
use crate::land::Land;
use crate::teardown::{audit, write_status};

const KINDS: [&str; 7] = [
    "running",
    "blocked",
    "verifying",
    "failed",
    "completed",
    "stopped",
    "merged",
];

/// Four worktrees of each kind (28), plus two more RUNNING ones (30).
fn scene() -> (Land, BTreeMap<String, (PathBuf, &'static str)>) {
    let l = Land::new();
    let mut all = BTreeMap::new();
    for (n, kind) in KINDS.iter().cycle().take(30).enumerate() {
        let kind = if n >= 28 { "running" } else { kind };
        let slug = format!("{kind}-{n}");
        let path = format!("src/f{n}.rs");
        let body = if kind == "failed" {
            "fn f() { old_name() }\n".to_string()
        } else {
            format!("fn f{n}() {{}}\n")
        };
        let mut files = vec![(path.as_str(), Some(body.as_str()))];
        if kind == "failed" {
            files.push(("src/lib.rs", Some("pub fn new_name() {}\n")));
        }
        let (wt, tip) = l.agent(&slug, &files);
        let state = match kind {
            "running" => "in-progress",
            "blocked" => "blocked",
            "stopped" => "closed-without-merge",
            _ => "close-ok",
        };
        write_status(&wt, &slug, state, tip, &format!("add {slug}"));
        if ["failed", "completed", "merged"].contains(&kind) {
            let (code, out, err) = l.run(&wt, &["check"]);
            let want = if kind == "failed" { 1 } else { 0 };
            assert_eq!(code, want, "{slug}: {out}{err}");
        }
        if kind == "merged" {
            let branch = format!("agent/{slug}");
            git(
                &l.fx.root(),
                &["merge", "--no-ff", "-q", "-m", "merge", &branch],
            );
        }
        all.insert(slug, (wt, kind));
    }
    (l, all)
}

fn stages(l: &Land) -> BTreeMap<String, String> {
    let (_, out, _) = l.run(&l.fx.root(), &["board", "--json"]);
    let board: Value = serde_json::from_str(&out).unwrap();
    board["worktrees"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["main"] == false)
        .map(|r| {
            let branch = r["branch"].as_str().unwrap().to_string();
            (branch, r["stage"].as_str().unwrap().to_string())
        })
        .collect()
}

#[test]
fn sweep_removes_only_merged_and_stopped_worktrees() {
    let (l, all) = scene();
    let before = stages(&l);
    for (slug, (_, kind)) in &all {
        assert_eq!(
            before[&format!("agent/{slug}")],
            kind.to_uppercase(),
            "{slug}: {before:#?}"
        );
    }
    // A dry run changes nothing and records nothing.
    let records = audit(&l.fx).len();
    let (code, out, err) = l.run(&l.fx.root(), &["sweep", "--dry-run", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let would = v["worktrees"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["action"] == "would remove")
        .count();
    assert_eq!(would, 8, "{v:#}");
    assert_eq!(audit(&l.fx).len(), records);
    assert!(all.values().all(|(wt, _)| wt.exists()));
    assert_eq!(stages(&l), before);

    let (code, out, err) = l.run(&l.fx.root(), &["sweep"]);
    assert_eq!(code, 0, "{out}{err}");
    for (slug, (wt, kind)) in &all {
        let branch =
            l.fx.repo
                .find_reference(&format!("refs/heads/agent/{slug}"))
                .is_ok();
        match *kind {
            "merged" => {
                assert!(!wt.exists(), "{slug} kept:\n{out}");
                assert!(!branch, "{slug}: a MERGED branch is deleted");
            }
            "stopped" => {
                assert!(!wt.exists(), "{slug} kept:\n{out}");
                assert!(branch, "{slug}: a STOPPED branch is kept");
            }
            _ => {
                assert!(wt.exists(), "{slug} ({kind}) was removed:\n{out}");
                assert!(branch);
            }
        }
    }
    assert_eq!(out.lines().count(), 30, "one line per worktree:\n{out}");
}

#[test]
fn idle_running_worktrees_are_reported_never_removed() {
    let l = Land::new();
    let (wt, tip) = l.agent("idle", &[("src/i.rs", Some("fn i() {}\n"))]);
    write_status(&wt, "idle", "in-progress", tip, "add idle");
    let (code, out, _) = l.run(&l.fx.root(), &["sweep"]);
    assert_eq!(code, 0);
    assert!(
        !out.contains("idle for"),
        "no idle report without --older-than:\n{out}"
    );
    // Every file is fresh, and the fixture's commit is from 2023: one second is not yet idle.
    let (_, out, _) = l.run(&l.fx.root(), &["sweep", "--older-than", "1h"]);
    assert!(!out.contains("idle for"), "{out}");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3 * 3600);
    for entry in walkdir::WalkDir::new(&wt).into_iter().flatten() {
        if entry.path().starts_with(wt.join(".git")) {
            continue;
        }
        let file = std::fs::File::options()
            .write(entry.file_type().is_file())
            .read(true)
            .open(entry.path());
        if let Ok(file) = file {
            let _ = file.set_modified(old);
        }
    }
    let (code, out, err) = l.run(&l.fx.root(), &["sweep", "--older-than", "1h"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("idle for"), "{out}");
    assert!(wt.exists());
    let (code, _, err) = l.run(&l.fx.root(), &["sweep", "--older-than", "soon"]);
    assert_eq!(code, 2, "{err}");
}
