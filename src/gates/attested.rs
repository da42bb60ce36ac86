//! `check --attest` (SPEC §20): a VERIFIED outcome whose checks ran sandboxed is signed and
//! stored as a note on the commit; any other outcome is not, and says why.

use std::path::Path;

use anyhow::Result;
use git2::Oid;

use super::{Outcome, Session};
use crate::attest;
use crate::finding::Verdict;

/// What `--attest` did.
pub enum Attested {
    /// Signed and stored on this commit.
    Signed(Oid),
    /// Not signed: only VERIFIED is.
    NotVerified(Verdict),
    /// Not signed: the checks ran unconfined, so they could have read the key or forged their
    /// own results.
    Unsandboxed,
}

/// Sign `outcome` with `key` when it may be signed.
pub fn attest(session: &Session, outcome: &Outcome, key: &Path) -> Result<Attested> {
    let report = &outcome.report;
    let commit = match outcome.commit {
        Some(commit) if report.verdict == Verdict::Verified => commit,
        _ => return Ok(Attested::NotVerified(report.verdict)),
    };
    if report.sandbox.as_deref() == Some("none") {
        return Ok(Attested::Unsandboxed);
    }
    let expect = attest::Expect {
        commit,
        tree: session.repo().tree_of(commit),
        config: report.config.as_deref(),
        contract: report.contract.as_deref(),
    };
    let statement = attest::attest_statement(&expect, &report.checks, report.verdict.as_str());
    let trust = (session.config(), session.trust());
    attest::sign_and_store(session.repo(), trust, key, "attest", commit, &statement)?;
    Ok(Attested::Signed(commit))
}
