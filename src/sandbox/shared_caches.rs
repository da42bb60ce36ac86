//! `writable` paths that share what a tool does not verify on use (SPEC §26.4): a check's
//! `writable` path is written by every agent's checks, so it may hold only what the tool
//! verifies every time it reads it. Cargo's registry (cached `.crate` archives, extracted
//! `registry/src`, `git/checkouts`), Go's module and build caches, pip's cache (index pages,
//! built wheels) and npm's cache without `npm ci` (it resolves from cached metadata) are not:
//! one agent's code rewrites a dependency there and another agent's broken code passes, every
//! later run and `--rerun` included. Configurations written by an older `closegate init` listed
//! exactly those; `validate` warns about them (a warning: the operator may mean it).

use std::path::{Component, Path};

use crate::config::Config;

/// What a `writable` path whose last components are these holds, by tool.
const UNVERIFIED: [(&[&str], &str); 12] = [
    (&["cargo"], "cargo's registry and git checkouts"),
    (&[".cargo"], "cargo's registry and git checkouts"),
    (&["cargo", "registry"], "cargo's registry"),
    (&[".cargo", "registry"], "cargo's registry"),
    (&["cargo", "git"], "cargo's git checkouts"),
    (&[".cargo", "git"], "cargo's git checkouts"),
    (&["go"], "Go's module cache"),
    (&["pkg", "mod"], "Go's module cache"),
    (&["go-build"], "Go's build cache"),
    (&["pip"], "pip's index pages and built wheels"),
    (&["npm"], "npm's cache"),
    (&[".npm"], "npm's cache"),
];

/// `validate`'s warnings: one per `writable` entry of a check that shares what its tool does
/// not verify on use (npm's cache only when the check does not install with `npm ci`).
pub fn shared_cache_warnings(config: &Config) -> Vec<String> {
    let mut warnings = Vec::new();
    for (i, check) in config.checks.iter().enumerate() {
        for entry in &check.writable {
            let Some(what) = unverified(Path::new(entry)) else {
                continue;
            };
            if what.starts_with("npm") && check.run.contains("npm ci") {
                continue;
            }
            warnings.push(format!(
                "checks[{i}].writable: `{entry}` shares {what} between every agent's checks of \
                 `{}`, which the tool does not verify when it uses them: one agent's code can \
                 rewrite a dependency there and another agent's broken code then passes (with \
                 --rerun too); keep that cache in the check's workspace (`keep`), as `closegate \
                 init --force` writes it",
                check.name
            ));
        }
    }
    warnings
}

/// What of [`UNVERIFIED`] a path ends with.
fn unverified(path: &Path) -> Option<&'static str> {
    let names: Vec<&str> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => n.to_str(),
            _ => None,
        })
        .collect();
    UNVERIFIED
        .iter()
        .find(|(tail, _)| names.ends_with(tail))
        .map(|(_, what)| *what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_caches_older_inits_shared_are_named() {
        for (entry, what) in [
            ("~/.cache/closegate/0123456789abcdef/cargo", "cargo's"),
            ("~/.cargo/registry", "cargo's registry"),
            ("~/.cargo/git/", "cargo's git"),
            ("~/.cache/closegate/0123456789abcdef/go", "Go's module"),
            ("/home/op/go/pkg/mod", "Go's module"),
            ("~/.cache/go-build", "Go's build"),
            ("~/.cache/closegate/0123456789abcdef/pip", "pip's"),
        ] {
            let found = unverified(Path::new(entry));
            assert!(
                found.is_some_and(|w| w.starts_with(what)),
                "{entry}: {found:?}"
            );
        }
        for entry in [
            "/srv/fixtures",
            "~/.cache/closegate/x/npm-data",
            "~/cargo-notes/x",
        ] {
            assert_eq!(unverified(Path::new(entry)), None, "{entry}");
        }
    }

    #[test]
    fn npm_under_npm_ci_is_not_warned() {
        let config = |run: &str| {
            Config::parse(
                &format!(
                    "[[checks]]\nname = \"t\"\nrun = \"{run}\"\nwritable = [\"~/.cache/closegate/x/npm\"]\n"
                ),
                "x",
            )
            .unwrap()
        };
        assert!(shared_cache_warnings(&config("npm ci && npm test")).is_empty());
        let warned = shared_cache_warnings(&config("npm install && npm test"));
        assert_eq!(warned.len(), 1, "{warned:?}");
        assert!(warned[0].starts_with("checks[0].writable: `~/.cache/closegate/x/npm`"));
    }
}
