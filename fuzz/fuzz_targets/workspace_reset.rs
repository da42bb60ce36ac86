//! The warm-workspace reset (SPEC §19) on hostile trees: names `..`, `.`, `.git` in any case,
//! `\` and `/`; links out of the workspace committed or planted at kept and tracked paths;
//! modes; kept-path shapes. Oracle: nothing is ever written outside the workspace
//! (`closegate::repo::reset_fuzz::run`), whether the reset succeeds or refuses.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

/// One repository for the whole run (objects accumulate; each input gets its own scratch).
fn repo() -> &'static (tempfile::TempDir, std::path::PathBuf) {
    static REPO: OnceLock<(tempfile::TempDir, std::path::PathBuf)> = OnceLock::new();
    REPO.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("repo");
        git2::Repository::init(&path).unwrap();
        (tmp, path)
    })
}

fuzz_target!(|data: &[u8]| {
    let (_, path) = repo();
    let repo = closegate::repo::Repo::discover(path).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    if let Err(why) = closegate::repo::reset_fuzz::run(&repo, scratch.path(), data) {
        panic!("{why}");
    }
});
