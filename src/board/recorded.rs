//! The board as recorded (SPEC §13, §25): every worktree's row from git and the audit log under
//! the base tip's configuration, and the conflict radar over those rows. `board`, `board --json`,
//! `board --conflicts` and `serve`'s page and `/api/board` all read it here, so they cannot
//! disagree.

use anyhow::Result;
use git2::Oid;

use super::{Ledger, Row, radar};
use crate::config::Config;
use crate::inputs;
use crate::repo::Repo;

/// The board from the record, before `--check` or `--tree` add to it: what `board` and
/// `board --json` show, and what `serve`'s page and `/api/board` show (one computation for
/// both, SPEC §25).
pub struct Recorded {
    pub rows: Vec<Row>,
    /// The base tip.
    pub base: Option<Oid>,
    /// The status document's name, from the base tip's configuration.
    pub status_file: String,
    /// The base tip's configuration (the agent branches, for the conflict radar).
    pub config: Config,
}

/// Every worktree's row from git and the audit log (authenticated records only, where a key
/// exists), under the base tip's configuration.
pub fn recorded(repo: &Repo) -> Result<Recorded> {
    let trusted = inputs::trusted_config(repo, None, None)?;
    recorded_under(repo, &trusted)
}

/// [`recorded`] with the trusted configuration already read: verdicts count only when made
/// under the base tip's configuration blob (SPEC §9).
pub fn recorded_under(repo: &Repo, trusted: &inputs::Trusted) -> Result<Recorded> {
    let status_file = trusted.config.status_file.clone();
    let ledger = Ledger::read_under(
        &repo.common_dir(),
        trusted.config_blob.clone(),
        trusted.tip.clone(),
    )?;
    let base = trusted.base.as_ref().map(|(_, id)| *id);
    let rows = super::rows(repo, &status_file, &ledger, base);
    Ok(Recorded {
        rows,
        base,
        status_file,
        config: trusted.config.clone(),
    })
}

/// The pairs of live agent branches (not the main worktree's, not merged) that conflict with
/// each other, with the paths: what `board --conflicts` lists and `serve`'s radar draws.
pub fn conflict_pairs(repo: &Repo, rows: &[Row], config: &Config) -> Vec<radar::Pair> {
    let live: Vec<(String, Oid)> = rows
        .iter()
        .filter(|r| !r.main && !r.merged)
        .filter_map(|r| Some((r.branch.clone()?, r.head?)))
        .filter(|(b, _)| config.is_agent_branch(b))
        .collect();
    radar::conflicts(repo, &live, &config.status_file)
}
