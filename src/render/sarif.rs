//! The sarif format: SARIF 2.1.0 with one rule per finding code present, for code-scanning UIs.
//!
//! Levels: refusal → `error`, review and gap → `warning`, warning → `note` (the same split as
//! the github format). Locations follow SPEC §4.7: a finding with a line is located in the status
//! document at that line (its path goes into the message), one with only a path at that path;
//! URIs are repository-relative to `%SRCROOT%` (the worktree), and `versionControlProvenance`
//! names the checked commit and branch.

use std::io::Write;

use serde::Serialize;

use crate::catalog::{Code, CodeInfo};
use crate::finding::{Finding, Gate, Severity, Verdict};
use crate::report::Report;

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

pub fn render(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    super::write_json(&document(report), out)
}

/// The SARIF log: typed and borrowed, so a report of half a million findings streams out
/// instead of being built as a tree of JSON maps first.
#[derive(Serialize)]
pub struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool,
    #[serde(skip_serializing_if = "Option::is_none")]
    original_uri_base_ids: Option<BaseIds>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    version_control_provenance: Vec<VersionControl>,
    results: Vec<SarifResult<'a>>,
    properties: RunProperties,
}

#[derive(Serialize)]
struct BaseIds {
    #[serde(rename = "%SRCROOT%")]
    src_root: Uri,
}

#[derive(Serialize)]
struct Uri {
    uri: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct VersionControl {
    repository_uri: String,
    revision_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    branch: Option<String>,
    mapped_to: MappedTo,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MappedTo {
    uri_base_id: &'static str,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
struct Driver {
    name: &'static str,
    version: &'static str,
    rules: Vec<Rule>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: &'static str,
    short_description: Text<&'static str>,
    full_description: Text<String>,
    help: Text<String>,
    default_configuration: Level,
    properties: RuleProperties,
}

#[derive(Serialize)]
struct Text<T> {
    text: T,
}

#[derive(Serialize)]
struct Level {
    level: &'static str,
}

#[derive(Serialize)]
struct RuleProperties {
    gate: Gate,
    severity: Severity,
}

#[derive(Serialize)]
struct RunProperties {
    verdict: Verdict,
    mergeable: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    rule_index: Option<usize>,
    level: &'static str,
    message: Text<std::borrow::Cow<'a, str>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    locations: Vec<Location>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    physical_location: PhysicalLocation,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    /// `%SRCROOT%` for a repository-relative path; absent for an absolute one (a linted file).
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
}

/// The whole SARIF log for `report`.
pub fn document(report: &Report) -> Log<'_> {
    let codes = distinct_codes(report);
    let rules = codes.iter().map(|c| rule(c.info())).collect();
    let index = |code: Code| codes.iter().position(|c| *c == code);
    let results = report
        .findings
        .iter()
        .map(|f| result(report, f, index(f.code)))
        .collect();
    Log {
        schema: SCHEMA,
        version: "2.1.0",
        runs: [Run {
            tool: Tool {
                driver: Driver {
                    name: "closegate",
                    version: env!("CARGO_PKG_VERSION"),
                    rules,
                },
            },
            original_uri_base_ids: src_root(report).map(|uri| BaseIds {
                src_root: Uri { uri },
            }),
            version_control_provenance: provenance(report),
            results,
            properties: RunProperties {
                verdict: report.verdict,
                mergeable: report.mergeable,
            },
        }],
    }
}

/// The finding codes of the report, each once, in order of first appearance.
fn distinct_codes(report: &Report) -> Vec<Code> {
    let mut codes = Vec::new();
    for finding in &report.findings {
        if !codes.contains(&finding.code) {
            codes.push(finding.code);
        }
    }
    codes
}

fn rule(info: &CodeInfo) -> Rule {
    let text = format!("{}; fix: {}", info.cause, info.fix);
    Rule {
        id: info.code.as_str(),
        short_description: Text { text: info.summary },
        full_description: Text { text: text.clone() },
        help: Text { text },
        default_configuration: Level {
            level: level(info.severity),
        },
        properties: RuleProperties {
            gate: info.gate,
            severity: info.severity,
        },
    }
}

fn result<'a>(
    report: &'a Report,
    finding: &'a Finding,
    rule_index: Option<usize>,
) -> SarifResult<'a> {
    let at = super::annotation(report, finding);
    let locations = at
        .file
        .map(|path| Location {
            physical_location: PhysicalLocation {
                artifact_location: ArtifactLocation {
                    uri: uri(path),
                    uri_base_id: (!path.starts_with('/')).then_some(SRCROOT),
                },
                region: at.line.map(|start_line| Region { start_line }),
            },
        })
        .into_iter()
        .collect();
    SarifResult {
        rule_id: finding.code.as_str(),
        rule_index,
        level: level(finding.severity),
        message: Text { text: at.message },
        locations,
    }
}

const SRCROOT: &str = "%SRCROOT%";

/// The checked worktree as a `file:` URI ending in `/`, the base of every relative location.
fn src_root(report: &Report) -> Option<String> {
    let worktree = report.worktree.as_deref()?;
    let mut uri = format!("file://{}", self::uri(worktree));
    if !uri.ends_with('/') {
        uri.push('/');
    }
    Some(uri)
}

/// The repository's commit (and branch) the results are about; none without a commit.
fn provenance(report: &Report) -> Vec<VersionControl> {
    let (Some(commit), Some(root)) = (&report.commit, src_root(report)) else {
        return Vec::new();
    };
    vec![VersionControl {
        repository_uri: root,
        revision_id: commit.clone(),
        branch: report.branch.clone(),
        mapped_to: MappedTo {
            uri_base_id: SRCROOT,
        },
    }]
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
    fn uri_percent_encodes_reserved_bytes() {
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
