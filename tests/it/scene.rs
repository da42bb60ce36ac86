//! One scene for every integration test, and one writer of status documents.
//!
//! A [`Scene`] is a real repository (git2, fixed signature times, so commit ids are stable), its
//! base branch, the agent's branch `agent/x` and worktree `wt/x`, the configuration, the record
//! key and a home directory, built step by step in the order the steps are written: a test that
//! builds the same steps in the same order gets the same commit ids. It runs the built binary
//! hermetically with its key and home. A [`StatusDoc`] is the agent's `_EXEC_STATUS.md`, built
//! field by field; tests whose point is odd bytes (grammar, lint) keep their literal bytes.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use git2::Oid;
use serde_json::Value;

use crate::fixture::{Fixture, hermetic, parts};

/// A check that passes while `src/lib.rs` exists; it reaches the file through `$PWD` so that its
/// `run` names no repository path (a named path that exists on the base is protected, SPEC §4.5,
/// and a squash merge puts it there).
pub const PASSING_CONFIG: &str =
    "[[checks]]\nname = \"smoke\"\nrun = \"test -f \\\"$PWD/src/lib.rs\\\"\"\ntimeout_s = 60\n";

/// The file name of the status document.
pub const STATUS_FILE: &str = "_EXEC_STATUS.md";

/// A scratch repository with its agent: `fx` the repository, `wt` the agent's worktree `wt/x`
/// (its path even before [`Scene::worktree`] makes it), `tip` the last commit made on `agent/x`.
pub struct Scene {
    pub fx: Fixture,
    pub wt: PathBuf,
    pub tip: Oid,
    /// A home directory of its own, used by commands after [`Scene::own_home`].
    pub home: tempfile::TempDir,
    /// The record key's path, `<tmp>/keys/record.key`, given to commands after
    /// [`Scene::key_init`] or [`Scene::key_file`].
    pub key: PathBuf,
    own_home: bool,
    keyed: bool,
    sandboxed: bool,
}

impl Scene {
    /// A repository with one commit on `main` holding `README.md`, and nothing else.
    pub fn new() -> Scene {
        let fx = Fixture::new();
        let wt = fx.tmp.path().join("wt").join("x");
        let key = fx.tmp.path().join("keys").join("record.key");
        Scene {
            fx,
            wt,
            tip: Oid::zero(),
            home: tempfile::tempdir().unwrap(),
            key,
            own_home: false,
            keyed: false,
            sandboxed: false,
        }
    }

    /// `main` carrying `config` (when given) and `agent/x` one commit ahead ("add x":
    /// `src/lib.rs`); no worktree yet.
    pub fn with_agent(config: Option<&str>) -> Scene {
        Scene::new().configured(config).add_x()
    }

    /// [`Scene::with_agent`] with the agent's worktree `wt/x`.
    pub fn returned(config: Option<&str>) -> Scene {
        Scene::with_agent(config).worktree()
    }

    /// [`Scene::honest_return_with`] the passing check.
    pub fn honest_return() -> Scene {
        Scene::honest_return_with(Some(PASSING_CONFIG))
    }

    /// `main` with `config` (when given) and `.gitignore` (`target/`), `agent/x` with one commit
    /// ("add x") and the worktree `wt/x` on it holding an honest close-ok status document.
    pub fn honest_return_with(config: Option<&str>) -> Scene {
        let mut files = vec![(".gitignore", Some("target/\n"))];
        if let Some(config) = config {
            files.push((".closegate.toml", Some(config)));
        }
        let s = Scene::new()
            .on_main(&files, "configure closegate")
            .add_x()
            .worktree();
        write_status(&s.wt, "x", "close-ok", s.tip, "add x");
        s
    }

    /// Commit `files` on `main` with `msg` and check it out in the main worktree.
    pub fn on_main(self, files: &[(&str, Option<&str>)], msg: &str) -> Scene {
        let s = self.on_main_only(files, msg);
        s.fx.checkout(&s.fx.root());
        s
    }

