//! No git process closegate starts runs a hook, a filter or another program the agent can write
//! (SPEC §26.2): `land`, `land --push`, `notes push`, `notes fetch`, `restore` and `close
//! --commit` on real repositories the agent has armed, with real git.
//!
//! Attacks (each program writes a probe file named after it when it runs; every test asserts no
//! probe appeared and that the operation still did its job, and `plain_git_runs_every_attack`
//! shows each one firing under plain git, so none is vacuous):
//! - `hooks-dir-<hook>`: every hook githooks(5) names, executable in `.git/hooks`;
//! - `hooks-path-<hook>`: the same in a folder the agent names with `core.hooksPath`;
//! - `filter-clean`, `filter-smudge` / `filter-process`: a `filter.probe` driver, `required`,
//!   named for every path by `.git/info/attributes` (and the tree's `.gitattributes` where the
//!   branch may carry one);
//! - `fsmonitor`: `core.fsmonitor` naming a program;
//! - `ssh-command`: `core.sshCommand` in the repository (the user's own, from `~/.gitconfig`, must
//!   be the one that runs);
//! - `upload-pack`, `receive-pack`: `remote.origin.uploadpack`/`receivepack` programs;
//! - `alternate-refs`: `core.alternateRefsCommand` with an alternate object store;
//! - `gpg`: `commit.gpgSign` with `gpg.program` (the user's signer must be the one that runs);
//! - `ext`: `protocol.allow = always` and an `ext::` remote;
//! - `GIT_DIR`, `GIT_COMMON_DIR` & co. in closegate's environment aiming git at a decoy.
//!
//! Also: libgit2's checkout writes the tree's bytes (no `eol`/`ident` conversion), and no file in
//! `src/` but the runner starts `git`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use git2::Oid;
use serde_json::Value;

use crate::fixture::parts;
use crate::scene::Scene;

/// Every hook name githooks(5) lists for git 2.47.
const HOOKS: [&str; 28] = [
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
];

/// Which filter driver the agent defines.
#[derive(Debug, Clone, Copy)]
enum Filter {
    /// `clean` and `smudge` commands.
    CleanSmudge,
    /// A long-running `process` filter.
    Process,
}

const FILTERS: [Filter; 2] = [Filter::CleanSmudge, Filter::Process];

/// A scene (`agent/x` with its worktree and an honest close-ok document, its own home), a bare
/// `server.git` cloned from it and reached as `origin` over a stand-in ssh that the user's
/// `~/.gitconfig` names, a folder of probes and one of the agent's programs.
struct Armed {
    s: Scene,
    probes: tempfile::TempDir,
    tools: PathBuf,
    server: PathBuf,
}

impl Armed {
    fn new() -> Armed {
        let s = Scene::honest_return().own_home();
        let probes = tempfile::tempdir().unwrap();
        let tools = s.fx.tmp.path().join("tools");
        std::fs::create_dir_all(&tools).unwrap();
        let armed = Armed {
            server: s.fx.tmp.path().join("server.git"),
            s,
            probes,
            tools,
        };
        armed.user_tools();
        let root = armed.s.root();
        let server = armed.server.to_str().unwrap().to_string();
        armed.plain(&root, &["clone", "-q", "--bare", ".", &server]);
        let url = format!("ssh://localhost{server}");
        armed.plain(&root, &["remote", "add", "origin", &url]);
        armed
    }

    /// The user's own programs in `~/.gitconfig`: a stand-in for ssh (runs the remote command
    /// here, with a login's clean environment, as sshd would) and a signer.
    fn user_tools(&self) {
        let ssh = self.tool(
            "user-ssh",
            "for last; do :; done\nexec env -i PATH=\"$PATH\" HOME=\"$HOME\" sh -c \"$last\"\n",
        );
        let gpg = self.tool(
            "user-gpg",
            "cat >/dev/null\nprintf '\\n[GNUPG:] SIG_CREATED D 1 8 00 1 X\\n' >&2\n\
             printf -- '-----BEGIN PGP SIGNATURE-----\\n\\nuser\\n-----END PGP SIGNATURE-----\\n'\n",
        );
        let config = format!(
            "[core]\n\tsshCommand = {}\n[ssh]\n\tvariant = simple\n[gpg]\n\tprogram = {}\n",
            ssh.display(),
            gpg.display()
        );
        std::fs::write(self.s.home.path().join(".gitconfig"), config).unwrap();
    }

