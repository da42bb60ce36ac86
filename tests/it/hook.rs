//! `closegate hook` with real `git` commands: the hook firing is the point (SPEC §9).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use git2::Oid;
use serde_json::Value;

use crate::fixture::{closegate, git, git_output, parts};

/// A configuration whose one check always passes, so an honest return is VERIFIED.
pub const PASSING_CONFIG: &str = "[[checks]]\nname = \"smoke\"\nrun = \"true\"\ntimeout_s = 60\n";

pub use crate::scene::{Scene, status_doc};

/// The hook's verbs on a scene (`Scene::with_agent`: `main` carrying the configuration, checked
/// out in the main worktree, and `agent/x` one commit ahead).
pub trait HookScene {
    fn honest_worktree(&self) -> PathBuf;
    fn pass_check(&self, wt: &Path);
    fn install(&self);
    fn assert_delete_refused(&self, cwd: &Path);
    fn branch_exists(&self, name: &str) -> bool;
    fn main_tip(&self) -> Oid;
    fn records(&self, event: &str) -> Vec<Value>;
}

impl HookScene for Scene {
    /// A linked worktree `wt/x` on `agent/x` holding an honest close-ok status document.
    fn honest_worktree(&self) -> PathBuf {
        let wt = self.fx.worktree("x", "agent/x");
        let path = wt.canonicalize().unwrap().display().to_string();
        let sha = &self.tip.to_string()[..12];
        std::fs::write(
            wt.join("_EXEC_STATUS.md"),
            status_doc("close-ok", sha, &path),
        )
        .unwrap();
        wt
    }

    /// Run `closegate check` in the worktree and insist it verifies (that writes the record).
    fn pass_check(&self, wt: &Path) {
        let out = closegate(wt, &["check"]);
        let (code, stdout, stderr) = parts(&out);
        assert_eq!(code, 0, "check did not verify:\n{stdout}\n{stderr}");
    }

    fn install(&self) {
        let (code, _, stderr) = parts(&closegate(&self.root(), &["hook", "install"]));
        assert_eq!(code, 0, "{stderr}");
    }

    /// `git branch -D agent/x`, run in `cwd`, is refused by the hook and the branch stays.
    fn assert_delete_refused(&self, cwd: &Path) {
        let out = git_output(cwd, &["branch", "-D", "agent/x"]);
        assert_ne!(
            out.status.code(),
            Some(0),
            "the hook let the delete through"
        );
        assert!(self.branch_exists("agent/x"));
    }

    fn branch_exists(&self, name: &str) -> bool {
        self.fx
            .repo
            .find_reference(&format!("refs/heads/{name}"))
            .is_ok()
    }

    fn main_tip(&self) -> Oid {
        self.fx.repo.refname_to_id("refs/heads/main").unwrap()
    }

    /// The audit log's records of `event`.
    fn records(&self, event: &str) -> Vec<Value> {
        let all = closegate::record::read(&self.fx.git_dir()).unwrap().records;
        all.into_iter().filter(|r| r["event"] == event).collect()
    }
}

fn hook_path(dir: &Path) -> PathBuf {
    dir.join("reference-transaction")
}

#[test]
fn deleting_an_agent_branch_is_refused_before_a_passing_check_and_allowed_after() {
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.install();
    let out = git_output(&s.root(), &["branch", "-D", "agent/x"]);
    let (code, _, stderr) = parts(&out);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("refusing to delete agent branch `agent/x`"),
        "{stderr}"
    );
    assert!(stderr.contains(&s.tip.to_string()[..12]), "{stderr}");
    assert!(stderr.contains("closegate check"), "{stderr}");
    assert!(s.branch_exists("agent/x"));
    let refused = s.records("hook");
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0]["action"], "delete");
    assert_eq!(refused[0]["accepted"], false);
    assert_eq!(refused[0]["verdict"], "FAIL");
    assert_eq!(refused[0]["commit"], s.tip.to_string());
    assert_eq!(refused[0]["branch"], "agent/x");
    assert_eq!(refused[0]["codes"], serde_json::json!([]));

    let wt = s.honest_worktree();
    s.pass_check(&wt);
    git(
        &s.root(),
        &["worktree", "remove", "--force", wt.to_str().unwrap()],
    );
    git(&s.root(), &["branch", "-D", "agent/x"]);
    assert!(!s.branch_exists("agent/x"));
    let last = s.records("hook").pop().unwrap();
    assert_eq!(
        (last["accepted"].clone(), last["verdict"].clone()),
        (Value::Bool(true), "VERIFIED".into())
    );
}

