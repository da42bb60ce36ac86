//! The server gate (SPEC §20): a bare repository with `hook install --server`, clones pushing to
//! it with `git push` over `file://` and over `git daemon` on 127.0.0.1.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use git2::Oid;

use crate::attest::{Signed, Signer, agent_branch, agent_branch_with};
use crate::fixture::{closegate, git, git_output, hermetic, parts};
use crate::hook::PASSING_CONFIG;

/// `git daemon --enable=receive-pack` serving `base` on 127.0.0.1 at a free port; killed on drop.
pub struct Daemon {
    child: Child,
    pub port: u16,
}

impl Daemon {
    pub fn start(base: &Path) -> Daemon {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut cmd = Command::new("git");
        cmd.args([
            "daemon",
            "--enable=receive-pack",
            "--export-all",
            "--reuseaddr",
        ])
        .arg(format!("--base-path={}", base.display()))
        .args(["--listen=127.0.0.1", &format!("--port={port}")])
        .arg(base)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        hermetic(&mut cmd, base);
        let child = cmd.spawn().unwrap();
        let daemon = Daemon { child, port };
        // Wait (bounded) until it listens: readiness, not a timing assertion.
        for _ in 0..500 {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return daemon;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("git daemon did not start listening on port {port}");
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How clones reach the bare repository.
#[derive(Clone, Copy, Debug)]
pub enum Transport {
    File,
    Daemon,
}

/// A [`Signed`] (the developer's repository `repo`) plus a bare `server.git` cloned from it with
/// the server gate installed, reachable as `origin` over `transport`.
pub struct Server {
    pub s: Signed,
    pub bare: PathBuf,
    pub url: String,
    _daemon: Option<Daemon>,
}

impl Server {
    pub fn new(transport: Transport) -> Server {
        Server::from_scene(Signed::new(), transport)
    }

    pub fn from_scene(s: Signed, transport: Transport) -> Server {
        let tmp = s.fx.tmp.path().to_path_buf();
        let bare = tmp.join("server.git");
        git(&tmp, &["clone", "-q", "--bare", "repo", "server.git"]);
        let (code, out, err) = parts(&closegate(&bare, &["hook", "install", "--server"]));
        assert_eq!(code, 0, "{out}{err}");
        assert!(bare.join("hooks/pre-receive").is_file());
        let (url, daemon) = match transport {
            Transport::File => (format!("file://{}", bare.display()), None),
            Transport::Daemon => {
                let daemon = Daemon::start(&tmp);
                (
                    format!("git://127.0.0.1:{}/server.git", daemon.port),
                    Some(daemon),
                )
            }
        };
        git(&s.root(), &["remote", "add", "origin", &url]);
        Server {
            s,
            bare,
            url,
            _daemon: daemon,
        }
    }

    pub fn root(&self) -> PathBuf {
        self.s.root()
    }

    /// `git push origin <refs…>` from the developer's repository: accepted?, stderr.
    pub fn push(&self, refs: &[&str]) -> (bool, String) {
        push_from(&self.root(), refs)
    }

    /// `git merge --no-ff agent/<name>` on `main` in the developer's repository: the merge commit.
    pub fn merge(&self, name: &str) -> Oid {
        git(
            &self.root(),
            &[
                "merge",
                "-q",
                "--no-ff",
                "-X",
                "theirs",
                "-m",
                "merge",
                &format!("agent/{name}"),
            ],
        );
        head(&self.root())
    }

    pub fn server_ref(&self, refname: &str) -> Option<String> {
        let out = git_output(&self.bare, &["rev-parse", "--verify", "-q", refname]);
        out.status
            .success()
            .then(|| String::from_utf8(out.stdout).unwrap().trim().to_string())
    }

    pub fn server_has(&self, id: Oid) -> bool {
        git_output(&self.bare, &["cat-file", "-e", &id.to_string()])
            .status
            .success()
    }

    /// The push of `main` (merge commit `merge`) was refused: no ref moved, no object stayed.
    pub fn assert_refused_cleanly(&self, before: &str, merge: Oid) {
        assert_eq!(self.server_ref("refs/heads/main").as_deref(), Some(before));
        assert!(
            !self.server_has(merge),
            "the refused merge commit stayed on the server"
        );
    }

    pub fn attest(&self, signer: &Signer) {
        self.s.attest_with(signer);
    }
}

pub fn push_from(dir: &Path, refs: &[&str]) -> (bool, String) {
    let mut args = vec!["push", "origin"];
    args.extend_from_slice(refs);
    let out = git_output(dir, &args);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `closegate check --rev REV --no-worktree [EXTRA…] --attest --key KEY` in `dir`, as CI runs it.
fn attest_rev(dir: &Path, rev: &str, key: &str, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["check", "--rev", rev, "--no-worktree"];
    args.extend_from_slice(extra);
    args.extend(["--attest", "--key", key]);
    parts(&closegate(dir, &args))
}

fn head(dir: &Path) -> Oid {
    Oid::from_str(git(dir, &["rev-parse", "HEAD"]).trim()).unwrap()
}

const TRANSPORTS: [Transport; 2] = [Transport::File, Transport::Daemon];

#[test]
fn a_merge_of_an_attested_agent_branch_is_accepted() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    for t in TRANSPORTS {
        let srv = Server::new(t);
        srv.attest(&srv.s.ci);
        let merge = srv.merge("x");
        // The note travels in the same push as the merge.
        let (ok, stderr) = srv.push(&["main", "refs/notes/closegate"]);
        assert!(ok, "{t:?}: {stderr}");
        assert!(
            stderr.contains("remote: closegate: accepted: move `main` onto agent branch `agent/x`"),
            "{stderr}"
        );
        assert_eq!(srv.server_ref("refs/heads/main"), Some(merge.to_string()));
    }
}

#[test]
fn an_unattested_merge_is_refused_with_attestation_missing_and_leaves_nothing() {
    for t in TRANSPORTS {
        let srv = Server::new(t);
        let before = srv.server_ref("refs/heads/main").unwrap();
        let merge = srv.merge("x");
        let (ok, stderr) = srv.push(&["main"]);
        assert!(!ok, "{t:?}: {stderr}");
        assert!(stderr.contains("remote: UNVERIFIED"), "{stderr}");
        assert!(stderr.contains("attestation-missing"), "{stderr}");
        assert!(
            stderr.contains("refusing to move `main` onto agent branch `agent/x`"),
            "{stderr}"
        );
        srv.assert_refused_cleanly(&before, merge);
    }
}

#[test]
fn badly_signed_foreign_or_misplaced_attestations_are_refused_as_invalid() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    type Forge = fn(&Server);
    let cases: [(&str, Forge); 4] = [
        ("signed by a key not in allowed_signers", |srv| {
            srv.attest(&srv.s.stranger)
        }),
        ("badly signed", |srv| {
            srv.attest(&srv.s.ci);
            let note = srv.s.note(srv.s.work);
            let forged = note.replace("\\\"exit_code\\\":0", "\\\"exit_code\\\":0 ");
            assert_ne!(forged, note);
            let id = srv.s.work.to_string();
            git(
                &srv.root(),
                &[
                    "notes",
                    "--ref",
                    "refs/notes/closegate",
                    "add",
                    "-f",
                    "-m",
                    forged.trim(),
                    &id,
                ],
            );
        }),
        ("for another commit", |srv| {
            let (other, _) = agent_branch(&srv.s.fx, "y");
            let (code, out, err) = attest_rev(&srv.root(), "agent/y", &srv.s.ci.key_arg(), &[]);
            assert_eq!(code, 0, "{out}{err}");
            let from = other.to_string();
            let to = srv.s.work.to_string();
            git(
                &srv.root(),
                &["notes", "--ref", "refs/notes/closegate", "copy", &from, &to],
            );
        }),
        ("for another configuration blob", |srv| {
            let other = srv.s.fx.tmp.path().join("other.toml");
            std::fs::write(&other, format!("jobs = 1\n{PASSING_CONFIG}")).unwrap();
            let other = other.display().to_string();
            let key = srv.s.ci.key_arg();
            let (code, out, err) = attest_rev(&srv.root(), "agent/x", &key, &["--config", &other]);
            assert_eq!(code, 0, "{out}{err}");
        }),
    ];
    for t in TRANSPORTS {
        for (what, forge) in cases {
            let srv = Server::new(t);
            forge(&srv);
            let before = srv.server_ref("refs/heads/main").unwrap();
            let merge = srv.merge("x");
            let (ok, stderr) = srv.push(&["main", "refs/notes/closegate"]);
            assert!(!ok, "{t:?} {what}: accepted\n{stderr}");
            assert!(
                stderr.contains("attestation-invalid"),
                "{t:?} {what}: {stderr}"
            );
            srv.assert_refused_cleanly(&before, merge);
        }
    }
}

#[test]
fn agent_branch_pushes_are_accepted_and_deleting_an_unmerged_one_is_refused() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    for t in TRANSPORTS {
        let srv = Server::new(t);
        let (_, tip) = agent_branch(&srv.s.fx, "y");
        let (ok, stderr) = srv.push(&["agent/y"]);
        assert!(ok, "{t:?}: {stderr}");
        assert_eq!(srv.server_ref("refs/heads/agent/y"), Some(tip.to_string()));
        let (ok, stderr) = srv.push(&[":agent/y"]);
        assert!(!ok, "{t:?}: {stderr}");
        assert!(
            stderr.contains("refusing to delete agent branch `agent/y`"),
            "{stderr}"
        );
        assert_eq!(srv.server_ref("refs/heads/agent/y"), Some(tip.to_string()));
        // Once merged (attested), the branch may go.
        srv.attest(&srv.s.ci);
        srv.merge("x");
        let (ok, stderr) = srv.push(&["main", "refs/notes/closegate"]);
        assert!(ok, "{stderr}");
        let (ok, stderr) = srv.push(&[":agent/x"]);
        assert!(ok, "{t:?}: {stderr}");
        assert_eq!(srv.server_ref("refs/heads/agent/x"), None);
    }
}

/// `main` requiring signed approvals; `agent/t` touches a test (PENDING_REVIEW) and is attested.
fn review_server(t: Transport) -> Server {
    let config = format!("require_signed_approvals = true\n{PASSING_CONFIG}");
    let s = Signed::with_config(&config);
    agent_branch_with(&s.fx, "t", &[("tests/t.rs", Some("#[test] fn t() {}\n"))]);
    let srv = Server::from_scene(s, t);
    let (code, out, err) = attest_rev(&srv.root(), "agent/t", &srv.s.ci.key_arg(), &[]);
    assert_eq!(code, 3, "{out}{err}");
    srv
}

#[test]
fn under_require_signed_approvals_an_unsigned_approval_note_is_refused_and_a_signed_one_accepted() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    for t in TRANSPORTS {
        let srv = review_server(t);
        // PENDING_REVIEW is not attested: the attestation covers checks; the approval the review.
        let approve = |extra: &[&str]| {
            let mut args = vec![
                "approve",
                "--yes",
                "--rev",
                "agent/t",
                "--no-worktree",
                "--by",
                "Reviewer",
            ];
            args.extend_from_slice(extra);
            parts(&closegate(&srv.root(), &args))
        };
        // An approval note with no signature (the agent writing one itself).
        let work = srv.s.fx.repo.revparse_single("agent/t~1").unwrap().id();
        let statement = serde_json::json!({"type": "closegate-approve/v1", "commit": work.to_string(), "by": "agent"}).to_string();
        let unsigned =
            serde_json::json!({"closegate": "approve", "statement": statement}).to_string();
        git(
            &srv.root(),
            &[
                "notes",
                "--ref",
                "refs/notes/closegate",
                "append",
                "-m",
                &unsigned,
                &work.to_string(),
            ],
        );
        // The checks need their attestation: sign one (VERIFIED is needed, so sign with approval).
        let (code, out, err) = approve(&["--sign", "--key", &srv.s.stranger.key_arg()]);
        assert_eq!(code, 0, "{out}{err}");
        let before = srv.server_ref("refs/heads/main").unwrap();
        let merge = srv.merge("t");
        let (ok, stderr) = srv.push(&["main", "refs/notes/closegate"]);
        assert!(!ok, "{t:?}: {stderr}");
        assert!(stderr.contains("approval-unsigned"), "{stderr}");
        srv.assert_refused_cleanly(&before, merge);
        // Back out the merge; an allowed signer approves, and CI can then attest VERIFIED.
        git(&srv.root(), &["reset", "-q", "--hard", "HEAD~1"]);
        let (code, out, err) = approve(&["--sign", "--key", &srv.s.ci.key_arg()]);
        assert_eq!(code, 0, "{out}{err}");
        let (code, out, err) = attest_rev(&srv.root(), "agent/t", &srv.s.ci.key_arg(), &[]);
        assert_eq!(code, 0, "{out}{err}");
        let merge = srv.merge("t");
        let (ok, stderr) = srv.push(&["main", "refs/notes/closegate"]);
        assert!(ok, "{t:?}: {stderr}");
        assert_eq!(srv.server_ref("refs/heads/main"), Some(merge.to_string()));
    }
}

