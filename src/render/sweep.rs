//! `sweep --json` (SPEC §24): one object, the worktrees and what became of each, under the one
//! `report::SCHEMA`; it reads back as it was written.

use std::io::Write;

use serde::{Deserialize, Serialize};

use crate::sweep::Swept;

/// `{"schema": 1, "dry_run": …, "worktrees": [...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepJson {
    pub schema: u32,
    pub dry_run: bool,
    pub worktrees: Vec<Swept>,
}

impl SweepJson {
    pub fn of(dry_run: bool, worktrees: Vec<Swept>) -> SweepJson {
        SweepJson {
            schema: crate::report::SCHEMA,
            dry_run,
            worktrees,
        }
    }
}

/// The object on one line, keys in order (as every version wrote it).
pub fn json(shown: &SweepJson, out: &mut dyn Write) -> anyhow::Result<()> {
    writeln!(out, "{}", serde_json::to_value(shown)?)?;
    Ok(())
}
