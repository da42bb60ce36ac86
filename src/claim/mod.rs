//! Claims an agent makes about its own work, and the rules that judge them against the repository
//! (SPEC §10): the verdict token that begins its report (`token`, for `guard`) and the lifecycle
//! signal that ends its message (`signal`). The commands in `cmd/` only read arguments, call
//! these, record and print.

pub mod close;
pub mod signal;
pub mod token;

use std::path::Path;

use anyhow::Result;

use crate::finding::Verdict;
use crate::ledger::{self, Event};
use crate::report::Report;

/// The agent's message as text, each byte of an invalid UTF-8 sequence written `\xNN` (as
/// paths are, SPEC §11: no byte is lost to a replacement character); `-` reads standard input.
pub fn read_message(path: &Path) -> Result<String> {
    use anyhow::Context;
    let bytes = crate::inputs::read_bytes(path)
        .with_context(|| format!("cannot read the agent's message {}", path.display()))?;
    Ok(crate::repo::path_text(&bytes))
}

/// Append the decision to the audit log when inside a repository (`ledger::record_decision`).
pub fn record_decision(
    common: Option<&Path>,
    event: Event,
    report: &Report,
    claimed: Option<&str>,
    verdict: Option<Verdict>,
) -> Result<()> {
    match common {
        Some(common) => ledger::record_decision(common, event, report, claimed, verdict),
        None => Ok(()),
    }
}
