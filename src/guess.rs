//! The check `closegate init` guesses from a project (SPEC §17), written so it works in a pristine
//! sandboxed checkout and not only in the user's clone.
//!
//! - Dependencies are installed inside the checkout, from the lock file the project has (`npm ci`
//!   with `package-lock.json`, else `npm install`; a virtual environment `.venv` in the checkout
//!   for Python, the project installed into it with its test dependencies); never an editable
//!   install outside the checkout, which would import the user's own clone.
//! - `cargo test --locked` only when `Cargo.lock` is tracked: `--locked` cannot create one.
//! - The ecosystem's download cache lives in a closegate-owned directory per repository,
//!   `$XDG_CACHE_HOME/closegate/<repository id>/<tool>` (SPEC §4.6), listed in `writable`, so an
//!   agent's code can never change what the operator's own builds compile; the installed tree
//!   (`target/`, `node_modules/`, `.venv/`) is in `keep`, so the second check is incremental.

use std::path::{Path, PathBuf};

use crate::shell::shell_word;

/// One guessed `[[checks]]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guess {
    pub name: &'static str,
    pub run: String,
    /// `writable` entries (`~/…` or absolute).
    pub writable: Vec<String>,
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
}

impl Project<'_> {
    fn has(&self, name: &str) -> bool {
        self.root.join(name).is_file()
    }

    /// The cache directory of one tool, as a `writable` entry and as a shell word for `run`.
    fn cache_of(&self, tool: &str) -> (String, String) {
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
        return Some(npm(project));
    }
    if ["pyproject.toml", "setup.cfg", "pytest.ini", "setup.py"]
        .iter()
        .any(|f| project.has(f))
    {
        return Some(python(project));
    }
    if project.has("go.mod") {
        return Some(go(project));
    }
    let makefile = ["GNUmakefile", "makefile", "Makefile"]
        .iter()
        .map(|n| project.root.join(n))
        .find(|p| p.is_file());
    if makefile.is_some_and(|p| makefile_has_test(&p)) {
        return Some(Guess {
            name: "test",
            run: "make test".to_string(),
            writable: Vec::new(),
            keep: Vec::new(),
        });
    }
    None
}

fn cargo(project: &Project<'_>) -> Guess {
    let (entry, word) = project.cache_of("cargo");
    let locked = if (project.tracked)("Cargo.lock") {
        " --locked"
    } else {
        ""
    };
    Guess {
        name: "test",
        run: format!("CARGO_HOME={word} cargo test{locked}"),
        writable: vec![entry],
        keep: vec!["target/".to_string()],
    }
}

fn npm(project: &Project<'_>) -> Guess {
    let (entry, word) = project.cache_of("npm");
    let install = if (project.tracked)("package-lock.json") {
        "npm ci"
    } else {
        "npm install"
    };
    // Flow keeps its server state in /tmp/flow: point it at the check's private TMPDIR, so it
    // also works unsandboxed, where /tmp is shared (in the sandbox /tmp is the check's own too).
    let census = census_flags(&project.root.join("package.json"));
    let flow = if package_mentions(&project.root.join("package.json"), "flow-bin") {
        " FLOW_TEMP_DIR=\"$TMPDIR\"/flow"
    } else {
        ""
    };
    Guess {
        name: "test",
        // Installed again only when package.json or the lock file changed (a stamp inside the
        // kept node_modules/): the files are named by pattern, since a word naming a repository
        // path would put the whole file on surface `ci`.
        run: format!(
            "export npm_config_cache={word}{flow}; mkdir -p node_modules; \
             cat package*.json > node_modules/.closegate-deps.new; \
             cmp -s node_modules/.closegate-deps.new node_modules/.closegate-deps || \
             {{ {install} --no-audit --no-fund && \
             mv node_modules/.closegate-deps.new node_modules/.closegate-deps; }} && npm test{census}"
        ),
        writable: vec![entry],
        keep: vec!["node_modules/".to_string()],
    }
}

fn go(project: &Project<'_>) -> Guess {
    let (entry, word) = project.cache_of("go");
    Guess {
        name: "test",
        // `-json`: the test census reads each test's result (SPEC §26.4); plain `go test`
        // names packages only.
        run: format!("export GOPATH={word} GOCACHE={word}/build; go test -json ./..."),
        writable: vec![entry],
        keep: Vec::new(),
    }
}

