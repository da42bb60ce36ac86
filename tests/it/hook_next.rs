//! Every `closegate check` / `closegate approve` command a hook refusal prints runs as printed
//! from where the user is, and then the refused git operation succeeds (SPEC §9).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::fixture::{closegate, git, git_output, hermetic, parts};
use crate::hook::{HookScene, PASSING_CONFIG, Scene};

/// The worktree `wt/x` on `agent/x` after the agent's last steps: optionally a commit touching
/// the protected surface `tests`, then `closegate close --commit` (a single trailing status-only
/// commit whose close line names the commit before it). Returns the worktree and that commit.
fn closed_branch(s: &Scene, protected: bool) -> (PathBuf, String) {
    let wt = s.fx.worktree("x", "agent/x");
    if protected {
        s.fx.write(&wt, "tests/x_test.sh", "true\n");
        git(&wt, &["add", "tests/x_test.sh"]);
        git(&wt, &["commit", "-q", "-m", "test x"]);
    }
    let named = git(&wt, &["rev-parse", "HEAD"]).trim().to_string();
    let args = [
        "close",
        "--artifact",
        "src/lib.rs",
        "--abstract",
        "adds x, proven by the smoke check",
        "--commit",
    ];
    let (code, stdout, stderr) = parts(&closegate(&wt, &args));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(git(&wt, &["rev-parse", "HEAD~1"]).trim(), named);
    (wt, named)
}

fn remove_worktree(s: &Scene, wt: &Path) {
    git(&s.root(), &["worktree", "remove", wt.to_str().unwrap()]);
}

/// The commands between backticks in a refusal that start with `closegate <sub>`.
fn printed(stderr: &str, sub: &str) -> String {
    let start = format!("`closegate {sub} ");
    let at = stderr.find(&start).unwrap_or_else(|| panic!("{stderr}"));
    let rest = &stderr[at + 1..];
    rest[..rest.find('`').unwrap()].to_string()
}

/// Run `command` verbatim through sh in `cwd`, with this build's closegate first on PATH.
fn run_printed(cwd: &Path, command: &str) -> Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_closegate")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut cmd = Command::new("sh");
    cmd.args(["-c", command]).current_dir(cwd);
    hermetic(&mut cmd, cwd);
    cmd.env("PATH", path);
    cmd.output().unwrap()
}

/// [`run_printed`] as a human runs it: on a terminal (util-linux `script`), `answer` typed on it.
fn run_printed_on_a_terminal(cwd: &Path, command: &str, answer: &str) -> Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_closegate")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut cmd = Command::new("script");
    cmd.args(["-qec", command, "/dev/null"]).current_dir(cwd);
    hermetic(&mut cmd, cwd);
    cmd.env("PATH", path);
    crate::fixture::output_with_stdin(cmd, answer.as_bytes())
}

/// The repository's git configuration names the reviewer, as a person's would.
fn reviewer(s: &Scene) {
    git(&s.root(), &["config", "user.name", "Reviewer"]);
}

#[test]
fn the_printed_approve_runs_as_printed_and_then_the_merge_passes() {
    // The auditor's repro: protected change, status-only trailing commit, worktree removed; the
    // merge of the tip (judged on the status-only commit) and of `agent/x~1` (the commit the
    // close line names) alike.
    for rev in ["agent/x", "agent/x~1"] {
        let s = Scene::with_agent(Some(PASSING_CONFIG));
        s.install();
        reviewer(&s);
        let root = s.root();
        let (wt, named) = closed_branch(&s, true);
        remove_worktree(&s, &wt);
        let (code, _, stderr) = parts(&git_output(&root, &["merge", "--no-edit", rev]));
        assert_ne!(code, 0, "{rev}");
        git(&root, &["reset", "-q", "--merge"]);
        let check = printed(&stderr, "check");
        let approve = printed(&stderr, "approve");
        assert!(approve.contains(&format!("--commit {named}")), "{approve}");

        let (code, stdout, stderr) = parts(&run_printed(&root, &check));
        assert_eq!(
            code, 3,
            "`{check}` should find the protected change:\n{stdout}{stderr}"
        );
        // A human runs it, on a terminal (SPEC §26.5: off one, approve acts only with --yes).
        let (code, stdout, stderr) = parts(&run_printed_on_a_terminal(&root, &approve, "y\n"));
        assert_eq!(
            code, 0,
            "`{approve}` did not run as printed:\n{stdout}{stderr}"
        );
        let before = s.main_tip();
        let (code, _, stderr) = parts(&git_output(&root, &["merge", "--no-edit", rev]));
        assert_eq!(code, 0, "the approved merge of {rev} was refused: {stderr}");
        assert_ne!(s.main_tip(), before);
    }
}

#[test]
fn merging_agent_x_tilde_1_prints_commands_that_pass_it() {
    // The worktree is still there: the commands name it.
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.install();
    reviewer(&s);
    let root = s.root();
    let (wt, named) = closed_branch(&s, false);
    let (code, _, stderr) = parts(&git_output(&root, &["merge", "--ff-only", "agent/x~1"]));
    assert_ne!(code, 0);
    git(&root, &["reset", "-q", "--merge"]);
    let check = printed(&stderr, "check");
    let wt_path = wt.canonicalize().unwrap();
    assert!(check.contains(wt_path.to_str().unwrap()), "{check}");
    assert!(printed(&stderr, "approve").ends_with(&format!("--commit {named}")));

    let (code, stdout, stderr) = parts(&run_printed(&root, &check));
    assert_eq!(code, 0, "`{check}` did not verify:\n{stdout}{stderr}");
    git(&root, &["merge", "--ff-only", "agent/x~1"]);
    assert_eq!(s.main_tip().to_string(), named);
}

#[test]
fn the_printed_check_for_a_refused_delete_runs_from_a_subdirectory() {
    let s = Scene::with_agent(Some(PASSING_CONFIG));
    s.install();
    let root = s.root();
    let (wt, _) = closed_branch(&s, false);
    remove_worktree(&s, &wt);
    let (code, _, stderr) = parts(&git_output(&root, &["branch", "-D", "agent/x"]));
    assert_ne!(code, 0);
    let check = printed(&stderr, "check");
    assert_eq!(check, "closegate check --rev agent/x --no-worktree");
    let sub = root.join("sub");
    std::fs::create_dir(&sub).unwrap();
    let (code, stdout, stderr) = parts(&run_printed(&sub, &check));
    assert_eq!(code, 0, "`{check}` did not verify:\n{stdout}{stderr}");
    git(&root, &["branch", "-D", "agent/x"]);
    assert!(!s.branch_exists("agent/x"));
}