    /// Commit `files` on `main` with `msg`, leaving the main worktree as it was.
    pub fn on_main_only(self, files: &[(&str, Option<&str>)], msg: &str) -> Scene {
        self.fx.commit("main", files, msg);
        self
    }

    /// `config` as `.closegate.toml` on `main` ("configure closegate"); nothing when `None`.
    pub fn configured(self, config: Option<&str>) -> Scene {
        match config {
            Some(config) => {
                self.on_main(&[(".closegate.toml", Some(config))], "configure closegate")
            }
            None => self,
        }
    }

    /// Commit `files` on `agent/x` (from `main` when new) with `msg`; that commit is the tip.
    pub fn on_agent(mut self, files: &[(&str, Option<&str>)], msg: &str) -> Scene {
        self.tip = self.fx.commit("agent/x", files, msg);
        self
    }

    /// [`Scene::on_agent`] with paths and contents as bytes (a name need not be UTF-8).
    pub fn on_agent_raw(mut self, files: &[(&[u8], Option<&[u8]>)], msg: &str) -> Scene {
        self.tip = self.fx.commit_raw("agent/x", files, msg);
        self
    }

    /// The agent's usual first commit: "add x", `src/lib.rs` holding `pub fn x() {}`.
    pub fn add_x(self) -> Scene {
        self.on_agent(&[("src/lib.rs", Some("pub fn x() {}\n"))], "add x")
    }

    /// The agent's worktree `wt/x` on `agent/x`, checked out.
    pub fn worktree(mut self) -> Scene {
        self.wt = self.fx.worktree("x", "agent/x");
        self
    }

    /// Commands run with [`Scene::home`] as `HOME`, not their working directory.
    pub fn own_home(mut self) -> Scene {
        self.own_home = true;
        self
    }

    /// Commands may use the sandbox (the test binary's switch that turns it off is removed).
    pub fn sandboxed(mut self) -> Scene {
        self.sandboxed = true;
        self
    }

    /// A record key made by `closegate key init`, given to every command.
    pub fn key_init(mut self) -> Scene {
        self.keyed = true;
        let (code, out, err) = self.run(&self.fx.root(), &["key", "init"]);
        assert_eq!(code, 0, "{out}{err}");
        self
    }

    /// A record key holding `bytes`, given to every command.
    pub fn key_file(mut self, bytes: &str) -> Scene {
        self.keyed = true;
        std::fs::create_dir_all(self.key.parent().unwrap()).unwrap();
        std::fs::write(&self.key, bytes).unwrap();
        self
    }

    /// The main worktree.
    pub fn root(&self) -> PathBuf {
        self.fx.root()
    }

    /// The agent's worktree, canonical, as a status document names it.
    pub fn wt_str(&self) -> String {
        self.wt.canonicalize().unwrap().display().to_string()
    }

    /// The summary line of commit `id`.
    pub fn subject(&self, id: Oid) -> String {
        let commit = self.fx.repo.find_commit(id).unwrap();
        commit.summary().unwrap().to_string()
    }

    /// Set this scene's environment on `cmd` run in `cwd`: hermetic, its home, key and sandbox.
    pub fn env(&self, cmd: &mut Command, cwd: &Path) {
        hermetic(cmd, if self.own_home { self.home.path() } else { cwd });
        if self.keyed {
            cmd.env("CLOSEGATE_RECORD_KEY_FILE", &self.key);
        }
        if self.sandboxed {
            cmd.env_remove("CLOSEGATE_TEST_NO_SANDBOX");
        }
    }

    /// The built `closegate` with `args` in `cwd`, in this scene's environment, stdin empty.
    pub fn bin(&self, cwd: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
        cmd.args(args).current_dir(cwd);
        self.env(&mut cmd, cwd);
        cmd.stdin(Stdio::null());
        cmd
    }

    /// Run `closegate` in `cwd`, feeding `stdin` when given (a pipe, closed after it).
    pub fn output(&self, cwd: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
        let mut cmd = self.bin(cwd, args);
        let Some(bytes) = stdin else {
            return cmd.output().unwrap();
        };
        crate::fixture::output_with_stdin(cmd, bytes)
    }

