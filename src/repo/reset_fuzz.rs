//! One hostile warm-workspace scenario from arbitrary bytes, for the `workspace_reset` cargo-fuzz
//! target and the proptest in `cargo test` (SPEC §19: the reset never writes outside the
//! workspace). Nothing in closegate itself calls it, and only the `fuzzing` feature builds it
//! (Cargo.toml).
//!
//! The bytes choose up to three commits (trees with hostile names — `..`, `.`, `.git` in any
//! case, `\`, `/` — files, executables, links pointing out, submodules, nesting), the kept paths,
//! and what the "previous run" plants between resets (links out at kept and tracked paths,
//! files, unwritable directories). After every reset, succeeded or refused, nothing may exist
//! under `<scratch>/` but the checkout and its memo, and the sentinel file outside must be
//! untouched.

use std::path::Path;

use git2::{ObjectType, Oid, Repository};

use super::Repo;

const NAMES: [&[u8]; 12] = [
    b"a", b"b", b"cache", b"target", b"..", b".", b".git", b".GiT", b"a\\b", b"x/y", b"sub", b"",
];
const TARGETS: [&[u8]; 6] = [
    b"../..",
    b"..",
    b"/tmp",
    b"a",
    b"cache/../../..",
    b"../../sentinel",
];
const KEEPS: [&str; 5] = ["cache", "target", "a", "sub/cache", "b"];

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn next(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.next() as usize % from.len()]
    }
}

/// A raw tree object (entries sorted as git sorts them, hostile names as given).
fn tree(git: &Repository, b: &mut Bytes, depth: usize) -> Oid {
    let count = if depth > 3 { 0 } else { b.next() % 4 };
    let mut entries: Vec<(Vec<u8>, &str, Oid)> = Vec::new();
    for _ in 0..count {
        let name = b.pick(&NAMES).to_vec();
        let (mode, id) = match b.next() % 5 {
            0 => ("40000", tree(git, b, depth + 1)),
            1 => ("120000", git.blob(b.pick(&TARGETS)).expect("blob")),
            2 => ("100755", git.blob(b"#!/bin/sh\n").expect("blob")),
            3 => ("160000", Oid::from_bytes(&[7; 20]).expect("oid")),
            _ => ("100644", git.blob(&[b.next()]).expect("blob")),
        };
        entries.push((name, mode, id));
    }
    let key = |e: &(Vec<u8>, &str, Oid)| {
        let mut k = e.0.clone();
        if e.1 == "40000" {
            k.push(b'/');
        }
        k
    };
    entries.sort_by_key(key);
    entries.dedup_by(|x, y| x.0 == y.0);
    let mut raw = Vec::new();
    for (name, mode, id) in &entries {
        raw.extend_from_slice(mode.as_bytes());
        raw.push(b' ');
        raw.extend_from_slice(name);
        raw.push(0);
        raw.extend_from_slice(id.as_bytes());
    }
    git.odb()
        .and_then(|o| o.write(ObjectType::Tree, &raw))
        .expect("tree")
}

fn commit(git: &Repository, tree_id: Oid) -> Option<Oid> {
    let sig = git2::Signature::new("f", "f@f", &git2::Time::new(0, 0)).ok()?;
    let tree = git.find_tree(tree_id).ok()?;
    git.commit(None, &sig, &sig, "f", &tree, &[]).ok()
}

/// What the previous run leaves in the checkout (never through a link: it plants them).
fn plant(b: &mut Bytes, checkout: &Path) {
    for _ in 0..b.next() % 3 {
        let name = b.pick(&[&b"cache"[..], b"a", b"target", b"sub", b"b", b"sub/cache"]);
        let path = checkout.join(String::from_utf8_lossy(name).as_ref());
        // The planting itself must not go through a link the reset left (a tracked one).
        let parent_real = path
            .parent()
            .and_then(|p| p.symlink_metadata().ok())
            .is_some_and(|m| m.is_dir());
        if !parent_real {
            continue;
        }
        // Never follow what is there: remove a link or file first.
        if path.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
            let _ = std::fs::remove_file(&path);
        }
        match b.next() % 4 {
            0 => {
                let target = String::from_utf8_lossy(b.pick(&TARGETS)).into_owned();
                let _ = std::os::unix::fs::symlink(target, &path);
            }
            1 => {
                let _ = std::fs::create_dir_all(&path);
                let _ = std::fs::write(path.join("out"), b"out");
            }
            2 => {
                let _ = std::fs::create_dir_all(&path);
                let _ = std::os::unix::fs::symlink("../../..", path.join("up"));
            }
            _ => {
                if path.symlink_metadata().is_err() {
                    let _ = std::fs::write(&path, b"planted");
                }
            }
        }
    }
}

/// Every path under `scratch` that is neither the checkout (and what is in it) nor its memo.
fn outside(scratch: &Path, checkout: &Path) -> Vec<std::path::PathBuf> {
    let memo = checkout.with_file_name("checkout.tree");
    walkdir::WalkDir::new(scratch)
        .follow_links(false)
        .into_iter()
        .flatten()
        .map(|e| e.path().to_path_buf())
        .filter(|p| p != scratch && p != &memo && p != &scratch.join("sentinel"))
        .filter(|p| p != &scratch.join("work") && !p.starts_with(checkout))
        .collect()
}

/// Run one scenario in `scratch` (an empty directory) against `repo`; `Err` names a write
/// outside the workspace.
pub fn run(repo: &Repo, scratch: &Path, data: &[u8]) -> Result<(), String> {
    let mut b = Bytes(data);
    let git = &repo.git;
    let sentinel = scratch.join("sentinel");
    std::fs::write(&sentinel, b"untouched").map_err(|e| e.to_string())?;
    let checkout = scratch.join("work/checkout");
    std::fs::create_dir_all(&checkout).map_err(|e| e.to_string())?;
    let keep: Vec<String> = (0..b.next() % 3)
        .map(|_| b.pick(&KEEPS).to_string())
        .collect();
    for _ in 0..1 + b.next() % 3 {
        let tree_id = tree(git, &mut b, 0);
        let Some(commit) = commit(git, tree_id) else {
            continue;
        };
        let result = repo.reset_workspace(commit, &checkout, &keep);
        let bad = outside(scratch, &checkout);
        if !bad.is_empty() {
            return Err(format!(
                "written outside the workspace: {bad:?} ({result:?})"
            ));
        }
        if std::fs::read(&sentinel).ok().as_deref() != Some(&b"untouched"[..]) {
            return Err("the sentinel outside the workspace changed".into());
        }
        if result.is_ok() {
            plant(&mut b, &checkout);
        }
    }
    Ok(())
}
