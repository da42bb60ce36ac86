//! What every JavaScript runner's row shares: the package manager's own files, graded whole, and
//! the `package.json` keys that decide what a run runs and what the tests import (SPEC §4.5,
//! §26.4). Each JavaScript row lists [`GRADED`] and [`KEYS`] beside its own.

use std::collections::BTreeSet;

use serde_json::Value as Json;

use super::{Graded, Invoked, Keys, RUNNER_CONFIG, Runner};

/// The package managers' files: they decide what is installed and how scripts run.
pub(super) const GRADED: [Graded; 10] = [
    ("**/.npmrc", RUNNER_CONFIG),
    ("**/.yarnrc", RUNNER_CONFIG),
    ("**/.yarnrc.yml", RUNNER_CONFIG),
    ("**/.pnpmfile.cjs", RUNNER_CONFIG),
    ("**/pnpm-workspace.yaml", RUNNER_CONFIG),
    ("**/.mocharc*", RUNNER_CONFIG),
    ("**/jest.config.*", RUNNER_CONFIG),
    ("**/vitest.config.*", RUNNER_CONFIG),
    ("**/karma.conf.*", RUNNER_CONFIG),
    ("**/playwright.config.*", RUNNER_CONFIG),
];

/// `package.json`'s graded keys.
pub(super) const KEYS: [Keys; 1] = [Keys {
    file: "package.json",
    read: package_keys,
}];

/// The top-level keys of `package.json` that configure a runner (or a coverage wrapper).
const RUNNER_KEYS: [&str; 6] = ["jest", "mocha", "ava", "vitest", "c8", "nyc"];

/// `package.json`: the scripts the checks invoke, their `pre`/`post` scripts and every script
/// those name, transitively; the top-level runner keys; what decides which code the tests import
/// (`main`, `exports`, `module`, `type`, `imports`); `babel` when Jest runs.
fn package_keys(bytes: &[u8], invoked: &Invoked) -> Option<Vec<(String, String)>> {
    let value: Json = serde_json::from_slice(bytes).ok()?;
    let mut out = Vec::new();
    for (name, text) in followed_scripts(&value, &invoked.npm_scripts) {
        let text = text.unwrap_or_else(|| "\u{0}absent".to_string());
        out.push((format!("scripts.{name}"), text));
    }
    let mut keys = RUNNER_KEYS.to_vec();
    keys.extend(["main", "exports", "module", "type", "imports"]);
    if invoked.has(Runner::Jest) {
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

/// Text that tests whether JavaScript runs under some test runner (not one runner's own).
pub(super) const UNDER_TEST: [&str; 5] = [
    "typeof describe",
    "NODE_ENV === 'test'",
    "NODE_ENV === \"test\"",
    "NODE_ENV == 'test'",
    "NODE_ENV == \"test\"",
];

/// `-t`/`--grep`-style options take a pattern: the ids as one alternation of literal names.
pub(super) fn name_pattern(ids: &[&str]) -> String {
    let names: Vec<String> = ids.iter().map(|id| regex_literal(last_name(id))).collect();
    format!("^({})$", names.join("|"))
}

/// The test's own name, the last ` > `-separated part of a census id.
fn last_name(id: &str) -> &str {
    id.rsplit(" > ").next().unwrap_or(id)
}

/// `text` with every regular-expression metacharacter escaped.
pub(super) fn regex_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\^$.|?*+()[]{}/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The scripts of `package_json` that running `names` runs, in the order found: each name, its
/// `pre`/`post` scripts and every script those name, transitively; the text is `None` for a
/// script the file does not define.
pub(super) fn followed_scripts(
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
            let inner = Invoked::of([text.unwrap_or("")]);
            todo.extend(inner.npm_scripts);
            out.push((name, text.map(str::to_string)));
        }
    }
    out
}
