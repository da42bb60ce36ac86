//! Real git repositories for tests: git2 with fixed signature times, so commit ids are stable.
#![allow(dead_code)]

use std::cell::Cell;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use git2::{IndexEntry, IndexTime, Oid, Repository, Signature, Time};

/// Seconds since the epoch of the first fixture commit.
pub const T0: i64 = 1_700_000_000;

/// The keys of a JSON report, in SPEC §4.7's order.
pub const REPORT_KEYS: [&str; 18] = [
    "schema",
    "tool",
    "verdict",
    "mergeable",
    "slug",
    "state",
    "commit",
    "branch",
    "worktree",
    "base",
    "base_commit",
    "findings",
    "artifacts",
    "protected",
    "checks",
    "approval",
    "config",
    "contract",
];

/// A scratch repository whose main worktree is `<tmp>/repo`, with `main` checked out.
pub struct Fixture {
    pub tmp: tempfile::TempDir,
    pub repo: Repository,
    tick: Cell<i64>,
}

impl Fixture {
    /// A repository with one commit on `main` holding `README.md`.
    pub fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("repo");
        let mut opts = git2::RepositoryInitOptions::new();
        opts.initial_head("main");
        let repo = Repository::init_opts(&path, &opts).unwrap();
        let fx = Fixture {
            tmp,
            repo,
            tick: Cell::new(0),
        };
        fx.commit("main", &[("README.md", Some("hello\n"))], "initial");
        fx.checkout(&fx.root());
        fx
    }

    /// The main worktree.
    pub fn root(&self) -> PathBuf {
        self.repo.workdir().unwrap().to_path_buf()
    }

    /// The git common dir (`.git` of the main worktree).
    pub fn git_dir(&self) -> PathBuf {
        self.repo.path().to_path_buf()
    }

    fn sig(&self) -> Signature<'static> {
        let t = self.tick.get();
        self.tick.set(t + 60);
        Signature::new("Agent", "agent@example.com", &Time::new(T0 + t, 0)).unwrap()
    }

    /// Commit `files` (path, `Some(content)` to write or `None` to delete) on top of `branch`
    /// (created from `main` when absent) without touching any worktree. Returns the commit id.
    pub fn commit(&self, branch: &str, files: &[(&str, Option<&str>)], msg: &str) -> Oid {
        let raw: Vec<(&[u8], Option<&[u8]>)> = files
            .iter()
            .map(|(path, text)| (path.as_bytes(), text.map(str::as_bytes)))
            .collect();
        self.commit_raw(branch, &raw, msg)
    }

    /// [`Fixture::commit`] with paths and contents as bytes: a name need not be UTF-8 (git2
    /// index entries hold the bytes as given).
    pub fn commit_raw(&self, branch: &str, files: &[(&[u8], Option<&[u8]>)], msg: &str) -> Oid {
        let refname = format!("refs/heads/{branch}");
        let parent = self
            .repo
            .find_reference(&refname)
            .ok()
            .or_else(|| self.repo.find_reference("refs/heads/main").ok())
            .map(|r| r.peel_to_commit().unwrap());
        let mut index = git2::Index::new().unwrap();
        if let Some(p) = &parent {
            index.read_tree(&p.tree().unwrap()).unwrap();
        }
        for (path, content) in files {
            match content {
                Some(bytes) => {
                    let id = self.repo.blob(bytes).unwrap();
                    index.add(&entry(path, id, 0o100644)).unwrap();
                }
                None => {
                    let path = Path::new(std::ffi::OsStr::from_bytes(path));
                    index.remove_path(path).unwrap()
                }
            }
        }
        let tree_id = index.write_tree_to(&self.repo).unwrap();
        let tree = self.repo.find_tree(tree_id).unwrap();
        let sig = self.sig();
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        let id = self
            .repo
            .commit(None, &sig, &sig, msg, &tree, &parents)
            .unwrap();
        self.repo.reference(&refname, id, true, msg).unwrap();
        id
    }

    /// Add a linked worktree `<tmp>/wt/<name>` on `branch` (which must exist) and check it out.
    pub fn worktree(&self, name: &str, branch: &str) -> PathBuf {
        let dir = self.tmp.path().join("wt");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        let reference = self
            .repo
            .find_reference(&format!("refs/heads/{branch}"))
            .unwrap();
        let mut opts = git2::WorktreeAddOptions::new();
        opts.reference(Some(&reference));
        self.repo.worktree(name, &path, Some(&opts)).unwrap();
        path
    }

    /// Force-checkout HEAD into the worktree at `path` (after `commit` moved its branch).
    pub fn checkout(&self, path: &Path) {
        let repo = Repository::open(path).unwrap();
        let mut co = git2::build::CheckoutBuilder::new();
        co.force();
        repo.checkout_head(Some(&mut co)).unwrap();
    }

    /// Write a file into a worktree (not committed).
    pub fn write(&self, worktree: &Path, rel: &str, content: &str) {
        let path = worktree.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
}

