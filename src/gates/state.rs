//! Gate `state` (SPEC §4.2): has the agent returned at all?

use crate::catalog::Code;
use crate::doc::{State, StatusDoc};
use crate::finding::Finding;

/// `state-not-returned` for `in-progress` and `blocked`. Returns whether the close and manifest
/// gates should run (the agent returned, or the state could not be read and the close line decides).
pub fn run(doc: &StatusDoc) -> (bool, Vec<Finding>) {
    match doc.state {
        Some(state @ (State::InProgress | State::Blocked)) => {
            let mut finding = Finding::new(
                Code::StateNotReturned,
                format!("the agent has not returned: state is `{}`", state.as_str()),
            );
            finding.line = doc.state_line;
            (false, vec![finding])
        }
        _ => (true, Vec::new()),
    }
}
