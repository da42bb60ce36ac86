//! What `closegate explain` prints (SPEC §14): one code's severity, gate, cause and fix, or every
//! code in aligned columns.

use crate::catalog::{self, CodeInfo};
use crate::finding::Severity;

/// The explanation `closegate explain CODE` prints.
pub fn describe(info: &CodeInfo) -> String {
    format!(
        "{code}\n\
         severity  {severity} ({effect})\n\
         gate      {gate}\n\
         when      {summary}\n\
         cause     {cause}\n\
         fix       {fix}\n",
        code = info.code,
        severity = info.severity.as_str(),
        effect = effect(info.severity),
        gate = info.gate.as_str(),
        summary = info.summary,
        cause = info.cause,
        fix = info.fix,
    )
}

/// Every code with its severity and gate, one per line, in catalog order.
pub fn list() -> String {
    let width = catalog::CODES
        .iter()
        .map(|c| c.code.as_str().len())
        .max()
        .unwrap_or(0);
    catalog::CODES
        .iter()
        .map(|c| {
            format!(
                "{:<width$}  {:<8}  {}\n",
                c.code.as_str(),
                c.severity.as_str(),
                c.gate.as_str()
            )
        })
        .collect()
}

/// What a finding of `severity` does to the verdict.
fn effect(severity: Severity) -> &'static str {
    match severity {
        Severity::Refusal => "verdict FAIL",
        Severity::Review => "verdict PENDING_REVIEW",
        Severity::Gap => "verdict UNVERIFIED",
        Severity::Warning => "never changes the verdict",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_has_every_code_with_severity_and_gate() {
        let list = list();
        assert_eq!(list.lines().count(), catalog::CODES.len());
        let line = list
            .lines()
            .find(|l| l.starts_with("checks-none "))
            .unwrap();
        assert_eq!(
            line.split_whitespace().collect::<Vec<_>>(),
            ["checks-none", "gap", "checks"]
        );
    }
}
