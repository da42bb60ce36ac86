//! The one way closegate starts a `git` process (SPEC §26.2): no hook, filter or other program
//! that the repository's configuration (which the agent can write) names ever runs.
//!
//! Every `git` closegate starts (`land`'s fetch, push and base move, `notes push|fetch`,
//! `restore`'s `git worktree add`, `close --commit`) is built by [`Git`], which:
//! - **clears the variables that aim git at another repository** ([`SCRUBBED`]: git's own list of
//!   repository-local variables, `git rev-parse --local-env-vars`, plus `GIT_NAMESPACE` and
//!   `GIT_QUARANTINE_PATH`), so a closegate run inside a hook acts on the repository it opened;
//! - **runs no hook**: `core.hooksPath` is an empty directory made for this one process (see
//!   below), and `--no-verify` is passed where the subcommand has it (`push`, `commit`);
//! - **runs no filter**: every `filter.<driver>` that git's configuration defines, at any level, gets
//!   empty `clean`, `smudge` and `process` and `required = false`. The driver names are read from
//!   git's own listing (`git config --list --show-scope -z`, includes followed as git follows
//!   them), because `.gitattributes` may name any of them and a name may hold `=`, which `-c`
//!   cannot spell: the overrides go in `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`,
//!   which git reads after every configuration file, and passes on to the git processes it starts;
//! - **turns off** `core.fsmonitor` and submodule recursion (a submodule's git would read the
//!   submodule's configuration, which this listing does not cover);
//! - **takes every other program the commands we run could start from the user's configuration,
//!   never the repository's**: when the repository's own configuration (its `local` or `worktree`
//!   level) sets one of [`PROGRAMS`], git is given the user's value (`system` or `global` level,
//!   or the user's environment) or git's default instead; a credential helper list the repository
//!   touches is reset to the user's helpers; a repository `core.gitProxy` is replaced by no proxy;
//!   a repository `remote.<name>.uploadpack`/`receivepack` by git's own (`--upload-pack`,
//!   `--receive-pack`);
//! - pins the work tree of a worktree command to the folder closegate chose (`--work-tree`), so
//!   git never derives another one from the configuration (`core.worktree`);
//! - closes stdin, and captures stdout and stderr (git starts no pager on a pipe).
//!
//! The empty hooks directory is made fresh for each git process with `mkdtemp` (a new name, mode
//! 0700, never an existing path or a link), made read-only (0500), and checked right before git
//! starts: a directory (not a link, `lstat`), owned by this user, with no write bit, empty. It is
//! removed when git ends. Nothing of it outlives the process, so an agent cannot plant a hook in
//! it beforehand; one racing the few milliseconds git runs would have to find it and make it
//! writable again, as the same user, which could as well attach to closegate itself.
//!
//! Git 2.31 or newer is required (`GIT_CONFIG_COUNT`); an older git is refused with a message
//! rather than run without the overrides.

use std::ffi::OsStr;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use anyhow::{Context, Result, bail, ensure};

mod plan;

pub use plan::{Entry, PROGRAMS, Plan, UserEnv};

/// The variables cleared from every git process's environment: git's repository-local ones (what
/// `git rev-parse --local-env-vars` prints; git clears the same when it crosses into another
/// repository), plus `GIT_NAMESPACE` and `GIT_QUARANTINE_PATH`, which aim refs and objects too.
pub const SCRUBBED: [&str; 17] = [
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_QUARANTINE_PATH",
];

/// The oldest git whose `GIT_CONFIG_COUNT` the overrides rely on.
const OLDEST: (u32, u32) = (2, 31);

/// Remove [`SCRUBBED`] from `cmd`'s environment.
pub fn scrub(cmd: &mut Command) {
    for var in SCRUBBED {
        cmd.env_remove(var);
    }
}