    /// Run `closegate` in `cwd`: exit code, stdout, stderr.
    pub fn run(&self, cwd: &Path, args: &[&str]) -> (i32, String, String) {
        parts(&self.bin(cwd, args).output().unwrap())
    }

    /// `closegate check --format json <args>` in `cwd`: exit code and report (panics, naming
    /// the output, when there is no JSON report).
    pub fn check_json(&self, cwd: &Path, args: &[&str]) -> (i32, Value) {
        let mut all = vec!["check", "--format", "json"];
        all.extend_from_slice(args);
        json_report(&self.bin(cwd, &all).output().unwrap())
    }

    /// `closegate teardown <wt> <args>` run in the main worktree.
    pub fn teardown(&self, args: &[&str]) -> (i32, String, String) {
        let mut all = vec!["teardown", self.wt.to_str().unwrap()];
        all.extend_from_slice(args);
        self.run(&self.root(), &all)
    }

    /// The audit log's records, as written (none when there is no log).
    pub fn audit(&self) -> Vec<Value> {
        let path = self.fx.git_dir().join("closegate/audit.jsonl");
        let text = std::fs::read_to_string(path).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// Exit code and JSON report of a `--format json` run; panics, naming the output, without one.
pub fn json_report(out: &Output) -> (i32, Value) {
    let (code, stdout, stderr) = parts(out);
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!("no JSON report (exit {code}): {e}\nstdout: {stdout}\nstderr: {stderr}")
    });
    // Every report reads back as the type it was written from, and writes the same object (the
    // stop hook reads the reports of the `signal` and `guard` it runs this way).
    let typed: closegate::report::Report = serde_json::from_value(report.clone())
        .unwrap_or_else(|e| panic!("the report does not read back as a Report: {e}\n{stdout}"));
    assert_eq!(
        serde_json::to_value(&typed).unwrap(),
        report,
        "the report round-trips"
    );
    (code, report)
}

/// A status document: the heading, `- state:`, then the fields that are set, in the order the
/// protocol writes them, and the close line when set.
#[derive(Clone, Debug)]
pub struct StatusDoc {
    slug: String,
    state: String,
    abstract_text: Option<String>,
    last_commit: Option<String>,
    done: Option<String>,
    next: Option<String>,
    artifacts: Option<Vec<String>>,
    updated: Option<String>,
    /// The close line's commit, branch and worktree.
    close: Option<(String, String, String)>,
}

impl StatusDoc {
    /// `# STATUS — <slug>` and `- state: <state>`, nothing else (a draft).
    pub fn new(slug: &str, state: &str) -> StatusDoc {
        StatusDoc {
            slug: slug.to_string(),
            state: state.to_string(),
            abstract_text: None,
            last_commit: None,
            done: None,
            next: None,
            artifacts: None,
            updated: None,
            close: None,
        }
    }

    /// Every field a returned document has: the abstract and done lines of the smoke check,
    /// nothing next, `src/lib.rs` as the artifact, updated 2026-11-29. No last commit, no close
    /// line until set.
    pub fn complete(slug: &str, state: &str) -> StatusDoc {
        StatusDoc::new(slug, state)
            .abstract_text(&format!("adds {slug}, proven by the smoke check"))
            .done(&format!("{slug} exists, proven by the smoke check"))
            .next("none")
            .artifacts(&["src/lib.rs"])
            .updated("2026-11-29")
    }

    pub fn abstract_text(mut self, text: &str) -> StatusDoc {
        self.abstract_text = Some(text.to_string());
        self
    }

    /// `- last commit: <sha> — <subject>`.
    pub fn last_commit(mut self, sha: &str, subject: &str) -> StatusDoc {
        self.last_commit = Some(format!("{sha} — {subject}"));
        self
    }

    /// `- last commit: <text>`, as written.
    pub fn last_commit_text(mut self, text: &str) -> StatusDoc {
        self.last_commit = Some(text.to_string());
        self
    }

    pub fn done(mut self, text: &str) -> StatusDoc {
        self.done = Some(text.to_string());
        self
    }

    /// `- next / blocked-on: <text>`.
    pub fn next(mut self, text: &str) -> StatusDoc {
        self.next = Some(text.to_string());
        self
    }

