//! The check `closegate init` guesses from a project (SPEC §17), written so it works in a pristine
//! sandboxed checkout and not only in the user's clone, and so warm state cannot lie (§26.4).
//!
//! - Dependencies are installed inside the checkout, from the lock file the project has (npm,
//!   pnpm and yarn: [`node`]; a virtual environment `.venv` in the checkout for Python, the
//!   project installed into it with its test dependencies); never an editable install outside
//!   the checkout, which would import the user's own clone.
//! - **The network fetches; it never runs the project's code** (SPEC §27.2). Where the ecosystem
//!   can fetch without running code — `cargo fetch`, `go mod download` ([`go`]), `npm ci
//!   --ignore-scripts`, `pnpm fetch`, yarn's install without scripts, pip's wheels of the
//!   dependencies a `pyproject.toml` declares ([`python`]) — that is the check's `prepare` and
//!   `run` has `network = false`. A Python project whose dependencies only its build backend
//!   knows keeps the network.
//! - `cargo test --locked` only when `Cargo.lock` is tracked: `--locked` cannot create one.
//! - **A cache shared between agents' checks holds only what the tool verifies on every use.**
//!   Extracted sources and build outputs live in the check's own workspace, in the kept path
//!   [`PRIVATE`] (`CARGO_HOME`, Go's `GOPATH` and `GOCACHE`, pip's cache, npm's cache without a
//!   lock file, corepack's, pnpm's store, yarn's cache), never in a `writable` directory another
//!   agent's check can write. Only npm's content cache is shared, and only with `npm ci`: every
//!   tarball is fetched by the lock file's integrity and checked against it on every read. It
//!   lives in a closegate-owned directory per repository,
//!   `$XDG_CACHE_HOME/closegate/<repository id>/npm` (SPEC §4.6), listed in `writable`.
//! - **A kept path never lets a changed source skip its build.** Installs are skipped when the
//!   dependency manifests did not change (a stamp), but a project's own build step runs in every
//!   check: a Python project with compiled extensions is built again (`pip install --no-deps -e
//!   .`) and each extension it names must import; npm runs the root package's own lifecycle
//!   scripts in every check.
//! - The installed tree (`target/`, `node_modules/`, `.venv/`) and [`PRIVATE`] are in `keep`, so
//!   the second check is incremental.
//! - Every module of the repository is tested, or named ([`layout`]).

use std::path::{Path, PathBuf};

use crate::shell::shell_word;

mod compiled;
mod go;
pub mod layout;
mod node;
mod python;

pub use node::registry_release;

pub use compiled::compiled_python;
use python::python;

/// One guessed `[[checks]]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guess {
    pub name: &'static str,
    pub run: String,
    /// `prepare` (SPEC §27.2): the fetch, with network, running none of the project's code.
    pub prepare: Option<String>,
    /// `false` when `prepare` fetches everything `run` needs.
    pub network: bool,
    /// `writable` entries (`~/…` or absolute).
    pub writable: Vec<String>,
    /// `env`: closegate's environment variables handed to the check beyond the allow-list.
    pub env: Vec<&'static str>,
    /// `keep` entries, with a trailing `/`.
    pub keep: Vec<String>,
}

/// What the guess reads about the project besides its files: which paths git tracks, and the
/// repository's cache directory.
pub struct Project<'a> {
    pub root: &'a Path,
    /// Whether git tracks this root-relative path (a `Cargo.lock` listed in `.gitignore` is not
    /// committed, whatever the clone holds).
    pub tracked: &'a dyn Fn(&str) -> bool,
    /// `$XDG_CACHE_HOME/closegate/<repository id>`, written as `~/…` when under `$HOME`.
    pub cache: String,
    /// The project's files, root-relative ([`layout::walk`]): where nested modules are found.
    pub files: Vec<String>,
    /// `version+sha512.<hex>` of a package's release on the npm registry (a version, or
    /// `latest`): the package manager a Node check names ([`registry_release`]).
    pub release: &'a dyn Fn(&str, &str) -> Option<String>,
    /// The base tip's committer time (seconds since the epoch), `None` before the first commit.
    pub tip_time: Option<i64>,
}

