//! What a finished teardown came to, as rules over its `Done`: how it ended, the verdict on
//! the work itself and the codes it was refused for (SPEC §7, §21). The human lines and the
//! `--json` object of `cmd::teardown` both read these, so they cannot disagree.

use super::{Done, Verb};
use crate::catalog::{Code, Severity};
use crate::finding::{Gate, Verdict};
use crate::report::Report;

/// How a teardown ended: `--json`'s `outcome` (SPEC §21).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Nothing to tear down (it was torn down already).
    Nothing,
    /// Refused (exit 1): nothing was removed.
    Refused,
    /// The removal stopped midway (exit 2): the teardown says what is left.
    Stopped,
    /// A dry run that would remove.
    Planned,
    Removed,
}

impl Ending {
    pub fn as_str(self) -> &'static str {
        match self {
            Ending::Nothing => "nothing",
            Ending::Refused => "refused",
            Ending::Stopped => "stopped",
            Ending::Planned => "planned",
            Ending::Removed => "removed",
        }
    }
}

impl Done {
    /// Whether every step found nothing to do (nothing to tear down).
    pub fn nothing(&self) -> bool {
        !self.steps.is_empty() && self.steps.iter().all(|s| s.verb == Verb::Nothing)
    }

    /// How the teardown ended, from its steps, exit code and dry run.
    pub fn ending(&self) -> Ending {
        match (self.exit, self.dry_run) {
            _ if self.nothing() => Ending::Nothing,
            (1, _) => Ending::Refused,
            (2, _) => Ending::Stopped,
            (_, true) => Ending::Planned,
            (_, false) => Ending::Removed,
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