/// Where git runs and which repository it acts on.
#[derive(Debug, Clone)]
enum At {
    /// `--git-dir=<dir>` from the current directory: a repository, no work tree of its own.
    GitDir(PathBuf),
    /// `-C <dir> --work-tree=<dir>`: the worktree at `dir`.
    Worktree(PathBuf),
    /// `-C <dir>`, git finding (or not) a repository as it does.
    Dir(PathBuf),
}

/// One git invocation, hardened as the module doc says.
#[derive(Debug, Clone)]
pub struct Git {
    at: At,
}

impl Git {
    /// git on the repository whose (common) git directory is `git_dir`, from the current directory
    /// (a relative remote path stays relative to where the user ran closegate).
    pub fn repo(git_dir: &Path) -> Git {
        Git {
            at: At::GitDir(git_dir.to_path_buf()),
        }
    }

    /// git in the worktree whose root is `dir`, its work tree pinned there.
    pub fn worktree(dir: &Path) -> Git {
        Git {
            at: At::Worktree(dir.to_path_buf()),
        }
    }

    /// git started in `dir`, outside any repository closegate names.
    pub fn dir(dir: &Path) -> Git {
        Git {
            at: At::Dir(dir.to_path_buf()),
        }
    }

    /// Run `git <args>` (the first argument is the subcommand) and wait for it.
    pub fn run<S: AsRef<OsStr>>(&self, args: &[S]) -> Result<Output> {
        let (sub, rest) = args.split_first().context("git needs a subcommand")?;
        let sub = sub.as_ref();
        let what = || format!("cannot run `git {}`", sub.to_string_lossy());
        supported().with_context(what)?;
        let hooks = EmptyDir::new().with_context(what)?;
        let entries = self.config().with_context(what)?;
        let plan = Plan::new(&entries, &UserEnv::from_process(), hooks.path());
        let mut cmd = self.command();
        plan.apply(&mut cmd);
        cmd.arg(sub).args(plan.flags(sub)).args(rest);
        hooks.verify().with_context(what)?;
        let out = cmd.output().with_context(what)?;
        drop(hooks);
        Ok(out)
    }

