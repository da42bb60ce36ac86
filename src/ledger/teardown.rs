//! The `teardown` line (SPEC §7, §24): each step's own fields, the resume handshake, the
//! latest removal of a worktree.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Event, Record, lenient, lenient_each, nullable, records};
use crate::record;
use crate::report::{ArtifactStatus, CheckEntry, Report};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TeardownFields {
    /// Whether this teardown removed (or began removing) the worktree.
    #[serde(default, deserialize_with = "lenient")]
    pub removed: bool,
    /// The checks this run ran or reused, with their reuse keys (SPEC §19: the results of every
    /// command that runs the checks are reused, not only `check`'s); absent when none ran.
    #[serde(
        default,
        deserialize_with = "lenient_each",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub checks: Vec<CheckEntry>,
    /// The step's own fields (`deleted`, `aside`, `pruned`, `incomplete`, …); boxed, as they
    /// outweigh every other event's fields.
    #[serde(flatten)]
    pub steps: Box<Steps>,
}

/// What one `teardown` line says about its steps (SPEC §7, §24): each key is written only by the
/// steps that have it, so every field is absent unless set, and a field that may be written as
/// null is an `Option<Option<_>>` (`Some(None)` is the null). The line's keys are sorted when it
/// is written (serde_json's map), so the order here is free.
///
/// The resume handshake is two of these: the removal's line names its `aside` directory for its
/// `worktree` before anything is moved, and the run that finishes it writes
/// [`Steps::resumed`] naming the same aside (`teardown::resume` trusts only such a pair).
#[serde_with::apply(_ => #[serde(default, deserialize_with = "lenient", skip_serializing_if = "Option::is_none")])]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Steps {
    /// How the worktree was admitted (`verified`, `approved`, …); null on a refused teardown.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    #[serde_with(skip_apply)]
    pub admission: Option<Option<String>>,
    pub allow_unverified: Option<bool>,
    /// Where the status document was archived; null when there was none to archive.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    #[serde_with(skip_apply)]
    pub archive: Option<Option<String>>,
    pub artifacts: Option<Vec<ArtifactStatus>>,
    /// The directory the worktree is renamed to before removal (the resume handshake's half).
    pub aside: Option<String>,
    pub status_file: Option<String>,
    /// What was (to be) removed; null when nothing was.
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    #[serde_with(skip_apply)]
    pub deleted: Option<Option<Deleted>>,
    /// The escrow ref (SPEC §24), its commit and how long the snapshot took.
    pub escrow: Option<String>,
    pub escrow_commit: Option<String>,
    pub escrow_ms: Option<u64>,
    /// The codes `--force` let through.
    pub forced: Option<Vec<String>>,
    /// What `--reap` did to each process.
    pub reaped: Option<Vec<ReapedEntry>>,
    pub resumed: Option<bool>,
    pub pruned: Option<bool>,
    pub incomplete: Option<bool>,
    /// The paths a removal left in place.
    pub left: Option<Vec<String>>,
    pub error: Option<String>,
    pub moved_back: Option<bool>,
    /// Why the branch was kept after a compare-and-delete found it moved.
    pub branch_kept: Option<String>,
    /// Keys this version does not write (a later or foreign line), kept as read.
    #[serde(flatten)]
    #[serde_with(skip_apply)]
    pub other: Map<String, Value>,
}

impl Steps {
    /// The line of a resumed teardown that finished (or was refused finishing) `aside`.
    pub fn resumed(aside: String) -> Steps {
        Steps {
            resumed: Some(true),
            aside: Some(aside),
            ..Steps::default()
        }
    }

    /// The line of a removal that stopped midway, leaving `left` in place.
    pub fn left(left: Vec<String>) -> Steps {
        Steps {
            incomplete: Some(true),
            left: Some(left),
            ..Steps::default()
        }
    }

    /// The line of a removal that failed before anything was removed: `error` says why, and
    /// `moved_back` whether the worktree was put back (absent when it was never moved).
    pub fn failed(error: String, moved_back: Option<bool>) -> Steps {
        Steps {
            incomplete: Some(true),
            moved_back,
            error: Some(error),
            ..Steps::default()
        }
    }

    /// The line of a registration whose directory is gone: `admin` removed (pruned), or, when
    /// `None`, kept because a probe refused it.
    pub fn pruned(admin: Option<String>) -> Steps {
        Steps {
            pruned: Some(admin.is_some()),
            deleted: admin.map(|admin| {
                Some(Deleted {
                    admin,
                    ..Deleted::default()
                })
            }),
            ..Steps::default()
        }
    }

    /// Whether the teardown ran under `--force` with any code let through.
    pub fn was_forced(&self) -> bool {
        self.forced.as_ref().is_some_and(|f| !f.is_empty())
    }
}

/// A `teardown` line's `deleted`: the worktree, its administrative directory and the branch (and
/// the tip it was deleted at, null when kept); a pruned registration names only `admin`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deleted {
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub worktree: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub admin: String,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub branch: Option<Option<String>>,
    #[serde(
        default,
        deserialize_with = "nullable",
        skip_serializing_if = "Option::is_none"
    )]
    pub branch_tip: Option<Option<String>>,
}

/// One process `--reap` ended (SPEC §24), as the line keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReapedEntry {
    pub pid: u32,
    pub command: String,
    /// `SIGTERM`, or `SIGKILL` when it outlived the grace period.
    pub signal: String,
    pub ended: bool,
}

/// Append a `teardown` line: the common fields plus `removed` and the step's own fields.
pub fn record_teardown(
    common_dir: &Path,
    report: &Report,
    claimed: Option<&str>,
    removed: bool,
    steps: Steps,
) -> Result<()> {
    teardown_record(report, claimed, removed, steps).append(common_dir)
}

/// [`record_teardown`] with the record's `ts` given: the escrow commit names it (SPEC §24).
pub fn record_teardown_at(
    common_dir: &Path,
    report: &Report,
    claimed: Option<&str>,
    removed: bool,
    steps: Steps,
    ts: String,
) -> Result<()> {
    let mut record = teardown_record(report, claimed, removed, steps);
    record.ts = ts;
    record.append(common_dir)
}

/// The `teardown` line of one step, before it is written.
pub fn teardown_record(
    report: &Report,
    claimed: Option<&str>,
    removed: bool,
    steps: Steps,
) -> Record {
    let event = Event::Teardown(TeardownFields {
        removed,
        checks: Vec::new(),
        steps: Box::new(steps),
    });
    Record::new(report, claimed, event)
}

/// The latest `teardown` record for the worktree at `worktree` that removed (or began removing)
/// it: how a second teardown of the same path knows the first one passed.
pub fn last_removal(common_dir: &Path, worktree: &str) -> Result<Option<Record>> {
    let records = records(record::read_authentic(common_dir)?);
    Ok(records
        .into_iter()
        .rev()
        .find(|r| r.removal().is_some() && r.worktree.as_deref() == Some(worktree)))
}
