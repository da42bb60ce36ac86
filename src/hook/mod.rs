//! The reference-transaction hook (SPEC §9) and the server's pre-receive hook (SPEC §20): the
//! scripts closegate writes, installing and removing them, and the decisions they run.

pub mod install;
pub mod refresh;
pub mod run;
pub mod script;
pub mod server;
pub mod setting;

/// Run a hook's decision, turning an error or a panic into what the hook says when it cannot
/// decide: the raw text and the exit code (2 for a repository libgit2 cannot open, SPEC §15;
/// else 1). Both are refusals to git; nothing escapes as a panic.
fn settle<T>(decide: impl FnOnce() -> anyhow::Result<T>) -> Result<T, (String, i32)> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(decide)) {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(err)) => Err((
            format!("{err:#}"),
            1 + i32::from(crate::repo::is_unsupported(&err)),
        )),
        Err(_) => Err(("the hook panicked".to_string(), 1)),
    }
}
