//! The `hook` line (SPEC §20): one decision on a ref update.

use serde::{Deserialize, Serialize};

use super::{Event, Record, lenient};
use crate::report::Report;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HookFields {
    #[serde(default, deserialize_with = "lenient")]
    pub action: String,
    #[serde(default, deserialize_with = "lenient")]
    pub accepted: bool,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub reason: Option<String>,
}

/// The `hook` line of one decision on a ref update.
pub fn hook_record(report: &Report, fields: HookFields) -> Record {
    Record::new(report, None, Event::Hook(fields))
}
