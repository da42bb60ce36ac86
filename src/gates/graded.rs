//! The runner's own configuration is graded input (SPEC §4.5, §26.4): it decides what a check
//! command runs, so a change to it is `protected-surface` on `ci`, with the key named
//! (`package.json: scripts.test`). Which runners count comes from the trusted checks' `run`
//! strings ([`crate::config::runners`]); only the keys that steer the run count (a dependency
//! added to `package.json` is not graded input). A graded file that does not parse on either
//! side counts as a change to every graded key. Build scripts (`build.rs`, `[package] build`)
//! and Python start-up files (`sitecustomize.py`, `usercustomize.py`, `*.pth`) are graded
//! whatever runs: each runs before any test does.

use std::collections::BTreeSet;

use anyhow::Result;
use git2::Oid;
use serde_json::Value as Json;

use crate::catalog::Code;
use crate::config::runners::{self, Runners};
use crate::finding::Finding;
use crate::globs::Globs;
use crate::repo::{Change, Repo};
use crate::report::ProtectedChange;

pub use crate::config::runners::runners;

/// Why a whole graded file decides what the checks run.
const RUNNER_CONFIG: &str = "the runner's own configuration decides what the checks run";
const BUILD_SCRIPT: &str = "a build script runs before the code it builds is compiled";
const STARTUP: &str = "Python runs a start-up file before any test";