    /// An executable `tools/<name>` running `body` under `/bin/sh`.
    fn tool(&self, name: &str, body: &str) -> PathBuf {
        let path = self.tools.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// An agent's program: writes the probe `name`, then runs `then`.
    fn probe(&self, name: &str, then: &str) -> PathBuf {
        let probe = self.probes.path().join(name);
        self.tool(name, &format!("echo ran >> '{}'\n{then}", probe.display()))
    }

    /// git as the user runs it in `cwd` (this scene's home, nothing of closegate's).
    fn plain_output(&self, cwd: &Path, args: &[&str]) -> Output {
        let mut cmd = Command::new("git");
        cmd.args(args).current_dir(cwd);
        crate::fixture::hermetic(&mut cmd, self.s.home.path());
        cmd.output().unwrap()
    }

    fn plain(&self, cwd: &Path, args: &[&str]) -> String {
        let out = self.plain_output(cwd, args);
        let (code, stdout, stderr) = parts(&out);
        assert_eq!(code, 0, "git {args:?}: {stderr}");
        stdout
    }

    /// Set `key` in the repository's shared configuration, as the agent can.
    fn config(&self, key: &str, value: &str) {
        let common = self.s.fx.git_dir();
        let file = common.join("config");
        let file = file.to_str().unwrap();
        self.plain(&common, &["config", "--file", file, key, value]);
    }

    /// Arm every attack of the module doc in the repository's common directory.
    fn arm(&self, filter: Filter) {
        let common = self.s.fx.git_dir();
        let agent_hooks = self.s.fx.tmp.path().join("agent-hooks");
        std::fs::create_dir_all(&agent_hooks).unwrap();
        for hook in HOOKS {
            for (dir, prefix) in [
                (&common.join("hooks"), "hooks-dir"),
                (&agent_hooks, "hooks-path"),
            ] {
                let script =
                    self.probe(&format!("{prefix}-{hook}"), "cat >/dev/null 2>&1\nexit 0\n");
                std::fs::create_dir_all(dir).unwrap();
                std::fs::copy(&script, dir.join(hook)).unwrap();
            }
        }
        self.config("core.hooksPath", agent_hooks.to_str().unwrap());
        match filter {
            Filter::CleanSmudge => {
                let clean = self.probe("filter-clean", "exec cat\n");
                let smudge = self.probe("filter-smudge", "exec cat\n");
                self.config("filter.probe.clean", clean.to_str().unwrap());
                self.config("filter.probe.smudge", smudge.to_str().unwrap());
            }
            Filter::Process => {
                let process = self.probe("filter-process", "exit 1\n");
                self.config("filter.probe.process", process.to_str().unwrap());
            }
        }
        self.config("filter.probe.required", "true");
        std::fs::create_dir_all(common.join("info")).unwrap();
        std::fs::write(common.join("info/attributes"), "* filter=probe\n").unwrap();
        let fsmonitor = self.probe("fsmonitor", "exit 1\n");
        self.config("core.fsmonitor", fsmonitor.to_str().unwrap());
        let user_ssh = self.tools.join("user-ssh");
        let ssh = self.probe(
            "ssh-command",
            &format!("exec '{}' \"$@\"\n", user_ssh.display()),
        );
        self.config("core.sshCommand", ssh.to_str().unwrap());
        let upload = self.probe("upload-pack", "");
        let receive = self.probe("receive-pack", "");
        let upload = format!("{}; git-upload-pack", upload.display());
        self.config("remote.origin.uploadpack", &upload);
        let receive = format!("{}; git-receive-pack", receive.display());
        self.config("remote.origin.receivepack", &receive);
        let alternate = self.s.fx.tmp.path().join("alternate.git");
        let alt = alternate.to_str().unwrap();
        self.plain(self.s.fx.tmp.path(), &["init", "-q", "--bare", alt]);
        let alternates = format!("{}\n", alternate.join("objects").display());
        std::fs::write(common.join("objects/info/alternates"), alternates).unwrap();
        let refs = self.probe("alternate-refs", "true\n");
        self.config("core.alternateRefsCommand", refs.to_str().unwrap());
        let gpg = self.probe("gpg", "exit 1\n");
        self.config("gpg.program", gpg.to_str().unwrap());
        self.config("commit.gpgSign", "true");
    }

    /// The probes written so far.
    fn fired(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.probes.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn assert_none_ran(&self, what: &str, filter: Filter) {
        assert_eq!(
            self.fired(),
            Vec::<String>::new(),
            "{what} ({filter:?}) ran the agent's programs"
        );
    }

    /// `closegate <args>` in `cwd` in this scene's environment.
    fn run(&self, cwd: &Path, args: &[&str]) -> (i32, String, String) {
        self.s.run(cwd, args)
    }

    /// The ref `name` in the bare server.
    fn server_ref(&self, name: &str) -> Option<String> {
        let out = self.plain_output(&self.server, &["rev-parse", "--verify", "-q", name]);
        let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (!text.is_empty()).then_some(text)
    }

    fn local_ref(&self, name: &str) -> Option<Oid> {
        let repo = git2::Repository::open(self.s.fx.git_dir()).unwrap();
        repo.refname_to_id(name).ok()
    }

    /// A note on HEAD's commit under refs/notes/closegate, written with plain git in `git_dir`.
    fn note(&self, git_dir: &Path, text: &str) {
        let dir = git_dir.to_str().unwrap();
        let args = ["--git-dir", dir, "notes", "--ref", "refs/notes/closegate"];
        let mut all = args.to_vec();
        all.extend(["add", "-f", "-m", text, "HEAD"]);
        self.plain(self.s.fx.tmp.path(), &all);
    }
}

/// The bytes `path` holds in `commit`'s tree.
fn blob_at(repo: &git2::Repository, commit: Oid, path: &str) -> Option<Vec<u8>> {
    let tree = repo.find_commit(commit).ok()?.tree().ok()?;
    let entry = tree.get_path(Path::new(path)).ok()?;
    Some(repo.find_blob(entry.id()).ok()?.content().to_vec())
}

#[test]
fn plain_git_runs_every_attack() {
    for filter in FILTERS {
        let a = Armed::new();
        a.note(&a.s.fx.git_dir(), "mine");
        a.arm(filter);
        let root = a.s.root();
        a.note(&a.server, "theirs");
        let notes = "+refs/notes/closegate:refs/notes/theirs";
        let _ = a.plain_output(&root, &["fetch", "-q", "origin", notes]);
        let _ = a.plain_output(&root, &["push", "-q", "origin", "refs/notes/closegate"]);
        // (A process filter that speaks no protocol stops git before the hooks run: the commit and
        // the second `worktree add` show the hooks with the filter quiet, the rest the filters.)
        let quiet = [
            "-c",
            "filter.probe.process=",
            "-c",
            "filter.probe.required=false",
        ];
        let commit = ["commit", "-q", "--allow-empty", "-m", "plain"];
        let _ = a.plain_output(&root, &[quiet.as_slice(), &commit].concat());
        std::fs::write(root.join("README.md"), "changed\n").unwrap();
        let _ = a.plain_output(&root, &["add", "README.md"]);
        let other = a.s.fx.tmp.path().join("other");
        let add = [
            "worktree",
            "add",
            "-q",
            "--detach",
            other.to_str().unwrap(),
            "agent/x",
        ];
        let _ = a.plain_output(&root, &add);
        let _ = a.plain_output(&root, &[quiet.as_slice(), &add].concat());
        let _ = a.plain_output(&root, &["update-index", "-q", "--refresh"]);
        let _ = a.plain_output(&root, &["read-tree", "-m", "-u", "HEAD", "agent/x"]);
        let fired = a.fired();
        let mut expected = vec![
            "hooks-path-pre-push",
            "hooks-path-pre-commit",
            "hooks-path-post-checkout",
            "hooks-path-reference-transaction",
            "hooks-path-post-index-change",
            "fsmonitor",
            "ssh-command",
            "upload-pack",
            "receive-pack",
            "alternate-refs",
            "gpg",
        ];
        expected.extend(match filter {
            Filter::CleanSmudge => ["filter-clean", "filter-smudge"].as_slice(),
            Filter::Process => ["filter-process"].as_slice(),
        });
        for name in expected {
            assert!(
                fired.iter().any(|f| f == name),
                "{name} ({filter:?}) did not run: {fired:?}"
            );
        }
        // Without `core.hooksPath` git runs the hooks of `.git/hooks`. The filter goes too: a
        // process filter that speaks no protocol stops git before the hooks whenever the index
        // holds a racily clean entry, which depends on the clock.
        a.plain(&root, &["config", "--unset", "core.hooksPath"]);
        a.plain(&root, &["config", "--remove-section", "filter.probe"]);
        let _ = a.plain_output(&root, &["commit", "-q", "--allow-empty", "-m", "again"]);
        let _ = a.plain_output(&root, &["update-ref", "refs/heads/moved", "HEAD"]);
        let fired = a.fired();
        for name in ["hooks-dir-pre-commit", "hooks-dir-reference-transaction"] {
            assert!(
                fired.iter().any(|f| f == name),
                "{name} did not run: {fired:?}"
            );
        }
    }
}

#[test]
fn notes_push_runs_none_of_the_agents_programs() {
    for filter in FILTERS {
        let a = Armed::new();
        a.note(&a.s.fx.git_dir(), "mine");
        a.note(&a.server, "theirs");
        a.arm(filter);
        let (code, out, err) = a.run(&a.s.root(), &["notes", "push", "origin"]);
        a.assert_none_ran("notes push", filter);
        assert_eq!(code, 0, "{out}{err}");
        let local = a.local_ref("refs/notes/closegate").unwrap();
        assert_eq!(
            a.server_ref("refs/notes/closegate"),
            Some(local.to_string())
        );
    }
}

#[test]
fn notes_fetch_runs_none_of_the_agents_programs() {
    for filter in FILTERS {
        let a = Armed::new();
        a.note(&a.server, "theirs");
        a.arm(filter);
        let (code, out, err) = a.run(&a.s.root(), &["notes", "fetch", "origin"]);
        a.assert_none_ran("notes fetch", filter);
        assert_eq!(code, 0, "{out}{err}");
        let theirs = a.server_ref("refs/notes/closegate").unwrap();
        assert_eq!(
            a.local_ref("refs/notes/closegate").unwrap().to_string(),
            theirs
        );
    }
}

#[test]
fn land_push_runs_none_of_the_agents_programs() {
    for filter in FILTERS {
        let a = Armed::new();
        let (code, out, err) = a.run(&a.s.wt, &["check"]);
        assert_eq!(code, 0, "{out}{err}");
        a.arm(filter);
        let before = a.server_ref("refs/heads/main").unwrap();
        let (code, out, err) = a.run(
            &a.s.root(),
            &["land", "--json", "--push", "origin", "agent/x"],
        );
        a.assert_none_ran("land --push", filter);
        let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
        assert_eq!(code, 0, "{v:#}{err}");
        let after = a.server_ref("refs/heads/main").unwrap();
        assert_ne!(after, before);
        assert_eq!(v["base"]["after"], after);
        let repo = git2::Repository::open(a.s.fx.git_dir()).unwrap();
        let landed = blob_at(&repo, Oid::from_str(&after).unwrap(), "src/lib.rs");
        assert_eq!(landed.as_deref(), Some(b"pub fn x() {}\n".as_slice()));
    }
}

#[test]
fn land_moves_the_base_running_none_of_the_agents_programs() {
    for filter in FILTERS {
        let a = Armed::new();
        let (code, out, err) = a.run(&a.s.wt, &["check"]);
        assert_eq!(code, 0, "{out}{err}");
        // The base moved meanwhile: the landing composes a new commit and the main worktree,
        // which has the base checked out, follows it (`read-tree -u`).
        a.s.fx
            .commit("main", &[("docs.md", Some("docs\n"))], "docs");
        a.s.fx.checkout(&a.s.root());
        a.arm(filter);
        let (code, out, err) = a.run(&a.s.root(), &["land", "--json", "agent/x"]);
        a.assert_none_ran("land", filter);
        let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
        assert_eq!(code, 0, "{v:#}{err}");
        let main = a.local_ref("refs/heads/main").unwrap();
        assert_eq!(v["base"]["after"], main.to_string());
        let on_disk = std::fs::read(a.s.root().join("src/lib.rs")).unwrap();
        assert_eq!(on_disk, b"pub fn x() {}\n", "the tree's bytes, unfiltered");
    }
}

/// `land`'s move of the base runs no hook, closegate's own reference-transaction hook included:
/// `land` is gated by its own step 1 and records one `land` line, no `hook` line.
#[test]
fn land_runs_not_even_closegates_own_hook() {
    let a = Armed::new();
    let (code, out, err) = a.run(&a.s.root(), &["hook", "install"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = a.run(&a.s.wt, &["check"]);
    assert_eq!(code, 0, "{out}{err}");
    a.s.fx
        .commit("main", &[("docs.md", Some("docs\n"))], "docs");
    a.s.fx.checkout(&a.s.root());
    let before = a.s.audit().len();
    let (code, out, err) = a.run(&a.s.root(), &["land", "--json", "agent/x"]);
    assert_eq!(code, 0, "{out}{err}");
    let events: Vec<Value> = a.s.audit()[before..]
        .iter()
        .map(|r| r["event"].clone())
        .collect();
    assert!(events.contains(&Value::from("land")), "{events:?}");
    assert!(
        !events.contains(&Value::from("hook")),
        "the hook ran: {events:?}"
    );
    // A move of the base made by hand is still judged by the hook (and refused: unchecked work).
    let main = a.local_ref("refs/heads/main").unwrap().to_string();
    let unchecked = a.s.fx.commit("agent/y", &[("y.txt", Some("y\n"))], "add y");
    let by_hand = [
        "update-ref",
        "refs/heads/main",
        &unchecked.to_string(),
        &main,
    ];
    let (code, _, err) = parts(&a.plain_output(&a.s.root(), &by_hand));
    assert_ne!(code, 0, "{err}");
    let last = a.s.audit().pop().unwrap();
    assert_eq!(last["event"], "hook", "{err}");
}

#[test]
fn restore_runs_none_of_the_agents_programs() {
    for filter in FILTERS {
        let a = Armed::new();
        // (`.git/info/attributes` names the driver: a `.gitattributes` on the branch would make
        // the teardown wait for a review of that protected path.)
        let tip = a.s.tip;
        let wt = a.s.wt.canonicalize().unwrap();
        let (code, out, err) = a.run(
            &a.s.root(),
            &[
                "teardown",
                wt.to_str().unwrap(),
                "--no-checks",
                "--allow-unverified",
            ],
        );
        assert_eq!(code, 0, "{out}{err}");
        assert!(!wt.exists());
        a.arm(filter);
        let (code, out, err) = a.run(&a.s.root(), &["restore", "x"]);
        a.assert_none_ran("restore", filter);
        assert_eq!(code, 0, "{out}{err}");
        let restored = git2::Repository::open(&wt).unwrap();
        assert_eq!(restored.head().unwrap().name(), Some("refs/heads/agent/x"));
        assert_eq!(a.local_ref("refs/heads/agent/x"), Some(tip));
        assert_eq!(
            std::fs::read(wt.join("src/lib.rs")).unwrap(),
            b"pub fn x() {}\n"
        );
        assert!(
            wt.join("_EXEC_STATUS.md").is_file(),
            "the escrow's files are back"
        );
    }
}

#[test]
fn close_commit_runs_none_of_the_agents_programs() {
    for filter in FILTERS {
        let a = Armed::new();
        let tip = a.s.fx.commit(
            "agent/x",
            &[(".gitattributes", Some("* filter=probe\n"))],
            "attrs",
        );
        a.s.fx.checkout(&a.s.wt);
        a.arm(filter);
        let args = [
            "close",
            "--state",
            "close-ok",
            "--abstract",
            "adds x, proven by the smoke check",
            "--done",
            "x exists, proven by the smoke check",
            "--artifact",
            "src/lib.rs",
            "--commit",
        ];
        let (code, out, err) = a.run(&a.s.wt, &args);
        a.assert_none_ran("close --commit", filter);
        assert_eq!(code, 0, "{out}{err}");
        let repo = git2::Repository::open(&a.s.wt).unwrap();
        let head = repo.head().unwrap().peel_to_commit().unwrap();
        assert_eq!(
            head.parent_id(0).unwrap(),
            tip,
            "one trailing commit on the tip"
        );
        let on_disk = std::fs::read(a.s.wt.join("_EXEC_STATUS.md")).unwrap();
        let committed = blob_at(&repo, head.id(), "_EXEC_STATUS.md").unwrap();
        assert_eq!(committed, on_disk, "the document's bytes, unfiltered");
        let signature = head.header_field_bytes("gpgsig").unwrap();
        assert!(
            String::from_utf8_lossy(&signature).contains("user"),
            "signed by the user's own signer"
        );
    }
}

#[test]
fn an_ext_remote_the_repository_allows_runs_nothing() {
    let a = Armed::new();
    a.note(&a.s.fx.git_dir(), "mine");
    let ext = a.probe("ext", "");
    a.config("protocol.allow", "always");
    a.config("protocol.ext.allow", "always");
    a.config("remote.evil.url", &format!("ext::{}", ext.display()));
    for action in ["push", "fetch"] {
        let (code, out, err) = a.run(&a.s.root(), &["notes", action, "evil"]);
        assert_eq!(code, 2, "{out}{err}");
        assert!(err.contains("ext"), "git's refusal is named: {err}");
        assert_eq!(a.fired(), Vec::<String>::new(), "notes {action}");
    }
    // Under plain git the same remote runs the agent's command.
    let _ = a.plain_output(&a.s.root(), &["fetch", "-q", "evil"]);
    assert_eq!(a.fired(), ["ext"]);
}

#[test]
fn git_dir_and_co_in_closegates_environment_aim_no_git_at_a_decoy() {
    let a = Armed::new();
    let decoy = a.s.fx.tmp.path().join("decoy");
    let d = decoy.to_str().unwrap();
    a.plain(a.s.fx.tmp.path(), &["init", "-q", d]);
    a.plain(&decoy, &["commit", "-q", "--allow-empty", "-m", "decoy"]);
    a.note(&decoy.join(".git"), "decoy's");
    a.note(&a.s.fx.git_dir(), "mine");
    let decoy_git = decoy.join(".git");
    let g = decoy_git.to_str().unwrap();
    let objects = decoy_git.join("objects");
    let index = decoy_git.join("index");
    let env = [
        ("GIT_DIR", g),
        ("GIT_COMMON_DIR", g),
        ("GIT_WORK_TREE", d),
        ("GIT_OBJECT_DIRECTORY", objects.to_str().unwrap()),
        ("GIT_INDEX_FILE", index.to_str().unwrap()),
    ];
    let run = |cwd: &Path, args: &[&str]| {
        let mut cmd = a.s.bin(cwd, args);
        cmd.envs(env);
        parts(&cmd.output().unwrap())
    };
    let decoy_head = a.plain(&decoy, &["rev-parse", "HEAD"]);
    let (code, out, err) = run(&a.s.root(), &["notes", "push", "origin"]);
    assert_eq!(code, 0, "{out}{err}");
    let mine = a.local_ref("refs/notes/closegate").unwrap();
    assert_eq!(a.server_ref("refs/notes/closegate"), Some(mine.to_string()));
    let tip = a.s.tip;
    let (code, out, err) = run(
        &a.s.wt,
        &[
            "close",
            "--state",
            "close-ok",
            "--abstract",
            "adds x, proven by the smoke check",
            "--done",
            "x exists, proven by the smoke check",
            "--artifact",
            "src/lib.rs",
            "--commit",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let head = a.local_ref("refs/heads/agent/x").unwrap();
    let repo = git2::Repository::open(a.s.fx.git_dir()).unwrap();
    assert_eq!(repo.find_commit(head).unwrap().parent_id(0).unwrap(), tip);
    assert_eq!(
        a.plain(&decoy, &["rev-parse", "HEAD"]),
        decoy_head,
        "the decoy is untouched"
    );
}

#[test]
fn the_pristine_checkout_holds_the_trees_bytes() {
    let config = "[[checks]]\nname = \"bytes\"\nrun = \"printf '$Id$\\\\nline\\\\n' | cmp - \\\"$PWD/a.txt\\\"\"\ntimeout_s = 60\n";
    let s = Scene::new()
        .on_main(
            &[
                (".closegate.toml", Some(config)),
                (".gitattributes", Some("*.txt text eol=crlf ident\n")),
            ],
            "configure closegate",
        )
        .on_agent(&[("a.txt", Some("$Id$\nline\n"))], "add a")
        .worktree();
    let doc = crate::scene::agent_status(&s.wt, "x", "close-ok", s.tip, "add a");
    doc.artifacts(&["a.txt"]).write(&s.wt);
    let (code, report) = s.check_json(&s.wt, &[]);
    assert_eq!(report["verdict"], "VERIFIED", "{report:#}");
    assert_eq!(code, 0);
}

#[test]
fn no_file_but_the_runner_starts_git() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let runner = src.join("repo/git_cli.rs");
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(&src) {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "rs") || path == runner {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        if text.contains("Command::new(\"git\")") {
            found.push(path.display().to_string());
        }
    }
    assert_eq!(
        found,
        Vec::<String>::new(),
        "start git through repo::git_cli::Git"
    );
}
