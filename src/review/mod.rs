//! A human's review of a return (SPEC §8, §21, §26.5): who reviews, when a person may act, and
//! the rules of `approve` and `reject` as data; `cmd/approve.rs` and `cmd/reject.rs` read the
//! flags and render what these decide.

pub mod approve;
pub mod reject;

use anyhow::Result;

use crate::repo::Repo;

/// The reviewer's name for `verb` (`approve`, `reject`): `--by`, else git's `user.name` as
/// `repo` sees it, else `GIT_COMMITTER_NAME`, else `GIT_AUTHOR_NAME` (SPEC §21); never empty.
/// None set: exit 2.
pub fn reviewer(by: Option<&str>, repo: &Repo, verb: &str) -> Result<String> {
    let env = |name: &str| {
        std::env::var(name)
            .ok()
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let by = match by {
        Some(by) => by.trim().to_string(),
        None => user_name(repo)
            .or_else(|| env("GIT_COMMITTER_NAME"))
            .or_else(|| env("GIT_AUTHOR_NAME"))
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{verb} needs the reviewer's name: pass --by NAME, or set git's user.name \
                     or GIT_COMMITTER_NAME"
                )
            })?,
    };
    if by.is_empty() {
        anyhow::bail!("--by needs a name");
    }
    Ok(by)
}

/// git's `user.name` as `repo` sees it, when it is set and not blank.
fn user_name(repo: &Repo) -> Option<String> {
    let name = repo.config_string("user.name")?;
    let name = name.trim().to_string();
    (!name.is_empty()).then_some(name)
}

/// Why `verb` (`approve`, `reject`) may not act here (SPEC §26.5), or `None`: off a terminal it
/// acts only with `--yes` (`yes`), so an agent's tool call never approves or rejects its own work
/// by running a command a hint showed it.
pub fn off_terminal(verb: &str, yes: bool) -> Option<String> {
    if yes || on_terminal() {
        return None;
    }
    Some(format!(
        "{verb} acts off a terminal only with --yes, and nothing was recorded: a human who has \
         reviewed the work runs `closegate {verb}` on a terminal (it shows what is decided), or \
         passes --yes; an agent never runs it on its own work"
    ))
}

/// Whether a person is at the terminal to answer: stdin and stdout both terminals.
pub fn on_terminal() -> bool {
    use std::io::IsTerminal;
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}