    /// `- artifacts:` and one `  - <path>` line each (an empty list keeps the key).
    pub fn artifacts(mut self, paths: &[&str]) -> StatusDoc {
        self.artifacts = Some(paths.iter().map(|p| p.to_string()).collect());
        self
    }

    pub fn updated(mut self, date: &str) -> StatusDoc {
        self.updated = Some(date.to_string());
        self
    }

    /// The close line `CLOSE-OK · <slug> · commit <sha> · branch <branch> · worktree <path>`,
    /// after a blank line.
    pub fn close(mut self, sha: &str, branch: &str, worktree: &str) -> StatusDoc {
        self.close = Some((sha.to_string(), branch.to_string(), worktree.to_string()));
        self
    }

    /// The same document under another slug (the heading and the close line name it).
    pub fn slug(mut self, slug: &str) -> StatusDoc {
        self.slug = slug.to_string();
        self
    }

    /// The document's bytes.
    pub fn render(&self) -> String {
        let mut text = format!("# STATUS — {}\n\n- state: {}\n", self.slug, self.state);
        let mut field = |key: &str, value: &Option<String>| {
            if let Some(value) = value {
                text.push_str(&format!("- {key}: {value}\n"));
            }
        };
        field("abstract", &self.abstract_text);
        field("last commit", &self.last_commit);
        field("done", &self.done);
        field("next / blocked-on", &self.next);
        if let Some(paths) = &self.artifacts {
            text.push_str("- artifacts:\n");
            for path in paths {
                text.push_str(&format!("  - {path}\n"));
            }
        }
        if let Some(date) = &self.updated {
            text.push_str(&format!("- updated: {date}\n"));
        }
        if let Some((sha, branch, worktree)) = &self.close {
            let slug = &self.slug;
            text.push_str(&format!(
                "\nCLOSE-OK · {slug} · commit {sha} · branch {branch} · worktree {worktree}\n"
            ));
        }
        text
    }

    /// Write the document as `<dir>/_EXEC_STATUS.md`.
    pub fn write(&self, dir: &Path) {
        std::fs::write(dir.join(STATUS_FILE), self.render()).unwrap();
    }
}

/// The usual document of agent `x`: complete, in `state`, its last commit and close line naming
/// `sha` ("add x") on `agent/x` in `worktree`.
pub fn status_doc(state: &str, sha: &str, worktree: &str) -> String {
    StatusDoc::complete("x", state)
        .last_commit(sha, "add x")
        .close(sha, "agent/x", worktree)
        .render()
}

/// The usual document of `agent/<slug>` in `wt`: complete, in `state`, naming `commit` (with
/// `subject`); a `closed-without-merge` document has no close line.
pub fn agent_status(wt: &Path, slug: &str, state: &str, commit: Oid, subject: &str) -> StatusDoc {
    let wt_s = wt.canonicalize().unwrap().display().to_string();
    let sha = &commit.to_string()[..12];
    let doc = StatusDoc::complete(slug, state)
        .last_commit(sha, subject)
        .done("it exists, proven by the smoke check");
    if state == "closed-without-merge" {
        doc
    } else {
        doc.close(sha, &format!("agent/{slug}"), &wt_s)
    }
}

/// Write [`agent_status`] into `wt`.
pub fn write_status(wt: &Path, slug: &str, state: &str, commit: Oid, subject: &str) {
    agent_status(wt, slug, state, commit, subject).write(wt);
}

/// A branch `agent/<slug>` adding `src/lib.rs`, its worktree and a status document in `state`.
pub fn agent(fx: &Fixture, slug: &str, state: &str) -> (PathBuf, Oid) {
    let tip = fx.commit(
        &format!("agent/{slug}"),
        &[(
            "src/lib.rs",
            Some(&format!("pub fn {}() {{}}\n", slug.replace('-', "_"))),
        )],
        &format!("add {slug}"),
    );
    let wt = fx.worktree(slug, &format!("agent/{slug}"));
    write_status(&wt, slug, state, tip, &format!("add {slug}"));
    (wt, tip)
}
