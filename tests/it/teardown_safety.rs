//! Teardown that loses nothing (SPEC §7 step 2) under races, odd layouts and interrupted runs:
//! a folder swapped for a link mid-removal, files written while the checks run or after the last
//! probe, commits only a detached HEAD holds, bare repositories in ignored folders, the worktree's
//! own status document, aside names closegate did not create, and SIGKILL at many points followed
//! by a rerun from outside the repository. The races are driven by the test-only failpoint
//! `CLOSEGATE_TEST_FAILPOINT` (README: "Teardown under test").

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use git2::Oid;

use crate::fixture::{Fixture, git, hermetic, parts};
use crate::teardown::{PASSING_CONFIG, Scene, agent, audit, recorded_aside, write_status};

/// `<aside>.git`: where the aside's `.git` file goes just before the aside is removed.
pub fn breadcrumb(aside: &Path) -> PathBuf {
    let mut name = aside.file_name().unwrap().to_os_string();
    name.push(".git");
    aside.with_file_name(name)
}

fn command(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
    cmd.args(args).current_dir(cwd);
    hermetic(&mut cmd, cwd);
    for (key, value) in env {
        cmd.env(key, value);
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn run_env(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    command(cwd, args, env).output().unwrap()
}

/// Every file and link under `dir` with its bytes (a link: its target), folders as empty.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.depth() > 0)
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
            let bytes = if e.file_type().is_symlink() {
                std::fs::read_link(e.path())
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes()
            } else if e.file_type().is_file() {
                std::fs::read(e.path()).unwrap()
            } else {
                Vec::new()
            };
            (rel, bytes)
        })
        .collect()
}

/// A folder of `n` files beside the worktrees, which no teardown may touch.
fn outside(fx: &Fixture, n: usize) -> PathBuf {
    let dir = fx.tmp.path().join("outside");
    for i in 0..n {
        fx.write(&dir, &format!("keep-{i:03}.txt"), &format!("outside {i}\n"));
    }
    dir
}

/// A teardown paused at a failpoint; `resume` lets it go on and returns its output.
struct Paused {
    child: Option<Child>,
    sync: tempfile::TempDir,
}

