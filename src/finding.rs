//! Findings, severities and the verdict they fold into (SPEC §1.2, §1.3).
//!
//! A finding is data: gates return them, renderers print them, and the verdict is derived
//! from them mechanically. Nothing here prints or touches git.

use serde::Serialize;

/// How a finding affects the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The claim is refused: verdict FAIL.
    Refusal,
    /// A human must look: verdict PENDING_REVIEW.
    Review,
    /// Something could not be verified: verdict UNVERIFIED.
    Gap,
    /// Reported, never changes the verdict.
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Refusal => "refusal",
            Severity::Review => "review",
            Severity::Gap => "gap",
            Severity::Warning => "warning",
        }
    }
}

/// The gate a finding belongs to, in the order the gates run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Gate {
    Doc,
    State,
    Close,
    Manifest,
    Protected,
    Checks,
    Contract,
    Claim,
    Signal,
    Teardown,
}

impl Gate {
    pub fn as_str(self) -> &'static str {
        match self {
            Gate::Doc => "doc",
            Gate::State => "state",
            Gate::Close => "close",
            Gate::Manifest => "manifest",
            Gate::Protected => "protected",
            Gate::Checks => "checks",
            Gate::Contract => "contract",
            Gate::Claim => "claim",
            Gate::Signal => "signal",
            Gate::Teardown => "teardown",
        }
    }
}

/// One problem closegate reports: `{code, severity, gate, message, line?, path?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub code: &'static str,
    pub severity: Severity,
    pub gate: Gate,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl Finding {
    /// A finding with the catalog's severity and gate for `code`.
    ///
    /// Panics only on a code missing from the catalog, which the catalog tests rule out.
    pub fn new(code: &'static str, message: impl Into<String>) -> Finding {
        let info = crate::catalog::lookup(code)
            .unwrap_or_else(|| panic!("finding code {code:?} is not in the catalog"));
        Finding {
            code: info.code,
            severity: info.severity,
            gate: info.gate,
            message: message.into(),
            line: None,
            path: None,
        }
    }

    /// Attach the 1-based line number the finding is about.
    pub fn at_line(mut self, line: usize) -> Finding {
        self.line = Some(line);
        self
    }

    /// Attach the repository-relative path the finding is about.
    pub fn at_path(mut self, path: impl Into<String>) -> Finding {
        self.path = Some(path.into());
        self
    }

    /// Override the catalog severity (e.g. `--legacy` turns a refusal into a warning).
    pub fn with_severity(mut self, severity: Severity) -> Finding {
        self.severity = severity;
        self
    }
}

/// The four verdict tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Verdict {
    #[serde(rename = "VERIFIED")]
    Verified,
    #[serde(rename = "UNVERIFIED")]
    Unverified,
    #[serde(rename = "PENDING_REVIEW")]
    PendingReview,
    #[serde(rename = "FAIL")]
    Fail,
}

impl Verdict {
    pub const ALL: [Verdict; 4] = [
        Verdict::Verified,
        Verdict::Unverified,
        Verdict::PendingReview,
        Verdict::Fail,
    ];

    /// Fold findings into a verdict: refusal → FAIL, review → PENDING_REVIEW, gap → UNVERIFIED.
    pub fn from_findings(findings: &[Finding]) -> Verdict {
        let has = |s: Severity| findings.iter().any(|f| f.severity == s);
        if has(Severity::Refusal) {
            Verdict::Fail
        } else if has(Severity::Review) {
            Verdict::PendingReview
        } else if has(Severity::Gap) {
            Verdict::Unverified
        } else {
            Verdict::Verified
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Verified => "VERIFIED",
            Verdict::Unverified => "UNVERIFIED",
            Verdict::PendingReview => "PENDING_REVIEW",
            Verdict::Fail => "FAIL",
        }
    }

    pub fn parse(s: &str) -> Option<Verdict> {
        Verdict::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// The process exit code for this verdict (SPEC §1.3).
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Verified => 0,
            Verdict::Fail => 1,
            Verdict::PendingReview => 3,
            Verdict::Unverified => 4,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(code: &'static str) -> Finding {
        Finding::new(code, "x")
    }

    #[test]
    fn verdict_first_match_wins() {
        assert_eq!(Verdict::from_findings(&[]), Verdict::Verified);
        assert_eq!(
            Verdict::from_findings(&[f("doc-key-alias")]),
            Verdict::Verified
        );
        assert_eq!(
            Verdict::from_findings(&[f("checks-none")]),
            Verdict::Unverified
        );
        let mixed = [f("checks-none"), f("protected-surface")];
        assert_eq!(Verdict::from_findings(&mixed), Verdict::PendingReview);
        let all = [
            f("checks-none"),
            f("protected-surface"),
            f("doc-h1-missing"),
        ];
        assert_eq!(Verdict::from_findings(&all), Verdict::Fail);
    }

    #[test]
    fn exit_codes_match_spec() {
        assert_eq!(Verdict::Verified.exit_code(), 0);
        assert_eq!(Verdict::Fail.exit_code(), 1);
        assert_eq!(Verdict::PendingReview.exit_code(), 3);
        assert_eq!(Verdict::Unverified.exit_code(), 4);
    }
}
