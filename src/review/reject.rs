//! `reject`'s rule (SPEC §21): the rejection applied to the gate's report on the commit it binds
//! and recorded, so every later gate run on that commit gives `review-rejected`.

use anyhow::Result;

use crate::catalog::Code;
use crate::finding::Gate;
use crate::gates::{self, Session};
use crate::report::Report;
use crate::{ledger, record};

/// Why a rejection is not recorded when the gate found no commit to bind it to.
pub const NO_COMMIT: &str = "the gate found no commit to bind the rejection to: `closegate check` \
     says why (no commit yet, or a close line naming none); reject once it names one";

/// The rejection by `by` applied to `report` and recorded against `commit` (and its tree).
pub fn record(
    session: &Session,
    report: &mut Report,
    commit: git2::Oid,
    by: &str,
    note: &str,
) -> Result<()> {
    let rejection = ledger::Rejection {
        by: by.to_string(),
        note: note.to_string(),
        at: record::now_rfc3339(),
    };
    report.approval = None;
    report.findings.retain(|f| f.code != Code::ReviewRejected);
    report.add_gate(Gate::Protected, [gates::rejected(&rejection)]);
    report.finish();
    let tree = session.repo().tree_of(commit).map(|t| t.to_string());
    ledger::record_reject(&session.repo().common_dir(), report, by, note, tree)
}
