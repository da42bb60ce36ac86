//! The verdict token that begins an agent's report, and the rules judging the claim (SPEC §10):
//! `closegate guard` is the command around them (`cmd/guard.rs`).
//!
//! The first line (after an optional BOM; a blank line is a first line too) must begin at column 0
//! with `VERIFIED`, `UNVERIFIED`, `PENDING_REVIEW` or `FAIL` followed by the end of the line, a
//! space or `:`. An UNVERIFIED claim names its gap when the text after the token (the rest of the
//! first line and every later line) holds at least one letter or digit. A worktree with no status
//! document is judged UNVERIFIED (`state-not-returned`), so a VERIFIED claim there is a recorded
//! overclaim, not an error.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::catalog::Code;
use crate::finding::{Finding, Gate, Severity, Verdict};
use crate::gates::{self, Session};
use crate::inputs::{self, GateOptions};
use crate::report::Report;

/// The token a report claims and what is wrong with its shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// `None` when the first line does not begin with a token.
    pub token: Option<Verdict>,
    pub findings: Vec<Finding>,
}

/// Run the gate on the worktree at `dir`. A worktree with no status document at all is judged,
/// not an error: the agent has not returned (`state-not-returned`, UNVERIFIED), so a VERIFIED
/// claim is an overclaim that is recorded like any other (SPEC §10).
pub fn judge(dir: &Path, gate: &GateOptions) -> Result<(Report, PathBuf)> {
    match Session::open(Some(dir), gate) {
        Ok(session) => {
            let outcome = gates::evaluate(&session)?;
            Ok((outcome.report, session.repo().common_dir()))
        }
        Err(e) => match e.downcast_ref::<inputs::StatusAbsent>() {
            Some(absent) => no_document(dir, gate, &absent.0),
            None => Err(e),
        },
    }
}

/// The report for a worktree without a status document: its HEAD, branch, base and the
/// configuration's provenance, and one gap.
fn no_document(dir: &Path, gate: &GateOptions, path: &Path) -> Result<(Report, PathBuf)> {
    let (repo, root) = inputs::open(Some(dir))?;
    let trusted = inputs::trusted_config(&repo, gate.base.as_deref(), gate.config.as_deref())?;
    let mut report = Report {
        worktree: Some(root.display().to_string()),
        branch: repo.head_branch(),
        commit: repo.worktree_head(&root).map(|id| id.to_string()),
        base: trusted.base.as_ref().map(|(name, _)| name.clone()),
        base_commit: trusted.base.as_ref().map(|(_, id)| id.to_string()),
        config: trusted.config_blob,
        provenance: Some(trusted.provenance),
        ..Report::default()
    };
    report.findings.extend(trusted.findings);
    let msg = format!(
        "no status document at {}: the agent has not returned",
        path.display()
    );
    report.add_gate(Gate::State, [Finding::new(Code::StateNotReturned, msg)]);
    report.finish();
    Ok((report, repo.common_dir()))
}

/// Read the token and check the shape of the report (no repository needed).
pub fn read_claim(text: &str) -> Claim {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // The first line, as SPEC §10 says (not the first non-blank one, as for the status
    // document's H1): a report that opens with a blank line has no token there.
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    let Some((token, rest)) = Verdict::ALL.into_iter().find_map(|v| {
        let rest = first.strip_prefix(v.as_str())?;
        matches!(rest.chars().next(), None | Some(' ' | ':' | '\r')).then_some((v, rest))
    }) else {
        let found = first.chars().take(40).collect::<String>();
        let msg = format!(
            "re-emit the report with its first line starting with one of VERIFIED, UNVERIFIED, \
             PENDING_REVIEW, FAIL, then the end of the line, a space or `:`; found `{found}`"
        );
        return Claim {
            token: None,
            findings: vec![Finding::new(Code::ClaimTokenMissing, msg).at_line(1)],
        };
    };
    let mut findings = Vec::new();
    let names_something = |s: &str| s.chars().any(char::is_alphanumeric);
    if token == Verdict::Unverified && !names_something(rest) && !lines.any(names_something) {
        findings.push(Finding::new(
            Code::ClaimGapUnnamed,
            "the report claims UNVERIFIED but names no gap; say what could not be verified, \
             e.g. `UNVERIFIED: no check covers the export`",
        ));
    }
    Claim {
        token: Some(token),
        findings,
    }
}

