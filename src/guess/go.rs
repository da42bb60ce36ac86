//! The check guessed for Go (SPEC §17, §27.2, §27.4): every module `./...` cannot reach tested
//! with its own `go test ./...`, or named by `init` (a folder the go tool skips, [`layout`]).
//!
//! The module and build caches are private to the workspace (Go verifies neither on use). `go
//! mod verify` checks the module cache against the hashes Go recorded when it downloaded it;
//! when that fails, the cache is cleaned and downloaded again. `go mod download` runs none of the
//! project's code: it is the check's `prepare`, and `run` has no network (`GOPROXY=off`: a
//! module missing from the cache fails at once). The tests always run (`-count=1`): a test
//! result kept from an earlier run — possibly another agent's, in this workspace — is a verdict
//! that run could have forged.
//!
//! [`layout`]: super::layout

use super::{Guess, Project, keep_with_private, layout, private_cache};
use crate::shell::shell_word;

/// `cmd` in every module of `modules` (`""`: the root), one after the other.
fn in_each(modules: &[String], cmd: &str) -> String {
    let each: Vec<String> = modules
        .iter()
        .map(|dir| match dir.as_str() {
            "" => cmd.to_string(),
            _ => format!("(cd {} && {cmd})", shell_word(dir)),
        })
        .collect();
    each.join(" && ")
}

pub fn go(project: &Project<'_>) -> Guess {
    let home = private_cache("go");
    let (mut modules, _) = layout::go_split(&project.files, &|p| project.read(p));
    if modules.is_empty() {
        modules.push(String::new());
    }
    let env = format!("export GOPATH={home} GOCACHE={home}/build");
    Guess {
        name: "test",
        // `-json`: the test census reads each test's result (SPEC §26.4); plain `go test`
        // names packages only.
        run: format!(
            "{env} GOPROXY=off GOFLAGS=\"-count=1 $GOFLAGS\"; {}",
            in_each(&modules, "go test -json ./...")
        ),
        prepare: Some(format!(
            "{env}; go mod verify >/dev/null 2>&1 || go clean -modcache; {}",
            in_each(&modules, "go mod download")
        )),
        network: false,
        writable: Vec::new(),
        env: Vec::new(),
        keep: keep_with_private(None),
    }
}