impl Drop for Paused {
    /// A test that failed while the teardown was paused lets it go rather than leave it waiting.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = std::fs::write(self.sync.path().join("go"), "");
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Paused {
    fn start(s: &Scene, at: &str) -> Paused {
        Paused::start_with(s, at, &[])
    }

    /// [`Paused::start`] with more arguments for the teardown (`--force`).
    fn start_with(s: &Scene, at: &str, more: &[&str]) -> Paused {
        let sync = tempfile::tempdir().unwrap();
        let sync_s = sync.path().to_str().unwrap().to_string();
        let point = format!("pause:{at}");
        let wt = s.wt.to_str().unwrap().to_string();
        let env = [
            ("CLOSEGATE_TEST_FAILPOINT", point.as_str()),
            ("CLOSEGATE_TEST_FAILPOINT_DIR", sync_s.as_str()),
        ];
        let mut args = vec!["teardown", wt.as_str()];
        args.extend_from_slice(more);
        let mut child = command(&s.fx.root(), &args, &env).spawn().unwrap();
        let paused = sync.path().join("paused");
        while !paused.exists() {
            if let Some(status) = child.try_wait().unwrap() {
                let out = child.wait_with_output().unwrap();
                panic!(
                    "the teardown ended ({status}) before the failpoint {at}:\n{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        Paused {
            child: Some(child),
            sync,
        }
    }

    fn resume(mut self) -> (i32, String, String) {
        std::fs::write(self.sync.path().join("go"), "").unwrap();
        let child = self.child.take().unwrap();
        parts(&child.wait_with_output().unwrap())
    }
}

/// The scene with ignored build output in `target/sub/f00..f09` and `target/top.o`.
fn scene_with_build_output() -> Scene {
    let s = Scene::honest_return();
    for i in 0..10 {
        s.fx.write(&s.wt, &format!("target/sub/f{i:02}"), "build output\n");
    }
    s.fx.write(&s.wt, "target/top.o", "build output\n");
    s
}

/// Swap `target/sub` inside the aside for a link to `outside` (the folder itself moves elsewhere
/// inside the aside), as another process could mid-removal.
fn swap_for_link(aside: &Path, outside: &Path) {
    let sub = aside.join("target/sub");
    std::fs::rename(&sub, aside.join("target/moved")).unwrap();
    std::os::unix::fs::symlink(outside, &sub).unwrap();
}

#[test]
fn folder_swapped_for_a_link_mid_removal_deletes_nothing_outside() {
    // Before the folder is opened, and after it was opened and one file in it removed.
    for at in ["open target/sub", "remove target/sub/f05"] {
        let s = scene_with_build_output();
        let out_dir = outside(&s.fx, 200);
        let before = tree(&out_dir);
        let paused = Paused::start(&s, at);
        let aside = recorded_aside(&s.audit());
        assert!(aside.is_dir(), "paused at {at} with the worktree aside");
        swap_for_link(&aside, &out_dir);
        let (exit, out, err) = paused.resume();
        assert_eq!(tree(&out_dir), before, "{at}: files outside were touched");
        assert_eq!(exit, 2, "{at}: the link is left and reported\n{out}{err}");
        assert!(out.contains("left"), "{out}");
        assert!(
            out.contains("target/sub"),
            "{at}: the link is named:\n{out}"
        );
        let link = aside.join("target/sub");
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
        assert!(
            aside.join("target/moved").is_dir(),
            "{at}: a name the last probe never saw is left"
        );
        let last = s.audit().pop().unwrap();
        assert_eq!(last["incomplete"], true);
    }
}

#[test]
fn file_written_by_a_check_while_the_gate_runs_survives() {
    let fx = Fixture::new();
    let wt_dir = fx.tmp.path().join("wt/x");
    let late = wt_dir.join("notes/late.txt");
    // The check stands in for any process (the agent itself) that writes the worktree while the
    // gate runs; a sandboxed check cannot (tests/it/sandbox.rs), so this one runs with the
    // operator's `sandbox = "off"`.
    let config = format!(
        "sandbox = \"off\"\n[[checks]]\nname = \"smoke\"\nrun = \"test -f src/lib.rs && mkdir -p {0} \
         && echo work > {1}\"\ntimeout_s = 60\n",
        late.parent().unwrap().display(),
        late.display()
    );
    fx.commit(
        "main",
        &[
            (".gitignore", Some("target/\n")),
            (".closegate.toml", Some(&config)),
        ],
        "configure closegate",
    );
    fx.checkout(&fx.root());
    let (wt, _) = agent(&fx, "x", "close-ok");
    let out = crate::fixture::closegate(&fx.root(), &["teardown", wt.to_str().unwrap()]);
    let (exit, out, err) = parts(&out);
    assert_eq!(exit, 1, "{out}{err}");
    assert!(out.contains("teardown-untracked"), "{out}");
    assert!(out.contains("notes/late.txt"), "{out}");
    assert_eq!(std::fs::read_to_string(&late).unwrap(), "work\n");
}

#[test]
fn entries_that_appear_or_change_after_the_last_probe_are_left() {
    let s = scene_with_build_output();
    let paused = Paused::start(&s, "remove target/top.o");
    let aside = recorded_aside(&s.audit());
    std::fs::write(aside.join("target/new.txt"), "written after the probe\n").unwrap();
    std::fs::write(aside.join("target/top.o"), "changed after the probe!\n").unwrap();
    let (exit, out, err) = paused.resume();
    assert_eq!(exit, 2, "{out}{err}");
    assert!(
        out.contains("left") && out.contains("new.txt") && out.contains("top.o"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(aside.join("target/new.txt")).unwrap(),
        "written after the probe\n"
    );
    assert_eq!(
        std::fs::read_to_string(aside.join("target/top.o")).unwrap(),
        "changed after the probe!\n"
    );
    assert!(
        !aside.join("target/sub").exists(),
        "what was seen is removed"
    );
    assert!(err.contains("never deletes"), "{err}");
}

#[test]
fn file_written_between_the_probes_puts_the_worktree_back() {
    let s = scene_with_build_output();
    let wt = s.wt.canonicalize().unwrap();
    // The rename aside is the step after the record; the probe on the aside follows it.
    let paused = Paused::start(&s, "rename aside");
    s.fx.write(&s.wt, "notes/late.txt", "late work\n");
    let (exit, out, err) = paused.resume();
    assert_eq!(exit, 1, "{out}{err}");
    assert!(out.contains("teardown-untracked"), "{out}");
    assert!(out.contains("moved back"), "{out}");
    assert_eq!(
        std::fs::read_to_string(wt.join("notes/late.txt")).unwrap(),
        "late work\n"
    );
    assert!(wt.join(".git").is_file() && wt.join("target/sub/f00").exists());
    let last = s.audit().pop().unwrap();
    assert_eq!(last["removed"], false);
}

#[test]
fn repository_written_between_the_probes_puts_the_worktree_back() {
    // The probe on the aside judges nested repositories from the walk the removal is limited
    // to: one cloned into an ignored folder (bare, by what it holds) and one with a `.git`
    // folder, both after the first probe, are seen there.
    let s = scene_with_build_output();
    let wt = s.wt.canonicalize().unwrap();
    let paused = Paused::start(&s, "rename aside");
    let bare = wt.join("target/deep/plain");
    std::fs::create_dir_all(bare.parent().unwrap()).unwrap();
    git(
        &s.fx.root(),
        &["clone", "-q", "--bare", ".", bare.to_str().unwrap()],
    );
    let own = wt.join("target/own");
    std::fs::create_dir_all(&own).unwrap();
    git(&own, &["init", "-q"]);
    let (exit, out, err) = paused.resume();
    assert_eq!(exit, 1, "{out}{err}");
    assert!(out.contains("teardown-nested-repo"), "{out}");
    assert!(
        out.contains("target/deep/plain") && out.contains("target/own"),
        "{out}"
    );
    assert!(out.contains("moved back"), "{out}");
    assert!(bare.join("objects").is_dir() && own.join(".git/HEAD").is_file());
    let last = s.audit().pop().unwrap();
    assert_eq!(last["removed"], false);
}

#[test]
fn a_file_written_after_the_first_probe_is_kept_with_and_without_force() {
    // The first probe judges the gate's scan (no check ran after it) and the escrow holds what
    // that probe saw. A file written after it, before the escrow, is not lost: the last probe,
    // on the aside, refuses it and the worktree goes back — under `--force` too, since the
    // escrow does not hold it.
    for more in [&[][..], &["--force"][..]] {
        let s = Scene::honest_return();
        let paused = Paused::start_with(&s, "escrow", more);
        let late = s.wt.join("late.txt");
        std::fs::write(&late, "written after the first probe\n").unwrap();
        let (exit, out, err) = paused.resume();
        assert_eq!(exit, 1, "{more:?}: {out}{err}");
        assert!(out.contains("teardown-untracked"), "{more:?}: {out}");
        assert!(
            out.contains("late.txt") && out.contains("moved back"),
            "{more:?}: {out}"
        );
        let kept = std::fs::read_to_string(&late).unwrap();
        assert_eq!(kept, "written after the first probe\n", "{more:?}");
        let last = s.audit().pop().unwrap();
        assert_eq!(last["removed"], false, "{more:?}");
    }
}

fn head_of(dir: &Path) -> Oid {
    Oid::from_str(git(dir, &["rev-parse", "HEAD"]).trim()).unwrap()
}

#[test]
fn detached_head_with_new_commits_is_refused_naming_them() {
    let fx = Fixture::new();
    fx.commit(
        "main",
        &[(".closegate.toml", Some(PASSING_CONFIG))],
        "configure",
    );
    fx.checkout(&fx.root());
    let tip = fx.commit(
        "agent/x",
        &[("src/lib.rs", Some("pub fn x() {}\n"))],
        "add x",
    );
    let wt = fx.tmp.path().join("wt/x");
    std::fs::create_dir_all(wt.parent().unwrap()).unwrap();
    let wt_s = wt.to_str().unwrap();
    git(
        &fx.root(),
        &["worktree", "add", "-q", "--detach", wt_s, &tip.to_string()],
    );
    fx.write(&wt, "src/more.rs", "more\n");
    git(&wt, &["add", "src/more.rs"]);
    git(&wt, &["commit", "-q", "-m", "only on the detached HEAD"]);
    let first = head_of(&wt);
    fx.write(&wt, "src/most.rs", "most\n");
    git(&wt, &["add", "src/most.rs"]);
    git(&wt, &["commit", "-q", "-m", "second"]);
    let second = head_of(&wt);
    // The status document names the detached HEAD's commit; no branch holds it.
    write_status(&wt, "x", "closed-without-merge", second, "second");
    let (exit, out, err) = parts(&crate::fixture::closegate(
        &fx.root(),
        &["teardown", wt_s, "--allow-unverified"],
    ));
    assert_eq!(exit, 1, "{out}{err}");
    assert!(out.contains("teardown-unreachable-commits"), "{out}");
    assert!(
        out.contains(&first.to_string()) && out.contains(&second.to_string()),
        "both commits are named:\n{out}"
    );
    assert!(wt.join(".git").is_file(), "nothing was removed");
    // Once a branch holds them, nothing is orphaned.
    git(&wt, &["branch", "keep-detached"]);
    let (exit, out, err) = parts(&crate::fixture::closegate(
        &fx.root(),
        &["teardown", wt_s, "--dry-run"],
    ));
    assert!(!out.contains("teardown-unreachable-commits"), "{out}{err}");
    assert_eq!(exit, 0, "{out}{err}");
}

#[test]
fn amend_on_the_branch_is_not_an_unreachable_commit() {
    let s = Scene::honest_return();
    s.fx.write(&s.wt, "src/lib.rs", "pub fn x() { amended() }\n");
    git(&s.wt, &["commit", "-q", "-a", "--amend", "-m", "add x"]);
    let amended = head_of(&s.wt);
    assert_ne!(amended, s.tip);
    write_status(&s.wt, "x", "close-ok", amended, "add x");
    let (exit, out, err) = s.teardown(&[]);
    assert!(!out.contains("teardown-unreachable-commits"), "{out}");
    assert_eq!(exit, 0, "{out}{err}");
    assert!(!s.wt.exists());
    // The amended-away commit is still reachable from the branch's reflog.
    let log = git(&s.fx.root(), &["reflog", "show", "agent/x"]);
    assert!(log.contains(&s.tip.to_string()[..7]), "{log}");
}

#[test]
fn bare_repository_in_an_ignored_folder_is_refused() {
    let s = Scene::honest_return();
    let backup = s.wt.join("target/backup.git");
    let backup_s = backup.to_str().unwrap();
    git(&s.fx.root(), &["clone", "-q", "--bare", ".", backup_s]);
    let out = s.teardown(&[]).1;
    assert!(out.contains("teardown-nested-repo"), "{out}");
    assert!(out.contains("target/backup.git"), "{out}");
    assert!(backup.join("HEAD").is_file());
    // By what it is, not by its name.
    std::fs::rename(&backup, s.wt.join("target/plain")).unwrap();
    let out = s.teardown(&[]).1;
    assert!(
        out.contains("teardown-nested-repo") && out.contains("target/plain"),
        "{out}"
    );
    assert!(s.wt.join("target/plain/objects").is_dir());
}

#[test]
fn status_flag_archives_the_worktrees_own_different_document() {
    let s = Scene::honest_return();
    let given = s.fx.tmp.path().join("given.md");
    std::fs::copy(s.wt.join("_EXEC_STATUS.md"), &given).unwrap();
    let own = std::fs::read(s.wt.join("_EXEC_STATUS.md")).unwrap();
    let mut changed = own.clone();
    changed.splice(0..0, b"<!-- the worktree's own copy -->\n".iter().copied());
    std::fs::write(s.wt.join("_EXEC_STATUS.md"), &changed).unwrap();
    let (exit, out, err) = s.teardown(&["--status", given.to_str().unwrap()]);
    assert_eq!(exit, 0, "{out}{err}");
    let records = s.fx.git_dir().join("closegate/records/x");
    let archived = std::fs::read(records.join(format!("{}.md", s.tip))).unwrap();
    assert_eq!(archived, std::fs::read(&given).unwrap());
    let worktree_copy = records.join(format!("{}.worktree.md", s.tip));
    assert_eq!(std::fs::read(&worktree_copy).unwrap(), changed);
    assert!(out.contains(".worktree.md"), "{out}");
}

#[test]
fn aside_directories_closegate_did_not_create_are_never_removed() {
    let s = Scene::honest_return();
    let wt = s.wt.canonicalize().unwrap();
    let old_style = wt.with_file_name(".x.closegate-removing");
    let lookalike = wt.with_file_name(".x.closegate-removing-0123456789abcdef");
    for dir in [&old_style, &lookalike] {
        s.fx.write(dir, "precious.txt", "not closegate's\n");
    }
    let (exit, out, err) = s.teardown(&[]);
    assert_eq!(exit, 0, "{out}{err}");
    assert!(!wt.exists());
    for dir in [&old_style, &lookalike] {
        let text = std::fs::read_to_string(dir.join("precious.txt")).unwrap();
        assert_eq!(text, "not closegate's\n", "{}", dir.display());
    }
    let aside = recorded_aside(&s.audit());
    assert_ne!(aside, old_style);
    assert_ne!(aside, lookalike);
    // A rerun from outside finds nothing of its own to finish and touches neither.
    let elsewhere = tempfile::tempdir().unwrap();
    let out = run_env(elsewhere.path(), &["teardown", wt.to_str().unwrap()], &[]);
    let (_, out, err) = parts(&out);
    for dir in [&old_style, &lookalike] {
        assert!(dir.join("precious.txt").exists(), "{out}{err}");
    }
}

#[test]
fn interrupted_teardown_is_finished_from_outside_the_repository() {
    let s = scene_with_build_output();
    let wt = s.wt.canonicalize().unwrap();
    let out = run_env(
        &s.fx.root(),
        &["teardown", wt.to_str().unwrap()],
        &[("CLOSEGATE_TEST_FAILPOINT", "kill:8")],
    );
    assert_eq!(out.status.code(), None, "killed by the failpoint");
    let aside = recorded_aside(&s.audit());
    assert!(!wt.exists() && aside.is_dir());
    let elsewhere = tempfile::tempdir().unwrap();
    let out = run_env(elsewhere.path(), &["teardown", wt.to_str().unwrap()], &[]);
    let (exit, out, err) = parts(&out);
    assert_eq!(exit, 0, "{out}{err}");
    assert!(!aside.exists() && !breadcrumb(&aside).exists(), "{out}");
    assert!(!s.fx.git_dir().join("worktrees/x").exists());
    let last = s.audit().pop().unwrap();
    assert_eq!(last["resumed"], true);
    assert_eq!(last["removed"], true);
}

/// Whether nothing of the worktree at `wt` is left: no directory, no aside, no `<aside>.git`, no
/// administrative data, and a record of the removal.
fn fully_removed(fx: &Fixture, wt: &Path, slug: &str) -> bool {
    let prefix = format!(".{slug}.closegate-removing-");
    let siblings = std::fs::read_dir(wt.parent().unwrap())
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with(&prefix));
    let recorded = audit(fx).iter().any(|r| {
        r["event"] == "teardown"
            && r["removed"] == true
            && r["worktree"] == wt.display().to_string().as_str()
    });
    !wt.exists() && !siblings && !fx.git_dir().join("worktrees").join(slug).exists() && recorded
}

/// SPEC §24 under the kill test: the escrow is either absent, and then nothing was removed, or
/// complete — its commit, tree and blobs readable, the status document's bytes in it, the HEAD
/// commit its first parent.
fn escrow_absent_or_complete(fx: &Fixture, wt: &Path, slug: &str, doc: &[u8], point: &str) {
    let name = format!("refs/closegate/escrow/{slug}/1");
    let Ok(id) = fx.repo.refname_to_id(&name) else {
        let intact = wt.join(".git").is_file() && wt.join("target/d17/o099.o").exists();
        assert!(
            intact,
            "killed at step {point}: something removed without an escrow"
        );
        return;
    };
    let commit = fx.repo.find_commit(id).unwrap();
    let head = fx
        .repo
        .refname_to_id(&format!("refs/heads/agent/{slug}"))
        .unwrap();
    assert_eq!(commit.parent_id(0).unwrap(), head, "step {point}");
    let tree = commit.tree().unwrap();
    let entry = tree.get_path(Path::new("_EXEC_STATUS.md")).unwrap();
    assert_eq!(
        fx.repo.find_blob(entry.id()).unwrap().content(),
        doc,
        "step {point}"
    );
    tree.walk(git2::TreeWalkMode::PreOrder, |_, e| {
        assert!(fx.repo.find_object(e.id(), None).is_ok(), "step {point}");
        git2::TreeWalkResult::Ok
    })
    .unwrap();
}

#[test]
fn teardown_killed_at_every_kind_of_step_ends_intact_or_fully_removed() {
    let fx = Fixture::new();
    let mut tracked: Vec<(String, Option<String>)> = (0..200)
        .map(|i| {
            (
                format!("lib/m{:02}/f{i:03}.rs", i % 10),
                Some(format!("// {i}\n")),
            )
        })
        .collect();
    tracked.push((".gitignore".into(), Some("target/\n".into())));
    tracked.push((".closegate.toml".into(), Some(PASSING_CONFIG.into())));
    let files: Vec<(&str, Option<&str>)> = tracked
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_deref()))
        .collect();
    fx.commit("main", &files, "a few hundred files");
    fx.checkout(&fx.root());
    let out_dir = outside(&fx, 50);
    let template = out_dir.join("template");
    for f in 0..100 {
        fx.write(&template, &format!("o{f:03}.o"), &format!("object {f}\n"));
    }
    let keep_outside = tree(&out_dir);
    let keep_main = tree(&fx.root().join("lib"));
    let elsewhere = tempfile::tempdir().unwrap();
    // Steps: archive, record, rename aside, then one per folder opened and per entry removed
    // (about 2,090 here: 205 tracked files, 1,818 ignored ones, 31 folders), then the
    // administrative data, the `.git` file moved out, the aside, `<aside>.git`. The checks are
    // not what is tested here: `--no-checks --allow-unverified` keeps the test quick.
    let mut points: Vec<String> = (1..=6).map(|n| n.to_string()).collect();
    points.extend([10, 30, 100, 300, 700, 1200, 1500, 1700, 1900, 2000].map(|n| n.to_string()));
    points.extend(
        [
            "remove administrative data",
            "move .git out",
            "remove aside",
            "remove .git",
        ]
        .map(str::to_string),
    );
    for (n, point) in points.iter().enumerate() {
        let slug = format!("k{n}");
        let (wt, _) = agent(&fx, &slug, "close-ok");
        // Build output: hard links to the template (a link is ~35 times cheaper to make than a
        // file on a busy disk), plus a few files of their own.
        for d in 0..18 {
            let dir = wt.join(format!("target/d{d:02}"));
            std::fs::create_dir_all(&dir).unwrap();
            for f in 0..100 {
                let name = format!("o{f:03}.o");
                std::fs::hard_link(template.join(&name), dir.join(&name)).unwrap();
            }
            std::fs::write(dir.join("own.o"), "object of its own\n").unwrap();
        }
        let wt = wt.canonicalize().unwrap();
        let kill = format!("kill:{point}");
        let args = [
            "teardown",
            wt.to_str().unwrap(),
            "--no-checks",
            "--allow-unverified",
        ];
        let doc = std::fs::read(wt.join("_EXEC_STATUS.md")).unwrap();
        let first = run_env(&fx.root(), &args, &[("CLOSEGATE_TEST_FAILPOINT", &kill)]);
        let (exit, out, err) = parts(&first);
        assert_eq!(
            first.status.code(),
            None,
            "not killed at step {point} (exit {exit}):\n{out}{err}"
        );
        escrow_absent_or_complete(&fx, &wt, &slug, &doc, point);
        let rerun = run_env(elsewhere.path(), &args, &[]);
        let (exit, out, err) = parts(&rerun);
        let intact = wt.join(".git").is_file() && wt.join("target/d17/o099.o").exists();
        assert!(
            (exit == 0 && fully_removed(&fx, &wt, &slug)) || (exit == 1 && intact),
            "killed at step {point}, the rerun from outside (exit {exit}):\n{out}{err}"
        );
        assert_eq!(tree(&out_dir), keep_outside, "killed at step {point}");
        assert_eq!(tree(&fx.root().join("lib")), keep_main, "step {point}");
    }
    eprintln!("kill points exercised: {}", points.len());
    assert_eq!(points.len(), 20);
}

#[test]
fn fixup_rebase_on_the_branch_is_not_an_unreachable_commit() {
    let s = Scene::honest_return();
    s.fx.write(&s.wt, "src/lib.rs", "pub fn x() { first() }\n");
    git(&s.wt, &["commit", "-q", "-a", "-m", "first"]);
    s.fx.write(&s.wt, "src/lib.rs", "pub fn x() { fixed() }\n");
    git(&s.wt, &["commit", "-q", "-a", "--fixup", "HEAD"]);
    git(
        &s.wt,
        &[
            "-c",
            "sequence.editor=true",
            "rebase",
            "-q",
            "-i",
            "--autosquash",
            // Every pick makes a new commit, so the one the fixup replaces is in no branch.
            "--force-rebase",
            "main",
        ],
    );
    let head = head_of(&s.wt);
    let subject = git(&s.wt, &["log", "-1", "--format=%s"]);
    write_status(&s.wt, "x", "close-ok", head, subject.trim());
    let (exit, out, err) = s.teardown(&[]);
    assert!(!out.contains("teardown-unreachable-commits"), "{out}");
    assert_eq!(exit, 0, "{out}{err}");
}

#[test]
fn unmerged_delete_branch_names_its_real_cause_and_the_way_on() {
    let s = Scene::honest_return();
    let (exit, out, _) = s.teardown(&["--delete-branch"]);
    assert_eq!(exit, 1, "{out}");
    let headline = out
        .lines()
        .find(|l| l.starts_with("teardown refused"))
        .unwrap();
    assert!(
        !headline.contains("something in the worktree would be lost"),
        "{headline}"
    );
    assert!(
        headline.contains("not merged") && headline.contains("without --delete-branch"),
        "{headline}"
    );
}

/// SPEC §7.2 lists `teardown-unmerged` without exemption: abandoned (`closed-without-merge`) work
/// keeps its unmerged branch with `--delete-branch` too; without the flag it is torn down.
#[test]
fn abandoned_work_keeps_its_unmerged_branch_with_delete_branch() {
    let fx = Fixture::new();
    fx.commit(
        "main",
        &[(".closegate.toml", Some(PASSING_CONFIG))],
        "configure",
    );
    fx.checkout(&fx.root());
    let (wt, tip) = agent(&fx, "stop", "closed-without-merge");
    let wt_s = wt.to_str().unwrap();
    for args in [&["--delete-branch", "--dry-run"][..], &["--delete-branch"]] {
        let mut all = vec!["teardown", wt_s];
        all.extend_from_slice(args);
        let (exit, out, err) = parts(&crate::fixture::closegate(&fx.root(), &all));
        assert_eq!(exit, 1, "{args:?}: {out}{err}");
        assert!(out.contains("teardown-unmerged"), "{out}");
        assert!(wt.join("src/lib.rs").is_file());
        assert_eq!(fx.repo.refname_to_id("refs/heads/agent/stop").unwrap(), tip);
    }
    let last = audit(&fx).pop().unwrap();
    assert_eq!(last["event"], "teardown");
    assert_eq!(last["removed"], false);
    let (exit, out, err) = parts(&crate::fixture::closegate(&fx.root(), &["teardown", wt_s]));
    assert_eq!(exit, 0, "{out}{err}");
    assert!(!wt.exists());
    assert_eq!(fx.repo.refname_to_id("refs/heads/agent/stop").unwrap(), tip);
    let last = audit(&fx)
        .into_iter()
        .rev()
        .find(|r| r["event"] == "teardown" && r["removed"] == true)
        .unwrap();
    assert_eq!(last["admission"], "closed-without-merge");
}

#[test]
fn links_in_the_worktree_are_removed_never_followed() {
    let s = Scene::honest_return();
    let out_dir = outside(&s.fx, 20);
    let before = tree(&out_dir);
    std::fs::create_dir_all(s.wt.join("target")).unwrap();
    std::os::unix::fs::symlink(&out_dir, s.wt.join("target/to-outside")).unwrap();
    std::os::unix::fs::symlink(out_dir.join("keep-000.txt"), s.wt.join("target/file-link"))
        .unwrap();
    let (exit, out, err) = s.teardown(&[]);
    assert_eq!(exit, 0, "{out}{err}");
    assert!(!s.wt.exists());
    assert_eq!(tree(&out_dir), before, "a link's target was touched");
}

#[test]
fn work_written_into_an_interrupted_aside_is_kept_by_the_rerun() {
    let s = scene_with_build_output();
    let wt = s.wt.canonicalize().unwrap();
    let args = ["teardown", wt.to_str().unwrap()];
    let out = run_env(
        &s.fx.root(),
        &args,
        &[("CLOSEGATE_TEST_FAILPOINT", "kill:remove target/top.o")],
    );
    assert_eq!(out.status.code(), None, "killed by the failpoint");
    let aside = recorded_aside(&s.audit());
    std::fs::write(aside.join("late.txt"), "work written after the kill\n").unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let (exit, out, err) = parts(&run_env(elsewhere.path(), &args, &[]));
    // the rerun's probe saw it: a refusal (SPEC §7.2, exit 1, the code named), not a `left`
    assert_eq!(exit, 1, "{out}{err}");
    assert!(
        out.contains("teardown-untracked") && out.contains("late.txt"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(aside.join("late.txt")).unwrap(),
        "work written after the kill\n"
    );
    // Once it is moved out, the rerun finishes.
    std::fs::remove_file(aside.join("late.txt")).unwrap();
    let (exit, out, err) = parts(&run_env(elsewhere.path(), &args, &[]));
    assert_eq!(exit, 0, "{out}{err}");
    assert!(!aside.exists());
}

/// The scene with build output, plus enough ignored files (hard links, cheap to make) that the
/// last walk sees more entries than the background removal starts at (README: "Teardown in the
/// background").
fn large_scene() -> Scene {
    let s = scene_with_build_output();
    let template = s.fx.tmp.path().join("template.o");
    std::fs::write(&template, "object\n").unwrap();
    for d in 0..85 {
        let dir = s.wt.join(format!("target/fill/d{d:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            std::fs::hard_link(&template, dir.join(format!("o{f:03}.o"))).unwrap();
        }
    }
    s
}

/// Wait (at most two minutes) until `done` holds: the background removal has no other signal.
fn wait_for(what: &str, done: impl Fn() -> bool) {
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !done() {
        assert!(
            std::time::Instant::now() < give_up,
            "gave up waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn large_worktree_is_removed_in_the_background_never_through_a_link() {
    let s = large_scene();
    let out_dir = outside(&s.fx, 20);
    let before = tree(&out_dir);
    std::os::unix::fs::symlink(&out_dir, s.wt.join("target/to-outside")).unwrap();
    let wt = s.wt.canonicalize().unwrap();
    let (exit, out, err) = parts(&run_env(
        &s.fx.root(),
        &["teardown", wt.to_str().unwrap()],
        &[],
    ));
    assert_eq!(exit, 0, "{out}{err}");
    assert!(out.contains("in the background"), "{out}");
    assert!(
        !wt.exists(),
        "the worktree's path is free when the teardown returns"
    );
    let aside = recorded_aside(&s.audit());
    wait_for("the background removal", || {
        fully_removed(&s.fx, &wt, "x") && !breadcrumb(&aside).exists()
    });
    assert_eq!(tree(&out_dir), before, "a link's target was touched");
    assert!(
        s.audit().iter().all(|r| r["incomplete"].is_null()),
        "nothing was left: {:?}",
        s.audit()
    );
}

#[test]
fn folder_swapped_for_a_link_during_a_background_removal_deletes_nothing_outside() {
    let s = large_scene();
    let out_dir = outside(&s.fx, 200);
    let before = tree(&out_dir);
    let wt = s.wt.canonicalize().unwrap();
    let sync = tempfile::tempdir().unwrap();
    let env = [
        ("CLOSEGATE_TEST_FAILPOINT", "pause:open target/sub"),
        (
            "CLOSEGATE_TEST_FAILPOINT_DIR",
            sync.path().to_str().unwrap(),
        ),
    ];
    let (exit, out, err) = parts(&run_env(
        &s.fx.root(),
        &["teardown", wt.to_str().unwrap()],
        &env,
    ));
    assert_eq!(exit, 0, "{out}{err}");
    assert!(out.contains("in the background"), "{out}");
    // The detached removal stops before it opens `target/sub`; the folder is swapped for a link.
    wait_for("the background removal to pause", || {
        sync.path().join("paused").exists()
    });
    let aside = recorded_aside(&s.audit());
    swap_for_link(&aside, &out_dir);
    std::fs::write(sync.path().join("go"), "").unwrap();
    wait_for("the incomplete record", || {
        s.audit().last().is_some_and(|r| r["incomplete"] == true)
    });
    assert_eq!(tree(&out_dir), before, "files outside were touched");
    let last = s.audit().pop().unwrap();
    let left = last["left"].to_string();
    assert!(left.contains("target/sub"), "the link is named: {last}");
    let link = aside.join("target/sub");
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert!(
        aside.join("target/moved").is_dir(),
        "a name the last probe never saw is left"
    );
    assert!(
        aside.join(".git").is_file(),
        "the rerun can still find the repository"
    );
}

#[test]
fn a_killed_background_removal_is_finished_by_a_rerun_from_outside() {
    let s = large_scene();
    let wt = s.wt.canonicalize().unwrap();
    let args = ["teardown", wt.to_str().unwrap()];
    let env = [("CLOSEGATE_TEST_FAILPOINT", "kill:remove target/top.o")];
    let (exit, out, err) = parts(&run_env(&s.fx.root(), &args, &env));
    assert_eq!(exit, 0, "{out}{err}");
    let aside = recorded_aside(&s.audit());
    // The detached child kills itself at the failpoint; what it did not reach is left.
    wait_for("the background removal to die", || {
        aside.join("target/top.o").exists() && !aside.join("target/sub").exists()
    });
    std::thread::sleep(std::time::Duration::from_millis(200));
    let elsewhere = tempfile::tempdir().unwrap();
    let (exit, out, err) = parts(&run_env(elsewhere.path(), &args, &[]));
    assert_eq!(exit, 0, "{out}{err}");
    wait_for("the rerun's removal", || fully_removed(&s.fx, &wt, "x"));
}
