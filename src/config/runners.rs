//! What the checks' `run` strings invoke (SPEC §4.5, §26.4): the test runners (which decide
//! what is graded input), the npm scripts they name (followed through `package.json`), and the
//! test globs handed on the command line to a runner that takes them (tape, ava, nyc), which go
//! on surface `tests`, not `ci`. The graded-input gate and the configuration's surfaces both
//! read it from here.

use std::collections::BTreeSet;

use serde_json::Value as Json;

use super::CheckSpec;

/// The runners the checks invoke, the npm scripts they name and the test globs they give.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Runners {
    pub npm_scripts: BTreeSet<String>,
    /// `npm`, `npx`, `yarn`, `pnpm` or a Node test runner.
    pub npm: bool,
    /// Jest runs (named on the command line or in a followed npm script).
    pub jest: bool,
    pub python: bool,
    pub cargo: bool,
    pub make: bool,
    pub go: bool,
    /// The test globs (or paths) given to tape, ava or nyc, as written (quotes and `./` dropped).
    pub test_globs: Vec<String>,
}

/// Read the runners from the checks' `run` strings, command by command.
pub fn runners(checks: &[CheckSpec]) -> Runners {
    let mut found = Runners::default();
    for check in checks {
        add_commands(&check.run, &mut found);
    }
    found
}

/// Add what the commands of one shell text invoke (a `run` string or an npm script).
pub fn add_commands(text: &str, found: &mut Runners) {
    for command in text.split([';', '&', '|', '\n', '(', ')']) {
        let words: Vec<String> = command
            .split_whitespace()
            .map(unquote)
            .filter(|w| !is_assignment(w))
            .collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        runner_of(&words, found);
    }
}

/// A shell word without its quotes.
fn unquote(word: &str) -> String {
    word.chars().filter(|c| !"'\"".contains(*c)).collect()
}

