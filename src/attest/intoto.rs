//! `closegate check --attest --format in-toto` (SPEC §27.3): the verdict as an in-toto Statement
//! v1 (<https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md>) with the
//! test-result predicate (`https://in-toto.io/attestation/test-result/v0.1`,
//! <https://github.com/in-toto/attestation/blob/main/spec/predicates/test-result.md>): subject the
//! commit (`gitCommit`), `result` from the verdict (VERIFIED → PASSED, PENDING_REVIEW and
//! UNVERIFIED → WARNED, FAIL → FAILED), `configuration` the configuration's blob (`gitBlob`),
//! `passedTests` / `failedTests` from the checks and their census. One serde type, written and
//! read here.
//!
//! A test's name is `<check>` for a whole check, `<check>::<test id>` for a test the census
//! named: a passing check lists every test its output named as passing; a failing check lists
//! the base's passing tests missing or not passing on the commit.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::finding::Verdict;
use crate::report::Report;

/// `_type` of a Statement v1.
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// `predicateType` of the test-result predicate.
pub const TEST_RESULT: &str = "https://in-toto.io/attestation/test-result/v0.1";

/// An in-toto Statement v1 carrying a test result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Statement {
    #[serde(rename = "_type")]
    pub kind: String,
    pub subject: Vec<ResourceDescriptor>,
    #[serde(rename = "predicateType")]
    pub predicate_type: String,
    pub predicate: TestResult,
}

/// A ResourceDescriptor with the fields closegate writes: a name and a digest set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceDescriptor {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub digest: BTreeMap<String, String>,
}

/// The test-result predicate v0.1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestResult {
    /// `PASSED`, `WARNED` or `FAILED`.
    pub result: String,
    pub configuration: Vec<ResourceDescriptor>,
    #[serde(rename = "passedTests", default)]
    pub passed_tests: Vec<String>,
    #[serde(rename = "warnedTests", default)]
    pub warned_tests: Vec<String>,
    #[serde(rename = "failedTests", default)]
    pub failed_tests: Vec<String>,
}

/// The predicate's `result` for a verdict.
pub fn result(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Verified => "PASSED",
        Verdict::PendingReview | Verdict::Unverified => "WARNED",
        Verdict::Fail => "FAILED",
    }
}

/// The statement for `report`; `Err` names why there is none (a report that names no commit has
/// no subject).
pub fn statement(report: &Report) -> Result<Statement, String> {
    let Some(commit) = &report.commit else {
        return Err(format!(
            "the verdict is {} on no commit (the close gate resolved none): an in-toto statement \
             needs its commit as the subject",
            report.verdict.as_str()
        ));
    };
    let subject = ResourceDescriptor {
        name: report.branch.clone(),
        digest: BTreeMap::from([("gitCommit".to_string(), commit.clone())]),
    };
    let configuration = (report.config.iter())
        .map(|blob| ResourceDescriptor {
            name: Some(crate::config::FILE_NAME.to_string()),
            digest: BTreeMap::from([("gitBlob".to_string(), blob.clone())]),
        })
        .collect();
    let (mut passed, mut failed) = (Vec::new(), Vec::new());
    for run in &report.checks {
        let ok = run.exit_code == Some(0) && !run.timed_out;
        if ok {
            passed.push(run.name.clone());
            let named = run.tally.iter().flat_map(|t| &t.counts);
            for id in named.flat_map(|c| c.ids.iter().flat_map(|ids| ids.iter())) {
                passed.push(format!("{}::{id}", run.name));
            }
        } else {
            failed.push(run.name.clone());
            for id in run.census.iter().flat_map(|c| &c.missing) {
                failed.push(format!("{}::{id}", run.name));
            }
        }
    }
    Ok(Statement {
        kind: STATEMENT_TYPE.to_string(),
        subject: vec![subject],
        predicate_type: TEST_RESULT.to_string(),
        predicate: TestResult {
            result: result(report.verdict).to_string(),
            configuration,
            passed_tests: passed,
            warned_tests: Vec::new(),
            failed_tests: failed,
        },
    })
}