#[test]
fn with_server_checks_run_the_server_runs_the_checks_itself() {
    let config = format!("server_checks = \"run\"\n{PASSING_CONFIG}");
    let srv = Server::from_scene(Signed::with_config(&config), Transport::File);
    let (_, tip) = agent_branch(&srv.s.fx, "y");
    let (ok, stderr) = srv.push(&["agent/y"]);
    assert!(ok, "{stderr}");
    let log = std::fs::read_to_string(srv.bare.join("closegate/audit.jsonl")).unwrap();
    assert!(
        log.contains("\"event\":\"check\"") && log.contains("\"verdict\":\"VERIFIED\""),
        "{log}"
    );
    let merge = srv.merge("x");
    let (ok, stderr) = srv.push(&["main"]);
    assert!(ok, "no attestation needed: {stderr}");
    assert_eq!(srv.server_ref("refs/heads/main"), Some(merge.to_string()));
    let _ = tip;
}

#[test]
fn with_server_checks_run_a_failing_check_refuses_the_merge() {
    let config = "server_checks = \"run\"\n[[checks]]\nname = \"smoke\"\nrun = \"test -f NOPE\"\n";
    let srv = Server::from_scene(Signed::with_config(config), Transport::File);
    let before = srv.server_ref("refs/heads/main").unwrap();
    let merge = srv.merge("x");
    let (ok, stderr) = srv.push(&["main"]);
    assert!(!ok, "{stderr}");
    assert!(stderr.contains("check-failed"), "{stderr}");
    srv.assert_refused_cleanly(&before, merge);
}

