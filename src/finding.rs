//! Findings, severities and the verdict they fold into (SPEC §1.2, §1.3).
//!
//! A finding is data: gates return them, renderers print them, and the verdict is derived
//! from them mechanically. Nothing here prints or touches git.

use std::io::Write;
use std::sync::OnceLock;

use serde::Serialize;

pub use crate::catalog::{Code, Gate, Severity};

/// One problem closegate reports: `{code, severity, gate, message, line?, path?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Finding {
    pub code: Code,
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
    pub fn new(code: Code, message: impl Into<String>) -> Finding {
        trace(code);
        let info = code.info();
        Finding {
            code,
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
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

/// The environment variable naming a file to which every finding code produced is appended, one
/// per line. A test hook, not a feature: tests/it/explain.rs runs each code's producing test under
/// it to prove the code is produced by the binary or a gate, not merely named in a test. Read by
/// debug builds only ([`crate::sys::test_switch`]).
pub const TRACE_ENV: &str = "CLOSEGATE_TRACE_CODES";

/// Append `code` to the [`TRACE_ENV`] file when that variable is set; otherwise nothing.
fn trace(code: Code) {
    static FILE: OnceLock<Option<std::path::PathBuf>> = OnceLock::new();
    let Some(path) = FILE.get_or_init(|| crate::sys::test_switch(TRACE_ENV).map(Into::into)) else {
        return;
    };
    let line = format!("{code}\n");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path);
    // One write of one short line in append mode: concurrent processes never tear it. A trace
    // that cannot be written is not the run's business.
    let _ = file.and_then(|mut f| f.write_all(line.as_bytes()));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(code: Code) -> Finding {
        Finding::new(code, "x")
    }

    #[test]
    fn verdict_first_match_wins() {
        assert_eq!(Verdict::from_findings(&[]), Verdict::Verified);
        assert_eq!(
            Verdict::from_findings(&[f(Code::DocKeyAlias)]),
            Verdict::Verified
        );
        assert_eq!(
            Verdict::from_findings(&[f(Code::ChecksNone)]),
            Verdict::Unverified
        );
        let mixed = [f(Code::ChecksNone), f(Code::ProtectedSurface)];
        assert_eq!(Verdict::from_findings(&mixed), Verdict::PendingReview);
        let all = [
            f(Code::ChecksNone),
            f(Code::ProtectedSurface),
            f(Code::DocH1Missing),
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
