//! The runner's own configuration is graded input (SPEC §4.5): it decides what a check command
//! runs, so a change to it is `protected-surface` on `ci`, with the key named
//! (`package.json: scripts.test`). Which runners count comes from the trusted checks' `run`
//! strings; only the keys that steer the run count (a dependency added to `package.json` is not
//! graded input). A graded file that does not parse on either side counts as a change to every
//! graded key.

use std::collections::BTreeSet;

use anyhow::Result;
use git2::Oid;
use serde_json::Value as Json;

use crate::catalog::Code;
use crate::config::CheckSpec;
use crate::finding::Finding;
use crate::globs::Globs;
use crate::repo::{Change, Repo};
use crate::report::ProtectedChange;

/// The runners the checks invoke, and the npm scripts they name.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Runners {
    pub npm_scripts: BTreeSet<String>,
    pub npm: bool,
    pub python: bool,
    pub cargo: bool,
    pub make: bool,
}

/// Read the runners from the checks' `run` strings, command by command.
pub fn runners(checks: &[CheckSpec]) -> Runners {
    let mut found = Runners::default();
    for check in checks {
        for command in check.run.split([';', '&', '|', '\n', '(', ')']) {
            let words: Vec<&str> = command
                .split_whitespace()
                .filter(|w| !is_assignment(w))
                .collect();
            runner_of(&words, &mut found);
        }
    }
    found
}

/// What one simple command (its words, assignments dropped) invokes.
fn runner_of(words: &[&str], found: &mut Runners) {
    let Some(first) = words.first() else { return };
    let exe = first.rsplit('/').next().unwrap_or(first);
    let rest = &words[1..];
    let arg = |i: usize| rest.get(i).copied().unwrap_or("");
    match exe {
        "npm" | "npx" | "yarn" | "pnpm" => {
            found.npm = true;
            let script = match (exe, arg(0)) {
                ("npm", "test" | "t") | ("yarn" | "pnpm", "test") => Some("test"),
                ("npm", "run" | "run-script") | ("yarn" | "pnpm", "run") => Some(arg(1)),
                ("yarn" | "pnpm", s) if !NOT_SCRIPTS.contains(&s) => Some(s),
                _ => None,
            };
            if let Some(s) = script.filter(|s| !s.is_empty() && !s.starts_with('-')) {
                found.npm_scripts.insert(s.to_string());
            }
        }
        "pytest" | "tox" | "nox" => found.python = true,
        "uv" | "poetry" if arg(0) == "run" => runner_of(&rest[1..], found),
        "cargo" => found.cargo = true,
        "make" | "gmake" => found.make = true,
        e if e.starts_with("python") => {
            let module = rest.iter().position(|w| *w == "-m").map(|i| arg(i + 1));
            if matches!(module, Some("pytest" | "tox" | "nox")) {
                found.python = true;
            }
        }
        _ => {}
    }
}

/// `yarn`/`pnpm` subcommands that are not scripts.
const NOT_SCRIPTS: [&str; 8] = [
    "install", "add", "remove", "ci", "exec", "dlx", "-s", "--silent",
];

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Whole files that are graded input for the runners found.
fn graded_files(runners: &Runners) -> Vec<&'static str> {
    let mut globs = Vec::new();
    if runners.npm {
        globs.extend([
            "**/.mocharc*",
            "**/jest.config.*",
            "**/vitest.config.*",
            "**/karma.conf.*",
            "**/playwright.config.*",
        ]);
    }
    if runners.python {
        globs.extend([
            "**/pytest.ini",
            "**/tox.ini",
            "**/noxfile.py",
            "**/conftest.py",
        ]);
    }
    if runners.cargo {
        globs.push(".cargo/config.toml");
    }
    if runners.make {
        globs.extend(["**/Makefile", "**/GNUmakefile", "**/makefile", "**/*.mk"]);
    }
    globs
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
    let files = graded_files(runners);
    let set = Globs::paths(&files.iter().map(|g| g.to_string()).collect::<Vec<_>>())
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
            let keys = if set.is_match(bytes) {
                vec![String::new()]
            } else {
                changed_keys(repo, runners, bytes, from, to)?
            };
            for key in keys {
                let what = if key.is_empty() {
                    format!("`{path}`")
                } else {
                    format!("`{path}: {key}`")
                };
                let msg = format!(
                    "{kind} {what} on protected surface `ci`: the runner's own configuration \
                     decides what the checks run (graded input)"
                );
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
/// those name, transitively; the top-level runner keys.
fn npm_keys(bytes: &[u8], runners: &Runners) -> Option<Vec<(String, String)>> {
    let value: Json = serde_json::from_slice(bytes).ok()?;
    let scripts = value.get("scripts").and_then(Json::as_object);
    let mut todo: Vec<String> = runners.npm_scripts.iter().cloned().collect();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::new();
    while let Some(name) = todo.pop() {
        for name in [format!("pre{name}"), name.clone(), format!("post{name}")] {
            if !seen.insert(name.clone()) {
                continue;
            }
            let text = scripts.and_then(|s| s.get(&name)).and_then(Json::as_str);
            out.push((
                format!("scripts.{name}"),
                text.unwrap_or("\u{0}absent").to_string(),
            ));
            let mut inner = Runners::default();
            for command in text.unwrap_or("").split([';', '&', '|']) {
                let words: Vec<&str> = command.split_whitespace().collect();
                runner_of(&words, &mut inner);
            }
            todo.extend(inner.npm_scripts);
        }
    }
    for key in ["jest", "mocha", "ava", "vitest", "c8", "nyc"] {
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
    out.push((
        "tool.pytest.ini_options".into(),
        get("pytest").unwrap_or_default(),
    ));
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

    fn of(run: &str) -> Runners {
        runners(&[CheckSpec::new("t", run, 60)])
    }

    #[test]
    fn runners_come_from_command_words() {
        let r = of("export npm_config_cache=x; npm install && npm test");
        assert!(r.npm && r.npm_scripts.contains("test") && !r.npm_scripts.contains("install"));
        assert!(
            of("yarn lint && pnpm run build")
                .npm_scripts
                .contains("lint")
        );
        assert!(
            of("yarn lint && pnpm run build")
                .npm_scripts
                .contains("build")
        );
        assert!(of(".venv/bin/python -m pytest -q").python);
        assert!(of("PYTHONPATH=src python3 -m pytest").python);
        assert!(of("uv run pytest").python);
        assert!(!of("python3 -m unittest").python);
        assert!(of("CARGO_HOME=x cargo test --locked").cargo);
        assert!(of("make test").make);
        assert_eq!(of("go test ./..."), Runners::default());
    }

    #[test]
    fn npm_scripts_are_followed_transitively_with_pre_and_post() {
        let r = of("npm test");
        let pkg =
            br#"{"scripts": {"test": "npm run lint && jest", "pretest": "x", "lint": "eslint ."}}"#;
        let keys: Vec<String> = npm_keys(pkg, &r)
            .unwrap()
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        for key in [
            "scripts.test",
            "scripts.pretest",
            "scripts.posttest",
            "scripts.lint",
            "jest",
        ] {
            assert!(keys.contains(&key.to_string()), "{key}: {keys:?}");
        }
    }
}