#[test]
fn merging_an_agent_branch_into_the_base_needs_a_passing_record() {
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.install();
    let before = s.main_tip();
    let (code, _, stderr) = parts(&git_output(&s.root(), &["merge", "--ff-only", "agent/x"]));
    assert_ne!(code, 0);
    assert!(
        stderr.contains("refusing to move `main` onto agent branch `agent/x`"),
        "{stderr}"
    );
    assert_eq!(s.main_tip(), before);
    // git updated the index and files before the ref; go back to main's tree.
    git(&s.root(), &["reset", "-q", "--hard"]);
    let (code, _, _) = parts(&git_output(
        &s.root(),
        &["merge", "--no-ff", "-m", "merge x", "agent/x"],
    ));
    assert_ne!(code, 0, "a merge commit is refused the same");
    assert_eq!(s.main_tip(), before);
    git(&s.root(), &["reset", "-q", "--hard"]);

    let wt = s.honest_worktree();
    s.pass_check(&wt);
    git(&s.root(), &["merge", "--ff-only", "agent/x"]);
    assert_eq!(s.main_tip(), s.tip);
    let merges: Vec<Value> = s
        .records("hook")
        .into_iter()
        .filter(|r| r["action"] == "merge")
        .collect();
    assert_eq!(
        merges
            .iter()
            .map(|r| r["accepted"].as_bool().unwrap())
            .collect::<Vec<_>>(),
        [false, false, true]
    );
}

#[test]
fn refs_that_touch_no_unpassed_agent_branch_pass() {
    let s = Scene::with_agent(None);
    s.install();
    let root = s.root();
    git(&root, &["tag", "v1"]);
    git(&root, &["tag", "-d", "v1"]);
    git(&root, &["branch", "feature"]);
    git(&root, &["branch", "-D", "feature"]);
    git(&root, &["update-ref", "refs/notes/x", "HEAD"]);
    // creating and moving an agent branch is not guarded; only closing and merging are
    git(&root, &["branch", "agent/new"]);
    git(&root, &["branch", "-f", "agent/new", &s.tip.to_string()]);
    // an agent branch whose tip the base already holds: reachable …
    git(&root, &["branch", "agent/old", "main"]);
    git(&root, &["branch", "-D", "agent/old"]);
    // … or squash-merged (the base holds the same changes)
    s.fx.commit(
        "main",
        &[("src/lib.rs", Some("pub fn x() {}\n"))],
        "squash x",
    );
    git(&root, &["reset", "-q", "--hard"]);
    git(&root, &["branch", "-D", "agent/x"]);
    assert!(!s.branch_exists("agent/x"));
    let hooks = s.records("hook");
    let decided: Vec<&str> = hooks
        .iter()
        .map(|r| r["branch"].as_str().unwrap())
        .collect();
    assert_eq!(
        decided,
        ["agent/old", "agent/x"],
        "only agent branch deletions are decided"
    );
    assert!(hooks.iter().all(|r| r["accepted"] == true), "{hooks:?}");
}

#[test]
fn install_is_idempotent_and_the_hook_is_executable() {
    let s = Scene::with_agent(None);
    s.install();
    let path = hook_path(&s.fx.git_dir().join("hooks"));
    let first = std::fs::read(&path).unwrap();
    let (code, stdout, _) = parts(&closegate(&s.root(), &["hook", "install"]));
    assert_eq!(code, 0);
    assert!(stdout.contains("already installed"), "{stdout}");
    assert_eq!(std::fs::read(&path).unwrap(), first);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o111, 0o111);
    let text = String::from_utf8(first).unwrap();
    assert!(text.contains(env!("CARGO_BIN_EXE_closegate")), "{text}");
    assert!(text.contains("git -c core.hooksPath=/dev/null"), "{text}");
}

/// A foreign hook that logs its state and input lines to `log`, and refuses tags named `no-*`.
fn foreign_hook(log: &Path) -> String {
    format!(
        "#!/bin/sh\nwhile read -r o n r; do echo \"$1 $r\" >> '{}'; case $r in refs/tags/no-*) [ \"$1\" = prepared ] && exit 1 ;; esac; done\nexit 0\n",
        log.display()
    )
}

