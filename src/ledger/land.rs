//! The `land` line (SPEC §22), written only once the base has moved.

use serde::{Deserialize, Serialize};

use super::{lenient, lenient_each};
use crate::report::CheckEntry;

/// A `land` line (SPEC §22), written only once the base has moved: the common `branch` and
/// `commit` (the branch tip) plus these.
#[serde_with::apply(_ => #[serde(default, deserialize_with = "lenient")])]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LandFields {
    pub tip: String,
    /// The commit the branch was composed into (reachable from `base_after`).
    pub composed: String,
    pub base_before: String,
    pub base_after: String,
    pub strategy: String,
    /// The checks run (or reused) on the tree the base moved to, keyed on that tree.
    #[serde(default, deserialize_with = "lenient_each")]
    #[serde_with(skip_apply)]
    pub checks: Vec<CheckEntry>,
    /// The record `ts` of the passing verdict the branch was admitted on.
    pub admitted_on: Option<String>,
}