#[test]
fn install_server_chains_a_foreign_pre_receive_hook_only_with_force() {
    let srv = Server::new(Transport::File);
    let hooks = srv.bare.join("hooks");
    std::fs::remove_file(hooks.join("pre-receive")).unwrap();
    let foreign = "#!/bin/sh\necho foreign-ran >&2\n";
    std::fs::write(hooks.join("pre-receive"), foreign).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        hooks.join("pre-receive"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let (code, _, err) = parts(&closegate(&srv.bare, &["hook", "install", "--server"]));
    assert_eq!(code, 1, "{err}");
    let (code, _, err) = parts(&closegate(
        &srv.bare,
        &["hook", "install", "--server", "--force"],
    ));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-receive.closegate-backup")).unwrap(),
        foreign
    );
    let merge = srv.merge("x");
    let (ok, stderr) = srv.push(&["main"]);
    assert!(!ok);
    assert!(
        stderr.contains("foreign-ran") && stderr.contains("attestation-missing"),
        "{stderr}"
    );
    assert!(!srv.server_has(merge));
    let (code, _, err) = parts(&closegate(&srv.bare, &["hook", "uninstall", "--server"]));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(hooks.join("pre-receive")).unwrap(),
        foreign
    );
}

/// Eight clones push merges of their own agent branches (half attested, half not) and agent
/// branches at once: every accepted push is on the server, every refused one left nothing, and
/// `git fsck` finds the repository sound.
#[test]
fn eight_clones_pushing_at_once_keep_the_server_consistent() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    for t in TRANSPORTS {
        eight_clones(t);
    }
}