impl Project<'_> {
    pub(super) fn has(&self, name: &str) -> bool {
        self.root.join(name).is_file()
    }

    /// A file at the project root, as bytes (`None`: absent or unreadable).
    pub(super) fn read(&self, name: &str) -> Option<Vec<u8>> {
        crate::input_file::read(&self.root.join(name)).ok()
    }

    /// The cache directory of one tool, as a `writable` entry and as a shell word for `run`.
    pub(super) fn cache_of(&self, tool: &str) -> (String, String) {
        let entry = format!("{}/{tool}", self.cache);
        let word = match entry.strip_prefix("~/") {
            Some(rest) => format!("\"$HOME\"/{}", shell_word(rest)),
            None => shell_word(&entry),
        };
        (entry, word)
    }
}

/// The check guessed from the files at the project root, `None` when no type is recognised.
pub fn guess(project: &Project<'_>) -> Option<Guess> {
    if project.has("Cargo.toml") {
        return Some(cargo(project));
    }
    if project.has("package.json") && package_has_test(&project.root.join("package.json")) {
        return Some(node::node(project));
    }
    if ["pyproject.toml", "setup.cfg", "pytest.ini", "setup.py"]
        .iter()
        .any(|f| project.has(f))
    {
        return Some(python(project));
    }
    if project.has("go.mod") || project.has("go.work") {
        return Some(go::go(project));
    }
    let makefile = ["GNUmakefile", "makefile", "Makefile"]
        .iter()
        .map(|n| project.root.join(n))
        .find(|p| p.is_file());
    if makefile.is_some_and(|p| makefile_has_test(&p)) {
        return Some(Guess {
            name: "test",
            run: "make test".to_string(),
            prepare: None,
            network: true,
            writable: Vec::new(),
            env: Vec::new(),
            keep: Vec::new(),
        });
    }
    None
}

/// The kept directory, inside the check's workspace, that holds the caches private to it.
pub const PRIVATE: &str = ".closegate-cache";

/// A tool's private cache as a shell word (`"$PWD"/.closegate-cache/<tool>`): absolute, since
/// tools resolve a relative cache path against their own working directory.
pub(super) fn private_cache(tool: &str) -> String {
    format!("\"$PWD\"/{PRIVATE}/{tool}")
}

/// The `keep` entries of a guess whose installed tree is `tree` (with a trailing `/`).
pub(super) fn keep_with_private(tree: Option<&str>) -> Vec<String> {
    let mut keep: Vec<String> = tree.into_iter().map(str::to_string).collect();
    keep.push(format!("{PRIVATE}/"));
    keep
}

/// `cargo test`, its `CARGO_HOME` private to the workspace: cargo verifies neither a cached
/// `.crate` nor an extracted `registry/src` or `git/checkouts` when it uses them. `cargo fetch`
/// runs no build script: it is the check's `prepare`, and the tests run `--offline`.
fn cargo(project: &Project<'_>) -> Guess {
    let locked = if (project.tracked)("Cargo.lock") {
        " --locked"
    } else {
        ""
    };
    let home = format!("CARGO_HOME={}", private_cache("cargo"));
    Guess {
        name: "test",
        run: format!("{home} cargo test{locked} --offline"),
        prepare: Some(format!("{home} cargo fetch{locked}")),
        network: false,
        writable: Vec::new(),
        env: Vec::new(),
        keep: keep_with_private(Some("target/")),
    }
}

