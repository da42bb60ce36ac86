//! The sarif format: SARIF 2.1.0 with one rule per finding code present, for code-scanning UIs.
//!
//! Levels: refusal → `error`, review and gap → `warning`, warning → `note` (the same split as
//! the github format). Locations are repository-relative URIs: the finding's path, else the
//! report's source file.

use std::io::Write;

use serde_json::{Value, json};

use crate::catalog::{self, CodeInfo};
use crate::finding::{Finding, Severity};
use crate::report::Report;

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

pub fn render(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    super::write_json(&document(report), out)
}

/// The whole SARIF log for `report`.
pub fn document(report: &Report) -> Value {
    let codes = distinct_codes(report);
    let rules: Vec<Value> = codes
        .iter()
        .filter_map(|c| catalog::lookup(c))
        .map(rule)
        .collect();
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| result(report, f, codes.iter().position(|c| *c == f.code)))
        .collect();
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "closegate",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "results": results,
            "properties": {"verdict": report.verdict, "mergeable": report.mergeable},
        }],
    })
}

/// The finding codes of the report, each once, in order of first appearance.
fn distinct_codes(report: &Report) -> Vec<&'static str> {
    let mut codes = Vec::new();
    for finding in &report.findings {
        if !codes.contains(&finding.code) {
            codes.push(finding.code);
        }
    }
    codes
}

fn rule(info: &CodeInfo) -> Value {
    let text = format!("{}; fix: {}", info.cause, info.fix);
    json!({
        "id": info.code,
        "shortDescription": {"text": info.summary},
        "fullDescription": {"text": text},
        "help": {"text": text},
        "defaultConfiguration": {"level": level(info.severity)},
        "properties": {"gate": info.gate, "severity": info.severity},
    })
}

fn result(report: &Report, finding: &Finding, rule_index: Option<usize>) -> Value {
    let mut value = json!({
        "ruleId": finding.code,
        "level": level(finding.severity),
        "message": {"text": finding.message},
    });
    if let Some(index) = rule_index {
        value["ruleIndex"] = json!(index);
    }
    if let Some(path) = finding.path.as_ref().or(report.source.as_ref()) {
        let mut location = json!({"artifactLocation": {"uri": uri(path)}});
        if let Some(line) = finding.line {
            location["region"] = json!({"startLine": line});
        }
        value["locations"] = json!([{"physicalLocation": location}]);
    }
    value
}

/// The SARIF level for a severity.
pub fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Refusal => "error",
        Severity::Review | Severity::Gap => "warning",
        Severity::Warning => "note",
    }
}

/// A relative URI reference for a repository path: bytes outside the unreserved set and `/`
/// are percent-encoded (a path may hold spaces, `#`, `%` or non-ASCII).
fn uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_percent_encodes_unsafe_bytes() {
        assert_eq!(uri("src/a b#1.rs"), "src/a%20b%231.rs");
        assert_eq!(uri("docs/é.md"), "docs/%C3%A9.md");
    }

    #[test]
    fn levels_follow_severity() {
        assert_eq!(level(Severity::Refusal), "error");
        assert_eq!(level(Severity::Gap), "warning");
        assert_eq!(level(Severity::Warning), "note");
    }
}