/// Whole files that are graded input for the runners found, each with why.
fn graded_files(runners: &Runners) -> Vec<(&'static str, &'static str)> {
    let mut globs = vec![
        ("**/build.rs", BUILD_SCRIPT),
        ("**/sitecustomize.py", STARTUP),
        ("**/usercustomize.py", STARTUP),
        ("**/*.pth", STARTUP),
    ];
    let mut add = |files: &[&'static str]| globs.extend(files.iter().map(|g| (*g, RUNNER_CONFIG)));
    if runners.npm {
        add(&[
            "**/.mocharc*",
            "**/jest.config.*",
            "**/vitest.config.*",
            "**/karma.conf.*",
            "**/playwright.config.*",
            "**/.npmrc",
            "**/.yarnrc",
            "**/.yarnrc.yml",
            "**/.pnpmfile.cjs",
            "**/pnpm-workspace.yaml",
        ]);
    }
    if runners.jest {
        add(&["**/babel.config.*", "**/.babelrc", "**/.babelrc.*"]);
    }
    if runners.python {
        add(&[
            "**/pytest.ini",
            "**/.pytest.ini",
            "**/pytest.toml",
            "**/.pytest.toml",
            "**/tox.ini",
            "**/noxfile.py",
            "**/conftest.py",
        ]);
    }
    if runners.cargo {
        add(&[
            ".cargo/config.toml",
            "**/rust-toolchain",
            "**/rust-toolchain.toml",
        ]);
    }
    if runners.make {
        add(&["**/Makefile", "**/GNUmakefile", "**/makefile", "**/*.mk"]);
    }
    if runners.go {
        // A `go.mod` below the root makes a module of its own, which `./...` leaves out.
        add(&["*/**/go.mod", "**/go.work"]);
    }
    globs
}

/// The runners found, with Jest also when an npm script the checks run (on either side, in the
/// root `package.json`) runs it: its `babel` configuration is graded then.
fn with_scripts(repo: &Repo, runners: &Runners, from: Oid, to: Oid) -> Result<Runners> {
    let mut found = runners.clone();
    if !runners.npm || runners.jest {
        return Ok(found);
    }
    for side in [from, to] {
        let Some(bytes) = repo.read_file(side, "package.json")? else {
            continue;
        };
        if let Ok(json) = serde_json::from_slice::<Json>(&bytes) {
            found.jest |= runners::script_runners(&json, &runners.npm_scripts).jest;
        }
    }
    Ok(found)
}

/// One `protected-surface` (surface `ci`) per graded file or key the change touches.
pub fn run(
    repo: &Repo,
    runners: &Runners,
    changes: &[Change],
    from: Oid,
    to: Oid,
    already_ci: &dyn Fn(&[u8]) -> bool,
) -> Result<(Vec<ProtectedChange>, Vec<Finding>)> {
    let runners = &with_scripts(repo, runners, from, to)?;
    let files = graded_files(runners);
    let set = Globs::paths(&files.iter().map(|(g, _)| g.to_string()).collect::<Vec<_>>())
        .map_err(anyhow::Error::msg)?;
    let mut hits = Vec::new();
    let mut findings = Vec::new();
    for change in changes {
        // Matched and read by the bytes git stores, printed escaped (SPEC §26.4).
        for (bytes, path) in change.touched() {
            if already_ci(bytes) {
                continue;
            }
            let kind = change.kind.as_str();
            let (keys, why) = match set.first_match(bytes) {
                Some(glob) => {
                    let why = files.iter().find(|(g, _)| *g == glob).map(|(_, w)| *w);
                    (vec![String::new()], why.unwrap_or(RUNNER_CONFIG))
                }
                None => (changed_keys(repo, runners, bytes, from, to)?, RUNNER_CONFIG),
            };
            for key in keys {
                let what = if key.is_empty() {
                    format!("`{path}`")
                } else {
                    format!("`{path}: {key}`")
                };
                let msg = format!("{kind} {what} on protected surface `ci`: {why} (graded input)");
                findings.push(Finding::new(Code::ProtectedSurface, msg).at_path(path));
                if !hits.iter().any(|h: &ProtectedChange| h.path == path) {
                    hits.push(ProtectedChange {
                        path: path.to_string(),
                        surface: "ci".to_string(),
                        change: kind,
                    });
                }
            }
        }
    }
    Ok((hits, findings))
}

/// Graded keys of one file kind and their values (as text), `None` when the file does not parse.
type KeyReader = fn(&[u8], &Runners) -> Option<Vec<(String, String)>>;

/// The graded keys of `path` that differ between `from` and `to` (every graded key when either
/// side is present and does not parse).
fn changed_keys(
    repo: &Repo,
    runners: &Runners,
    path: &[u8],
    from: Oid,
    to: Oid,
) -> Result<Vec<String>> {
    let name = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
    let reader: KeyReader = match name {
        b"package.json" if runners.npm => npm_keys,
        b"pyproject.toml" if runners.python => pyproject_keys,
        b"setup.cfg" if runners.python => setup_cfg_keys,
        b"Cargo.toml" if runners.cargo => cargo_keys,
        _ => return Ok(Vec::new()),
    };
    let old = repo.read_file(from, path)?;
    let new = repo.read_file(to, path)?;
    let side = |bytes: &Option<Vec<u8>>| bytes.as_ref().map(|b| reader(b, runners));
    let (old, new) = (side(&old), side(&new));
    if matches!(old, Some(None)) || matches!(new, Some(None)) {
        return Ok(vec!["(does not parse: every graded key)".to_string()]);
    }
    let old = old.flatten().unwrap_or_default();
    let new = new.flatten().unwrap_or_default();
    let keys: BTreeSet<&String> = old.iter().chain(&new).map(|(k, _)| k).collect();
    let value = |side: &[(String, String)], key: &str| {
        side.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    };
    Ok(keys
        .into_iter()
        .filter(|k| value(&old, k) != value(&new, k))
        .cloned()
        .collect())
}

/// `package.json`: the scripts the checks invoke, their `pre`/`post` scripts and every script
/// those name, transitively; the top-level runner keys; what decides which code the tests import
/// (`main`, `exports`, `module`, `type`, `imports`); `babel` when Jest runs.
fn npm_keys(bytes: &[u8], runners: &Runners) -> Option<Vec<(String, String)>> {
    let value: Json = serde_json::from_slice(bytes).ok()?;
    let mut out = Vec::new();
    for (name, text) in runners::followed_scripts(&value, &runners.npm_scripts) {
        let text = text.unwrap_or_else(|| "\u{0}absent".to_string());
        out.push((format!("scripts.{name}"), text));
    }
    let mut keys = vec!["jest", "mocha", "ava", "vitest", "c8", "nyc"];
    keys.extend(["main", "exports", "module", "type", "imports"]);
    if runners.jest {
        keys.push("babel");
    }
    for key in keys {
        out.push((
            key.to_string(),
            value.get(key).map_or("\u{0}".into(), Json::to_string),
        ));
    }
    Some(out)
}

/// `pyproject.toml`: `[tool.pytest.ini_options]`, `[tool.tox]`, `[tool.coverage*]`.
fn pyproject_keys(bytes: &[u8], _: &Runners) -> Option<Vec<(String, String)>> {
    let table: toml::Table = std::str::from_utf8(bytes).ok()?.parse().ok()?;
    let tool = table.get("tool").and_then(toml::Value::as_table);
    let mut out = Vec::new();
    let get = |key: &str| tool.and_then(|t| t.get(key)).map(|v| v.to_string());
    // `[tool.pytest.ini_options]`, and the rest of `[tool.pytest]` (pytest 9 reads it natively).
    let pytest = tool
        .and_then(|t| t.get("pytest"))
        .and_then(toml::Value::as_table);
    let ini = pytest
        .and_then(|p| p.get("ini_options"))
        .map(|v| v.to_string());
    out.push(("tool.pytest.ini_options".into(), ini.unwrap_or_default()));
    let mut rest = pytest.cloned().unwrap_or_default();
    rest.remove("ini_options");
    out.push(("tool.pytest".into(), rest.to_string()));
    out.push(("tool.tox".into(), get("tox").unwrap_or_default()));
    for (key, value) in tool.into_iter().flatten() {
        if key.starts_with("coverage") {
            out.push((format!("tool.{key}"), value.to_string()));
        }
    }
    Some(out)
}

/// `setup.cfg`: the `[tool:pytest]` section, as its lines.
fn setup_cfg_keys(bytes: &[u8], _: &Runners) -> Option<Vec<(String, String)>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut section = String::new();
    let mut inside = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            inside = trimmed == "[tool:pytest]";
            continue;
        }
        if inside {
            section.push_str(line);
            section.push('\n');
        }
    }
    Some(vec![("tool:pytest".into(), section)])
}