fn entry(path: &[u8], id: Oid, mode: u32) -> IndexEntry {
    IndexEntry {
        ctime: IndexTime::new(0, 0),
        mtime: IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode,
        uid: 0,
        gid: 0,
        file_size: 0,
        id,
        flags: path.len().min(0xfff) as u16,
        flags_extended: 0,
        path: path.to_vec(),
    }
}

/// Run the real `closegate` binary in `cwd` with a hermetic environment.
pub fn closegate(cwd: &Path, args: &[&str]) -> Output {
    closegate_stdin(cwd, args, None)
}

/// Like `closegate`, feeding `stdin` when given.
pub fn closegate_stdin(cwd: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
    cmd.args(args).current_dir(cwd);
    hermetic(&mut cmd, cwd);
    match stdin {
        Some(bytes) => output_with_stdin(cmd, bytes),
        None => cmd.stdin(std::process::Stdio::null()).output().unwrap(),
    }
}

/// Run `cmd` with `stdin` written to a pipe (closed after it), capturing stdout and stderr.
pub fn output_with_stdin(mut cmd: Command, stdin: &[u8]) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// Set a hermetic environment on `cmd`: no user or system git config, UTC, C locale, no colour.
pub fn hermetic(cmd: &mut Command, home: &Path) {
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GIT_") || key == "GITHUB_STEP_SUMMARY" {
            cmd.env_remove(key);
        }
    }
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home)
        .env("XDG_CACHE_HOME", cache_home())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Tester")
        .env("GIT_AUTHOR_EMAIL", "tester@example.com")
        .env("GIT_COMMITTER_NAME", "Tester")
        .env("GIT_COMMITTER_EMAIL", "tester@example.com")
        .env("TZ", "UTC")
        .env("LC_ALL", "C")
        .env("NO_COLOR", "1");
}