/// What one simple command (its words, assignments dropped) invokes.
fn runner_of(words: &[&str], found: &mut Runners) {
    let Some(first) = words.first() else { return };
    let exe = first.rsplit('/').next().unwrap_or(first);
    let rest = &words[1..];
    let arg = |i: usize| rest.get(i).copied().unwrap_or("");
    match exe {
        "npm" | "yarn" | "pnpm" => npm_command(exe, rest, found),
        "npx" => {
            found.npm = true;
            let from = rest.iter().position(|w| !w.starts_with('-'));
            runner_of(&rest[from.unwrap_or(rest.len())..], found);
        }
        "jest" | "react-scripts" | "craco" => {
            found.npm = true;
            found.jest = true;
        }
        "mocha" | "vitest" | "c8" => found.npm = true,
        "tape" | "ava" | "tap" => {
            found.npm = true;
            let globs = rest.iter().filter(|w| !w.starts_with('-'));
            add_globs(globs.copied(), found);
        }
        "nyc" => {
            // nyc wraps a command: its test files are the wrapped command's arguments.
            found.npm = true;
            let Some(at) = rest.iter().position(|w| !w.starts_with('-')) else {
                return;
            };
            let wrapped = &rest[at..];
            runner_of(wrapped, found);
            let globs = wrapped[1..].iter().filter(|w| !w.starts_with('-'));
            add_globs(globs.copied(), found);
        }
        "pytest" | "py.test" | "tox" | "nox" => found.python = true,
        "uv" | "poetry" if arg(0) == "run" => runner_of(&rest[1..], found),
        "cargo" => found.cargo = true,
        "go" => found.go = true,
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

/// `npm`, `yarn` or `pnpm` with `rest`: the script it runs (`npm test` → `test`, `npm run X` /
/// `yarn X` / `pnpm X` → `X`), or the command `exec`/`dlx` runs.
fn npm_command(exe: &str, rest: &[&str], found: &mut Runners) {
    found.npm = true;
    let arg = |i: usize| rest.get(i).copied().unwrap_or("");
    let script = match (exe, arg(0)) {
        ("npm", "test" | "t") | ("yarn" | "pnpm", "test") => Some("test"),
        ("npm", "run" | "run-script") | ("yarn" | "pnpm", "run") => Some(arg(1)),
        (_, "exec" | "dlx") => {
            runner_of(&rest[1..], found);
            None
        }
        ("yarn" | "pnpm", s) if !NOT_SCRIPTS.contains(&s) => {
            // `yarn jest` runs the script `jest`, or else the binary.
            runner_of(rest, found);
            Some(s)
        }
        _ => None,
    };
    if let Some(s) = script.filter(|s| !s.is_empty() && !s.starts_with('-')) {
        found.npm_scripts.insert(s.to_string());
    }
}

/// Record test globs given to a runner: `./` and a trailing `/` dropped; `.`, absolute paths and
/// paths leaving the repository name nothing here.
fn add_globs<'a>(words: impl Iterator<Item = &'a str>, found: &mut Runners) {
    for word in words {
        let mut glob = word;
        while let Some(rest) = glob.strip_prefix("./") {
            glob = rest;
        }
        let glob = glob.trim_end_matches('/');
        let outside = glob.starts_with('/') || glob.split('/').any(|c| c == ".." || c == ".");
        if !glob.is_empty() && !outside && !found.test_globs.iter().any(|g| g == glob) {
            found.test_globs.push(glob.to_string());
        }
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

/// The scripts of `package_json` that running `names` runs, in the order found: each name, its
/// `pre`/`post` scripts and every script those name, transitively; the text is `None` for a
/// script the file does not define.
pub fn followed_scripts(
    package_json: &Json,
    names: &BTreeSet<String>,
) -> Vec<(String, Option<String>)> {
    let scripts = package_json.get("scripts").and_then(Json::as_object);
    let mut todo: Vec<String> = names.iter().cloned().collect();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::new();
    while let Some(name) = todo.pop() {
        for name in [format!("pre{name}"), name.clone(), format!("post{name}")] {
            if !seen.insert(name.clone()) {
                continue;
            }
            let text = scripts.and_then(|s| s.get(&name)).and_then(Json::as_str);
            let mut inner = Runners::default();
            add_commands(text.unwrap_or(""), &mut inner);
            todo.extend(inner.npm_scripts);
            out.push((name, text.map(str::to_string)));
        }
    }
    out
}

/// What the scripts `names` of `package_json` run, followed transitively (the scripts' own
/// runners, test globs and whether Jest runs).
pub fn script_runners(package_json: &Json, names: &BTreeSet<String>) -> Runners {
    let mut found = Runners::default();
    for (_, text) in followed_scripts(package_json, names) {
        add_commands(text.as_deref().unwrap_or(""), &mut found);
    }
    found
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
        let r = of("yarn lint && pnpm run build");
        assert!(r.npm_scripts.contains("lint") && r.npm_scripts.contains("build"));
        assert!(of(".venv/bin/python -m pytest -q").python);
        assert!(of("PYTHONPATH=src python3 -m pytest").python);
        assert!(of("uv run pytest").python);
        assert!(!of("python3 -m unittest").python);
        assert!(of("CARGO_HOME=x cargo test --locked").cargo);
        assert!(of("make test").make);
        let go = of("go test ./...");
        assert!(go.go && !go.npm && !go.cargo);
        assert!(of("npx jest --ci").jest);
        assert!(of("yarn jest").jest);
        assert!(
            !of("npm test").jest,
            "jest is known only from the scripts then"
        );
    }

    #[test]
    fn tape_ava_and_nyc_give_their_test_globs() {
        let r = of("npx tape 'test/**/*.js' && ava ./checks/ --verbose");
        assert_eq!(r.test_globs, ["test/**/*.js", "checks"]);
        let r = of("nyc --reporter=text tape spec/a.js");
        assert_eq!(r.test_globs, ["spec/a.js"]);
        let r = of("nyc node suite/run.js");
        assert_eq!(r.test_globs, ["suite/run.js"]);
        assert!(of("tape /etc/x ../y .").test_globs.is_empty());
        assert!(
            of("mocha test").test_globs.is_empty(),
            "mocha's paths stay named paths"
        );
    }

    #[test]
    fn npm_scripts_are_followed_transitively_with_pre_and_post() {
        let pkg: Json = serde_json::from_str(
            r#"{"scripts": {"test": "npm run lint && tape t/*.js", "pretest": "x", "lint": "eslint ."}}"#,
        )
        .unwrap();
        let names = BTreeSet::from(["test".to_string()]);
        let keys: Vec<String> = followed_scripts(&pkg, &names)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        for key in ["test", "pretest", "posttest", "lint", "prelint"] {
            assert!(keys.contains(&key.to_string()), "{key}: {keys:?}");
        }
        assert_eq!(script_runners(&pkg, &names).test_globs, ["t/*.js"]);
    }
}