#[test]
fn a_foreign_hook_is_kept_only_with_force_and_then_chained() {
    let s = Scene::with_agent(None);
    let dir = s.fx.git_dir().join("hooks");
    let log = s.fx.tmp.path().join("foreign.log");
    let foreign = foreign_hook(&log);
    std::fs::write(hook_path(&dir), &foreign).unwrap();
    std::fs::set_permissions(hook_path(&dir), std::fs::Permissions::from_mode(0o755)).unwrap();

    let (code, _, stderr) = parts(&closegate(&s.root(), &["hook", "install"]));
    assert_eq!(code, 1);
    assert!(stderr.contains("--force"), "{stderr}");
    assert_eq!(std::fs::read_to_string(hook_path(&dir)).unwrap(), foreign);

    let (code, _, stderr) = parts(&closegate(&s.root(), &["hook", "install", "--force"]));
    assert_eq!(code, 0, "{stderr}");
    let backup = dir.join("reference-transaction.closegate-backup");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), foreign);
    let ours = std::fs::read(hook_path(&dir)).unwrap();
    // a second forced install changes nothing
    assert_eq!(
        parts(&closegate(&s.root(), &["hook", "install", "--force"])).0,
        0
    );
    assert_eq!(std::fs::read(hook_path(&dir)).unwrap(), ours);

    // both run: the foreign hook sees every state and line, closegate refuses the agent branch
    git(&s.root(), &["tag", "t1"]);
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("prepared refs/tags/t1") && logged.contains("committed refs/tags/t1"),
        "{logged}"
    );
    let (code, _, stderr) = parts(&git_output(&s.root(), &["branch", "-D", "agent/x"]));
    assert_ne!(code, 0);
    assert!(
        stderr.contains("refusing to delete agent branch"),
        "{stderr}"
    );
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .contains("prepared refs/heads/agent/x")
    );
    // the chained hook's refusal refuses
    let (code, _, stderr) = parts(&git_output(&s.root(), &["tag", "no-way"]));
    assert_ne!(code, 0, "{stderr}");
    assert!(stderr.contains("chained hook"), "{stderr}");

    let (code, stdout, _) = parts(&closegate(&s.root(), &["hook", "uninstall"]));
    assert_eq!(code, 0);
    assert!(stdout.contains("restored"), "{stdout}");
    assert_eq!(std::fs::read_to_string(hook_path(&dir)).unwrap(), foreign);
    assert!(!backup.exists());
}

#[test]
fn uninstall_removes_only_closegates_hook() {
    let s = Scene::with_agent(None);
    let path = hook_path(&s.fx.git_dir().join("hooks"));
    let (code, stdout, _) = parts(&closegate(&s.root(), &["hook", "uninstall"]));
    assert_eq!(code, 0);
    assert!(stdout.contains("nothing to remove"), "{stdout}");

    std::fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
    let (code, _, stderr) = parts(&closegate(&s.root(), &["hook", "uninstall"]));
    assert_eq!(code, 1);
    assert!(stderr.contains("did not write"), "{stderr}");
    assert!(path.exists());

    std::fs::remove_file(&path).unwrap();
    s.install();
    let (code, _, _) = parts(&closegate(&s.root(), &["hook", "uninstall"]));
    assert_eq!(code, 0);
    assert!(!path.exists());
    git(&s.root(), &["branch", "-D", "agent/x"]);
}

#[test]
fn core_hooks_path_relative_and_absolute() {
    let s = Scene::with_agent(None);
    git(&s.root(), &["config", "core.hooksPath", ".githooks"]);
    s.install();
    assert!(hook_path(&s.root().join(".githooks")).is_file());
    assert!(!hook_path(&s.fx.git_dir().join("hooks")).exists());
    s.assert_delete_refused(&s.root());

    let abs = s.fx.tmp.path().join("shared-hooks");
    git(
        &s.root(),
        &["config", "core.hooksPath", abs.to_str().unwrap()],
    );
    s.install();
    assert!(hook_path(&abs).is_file());
    s.assert_delete_refused(&s.root());
    assert!(s.branch_exists("agent/x"));
}

#[test]
fn install_from_a_linked_worktree_writes_to_the_common_hooks() {
    let s = Scene::with_agent(None);
    s.fx.commit("feature", &[("f.txt", Some("f\n"))], "feature");
    let wt = s.fx.worktree("feature", "feature");
    let (code, _, stderr) = parts(&closegate(&wt, &["hook", "install"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(hook_path(&s.fx.git_dir().join("hooks")).is_file());
    // fires from the linked worktree and from the main one
    s.assert_delete_refused(&wt);
    s.assert_delete_refused(&s.root());
    assert!(s.branch_exists("agent/x"));
}

#[test]
fn an_unreadable_configuration_holds_only_agent_branches() {
    // SPEC §9 (rewritten): an unreadable configuration no longer refuses every branch update;
    // the hook falls back to the default `agent_branches` and holds only those.
    let s = Scene::with_agent(Some("no_such_key = 1\n"));
    s.install();
    git(&s.root(), &["tag", "still-fine"]);
    git(&s.root(), &["branch", "feature"]);
    assert!(s.branch_exists("feature"));
    let (code, _, stderr) = parts(&git_output(&s.root(), &["branch", "-D", "agent/x"]));
    assert_ne!(code, 0);
    assert!(stderr.contains("main:.closegate.toml"), "{stderr}");
    assert!(s.branch_exists("agent/x"));
    git(
        &s.root(),
        &["-c", "core.hooksPath=/dev/null", "branch", "-D", "agent/x"],
    );
    assert!(!s.branch_exists("agent/x"));
}