/// Compare the claimed token with the gate's verdict.
pub fn compare(claimed: Verdict, gate: Verdict) -> Option<Finding> {
    match (claimed, gate) {
        (Verdict::Verified, v) if v != Verdict::Verified => Some(Finding::new(
            Code::ClaimOverclaimed,
            format!(
                "the report claims VERIFIED but closegate's verdict is {}: a false green",
                v.as_str()
            ),
        )),
        (Verdict::Fail, Verdict::Verified) => Some(Finding::new(
            Code::ClaimUnderclaimed,
            "the report claims FAIL but closegate verifies the work",
        )),
        _ => None,
    }
}

/// Accepted when no finding of the claim gate is a refusal.
pub(crate) fn accepted(report: &Report) -> bool {
    !report
        .findings
        .iter()
        .any(|f| f.gate == Gate::Claim && f.severity == Severity::Refusal)
}

/// closegate's verdict on the work: the findings of every gate but the claim's.
pub(crate) fn gate_verdict(report: &Report) -> Verdict {
    let work: Vec<Finding> = report
        .findings
        .iter()
        .filter(|f| f.gate != Gate::Claim)
        .cloned()
        .collect();
    Verdict::from_findings(&work)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(text: &str) -> (Option<Verdict>, Vec<Code>) {
        let claim = read_claim(text);
        (claim.token, claim.findings.iter().map(|f| f.code).collect())
    }

    #[test]
    fn tokens_followed_by_end_space_or_colon() {
        assert_eq!(codes("VERIFIED\n"), (Some(Verdict::Verified), vec![]));
        assert_eq!(codes("FAIL: tests red"), (Some(Verdict::Fail), vec![]));
        assert_eq!(
            codes("\u{feff}PENDING_REVIEW touched tests/"),
            (Some(Verdict::PendingReview), vec![])
        );
        assert_eq!(
            codes("VERIFIED\r\nall checks ran"),
            (Some(Verdict::Verified), vec![])
        );
        for bad in [
            "Verified",
            "**VERIFIED**",
            "VERIFIED.",
            "VERIFIEDX",
            " VERIFIED",
            "PASS",
            "",
            "Done.\nVERIFIED",
            "\nVERIFIED",
            "\u{feff}\n\nPENDING_REVIEW touched tests/",
        ] {
            assert_eq!(codes(bad), (None, vec![Code::ClaimTokenMissing]), "{bad:?}");
        }
    }

    #[test]
    fn unverified_must_name_its_gap() {
        assert_eq!(codes("UNVERIFIED").1, vec![Code::ClaimGapUnnamed]);
        assert_eq!(
            codes("UNVERIFIED: -\n\n  \n").1,
            vec![Code::ClaimGapUnnamed]
        );
        assert!(codes("UNVERIFIED: no linter configured").1.is_empty());
        assert!(
            codes("UNVERIFIED\n\nthe test runner is missing a dependency")
                .1
                .is_empty()
        );
    }

    #[test]
    fn compare_names_over_and_under_claims() {
        use Verdict::*;
        assert_eq!(
            compare(Verified, Fail).map(|f| f.code),
            Some(Code::ClaimOverclaimed)
        );
        assert_eq!(
            compare(Verified, Unverified).map(|f| f.code),
            Some(Code::ClaimOverclaimed)
        );
        assert_eq!(compare(Verified, Verified), None);
        let under = compare(Fail, Verified).unwrap();
        assert_eq!(
            (under.code, under.severity),
            (Code::ClaimUnderclaimed, Severity::Warning)
        );
        assert_eq!(compare(Fail, Fail), None);
        assert_eq!(compare(Unverified, Fail), None);
    }
}
