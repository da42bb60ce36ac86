//! The status document grammar (SPEC §2) and the close line (SPEC §3).
//!
//! `parse` never panics and never stops at the first problem (except `doc-not-utf8` and
//! `doc-h1-missing`): every fault becomes a finding with its 1-based line.

pub mod close_line;
mod model;

pub use model::{CloseLine, Entry, LastCommit, Parsed, State, StatusDoc};

/// Options of the parser.
#[derive(Debug, Clone, Copy, Default)]
pub struct ParseOptions {
    /// Read the eight older state spellings with a warning instead of refusing them.
    pub legacy: bool,
}

/// Parse a status document from raw bytes.
pub fn parse(bytes: &[u8], opts: ParseOptions) -> Parsed {
    let _ = (bytes, opts);
    todo!("doc parser")
}
