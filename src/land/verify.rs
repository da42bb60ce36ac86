//! Step 3 of `land` (SPEC §22): the configured checks on a composed tree, in its own pristine
//! checkout through the round session's runner (`gates::runner`, so `land` is confined and keyed
//! as every check is), keyed on the composed tree and reused by that key: from the record (so
//! when the base has not moved since the branch's check nothing runs again) and, within one
//! `land`, from every run already made (a bisection never checks one tree twice).

use std::collections::HashMap;

use anyhow::Result;
use git2::Oid;

use crate::catalog::Severity;
use crate::finding::Finding;
use crate::gates::Session;
use crate::gates::reuse::Key;
use crate::gates::runner::{Claimed, Target};
use crate::report::{CheckEntry, CheckRun};

/// The checks' result on one tree.
#[derive(Debug, Clone)]
pub struct Verified {
    pub passed: bool,
    pub runs: Vec<CheckRun>,
    pub entries: Vec<CheckEntry>,
    /// What did not pass (check-failed, check-timeout, a sandbox that could not be set up).
    pub findings: Vec<Finding>,
}

/// Runs the checks on composed trees, once per reuse key.
#[derive(Default)]
pub struct Verifier {
    cache: HashMap<Key, Verified>,
    /// How many check runs actually ran (not reused).
    pub ran: usize,
}

impl Verifier {
    /// The checks on `commit` (composed onto `base_tip`), told they stand for `commit` and the
    /// first landed branch (`branch`, `slug`). The session is the round's (SPEC §26.2): its configuration, read from the base tip the
    /// tree was composed on, and its shield, as for every command that runs checks.
    pub fn verify(
        &mut self,
        session: &Session,
        commit: Oid,
        base_tip: Oid,
        (branch, slug): (&str, &str),
    ) -> Result<Verified> {
        let config = session.config();
        let claimed = Claimed {
            commit,
            branch,
            slug,
        };
        let target = Target::Composed {
            of: claimed,
            base_tip,
        };
        let runner = session.runner();
        // The commit id counts only for a check with `reuse = "commit"` (SPEC §19).
        let mut cached = runner.key(&target);
        if !config.checks.iter().any(|c| c.reuse_commit) {
            cached.commit.clear();
        }
        if let Some(done) = self.cache.get(&cached) {
            return Ok(done.clone());
        }
        let checked = runner.run(&target, &config.checks, false)?;
        self.ran += checked.runs.iter().filter(|r| r.reused.is_none()).count();
        let findings: Vec<Finding> = checked
            .findings
            .into_iter()
            .filter(|f| f.severity != Severity::Warning)
            .collect();
        let ran_all = checked.runs.len() == config.checks.len() && !config.checks.is_empty();
        let verified = Verified {
            passed: findings.is_empty() && ran_all,
            runs: checked.runs,
            entries: checked.entries,
            findings,
        };
        self.cache.insert(cached, verified.clone());
        Ok(verified)
    }
}
