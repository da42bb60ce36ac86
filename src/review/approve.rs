//! `approve`'s rules (SPEC §8, §26.5): the gate's report on the commit approved, why an approval
//! cannot be recorded, the approval given, its signed note and the report the next `check` gives.

use anyhow::Result;

use crate::catalog::Code;
use crate::finding::Verdict;
use crate::gates::{self, Session};
use crate::repo::{CommitLookup, Repo};
use crate::report::{Approval, Report};
use crate::{attest, record};

/// The gate's report on the approved commit and whether an approval may be recorded.
pub struct Judged {
    pub session: Session,
    /// The report as it stands (a rejection of the commit left out: an approval given now is
    /// newer and overrides it).
    pub report: Report,
    /// The report before any recorded approval or rejection was applied.
    unapproved: Report,
    /// The commit approved, when the approval is not refused.
    pub approved: Option<git2::Oid>,
    pub refusal: Option<String>,
}

impl Judged {
    /// Run the gate and judge an approval of `asked` (`--commit`), if given.
    pub fn judge(session: Session, asked: Option<&str>) -> Result<Judged> {
        let outcome = gates::evaluate(&session)?;
        let mut report = outcome.report;
        report.findings.retain(|f| f.code != Code::ReviewRejected);
        report.finish();
        let refusal = refusal(session.repo(), &report, outcome.commit, asked);
        let approved = outcome.commit.filter(|_| refusal.is_none());
        Ok(Judged {
            session,
            report,
            unapproved: outcome.unapproved,
            approved,
            refusal,
        })
    }

    /// The report the next `check` gives once the approval by `by` is recorded (and, with
    /// `--sign`, its note stored): the gate's own rule, never one of approve's making (SPEC
    /// §26.5). Refused, the report as it stands.
    pub fn next(&self, given: Approval) -> Result<Report> {
        let Some(commit) = self.approved else {
            return Ok(self.report.clone());
        };
        let mut next = self.unapproved.clone();
        gates::apply_given_approval(&self.session, commit, &mut next, given)?;
        Ok(next)
    }

    /// The merge base of the approved commit with the base branch, for showing its changes.
    pub fn merge_base(&self) -> Option<git2::Oid> {
        let commit = self.approved?;
        let session = &self.session;
        (session.base()).and_then(|(_, base)| session.repo().merge_base(*base, commit))
    }
}

/// The approval given now, by `by`, of the report's commit.
pub fn approval(report: &Report, by: &str) -> Approval {
    Approval {
        by: by.to_string(),
        at: record::now_rfc3339(),
        commit: report.commit.clone().unwrap_or_default(),
    }
}

/// `--sign` (SPEC §20): the approval applied to `report`, signed with `key` and stored as a note
/// on `commit`.
pub fn sign(
    session: &Session,
    key: &std::path::Path,
    commit: git2::Oid,
    (report, approval): (&Report, &Approval),
    note: Option<&str>,
) -> Result<()> {
    let expect = attest::Expect {
        commit,
        tree: None,
        config: report.config.as_deref(),
        contract: report.contract.as_deref(),
    };
    let statement = attest::approve_statement(&expect, approval, note);
    let trust = (session.config(), session.trust());
    attest::sign_and_store(session.repo(), trust, key, "approve", commit, &statement)
}

/// Why this approval cannot be recorded, if it cannot.
fn refusal(
    repo: &Repo,
    report: &Report,
    verified: Option<git2::Oid>,
    asked: Option<&str>,
) -> Option<String> {
    if report.verdict == Verdict::Fail {
        return Some(
            "the verdict is FAIL: a refused return cannot be approved; the report's refusals say \
             what the agent fixes, and once `closegate check` no longer says FAIL, approve again"
                .into(),
        );
    }
    if report.provenance.is_some_and(|p| !p.trusted()) {
        return Some(
            "an approval counts only under the base tip's configuration and the configured base: \
             run approve without --config and without a --base naming another branch"
                .into(),
        );
    }
    let Some(verified) = verified else {
        return Some(
            "the gate found no commit to bind the approval to: the work is committed and the \
             status document's close line names that commit (`closegate close`), then approve"
                .into(),
        );
    };
    let asked = asked?;
    match repo.lookup_commit(asked) {
        CommitLookup::Found(id) if id == verified => None,
        CommitLookup::Found(id) => Some(format!(
            "--commit {id} is not the checked commit {verified}: an approval is bound to the \
             exact commit; review {verified} and approve it with `--commit {verified}`"
        )),
        _ => Some(format!(
            "--commit {asked} does not name exactly one commit: give the full commit id \
             (the checked one is {verified})"
        )),
    }
}