fn eight_clones(t: Transport) {
    let s = Signed::new();
    let names: Vec<String> = (0..8).map(|i| format!("c{i}")).collect();
    for (i, name) in names.iter().enumerate() {
        agent_branch(&s.fx, name);
        if i % 2 == 0 {
            let rev = format!("agent/{name}");
            let (code, out, err) = attest_rev(&s.root(), &rev, &s.ci.key_arg(), &[]);
            assert_eq!(code, 0, "{out}{err}");
        }
    }
    let srv = Server::from_scene(s, t);
    let (ok, stderr) = srv.push(&["refs/notes/closegate"]);
    assert!(ok, "{stderr}");
    let tmp = srv.s.fx.tmp.path().to_path_buf();
    for name in &names {
        git(&tmp, &["clone", "-q", &srv.url, &format!("clone-{name}")]);
    }
    let outcomes: Vec<(String, Option<Oid>, bool)> = std::thread::scope(|scope| {
        let handles: Vec<_> = names
            .iter()
            .map(|name| {
                let dir = tmp.join(format!("clone-{name}"));
                scope.spawn(move || push_merge_until_decided(&dir, name))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let main = srv.server_ref("refs/heads/main").unwrap();
    for (name, merge, accepted) in &outcomes {
        let attested = name[1..].parse::<usize>().unwrap() % 2 == 0;
        assert_eq!(*accepted, attested, "{t:?} {name}");
        let merge = merge.unwrap();
        let reached = git_output(
            &srv.bare,
            &["merge-base", "--is-ancestor", &merge.to_string(), &main],
        );
        if *accepted {
            assert!(
                reached.status.success(),
                "{t:?} {name}: accepted merge not on main"
            );
        } else {
            assert!(
                !srv.server_has(merge),
                "{t:?} {name}: refused merge left its commit"
            );
        }
        let copy = format!("refs/heads/agent/copy-{name}");
        assert!(
            srv.server_ref(&copy).is_some(),
            "{t:?} {name}: agent branch push lost"
        );
    }
    let fsck = git_output(&srv.bare, &["fsck", "--strict", "--no-dangling"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
}

/// In clone `dir`: push a copy of `agent/<name>` (an agent-branch-only push), then merge it into
/// `main` and push, fetching and merging again while the push loses a race to another clone.
/// Returns the last merge pushed and whether it was accepted.
fn push_merge_until_decided(dir: &Path, name: &str) -> (String, Option<Oid>, bool) {
    let copy = format!("origin/agent/{name}:refs/heads/agent/copy-{name}");
    let (ok, stderr) = push_from(dir, &[&copy]);
    assert!(ok, "{name}: {stderr}");
    let branch = format!("origin/agent/{name}");
    for _ in 0..40 {
        git(dir, &["fetch", "-q", "origin"]);
        git(dir, &["reset", "-q", "--hard", "origin/main"]);
        git(
            dir,
            &[
                "merge", "-q", "--no-ff", "-X", "theirs", "-m", "merge", &branch,
            ],
        );
        let merge = Some(head(dir));
        let (ok, stderr) = push_from(dir, &["HEAD:refs/heads/main"]);
        if ok {
            return (name.to_string(), merge, true);
        }
        if stderr.contains("pre-receive hook declined") {
            return (name.to_string(), merge, false);
        }
        // Lost the race (not a fast-forward, or the ref moved under the push): try again.
    }
    panic!("{name}: no decision after 40 attempts");
}

/// Run `scripts/ci/closegate-ci.sh` in `dir` with this build's closegate first on PATH.
fn ci_script(dir: &Path, mode: &str, env: &[(&str, &str)]) -> (i32, String, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/ci/closegate-ci.sh");
    let bin = Path::new(env!("CARGO_BIN_EXE_closegate")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new("sh");
    cmd.arg(&script).args([mode, "agent/x"]).current_dir(dir);
    hermetic(&mut cmd, dir);
    cmd.env("PATH", path).envs(env.iter().copied());
    parts(&cmd.output().unwrap())
}

#[test]
fn the_ci_recipe_checks_attests_and_pushes_the_note_the_server_accepts() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let srv = Server::new(Transport::File);
    let tmp = srv.s.fx.tmp.path().to_path_buf();
    git(&tmp, &["clone", "-q", &srv.url, "ci"]);
    let ci = tmp.join("ci");
    git(&ci, &["config", "user.name", "CI"]);
    git(&ci, &["config", "user.email", "ci@example.com"]);
    // The recipe README used to give: git refuses to fetch into the checked-out branch.
    let old = git_output(&ci, &["fetch", "origin", "agent/x:agent/x", "main:main"]);
    assert!(!old.status.success());
    assert!(String::from_utf8_lossy(&old.stderr).contains("refusing to fetch into branch"));
    let (code, out, err) = ci_script(&ci, "check", &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("VERIFIED"), "{out}");
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ci.join("closegate.sarif")).unwrap())
            .unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let key = std::fs::read_to_string(&srv.s.ci.key).unwrap();
    let keytmp = tmp.join("keytmp");
    std::fs::create_dir(&keytmp).unwrap();
    let keytmp_text = keytmp.display().to_string();
    let env = [
        ("CLOSEGATE_SIGNING_KEY", key.trim()),
        ("TMPDIR", &keytmp_text),
    ];
    let (code, out, err) = ci_script(&ci, "attest", &env);
    assert_eq!(code, 0, "{out}{err}");
    assert!(srv.server_ref("refs/notes/closegate").is_some());
    // The key was written for the signature only.
    assert_eq!(std::fs::read_dir(&keytmp).unwrap().count(), 0);
    // The developer merges and pushes main alone: the server reads the note CI pushed.
    let merge = srv.merge("x");
    let (ok, stderr) = srv.push(&["main"]);
    assert!(ok, "{stderr}");
    assert_eq!(srv.server_ref("refs/heads/main"), Some(merge.to_string()));
}

#[test]
fn deleting_the_base_branch_is_refused_so_it_cannot_be_recreated_unjudged() {
    let srv = Server::new(Transport::File);
    let before = srv.server_ref("refs/heads/main").unwrap();
    let (ok, stderr) = srv.push(&[":main"]);
    assert!(!ok, "{stderr}");
    assert!(stderr.contains("refusing to delete `main`"), "{stderr}");
    assert_eq!(srv.server_ref("refs/heads/main"), Some(before));
}

#[test]
fn a_base_push_is_judged_on_its_own_configuration_not_the_one_already_read() {
    let srv = Server::new(Transport::File);
    // The configuration unchanged (the same blob the gate read as trusted): accepted.
    srv.s
        .fx
        .commit("main", &[("README.md", Some("docs\n"))], "docs");
    let (ok, stderr) = srv.push(&["main"]);
    assert!(ok, "{stderr}");
    // A configuration that does not parse never reaches the base.
    let before = srv.server_ref("refs/heads/main").unwrap();
    let broken = srv.s.fx.commit(
        "main",
        &[(".closegate.toml", Some("[[checks]]\nname = \n"))],
        "break the configuration",
    );
    let (ok, stderr) = srv.push(&["main"]);
    assert!(!ok, "{stderr}");
    assert!(stderr.contains("refusing to move `main`"), "{stderr}");
    assert!(stderr.contains(".closegate.toml"), "{stderr}");
    srv.assert_refused_cleanly(&before, broken);
}

/// A closegate of its own at `dir/closegate` (a hard link to the test build, or a copy across
/// file systems), to install the hook from and then take away.
fn own_closegate(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let exe = dir.join("closegate");
    let built = env!("CARGO_BIN_EXE_closegate");
    if std::fs::hard_link(built, &exe).is_err() {
        std::fs::copy(built, &exe).unwrap();
    }
    exe
}

/// `<exe> hook install --server [--force]` in the bare repository: the hook's text.
fn install_with(srv: &Server, exe: &Path, force: bool) -> String {
    let mut cmd = Command::new(exe);
    cmd.args(["hook", "install", "--server"])
        .current_dir(&srv.bare);
    if force {
        cmd.arg("--force");
    }
    hermetic(&mut cmd, srv.s.fx.tmp.path());
    let (code, out, err) = parts(&cmd.output().unwrap());
    assert_eq!(code, 0, "{out}{err}");
    std::fs::read_to_string(srv.bare.join("hooks/pre-receive")).unwrap()
}

/// A commit on `main` in the developer's repository (no agent branch: the gate accepts it).
fn plain_commit(srv: &Server) -> Oid {
    git(
        &srv.root(),
        &["commit", "-q", "--allow-empty", "-m", "plain"],
    );
    head(&srv.root())
}

/// `git push origin main` with a PATH that holds git but no closegate.
fn push_without_closegate_on_path(srv: &Server) -> (bool, String) {
    let mut cmd = Command::new("git");
    cmd.args(["push", "origin", "main"]).current_dir(srv.root());
    hermetic(&mut cmd, srv.s.fx.tmp.path());
    cmd.env("PATH", "/usr/bin:/bin");
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.success(), stderr)
}

/// The hook git runs is closegate itself: its first line is `#!<closegate> hook run
/// pre-receive`, so no shell starts between git and the gate. Once that closegate is gone git
/// cannot start the hook, and every push is refused, leaving nothing (fail closed).
#[test]
fn the_server_hook_starts_closegate_directly_and_fails_closed_once_it_is_gone() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let srv = Server::new(Transport::File);
    let exe = own_closegate(&srv.s.fx.tmp.path().join("bin"));
    let text = install_with(&srv, &exe, false);
    let first = text.lines().next().unwrap();
    assert_eq!(first, format!("#!{} hook run pre-receive", exe.display()));
    srv.attest(&srv.s.ci);
    let merge = srv.merge("x");
    let (ok, stderr) = srv.push(&["main", "refs/notes/closegate"]);
    assert!(ok, "{stderr}");
    assert!(stderr.contains("remote: closegate: accepted"), "{stderr}");
    assert_eq!(srv.server_ref("refs/heads/main"), Some(merge.to_string()));

    std::fs::remove_file(&exe).unwrap();
    let later = plain_commit(&srv);
    let (ok, stderr) = push_without_closegate_on_path(&srv);
    assert!(!ok, "{stderr}");
    assert!(stderr.contains("pre-receive hook declined"), "{stderr}");
    srv.assert_refused_cleanly(&merge.to_string(), later);
}

/// A closegate path no `#!` line can hold (here: a blank in it) gets the sh hook instead, which
/// calls it by quoted path, and refuses every push once neither it nor a closegate on PATH is
/// there.
#[test]
fn a_closegate_path_with_a_blank_gets_a_sh_hook_that_also_fails_closed() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let srv = Server::new(Transport::File);
    let exe = own_closegate(&srv.s.fx.tmp.path().join("a dir"));
    let text = install_with(&srv, &exe, false);
    assert!(text.starts_with("#!/bin/sh\n"), "{text}");
    assert!(
        text.contains(&format!("closegate='{}'\n", exe.display())),
        "{text}"
    );
    srv.attest(&srv.s.ci);
    let merge = srv.merge("x");
    let (ok, stderr) = srv.push(&["main", "refs/notes/closegate"]);
    assert!(ok, "{stderr}");
    assert_eq!(srv.server_ref("refs/heads/main"), Some(merge.to_string()));

    std::fs::remove_file(&exe).unwrap();
    let later = plain_commit(&srv);
    let (ok, stderr) = push_without_closegate_on_path(&srv);
    assert!(!ok, "{stderr}");
    assert!(
        stderr.contains("cannot find the closegate executable"),
        "{stderr}"
    );
    srv.assert_refused_cleanly(&merge.to_string(), later);
}

/// A foreign pre-receive hook kept by `install --server --force` runs first, from either form of
/// the hook, on exactly the ref updates git sent; when it fails the push is refused whatever the
/// gate would say, and nothing lands.
#[test]
fn the_kept_pre_receive_hook_runs_first_on_the_same_updates_and_can_refuse() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    for dir in ["bin", "a dir"] {
        let srv = Server::new(Transport::File);
        let exe = own_closegate(&srv.s.fx.tmp.path().join(dir));
        let seen = srv.s.fx.tmp.path().join("seen");
        let status = srv.s.fx.tmp.path().join("status");
        let foreign = format!(
            "#!/bin/sh\ncat >'{}'\nexit \"$(cat '{}')\"\n",
            seen.display(),
            status.display()
        );
        let hook = srv.bare.join("hooks/pre-receive");
        std::fs::write(&hook, &foreign).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        install_with(&srv, &exe, true);

        std::fs::write(&status, "3").unwrap();
        srv.attest(&srv.s.ci);
        let before = srv.server_ref("refs/heads/main").unwrap();
        let merge = srv.merge("x");
        let (ok, stderr) = srv.push(&["main", "refs/notes/closegate"]);
        assert!(!ok, "{dir}: {stderr}");
        assert!(
            stderr.contains("the chained hook") && stderr.contains("failed with exit 3"),
            "{dir}: {stderr}"
        );
        srv.assert_refused_cleanly(&before, merge);

        std::fs::write(&status, "0").unwrap();
        let (ok, stderr) = srv.push(&["main", "refs/notes/closegate"]);
        assert!(ok, "{dir}: {stderr}");
        assert_eq!(srv.server_ref("refs/heads/main"), Some(merge.to_string()));
        let notes = git(&srv.root(), &["rev-parse", "refs/notes/closegate"]);
        let zero = "0".repeat(40);
        let mut want = vec![
            format!("{before} {merge} refs/heads/main"),
            format!("{zero} {} refs/notes/closegate", notes.trim()),
        ];
        let got = std::fs::read_to_string(&seen).unwrap();
        let mut got: Vec<String> = got.lines().map(str::to_string).collect();
        want.sort();
        got.sort();
        assert_eq!(got, want, "{dir}");
    }
}