/// A virtual environment `.venv` in the checkout; the project and its test dependencies installed
/// into it once per change of the files that name them (a stamp inside `.venv`), then pytest.
fn python(project: &Project<'_>) -> Guess {
    let (entry, word) = project.cache_of("pip");
    let mut reqs: Vec<String> = Vec::new();
    let installable = ["pyproject.toml", "setup.py", "setup.cfg"]
        .iter()
        .any(|f| project.has(f));
    let extras = python_extras(project.root);
    if installable {
        match extras.as_slice() {
            [] => reqs.push("-e .".to_string()),
            _ => reqs.push(format!(
                "-e {}",
                shell_word(&format!(".[{}]", extras.join(",")))
            )),
        }
    }
    for group in python_groups(project.root) {
        if !reqs.contains(&group) {
            reqs.push(shell_word(&group));
        }
    }
    for file in REQUIREMENT_FILES {
        if project.has(file) {
            reqs.push(format!("-r {file}"));
        }
    }
    if !reqs.iter().any(|r| r == "pytest") {
        reqs.push("pytest".to_string());
    }
    // The stamp names the files by pattern: a word naming a repository path would put the
    // whole file on surface `ci` (SPEC §4.5), and a dependency added is no graded input.
    let stamp = "cat pyproject.* setup.* requirements*.txt 2>/dev/null";
    let run = format!(
        "export PIP_CACHE_DIR={word}; [ -x .venv/bin/python ] || python3 -m venv .venv; \
         {{ {stamp}; }} > .venv/.closegate-deps.new; \
         cmp -s .venv/.closegate-deps.new .venv/.closegate-deps || \
         {{ .venv/bin/python -m pip install -q --disable-pip-version-check {} && \
         mv .venv/.closegate-deps.new .venv/.closegate-deps; }} && \
         .venv/bin/python -m pytest -v -p no:cacheprovider",
        reqs.join(" ")
    );
    Guess {
        name: "test",
        run,
        writable: vec![entry],
        keep: vec![".venv/".to_string()],
    }
}

/// What `npm test` is given so that its runner names every test for the census (SPEC §26.4),
/// when `scripts.test` is that runner alone: jest's `--verbose`, vitest's verbose reporter. A
/// chain (`eslint . && jest`) gets nothing: npm would hand the flag to its last command only.
fn census_flags(path: &Path) -> &'static str {
    let Ok(bytes) = crate::input_file::read(path) else {
        return "";
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return "";
    };
    let Some(test) = value["scripts"]["test"].as_str() else {
        return "";
    };
    if test.contains(['&', '|', ';', '\n']) {
        return "";
    }
    match test.split_whitespace().next() {
        Some("jest") if !test.contains("--verbose") => " -- --verbose",
        Some("vitest") if !test.contains("--reporter") => " -- --reporter=verbose",
        _ => "",
    }
}

/// Requirement files projects keep their test dependencies in.
const REQUIREMENT_FILES: [&str; 4] = [
    "requirements-test.txt",
    "requirements-dev.txt",
    "test-requirements.txt",
    "requirements/test.txt",
];

/// Names under which projects keep their test dependencies.
const TEST_NAMES: [&str; 4] = ["tests", "test", "testing", "dev"];

/// `[project.optional-dependencies]` extras named like test dependencies.
fn python_extras(root: &Path) -> Vec<String> {
    let Some(table) = pyproject(root) else {
        return Vec::new();
    };
    let extras = table
        .get("project")
        .and_then(|p| p.get("optional-dependencies"))
        .and_then(|e| e.as_table());
    TEST_NAMES
        .iter()
        .filter(|n| **n != "dev" && extras.is_some_and(|e| e.contains_key(**n)))
        .map(|n| n.to_string())
        .collect()
}

/// The requirement strings of `[dependency-groups]` (PEP 735) named like test dependencies,
/// `{include-group = …}` followed; pip before 25.1 has no `--group`, so they are named.
fn python_groups(root: &Path) -> Vec<String> {
    let Some(table) = pyproject(root) else {
        return Vec::new();
    };
    let Some(groups) = table.get("dependency-groups").and_then(|g| g.as_table()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut todo: Vec<&str> = TEST_NAMES
        .iter()
        .copied()
        .filter(|n| groups.contains_key(*n))
        .take(1)
        .collect();
    let mut seen: Vec<&str> = Vec::new();
    while let Some(name) = todo.pop() {
        if seen.contains(&name) {
            continue;
        }
        seen.push(name);
        for item in groups
            .get(name)
            .and_then(|g| g.as_array())
            .into_iter()
            .flatten()
        {
            match item {
                toml::Value::String(req) if !out.contains(req) => out.push(req.clone()),
                toml::Value::Table(t) => {
                    if let Some(inc) = t.get("include-group").and_then(|v| v.as_str()) {
                        todo.push(inc);
                    }
                }
                _ => {}
            }
        }
    }
    out
}

fn pyproject(root: &Path) -> Option<toml::Table> {
    let bytes = crate::input_file::read(&root.join("pyproject.toml")).ok()?;
    String::from_utf8(bytes).ok()?.parse().ok()
}

/// Whether `package.json` names `package` among its dependencies of any kind.
fn package_mentions(path: &Path, package: &str) -> bool {
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
