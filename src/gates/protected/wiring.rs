//! Runner wiring (SPEC §26.4): a file whose mere addition changes how the tests already there
//! run. Besides the names the configuration knows by themselves (`conftest.py`, `__init__.py`,
//! `pytest.ini`/`.pytest.ini`/`pytest.toml`, `__mocks__/`, `.mocharc*`, …:
//! [`Config::is_wiring_name`]), it is read from the trees: a Go `_test.go` file declaring
//! `TestMain`, and any file a runner configuration names — Jest's `setupFiles*` and other
//! targets, mocha's `--require`/`.mocharc*` targets, pytest's `-p` plugins, Cargo's `[[test]]`
//! paths — in the root's runner configuration files, which the runners table lists
//! ([`crate::runners::wiring_configs`]: `package.json`, `jest.config.*`, `vitest.config.*`,
//! `.mocharc*`, `pytest.ini`, `tox.ini`, `setup.cfg`, `pyproject.toml`, `Cargo.toml`, …), on
//! either side.

use std::collections::BTreeSet;

use anyhow::Result;
use git2::Oid;

use crate::config::Config;
use crate::repo::Repo;

/// Extensions tried for a named path written without one (`<rootDir>/test/setup`).
const EXTENSIONS: [&str; 8] = [".js", ".ts", ".mjs", ".cjs", ".jsx", ".tsx", ".json", ".py"];

/// The files the runner configurations of the two trees name.
pub struct Wiring {
    named: BTreeSet<Vec<u8>>,
}

impl Wiring {
    /// Read the names from `from`'s and `to`'s runner configuration files.
    pub fn read(repo: &Repo, from: Oid, to: Oid) -> Result<Wiring> {
        let mut named = BTreeSet::new();
        for side in [from, to] {
            for file in crate::runners::wiring_configs() {
                if let Some(bytes) = repo.read_file(side, file)? {
                    named.extend(names(&String::from_utf8_lossy(&bytes)));
                }
            }
        }
        Ok(Wiring { named })
    }

    /// Whether adding `path` (whose content in the commit is `content`) rewires the runner.
    pub fn rewires(&self, config: &Config, path: &[u8], content: Option<&[u8]>) -> bool {
        config.is_wiring_name(path)
            || self.named.contains(path)
            || (path.ends_with(b"_test.go") && content.is_some_and(declares_test_main))
    }
}

/// Whether Go source declares `func TestMain(`.
pub fn declares_test_main(src: &[u8]) -> bool {
    let text = String::from_utf8_lossy(src);
    text.lines().any(|line| {
        let line = line.trim_start();
        let Some(rest) = line
            .strip_prefix("func")
            .filter(|r| r.starts_with(char::is_whitespace))
        else {
            return false;
        };
        let rest = rest.trim_start().strip_prefix("TestMain");
        rest.is_some_and(|r| r.trim_start().starts_with('('))
    })
}

/// The repository paths a configuration's text names: every word that looks like a relative
/// path (it holds `/` or ends in a source extension), `<rootDir>/` and `./` dropped, with the
/// extensions tried when it has none; a pytest `-p` plugin module as its file.
fn names(text: &str) -> Vec<Vec<u8>> {
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || "\"'`,;=[](){}:".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = Vec::new();
    for (i, word) in words.iter().enumerate() {
        if i > 0 && words[i - 1] == "-p" {
            let module = word.replace('.', "/");
            out.push(format!("{module}.py").into_bytes());
            out.push(format!("{module}/__init__.py").into_bytes());
            continue;
        }
        let mut path = word.strip_prefix("<rootDir>/").unwrap_or(word);
        while let Some(rest) = path.strip_prefix("./") {
            path = rest;
        }
        let looks = path.contains('/') || EXTENSIONS.iter().any(|e| path.ends_with(e));
        let inside = !path.starts_with('/') && !path.split('/').any(|c| c == ".." || c.is_empty());
        if !looks || !inside || path.contains("://") {
            continue;
        }
        out.push(path.as_bytes().to_vec());
        if !EXTENSIONS.iter().any(|e| path.ends_with(e)) && !path.ends_with(".rs") {
            for ext in EXTENSIONS {
                out.push(format!("{path}{ext}").into_bytes());
            }
            out.push(format!("{path}/index.js").into_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(text: &str) -> Vec<String> {
        names(text)
            .into_iter()
            .map(|b| String::from_utf8(b).unwrap())
            .collect()
    }

    #[test]
    fn configurations_name_their_set_up_files() {
        let jest = r#"{"jest": {"setupFiles": ["<rootDir>/test/setup.js"], "setupFilesAfterEach": ["./test/after"]}}"#;
        let found = named(jest);
        assert!(found.contains(&"test/setup.js".to_string()), "{found:?}");
        assert!(found.contains(&"test/after.ts".to_string()), "{found:?}");
        let mocha = "require:\n  - test/hooks.js\nspec: test/**/*.spec.js\n";
        assert!(named(mocha).contains(&"test/hooks.js".to_string()));
        let pytest = "[pytest]\naddopts = -p tests.plugin -q\n";
        assert!(named(pytest).contains(&"tests/plugin.py".to_string()));
        let cargo = "[[test]]\nname = \"it\"\npath = \"tests/it/main.rs\"\n";
        assert!(named(cargo).contains(&"tests/it/main.rs".to_string()));
        assert!(named("see https://example.com/x.js and /etc/x.js ../y.js").is_empty());
    }

    #[test]
    fn test_main_is_found_as_a_declaration() {
        assert!(declares_test_main(
            b"package x\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n"
        ));
        assert!(!declares_test_main(
            b"package x\n// func TestMain(m)\nfunc TestMainly(t *testing.T) {}\n"
        ));
    }
}