/// Issue 24, item 1 on a server: the agent commits a kept path as a link to the repository's
/// hooks, then a file under it named `update`. Two ordinary pushes with `server_checks = "run"`
/// made the reset write that file through the link and git run it as the server's `update`
/// hook. Now the reset never follows a link, and the workspaces live beside the bare repository.
#[test]
fn a_kept_path_linked_to_the_servers_hooks_never_becomes_a_hook() {
    let config = "server_checks = \"run\"\n[[checks]]\nname = \"warm\"\nrun = \"true\"\n\
                  timeout_s = 60\nkeep = [\"cache/\"]\n";
    let srv = Server::from_scene(Signed::with_config(config), Transport::File);
    let fx = &srv.s.fx;
    let marker = fx.tmp.path().join("pwned");
    // Every plausible depth from the workspace checkout up to the repository's hooks.
    let hooks = srv.bare.join("hooks");
    let link = hooks.display().to_string();
    let first = {
        let tree = {
            let mut b = fx.repo.treebuilder(None).unwrap();
            let blob = fx.repo.blob(link.as_bytes()).unwrap();
            b.insert("cache", blob, 0o120000).unwrap();
            b.write().unwrap()
        };
        let main = fx
            .repo
            .find_reference("refs/heads/main")
            .unwrap()
            .peel_to_commit()
            .unwrap();
        let mut index = git2::Index::new().unwrap();
        index.read_tree(&main.tree().unwrap()).unwrap();
        let sub = fx.repo.find_tree(tree).unwrap();
        let entry = sub.get_name("cache").unwrap();
        index
            .add(&git2::IndexEntry {
                ctime: git2::IndexTime::new(0, 0),
                mtime: git2::IndexTime::new(0, 0),
                dev: 0,
                ino: 0,
                mode: 0o120000,
                uid: 0,
                gid: 0,
                file_size: 0,
                id: entry.id(),
                flags: 5,
                flags_extended: 0,
                path: b"cache".to_vec(),
            })
            .unwrap();
        let tree = fx
            .repo
            .find_tree(index.write_tree_to(&fx.repo).unwrap())
            .unwrap();
        let sig =
            git2::Signature::new("A", "a@example.com", &git2::Time::new(1_700_000_000, 0)).unwrap();
        let id = fx
            .repo
            .commit(None, &sig, &sig, "link", &tree, &[&main])
            .unwrap();
        fx.repo
            .reference("refs/heads/agent/h", id, true, "link")
            .unwrap();
        id
    };
    let status = |work: Oid| {
        let sha = &work.to_string()[..12];
        let doc = crate::scene::StatusDoc::complete("x", "close-ok")
            .last_commit(sha, "add x")
            .close(sha, "agent/h", "/nonexistent/wt/h")
            .render();
        fx.commit(
            "agent/h",
            &[("_EXEC_STATUS.md", Some(doc.as_str()))],
            "status",
        );
    };
    status(first);
    let (ok, stderr) = srv.push(&["agent/h"]);
    assert!(ok, "{stderr}");
    let script = format!("#!/bin/sh\ntouch '{}'\n", marker.display());
    let second = fx.commit(
        "agent/h",
        &[("cache", None), ("cache/update", Some(&script))],
        "hook",
    );
    assert_ne!(first, second);
    status(second);
    let (ok, stderr) = srv.push(&["agent/h"]);
    assert!(ok, "{stderr}");
    assert!(
        !hooks.join("update").exists(),
        "the reset wrote the server's update hook"
    );
    // A third push would have run it.
    let third = fx.commit("agent/h", &[("more.txt", Some("more\n"))], "more");
    status(third);
    let (ok, stderr) = srv.push(&["agent/h"]);
    assert!(ok, "{stderr}");
    assert!(
        !marker.exists(),
        "the agent's script ran as the server's hook"
    );
    // The warm state lives outside the repository directory (SPEC §27.2: in the cache).
    assert!(!srv.bare.join("closegate/work").exists());
    assert!(
        !srv.bare
            .with_file_name("server.git.closegate-work")
            .exists()
    );
    let cache = crate::fixture::cache_root(&srv.bare);
    let log = std::fs::read_to_string(srv.bare.join("closegate/audit.jsonl")).unwrap_or_default();
    assert!(
        !crate::fixture::snapshots(&cache, "warm").is_empty(),
        "{}\n{log}",
        cache.display()
    );
}
