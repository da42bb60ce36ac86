//! How long an escrow is kept (SPEC §24): the escrows older than the base's `escrow_days`, each
//! dropped compare-and-delete (an escrow ref that moved meanwhile is kept), for `closegate gc`.

use anyhow::Result;

use crate::config::DEFAULT_ESCROW_DAYS;
use crate::repo::Repo;

/// An escrow past its time, and what became of it.
pub struct Expired {
    pub refname: String,
    /// Its age in whole days.
    pub age: i64,
    /// The `escrow_days` it was judged by.
    pub days: u32,
    pub fate: Fate,
}

/// What `gc` did with an expired escrow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// `--dry-run`: it would be dropped.
    Would,
    Dropped,
    /// Kept: its ref moved meanwhile.
    Moved,
}

/// Drop (with `dry_run`, only list) every escrow older than the base's `escrow_days`; `each`
/// hears each one as soon as its fate is known.
pub fn drop_expired(
    repo: &Repo,
    dry_run: bool,
    each: &mut dyn FnMut(&Expired) -> Result<()>,
) -> Result<()> {
    let days = match crate::inputs::config_tip(repo, None) {
        Some((name, id)) => crate::inputs::base_config(repo, &name, id)?
            .map_or(DEFAULT_ESCROW_DAYS, |c| c.escrow_days),
        None => DEFAULT_ESCROW_DAYS,
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let limit = now - i64::from(days) * 86_400;
    for escrow in repo.escrows() {
        let age = (now - escrow.time).max(0) / 86_400;
        if escrow.time >= limit && days > 0 {
            continue;
        }
        let fate = if dry_run {
            Fate::Would
        } else if repo.delete_ref_if_at(&escrow.refname, escrow.commit)? {
            Fate::Dropped
        } else {
            Fate::Moved
        };
        each(&Expired {
            refname: escrow.refname,
            age,
            days,
            fate,
        })?;
    }
    Ok(())
}
