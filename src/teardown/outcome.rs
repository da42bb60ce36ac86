//! What a finished teardown came to, as rules over its `Done`: the outcome word, the verdict on
//! the work itself and the codes it was refused for (SPEC §7, §21). The human lines and the
//! `--json` object of `cmd::teardown` both read these, so they cannot disagree.

use super::{Done, Verb};
use crate::catalog::{Code, Severity};
use crate::finding::{Gate, Verdict};
use crate::report::Report;

impl Done {
    /// Whether every step found nothing to do (nothing to tear down).
    pub fn nothing(&self) -> bool {
        !self.steps.is_empty() && self.steps.iter().all(|s| s.verb == Verb::Nothing)
    }

    /// `removed`, `planned` (a dry run that would remove), `refused`, `stopped` (midway, exit 2)
    /// or `nothing` (nothing to tear down).
    pub fn outcome(&self) -> &'static str {
        match (self.exit, self.dry_run) {
            _ if self.nothing() => "nothing",
            (1, _) => "refused",
            (2, _) => "stopped",
            (_, true) => "planned",
            (_, false) => "removed",
        }
    }

    /// The codes a teardown was refused for, each once: every refusal (the teardown's own
    /// `teardown-*` and the gate's), else the findings that decided the verdict barring it (the
    /// reviews of a PENDING_REVIEW, the gaps of an UNVERIFIED).
    pub fn refused_codes(&self) -> Vec<String> {
        let Some(report) = &self.report else {
            return Vec::new();
        };
        let wanted = match work_verdict(report) {
            _ if report
                .findings
                .iter()
                .any(|f| f.severity == Severity::Refusal) =>
            {
                Severity::Refusal
            }
            Verdict::PendingReview => Severity::Review,
            Verdict::Unverified => Severity::Gap,
            Verdict::Fail | Verdict::Verified => Severity::Refusal,
        };
        let mut codes: Vec<String> = Vec::new();
        for finding in report.findings.iter().filter(|f| f.severity == wanted) {
            let code = finding.code.to_string();
            if !codes.contains(&code) {
                codes.push(code);
            }
        }
        codes
    }

    /// The teardown's own refusals (its `teardown-*` findings), each code once, in report order.
    pub fn own_refusals(&self) -> Vec<Code> {
        let mut codes: Vec<Code> = Vec::new();
        let findings = self.report.iter().flat_map(|r| &r.findings);
        for finding in findings.filter(|f| f.gate == Gate::Teardown) {
            if !codes.contains(&finding.code) {
                codes.push(finding.code);
            }
        }
        codes
    }
}

/// The verdict on the work itself: the report's, without the teardown's own findings.
pub fn work_verdict(report: &Report) -> Verdict {
    let mut work = report.clone();
    work.findings.retain(|f| f.gate != Gate::Teardown);
    work.finish();
    work.verdict
}