/// The `$XDG_CACHE_HOME` every closegate a test starts is given: one per test process, so the
/// checks' base snapshots (kept per repository under it) never land in a worktree, whatever
/// directory a test starts closegate in.
pub fn cache_home() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let tmp = std::env::temp_dir();
        remove_stale_cache_homes(&tmp);
        let dir = tmp.join(format!("{CACHE_HOME_PREFIX}{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
    .clone()
}

const CACHE_HOME_PREFIX: &str = "closegate-it-cache-";

/// Remove the cache homes of test processes that are gone: a test process cannot clean up
/// after itself (the harness has no exit hook), and each leaves its snapshots behind (a
/// gigabyte a run on the corpus).
fn remove_stale_cache_homes(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix(CACHE_HOME_PREFIX));
        let Some(pid) = pid.and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let path = entry.path();
            // Snapshots are read-only trees: let them be written so they can be removed.
            let _ = Command::new("chmod")
                .args(["-R", "u+w"])
                .arg(&path)
                .status();
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

/// Run the `git` CLI hermetically in `cwd`; panics with its stderr on failure.
pub fn git(cwd: &Path, args: &[&str]) -> String {
    let out = git_output(cwd, args);
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Run the `git` CLI hermetically and return its whole output.
pub fn git_output(cwd: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new("git");
    cmd.args(args).current_dir(cwd);
    hermetic(&mut cmd, cwd);
    cmd.output().unwrap()
}

/// Exit code, stdout and stderr of an output, for assertions with context.
pub fn parts(out: &Output) -> (i32, String, String) {
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The finding codes of a JSON report (SPEC §4.7), in report order.
pub fn report_codes(report: &serde_json::Value) -> Vec<String> {
    let findings = report["findings"]
        .as_array()
        .expect("a report has findings");
    findings
        .iter()
        .map(|f| {
            f["code"]
                .as_str()
                .expect("a finding has a code")
                .to_string()
        })
        .collect()
}

impl Fixture {
    /// A repository whose `main` carries `config` as `.closegate.toml` (checked out in the main
    /// worktree) and an `agent/x` branch one commit ahead ("add x": `src/lib.rs`).
    pub fn with_agent(config: Option<&str>) -> (Fixture, Oid) {
        let fx = Fixture::new();
        if let Some(config) = config {
            let files = [(".closegate.toml", Some(config))];
            fx.commit("main", &files, "configure closegate");
            fx.checkout(&fx.root());
        }
        let tip = fx.commit(
            "agent/x",
            &[("src/lib.rs", Some("pub fn x() {}\n"))],
            "add x",
        );
        (fx, tip)
    }
}

/// `git diff --name-status -M from to` as sorted `kind path [path]` lines, the words of
/// `ChangeKind::as_str`.
pub fn git_changes(cwd: &Path, from: Oid, to: Oid) -> Vec<String> {
    let out = git(
        cwd,
        &[
            "diff",
            "--name-status",
            "-M",
            &from.to_string(),
            &to.to_string(),
        ],
    );
    let mut lines: Vec<String> = out
        .lines()
        .map(|line| {
            let mut parts = line.split('\t');
            let code = parts.next().unwrap();
            let kind = match &code[..1] {
                "A" => "added",
                "M" => "modified",
                "D" => "deleted",
                "R" => "renamed",
                "T" => "type-changed",
                other => panic!("unexpected status {other}"),
            };
            let paths: Vec<&str> = parts.collect();
            format!("{kind} {}", paths.join(" "))
        })
        .collect();
    lines.sort();
    lines
}

/// closegate's changes in the same `kind path [path]` shape, in the order given.
pub fn change_lines(changes: &[closegate::repo::Change]) -> Vec<String> {
    changes
        .iter()
        .map(|c| format!("{} {}", c.kind.as_str(), c.paths().join(" ")))
        .collect()
}

/// Run the `git` CLI hermetically in `cwd` with `stdin` as its input; returns its whole output.
pub fn git_stdin(cwd: &Path, args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut cmd = Command::new("git");
    cmd.args(args).current_dir(cwd);
    hermetic(&mut cmd, cwd);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// A directory that checks can read, for what a test keeps outside the repository (tool caches,
/// an installed virtualenv, an operator's secret): the build's scratch directory, unless it lies
/// under a shared temporary directory the sandbox replaces with an empty one of its own (a
/// checkout under `/tmp`), then `$XDG_CACHE_HOME/closegate-tests` or
/// `~/.cache/closegate-tests`. A test that put its files under `/tmp` would see every check fail
/// to find them - or, for a secret, pass without proving anything.
pub fn readable_by_checks() -> PathBuf {
    let private: Vec<PathBuf> = closegate::sandbox::private_tmp::SHARED_TMPS
        .iter()
        .filter_map(|tmp| std::fs::canonicalize(tmp).ok())
        .collect();
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let candidates = [
        Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
        var("XDG_CACHE_HOME").map(|d| d.join("closegate-tests")),
        var("HOME").map(|d| d.join(".cache/closegate-tests")),
    ];
    candidates
        .into_iter()
        .flatten()
        .filter_map(|dir| {
            std::fs::create_dir_all(&dir).ok()?;
            std::fs::canonicalize(dir).ok()
        })
        .find(|dir| !private.iter().any(|tmp| dir.starts_with(tmp)))
        .expect("no directory outside /tmp and /var/tmp (the build's, $XDG_CACHE_HOME or ~/.cache)")
}

/// A real part some tests need that a fresh clone may lack: the corpus of real projects
/// (`$CORPUS`, else `shared/corpus` beside the checkout or one of its ancestors), Chromium, the
/// checks' sandbox (bubblewrap and the user namespaces it needs: without it every check is
/// `checks-unsandboxed`, and a test of what a sandboxed check sees has nothing to look at), or a
/// program on `PATH` (a project's toolchain: `npm`, `go`, ...).
#[derive(Clone, Copy, Debug)]
pub enum Part {
    Corpus,
    Chromium,
    Sandbox,
    Tool(&'static str),
}

/// Set by `.ci/run`: an absent [`Part`] fails the test instead of skipping it, so CI runs them all.
pub const REQUIRE_ALL: &str = "CLOSEGATE_TESTS_REQUIRE_ALL";

/// Where `part` is on this machine. When it is absent, the test is skipped: one line on stderr
/// (written past the test harness's capture, so `cargo test` shows it) names the test and the
/// part, and `None` comes back, never a stand-in. Under `CLOSEGATE_TESTS_REQUIRE_ALL=1` an absent
/// part fails the test.
pub fn require(part: Part) -> Option<PathBuf> {
    let why = match find(part) {
        Ok(path) => return Some(path),
        Err(why) => why,
    };
    let test = std::thread::current().name().unwrap_or("?").to_string();
    if std::env::var_os(REQUIRE_ALL).is_some_and(|v| v == "1") {
        panic!("{test}: {why}, and {REQUIRE_ALL}=1 forbids skipping it");
    }
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "skipped {test}: {why}");
    None
}

/// `part`'s path, or why it is absent. A `$CORPUS` that is set but holds no corpus is a mistake
/// of the caller, not an absence: it fails.
fn find(part: Part) -> Result<PathBuf, String> {
    match part {
        Part::Corpus => {
            if let Some(dir) = std::env::var_os("CORPUS").filter(|v| !v.is_empty()) {
                let dir = PathBuf::from(dir);
                assert!(
                    dir.join("unpack.sh").is_file(),
                    "CORPUS={} holds no unpack.sh: not a corpus",
                    dir.display()
                );
                return Ok(dir);
            }
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .ancestors()
                .map(|a| a.join("shared/corpus"))
                .find(|c| c.join("unpack.sh").is_file())
                .ok_or_else(|| {
                    "no corpus of real projects ($CORPUS, or shared/corpus beside the checkout)"
                        .to_string()
                })
        }
        Part::Chromium => on_path("chromium")
            .or_else(|| on_path("chromium-browser"))
            .ok_or_else(|| "chromium is not on PATH (apt-get install chromium)".to_string()),
        // closegate's own probe, so the test skips exactly where `check` would say
        // `checks-unsandboxed`, for the reason it would give.
        Part::Sandbox => closegate::sandbox::probe(true)
            .map_err(|why| format!("no sandbox for the checks: {why}")),
        Part::Tool(tool) => on_path(tool).ok_or_else(|| format!("`{tool}` is not on PATH")),
    }
}

/// The first `name` among the directories of `PATH`.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Where closegate keeps the checks' warm state for the repository whose common directory is
/// `common_dir`, as every closegate a test starts sees it (`$XDG_CACHE_HOME/closegate/<id>`,
/// the id the first 16 hex digits of the git blob id of the canonical path).
pub fn cache_root(common_dir: &Path) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let canonical = std::fs::canonicalize(common_dir).unwrap();
    let id = git2::Oid::hash_object(git2::ObjectType::Blob, canonical.as_os_str().as_bytes())
        .unwrap()
        .to_string();
    cache_home().join("closegate").join(&id[..16])
}

/// The complete base snapshots of `check` under `cache_root` (their directories).
pub fn snapshots(cache_root: &Path, check: &str) -> Vec<PathBuf> {
    let dir = cache_root.join("checks").join(check).join("snapshots");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("complete").is_file())
        .collect();
    found.sort();
    found
}