    /// `git` at this place, its environment scrubbed, stdin closed, output captured.
    fn command(&self) -> Command {
        let mut cmd = Command::new("git");
        match &self.at {
            At::GitDir(dir) => cmd.arg("--git-dir").arg(dir),
            At::Worktree(dir) => cmd.arg("-C").arg(dir).arg("--work-tree").arg(dir),
            At::Dir(dir) => cmd.arg("-C").arg(dir),
        };
        scrub(&mut cmd);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// git's own view of its configuration here: every entry with its level.
    fn config(&self) -> Result<Vec<Entry>> {
        let mut cmd = self.command();
        cmd.args(["config", "--list", "--show-scope", "-z"]);
        let out = cmd.output().context("cannot run `git config --list`")?;
        if !out.status.success() {
            bail!(
                "`git config --list` failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(Entry::parse(&out.stdout))
    }
}

/// Refuse a git too old for the overrides (checked once per process).
fn supported() -> Result<()> {
    static FOUND: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    let found = FOUND.get_or_init(|| {
        let mut cmd = Command::new("git");
        scrub(&mut cmd);
        let out = cmd
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("git is not installed or not on PATH ({e})"))?;
        let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
        match version(&text) {
            Some(v) if v >= OLDEST => Ok(()),
            _ => Err(format!(
                "closegate needs git {}.{} or newer (found `{text}`)",
                OLDEST.0, OLDEST.1
            )),
        }
    });
    found.clone().map_err(anyhow::Error::msg)
}

/// `(major, minor)` of `git version X.Y.Z...`.
fn version(text: &str) -> Option<(u32, u32)> {
    let number = text.strip_prefix("git version ")?;
    let mut parts = number.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// The empty hooks directory of one git process (see the module doc).
struct EmptyDir {
    dir: tempfile::TempDir,
}

impl EmptyDir {
    fn new() -> Result<EmptyDir> {
        let dir = tempfile::Builder::new()
            .prefix("closegate-hooks-")
            .tempdir()
            .context("cannot create the empty hooks directory")?;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o500))
            .with_context(|| format!("cannot make {} read-only", dir.path().display()))?;
        Ok(EmptyDir { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Still a read-only, empty directory of this user, not a link.
    fn verify(&self) -> Result<()> {
        let path = self.path();
        let meta = path
            .symlink_metadata()
            .with_context(|| format!("the hooks directory {} is gone", path.display()))?;
        let uid = rustix::process::geteuid().as_raw();
        ensure!(
            meta.file_type().is_dir() && meta.uid() == uid && meta.mode() & 0o7777 == 0o500,
            "the hooks directory {} was replaced or made writable",
            path.display()
        );
        let mut entries = std::fs::read_dir(path)
            .with_context(|| format!("cannot read the hooks directory {}", path.display()))?;
        ensure!(
            entries.next().is_none(),
            "something was planted in the hooks directory {}",
            path.display()
        );
        Ok(())
    }
}

impl Drop for EmptyDir {
    fn drop(&mut self) {
        // Writable again, so the removal also takes anything planted meanwhile.
        let _ = std::fs::set_permissions(self.path(), std::fs::Permissions::from_mode(0o700));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scrub_clears_every_variable_git_calls_repository_local() {
        let out = Command::new("git")
            .args(["rev-parse", "--local-env-vars"])
            .output()
            .unwrap();
        let listed = String::from_utf8(out.stdout).unwrap();
        assert!(listed.lines().count() >= 10, "{listed}");
        for var in listed.lines() {
            assert!(SCRUBBED.contains(&var), "{var} is not scrubbed");
        }
    }

    #[test]
    fn a_git_command_has_git_dir_and_co_removed_and_stdin_closed() {
        for git in [
            Git::repo(Path::new("/r/.git")),
            Git::worktree(Path::new("/w")),
            Git::dir(Path::new("/d")),
        ] {
            let cmd = git.command();
            let removed: Vec<&OsStr> = cmd
                .get_envs()
                .filter(|(_, v)| v.is_none())
                .map(|(k, _)| k)
                .collect();
            for var in [
                "GIT_DIR",
                "GIT_WORK_TREE",
                "GIT_INDEX_FILE",
                "GIT_COMMON_DIR",
            ] {
                assert!(removed.contains(&OsStr::new(var)), "{var} kept: {cmd:?}");
            }
            assert_eq!(removed.len(), SCRUBBED.len());
        }
        let cmd = Git::worktree(Path::new("/w")).command();
        let args: Vec<&OsStr> = cmd.get_args().collect();
        assert_eq!(args, ["-C", "/w", "--work-tree", "/w"]);
    }

    #[test]
    fn the_hooks_directory_is_empty_read_only_and_gone_afterwards() {
        let dir = EmptyDir::new().unwrap();
        let path = dir.path().to_path_buf();
        dir.verify().unwrap();
        assert_eq!(path.metadata().unwrap().mode() & 0o777, 0o500);
        if rustix::process::geteuid().as_raw() != 0 {
            assert!(std::fs::write(path.join("pre-push"), "x").is_err());
        }
        drop(dir);
        assert!(!path.exists());
    }

    #[test]
    fn a_planted_or_writable_hooks_directory_is_refused() {
        let dir = EmptyDir::new().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(dir.verify().is_err(), "writable");
        std::fs::write(dir.path().join("pre-push"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o500)).unwrap();
        let err = dir.verify().unwrap_err().to_string();
        assert!(err.contains("planted"), "{err}");
    }

    #[test]
    fn versions_are_read_and_old_ones_refused() {
        assert_eq!(version("git version 2.47.3"), Some((2, 47)));
        assert_eq!(version("git version 2.39.5 (Apple Git-154)"), Some((2, 39)));
        assert!(version("git version 2.30.1").unwrap() < OLDEST);
        assert_eq!(version("hub version 1"), None);
        supported().unwrap();
    }
}
