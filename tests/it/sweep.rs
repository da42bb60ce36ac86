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
    let typed: closegate::render::sweep::SweepJson = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(
        serde_json::to_value(&typed).unwrap(),
        v,
        "reads back as its type"
    );
    assert!(typed.dry_run && typed.schema == 1);
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

/// `n` MERGED worktrees `m0`…: each verified, then its branch merged into `main`.
fn merged(l: &Land, n: usize) -> Vec<(String, PathBuf)> {
    (0..n)
        .map(|i| {
            let slug = format!("m{i}");
            let (wt, _) = l.verified(&slug, &[(&format!("src/m{i}.rs"), Some("fn m() {}\n"))]);
            let branch = format!("agent/{slug}");
            git(
                &l.fx.root(),
                &["merge", "--no-ff", "-q", "-m", "merge", &branch],
            );
            (slug, wt)
        })
        .collect()
}

/// `cmd` as a process without the capabilities that let root read any file, so a folder of
/// mode 000 is unreadable to it as it is to any other user (tests may run as root).
fn unprivileged(cmd: &std::process::Command) -> std::process::Command {
    let root =
        std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0);
    if !root.unwrap_or(false) {
        let mut same = std::process::Command::new(cmd.get_program());
        same.args(cmd.get_args());
        copy_env(cmd, &mut same);
        return same;
    }
    let drop = "-dac_override,-dac_read_search";
    let mut wrapped = std::process::Command::new("setpriv");
    wrapped
        .arg(format!("--inh-caps={drop}"))
        .arg(format!("--bounding-set={drop}"))
        .arg("--")
        .arg(cmd.get_program())
        .args(cmd.get_args());
    copy_env(cmd, &mut wrapped);
    wrapped
}

fn copy_env(from: &std::process::Command, to: &mut std::process::Command) {
    for (key, value) in from.get_envs() {
        match value {
            Some(v) => to.env(key, v),
            None => to.env_remove(key),
        };
    }
    if let Some(dir) = from.get_current_dir() {
        to.current_dir(dir);
    }
    to.stdin(std::process::Stdio::null());
}

/// SPEC §26.5: one worktree sweep cannot read (a document over 16 MiB, a FIFO as the document, a
/// folder it cannot list) is kept with the reason, every other MERGED one is swept, exit 1; once
/// they are readable again (the control) the next sweep removes them, exit 0.
#[test]
fn an_unreadable_worktree_is_kept_and_the_others_are_swept() {
    let l = Land::new();
    let all = merged(&l, 20);
    let stages = stages(&l);
    assert!(stages.values().all(|s| s == "MERGED"), "{stages:#?}");
    let (big, fifo, locked) = (&all[3].1, &all[9].1, &all[15].1);
    let doc = big.join("_EXEC_STATUS.md");
    let mut text = std::fs::read_to_string(&doc).unwrap();
    let honest = text.clone();
    text.push_str(&"x".repeat(17 << 20));
    std::fs::write(&doc, text).unwrap();
    let fifo_doc = fifo.join("_EXEC_STATUS.md");
    let fifo_honest = std::fs::read(&fifo_doc).unwrap();
    std::fs::remove_file(&fifo_doc).unwrap();
    mkfifo(&fifo_doc);
    let folder = locked.join("notes");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("n.txt"), "mine\n").unwrap();
    set_mode(&folder, 0o000);

    let started = std::time::Instant::now();
    let out = unprivileged(&l.bin(&l.fx.root(), &["sweep", "--json"]))
        .output()
        .unwrap();
    let (code, out, err) = crate::fixture::parts(&out);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(120),
        "sweep hung"
    );
    assert_eq!(code, 1, "{out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    let rows = v["worktrees"].as_array().unwrap();
    assert_eq!(rows.len(), 20, "{v:#}");
    for (slug, wt) in &all {
        let row = rows
            .iter()
            .find(|r| r["branch"] == format!("agent/{slug}"))
            .unwrap_or_else(|| panic!("{slug}: {v:#}"));
        let branch_kept =
            l.fx.repo
                .find_reference(&format!("refs/heads/agent/{slug}"))
                .is_ok();
        if [big, fifo, locked].contains(&wt) {
            assert_eq!(row["action"], "kept", "{slug}: {row:#}");
            let reason = row["reason"].as_str().unwrap();
            assert!(
                reason.contains("sweep again"),
                "the next step is named: {reason}"
            );
            assert!(row["error"].is_string(), "{row:#}");
            assert!(wt.exists() && branch_kept, "{slug} was touched");
        } else {
            assert_eq!(row["action"], "removed", "{slug}: {row:#}");
            assert!(row["error"].is_null(), "{row:#}");
            assert!(!wt.exists() && !branch_kept, "{slug} was not swept");
        }
    }
    let reason = |wt: &PathBuf| {
        let r = rows
            .iter()
            .find(|r| r["path"] == wt.canonicalize().unwrap().display().to_string());
        r.map(|r| r["reason"].as_str().unwrap().to_string())
            .unwrap_or_else(|| panic!("{v:#}"))
    };
    assert!(reason(big).contains("16 MiB"), "{}", reason(big));
    assert!(
        reason(fifo).contains("not a regular file"),
        "{}",
        reason(fifo)
    );
    assert!(reason(locked).contains("notes"), "{}", reason(locked));
    // Nothing of the kept ones was lost.
    set_mode(&folder, 0o755);
    assert_eq!(
        std::fs::read_to_string(folder.join("n.txt")).unwrap(),
        "mine\n"
    );

    // The control: readable again, the three are swept.
    std::fs::write(&doc, honest).unwrap();
    std::fs::remove_file(&fifo_doc).unwrap();
    std::fs::write(&fifo_doc, fifo_honest).unwrap();
    std::fs::remove_dir_all(&folder).unwrap();
    let (code, out, err) = l.run(&l.fx.root(), &["sweep"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!big.exists() && !fifo.exists() && !locked.exists(), "{out}");
}

fn mkfifo(path: &std::path::Path) {
    let out = std::process::Command::new("mkfifo")
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success());
}