/// What `npm test` is given so that its runner names every test for the census (SPEC §26.4),
/// when `scripts.test` is that runner alone: the runners table's option (jest's `--verbose`,
/// vitest's verbose reporter). A chain (`eslint . && jest`) gets nothing: npm would hand the
/// option to its last command only.
pub(super) fn census_flags(path: &Path) -> String {
    let Ok(bytes) = crate::input_file::read(path) else {
        return String::new();
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return String::new();
    };
    let Some(test) = value["scripts"]["test"].as_str() else {
        return String::new();
    };
    if test.contains(['&', '|', ';', '\n']) {
        return String::new();
    }
    crate::runners::names_tests_option(test).map_or(String::new(), |o| format!(" -- {o}"))
}

/// Whether `package.json` names `package` among its dependencies of any kind.
pub(super) fn package_mentions(path: &Path, package: &str) -> bool {
    let Ok(bytes) = crate::input_file::read(path) else {
        return false;
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return false;
    };
    ["dependencies", "devDependencies", "optionalDependencies"]
        .iter()
        .any(|key| value[*key].get(package).is_some())
}

/// The names of `package.json`'s `scripts`.
pub(super) fn package_scripts(path: &Path) -> Vec<String> {
    let Ok(bytes) = crate::input_file::read(path) else {
        return Vec::new();
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return Vec::new();
    };
    value["scripts"]
        .as_object()
        .map(|s| s.keys().cloned().collect())
        .unwrap_or_default()
}

/// Whether `package.json` has a `scripts.test` string (other than `npm init`'s placeholder).
pub fn package_has_test(path: &Path) -> bool {
    let Ok(bytes) = crate::input_file::read(path) else {
        return false;
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return false;
    };
    // `npm init`'s placeholder fails by design: it is not a test script.
    value["scripts"]["test"]
        .as_str()
        .is_some_and(|s| !s.contains("Error: no test specified"))
}

/// Whether a Makefile has a rule whose targets include `test` (`test:`, `check test:`, not
/// `test := value`).
fn makefile_has_test(path: &Path) -> bool {
    let Ok(bytes) = crate::input_file::read(path) else {
        return false;
    };
    String::from_utf8_lossy(&bytes).lines().any(|line| {
        if line.starts_with('\t') || line.starts_with('#') {
            return false;
        }
        let Some((targets, rest)) = line.split_once(':') else {
            return false;
        };
        !rest.starts_with('=') && targets.split_whitespace().any(|t| t == "test")
    })
}

/// `$XDG_CACHE_HOME/closegate/<repository id>` (default `~/.cache`), written `~/…` when it lies
/// under `$HOME` so the committed configuration names no user's home. The repository id is the
/// first 16 hex digits of the SHA-256 of the canonical common dir: one cache per repository,
/// shared by its worktrees, outside the common dir (which stays read-only to checks).
pub fn cache_dir(common_dir: &Path) -> String {
    use sha2::{Digest, Sha256};
    let canonical = std::fs::canonicalize(common_dir).unwrap_or_else(|_| common_dir.into());
    let digest = Sha256::digest(canonical.as_os_str().as_encoded_bytes());
    let id: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let base = match std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir,
        _ => match &home {
            Some(home) => home.join(".cache"),
            None => PathBuf::from("/tmp"),
        },
    };
    let dir = base.join("closegate").join(id);
    match home.as_ref().and_then(|h| dir.strip_prefix(h).ok()) {
        Some(rest) => format!("~/{}", rest.display()),
        None => dir.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::census_flags;

    #[test]
    fn npm_test_names_its_tests_when_the_script_is_the_runner_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("package.json");
        let cases = [
            ("jest src", " -- --verbose"),
            ("jest --verbose", ""),
            ("vitest run", " -- --reporter=verbose"),
            ("vitest --reporter=dot", ""),
            ("eslint . && jest", ""),
            ("mocha", ""),
        ];
        for (script, flags) in cases {
            let json = serde_json::json!({"scripts": {"test": script}}).to_string();
            std::fs::write(&path, json).unwrap();
            assert_eq!(census_flags(&path), flags, "{script}");
        }
    }
}
