//! The runner's own configuration is graded input (SPEC §4.5, §26.4): it decides what a check
//! command runs, so a change to it is `protected-surface` on `ci`, with the key named
//! (`package.json: scripts.test`). Which runners count comes from the trusted checks' `run`
//! strings, through the runners table ([`crate::runners`]); only the keys that steer the run count (a dependency
//! added to `package.json` is not graded input). A graded file that does not parse on either
//! side counts as a change to every graded key. Build scripts (`build.rs`, `[package] build`)
//! and Python start-up files (`sitecustomize.py`, `usercustomize.py`, `*.pth`) are graded
//! whatever runs: each runs before any test does.

use std::collections::BTreeSet;

use anyhow::Result;
use git2::Oid;
use serde_json::Value as Json;

use crate::catalog::Code;
use crate::finding::Finding;
use crate::globs::Globs;
use crate::repo::{Change, Repo};
use crate::report::ProtectedChange;
use crate::runners::{Invoked, RUNNER_CONFIG};

/// What the checks' `run` strings invoke (the runners table reads them).
pub fn runners(checks: &[crate::config::CheckSpec]) -> Invoked {
    Invoked::of(checks.iter().map(|c| c.run.as_str()))
}

/// What the checks invoke, with what the npm scripts they run invoke (on either side, in the
/// root `package.json`): a runner a script runs is graded as if named.
fn with_scripts(repo: &Repo, invoked: &Invoked, from: Oid, to: Oid) -> Result<Invoked> {
    let mut found = invoked.clone();
    if invoked.npm_scripts.is_empty() {
        return Ok(found);
    }
    for side in [from, to] {
        let Some(bytes) = repo.read_file(side, "package.json")? else {
            continue;
        };
        if let Ok(json) = serde_json::from_slice::<Json>(&bytes) {
            let scripts = invoked.with_scripts(&json);
            found.runners.extend(scripts.runners);
            found.npm_scripts.extend(scripts.npm_scripts);
        }
    }
    Ok(found)
}

/// One `protected-surface` (surface `ci`) per graded file or key the change touches.
pub fn run(
    repo: &Repo,
    runners: &Invoked,
    changes: &[Change],
    from: Oid,
    to: Oid,
    already_ci: &dyn Fn(&[u8]) -> bool,
) -> Result<(Vec<ProtectedChange>, Vec<Finding>)> {
    let runners = &with_scripts(repo, runners, from, to)?;
    let files = runners.graded_files();
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
                    (
                        vec![String::new()],
                        why.unwrap_or(RUNNER_CONFIG).to_string(),
                    )
                }
                None => match changed_keys(repo, runners, bytes, from, to)? {
                    keys if !keys.is_empty() => (keys, RUNNER_CONFIG.to_string()),
                    _ => match redefines(repo, bytes, from, to)? {
                        Some(why) => (vec![String::new()], why),
                        None => continue,
                    },
                },
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

/// Why a changed source file is graded because it redefines what a test means (SPEC §27.1): the
/// line it adds, quoted; `None` when it adds none.
fn redefines(repo: &Repo, path: &[u8], from: Oid, to: Oid) -> Result<Option<String>> {
    if crate::runners::Language::of_path(path).is_none() {
        return Ok(None);
    }
    let Some(new) = repo.read_file(to, path)? else {
        return Ok(None);
    };
    let old = repo.read_file(from, path)?;
    Ok(
        crate::runners::redefinition(path, old.as_deref(), &new).map(|line| {
            let line: String = line.chars().take(120).collect();
            format!("it redefines what a test means (`{line}`), so the tests there check nothing")
        }),
    )
}

/// The graded keys of `path` that differ between `from` and `to` (every graded key when either
/// side is present and does not parse), by the key readers of the runners invoked.
fn changed_keys(
    repo: &Repo,
    runners: &Invoked,
    path: &[u8],
    from: Oid,
    to: Oid,
) -> Result<Vec<String>> {
    let name = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
    let readers = runners.key_readers(name);
    if readers.is_empty() {
        return Ok(Vec::new());
    }
    let old = repo.read_file(from, path)?;
    let new = repo.read_file(to, path)?;
    let side = |bytes: &Option<Vec<u8>>| {
        bytes.as_ref().map(|b| {
            let mut all: Vec<(String, String)> = Vec::new();
            for read in &readers {
                all.extend(read(b, runners)?);
            }
            Some(all)
        })
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::CheckSpec;

    fn of(run: &str) -> Invoked {
        runners(&[CheckSpec::new("t", run, 60)])
    }

    /// The graded keys the runners `run` invokes read from a file called `name`.
    fn keys(name: &str, bytes: &[u8], run: &str) -> Vec<(String, String)> {
        let invoked = of(run);
        let mut out = Vec::new();
        for read in invoked.key_readers(name.as_bytes()) {
            out.extend(read(bytes, &invoked).unwrap());
        }
        out
    }

    fn names(keys: Vec<(String, String)>) -> Vec<String> {
        keys.into_iter().map(|(k, _)| k).collect()
    }

    #[test]
    fn package_json_grades_what_the_tests_import_and_babel_only_under_jest() {
        let pkg = br#"{"main": "index.js", "babel": {"presets": []}, "dependencies": {}}"#;
        let npm = names(keys("package.json", pkg, "npm test"));
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
        assert!(names(keys("package.json", pkg, "npx jest")).contains(&"babel".to_string()));
        assert!(!npm.iter().any(|k| k.starts_with("dependencies")));
    }

    #[test]
    fn cargo_grades_the_build_script_key_and_the_lib_path() {
        let toml = b"[package]\nname = \"a\"\nbuild = \"gen.rs\"\n[lib]\npath = \"src/other.rs\"\n";
        let found = keys("Cargo.toml", toml, "cargo test");
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
            let all = keys("pyproject.toml", bytes, "pytest");
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
            |r: &Invoked| -> Vec<&str> { r.graded_files().into_iter().map(|(g, _)| g).collect() };
        let always = globs(&Invoked::default());
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

    /// Issue #46: the graded inputs follow the runner through every form a `run` string gives it.
    #[test]
    fn graded_inputs_follow_a_wrapped_runner() {
        for run in [
            "python3 -m pytest",
            "true || timeout 600 pytest",
            "env CI=1 pytest",
            "nice -n 10 pytest -q",
            "xvfb-run -a pytest",
            "uv run pytest",
            "poetry run pytest",
            "bash -c 'pytest -q'",
            "sh -c \"cd pkg && pytest\"",
            "cd pkg && pytest",
            "PYTHONPATH=src pytest",
            "make lint; pytest | tee log",
            "timeout 600 env CI=1 nice pytest",
        ] {
            assert!(
                of(run)
                    .graded_files()
                    .iter()
                    .any(|(g, _)| *g == "**/pytest.ini"),
                "{run}"
            );
        }
        for run in [
            "npx jest",
            "pnpm exec jest",
            "yarn run jest",
            "timeout 60 npx jest",
        ] {
            assert!(
                of(run)
                    .graded_files()
                    .iter()
                    .any(|(g, _)| *g == "**/.babelrc"),
                "{run}"
            );
        }
    }
}