fn set_mode(path: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// SPEC §26.5: worktrees whose administrative data git cannot read — a HEAD that names nothing,
/// a `gitdir` or HEAD file gone, a `.git` file or `commondir` leading nowhere — and one whose
/// directory cannot be read are each kept, named, with the next step; the healthy one beside
/// them is swept; exit 1. Repaired (the control), the next sweep removes it.
#[test]
fn broken_administrative_data_is_kept_and_named() {
    let l = Land::new();
    let all = merged(&l, 7);
    let admin = l.fx.git_dir().join("worktrees");
    let head0 = std::fs::read(admin.join("m0/HEAD")).unwrap();
    std::fs::write(admin.join("m0/HEAD"), "garbage\n").unwrap();
    std::fs::remove_file(admin.join("m1/gitdir")).unwrap();
    std::fs::write(all[2].1.join(".git"), "gitdir: /nonexistent/x\n").unwrap();
    std::fs::write(admin.join("m3/commondir"), "/nonexistent\n").unwrap();
    std::fs::remove_file(admin.join("m4/HEAD")).unwrap();
    set_mode(&all[5].1, 0o000);
    let out = unprivileged(&l.bin(&l.fx.root(), &["sweep", "--json"]))
        .output()
        .unwrap();
    set_mode(&all[5].1, 0o755);
    let (code, out, err) = crate::fixture::parts(&out);
    assert_eq!(code, 1, "{out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    let rows = v["worktrees"].as_array().unwrap();
    let row = |slug: &str| {
        rows.iter()
            .find(|r| r["path"].as_str().unwrap().ends_with(&format!("/{slug}")))
            .unwrap_or_else(|| panic!("no line for {slug}: {v:#}"))
    };
    for (slug, wt) in &all[..6] {
        let r = row(slug);
        assert_eq!(r["action"], "kept", "{slug}: {r:#}");
        assert!(r["error"].is_string(), "{slug}: {r:#}");
        assert!(
            r["reason"].as_str().unwrap().contains("sweep again"),
            "{r:#}"
        );
        assert!(wt.exists(), "{slug} was removed");
        let branch = format!("refs/heads/agent/{slug}");
        assert!(
            l.fx.repo.find_reference(&branch).is_ok(),
            "{slug}'s branch was deleted"
        );
    }
    assert!(
        row("m0")["reason"]
            .as_str()
            .unwrap()
            .contains("HEAD names no commit")
    );
    assert!(
        row("m1")["reason"]
            .as_str()
            .unwrap()
            .contains("git worktree prune")
    );
    assert!(
        row("m2")["reason"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/x")
    );
    assert!(
        row("m3")["reason"]
            .as_str()
            .unwrap()
            .contains("/nonexistent")
    );
    assert!(row("m4")["stage"].is_null(), "{:#}", row("m4"));
    assert!(
        row("m5")["reason"]
            .as_str()
            .unwrap()
            .contains("Permission denied")
    );
    assert_eq!(row("m6")["action"], "removed", "{v:#}");
    assert!(!all[6].1.exists());

    // The control: m0's HEAD repaired, the next sweep removes it.
    std::fs::write(admin.join("m0/HEAD"), head0).unwrap();
    let (_, out, _) = l.run(&l.fx.root(), &["sweep", "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let r = v["worktrees"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["branch"] == "agent/m0")
        .cloned();
    assert_eq!(
        r.map(|r| r["action"].clone()),
        Some("removed".into()),
        "{v:#}"
    );
    assert!(!all[0].1.exists());
}