/// `Cargo.toml`: `[[test]]`, `[[bench]]`, the `test`/`doctest`/`harness` keys of `[lib]` and
/// `[[bin]]`, `autotests`, `autobenches`, `[profile.test]`, and `[workspace]`'s
/// `members`/`exclude`/`default-members`.
fn cargo_keys(bytes: &[u8], _: &Runners) -> Option<Vec<(String, String)>> {
    let table: toml::Table = std::str::from_utf8(bytes).ok()?.parse().ok()?;
    let show = |v: Option<&toml::Value>| v.map_or(String::new(), toml::Value::to_string);
    let at = |path: &[&str]| {
        let mut v: Option<&toml::Value> = None;
        for (i, key) in path.iter().enumerate() {
            v = if i == 0 {
                table.get(*key)
            } else {
                v.and_then(|v| v.get(*key))
            };
        }
        show(v)
    };
    let mut out = vec![
        ("[[test]]".to_string(), at(&["test"])),
        ("[[bench]]".to_string(), at(&["bench"])),
        (
            "package.autotests".to_string(),
            at(&["package", "autotests"]),
        ),
        (
            "package.autobenches".to_string(),
            at(&["package", "autobenches"]),
        ),
        ("profile.test".to_string(), at(&["profile", "test"])),
        ("package.build".to_string(), at(&["package", "build"])),
        ("lib.path".to_string(), at(&["lib", "path"])),
    ];
    for key in ["members", "exclude", "default-members"] {
        out.push((format!("workspace.{key}"), at(&["workspace", key])));
    }
    for key in ["test", "doctest", "harness"] {
        out.push((format!("lib.{key}"), at(&["lib", key])));
        let bins = table.get("bin").and_then(toml::Value::as_array);
        let values: Vec<String> = bins
            .into_iter()
            .flatten()
            .map(|b| show(b.get(key)))
            .collect();
        out.push((format!("[[bin]].{key}"), values.join(",")));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CheckSpec;

    fn of(run: &str) -> Runners {
        runners(&[CheckSpec::new("t", run, 60)])
    }

    fn keys(reader: KeyReader, bytes: &[u8], runners: &Runners) -> Vec<String> {
        reader(bytes, runners)
            .unwrap()
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    }

    #[test]
    fn package_json_grades_what_the_tests_import_and_babel_only_under_jest() {
        let pkg = br#"{"main": "index.js", "babel": {"presets": []}, "dependencies": {}}"#;
        let npm = keys(npm_keys, pkg, &of("npm test"));
        for key in [
            "scripts.test",
            "main",
            "exports",
            "module",
            "type",
            "imports",
            "jest",
        ] {
            assert!(npm.contains(&key.to_string()), "{key}: {npm:?}");
        }
        assert!(!npm.contains(&"babel".to_string()));
        assert!(keys(npm_keys, pkg, &of("npx jest")).contains(&"babel".to_string()));
        assert!(!npm.iter().any(|k| k.starts_with("dependencies")));
    }

    #[test]
    fn cargo_grades_the_build_script_key_and_the_lib_path() {
        let toml = b"[package]\nname = \"a\"\nbuild = \"gen.rs\"\n[lib]\npath = \"src/other.rs\"\n";
        let found = cargo_keys(toml, &of("cargo test")).unwrap();
        assert!(
            found.contains(&("package.build".into(), "\"gen.rs\"".into())),
            "{found:?}"
        );
        assert!(
            found.contains(&("lib.path".into(), "\"src/other.rs\"".into())),
            "{found:?}"
        );
    }

    #[test]
    fn pyproject_grades_tool_pytest_beside_its_ini_options() {
        let a = b"[tool.pytest]\naddopts = [\"-q\"]\n";
        let b = b"[tool.pytest]\naddopts = [\"-q\", \"-k\", \"not slow\"]\n";
        let value = |bytes: &[u8], key: &str| {
            let all = pyproject_keys(bytes, &of("pytest")).unwrap();
            all.into_iter().find(|(k, _)| k == key).map(|(_, v)| v)
        };
        assert_ne!(value(a, "tool.pytest"), value(b, "tool.pytest"));
        assert_eq!(
            value(a, "tool.pytest.ini_options"),
            value(b, "tool.pytest.ini_options")
        );
    }

    #[test]
    fn graded_files_follow_the_runners() {
        let globs =
            |r: &Runners| -> Vec<&str> { graded_files(r).into_iter().map(|(g, _)| g).collect() };
        let always = globs(&Runners::default());
        for g in [
            "**/build.rs",
            "**/sitecustomize.py",
            "**/usercustomize.py",
            "**/*.pth",
        ] {
            assert!(always.contains(&g), "{g}");
        }
        assert!(globs(&of("npm test")).contains(&"**/.npmrc"));
        assert!(!globs(&of("npm test")).contains(&"**/.babelrc"));
        assert!(globs(&of("npx jest")).contains(&"**/.babelrc"));
        assert!(globs(&of("go test ./...")).contains(&"*/**/go.mod"));
        assert!(globs(&of("pytest")).contains(&"**/pytest.toml"));
        assert!(globs(&of("cargo test")).contains(&"**/rust-toolchain.toml"));
        let set = Globs::paths(&["*/**/go.mod".to_string()]).unwrap();
        assert!(!set.is_match("go.mod") && set.is_match("a/go.mod") && set.is_match("a/b/go.mod"));
    }
}
