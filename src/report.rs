//! The report of one run (SPEC §4.7): what every renderer prints and the record stores.

use serde::Serialize;

use crate::doc::State;
use crate::finding::{Code, Finding, Gate, Verdict};

/// The JSON schema version of the report.
pub const SCHEMA: u32 = 1;

/// `closegate <version>`.
pub fn tool() -> String {
    format!("closegate {}", env!("CARGO_PKG_VERSION"))
}

/// One declared artifact and whether the commit's tree holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ArtifactStatus {
    pub path: String,
    pub present: bool,
}

/// One of the report's fixed words. Through this alias serde does not take a `&'static str`
/// field for one borrowed from the input: [`words`] reads it back.
pub type Word = &'static str;

/// One changed path on a protected surface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ProtectedChange {
    pub path: String,
    pub surface: String,
    /// `added`, `modified`, `deleted`, `renamed` or `type-changed`.
    #[serde(deserialize_with = "words::change")]
    pub change: Word,
}

/// One configured check that closegate ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct CheckRun {
    pub name: String,
    pub command: String,
    /// `None` when the process was killed or could not start.
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub duration_ms: u64,
    /// What is kept of its combined output: for a failed run of a test runner closegate reads,
    /// its failing tests' own output (SPEC §27.2); else its last 40 lines.
    pub output: Vec<String>,
    /// The `ts` of the `check` record whose result stands for this run (SPEC §19); null when the
    /// check ran now.
    pub reused: Option<String>,
    /// The base snapshot the run started from (SPEC §27.2); null when it started from none.
    #[serde(default)]
    pub snapshot: Option<String>,
    /// Whether the run ran side by side with another run of the same check (SPEC §27.2).
    #[serde(default)]
    pub parallel: bool,
    /// How many times a failing run was run again on the same tree (`flaky_retries`, SPEC §27.2).
    #[serde(default)]
    pub retries: u32,
    /// For a check that failed on the commit: whether it also fails on the merge base's own
    /// tree (SPEC §23); omitted when that run was not made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub red_on_base: Option<bool>,
    /// The test census (SPEC §26.4): the tests that passed on the merge base and on the commit,
    /// and those missing; null when the check's runner is not one closegate reads or no census
    /// was taken ([`CheckRun::census_note`] says why).
    pub census: Option<Census>,
    /// What this run's output said for the census (kept in the record with the result).
    #[serde(skip)]
    pub tally: Option<crate::runners::census::Tally>,
    /// Why `census` is null, in words, when a census was asked of this run.
    #[serde(skip)]
    pub census_note: Option<&'static str>,
    /// The test ids that both passed and failed across this run and its reruns on the same tree
    /// (SPEC §27.2); empty when none did or the runs name no ids.
    #[serde(skip)]
    pub flaky: Vec<String>,
    /// This run failed and one of its reruns on the same tree passed (SPEC §27.2).
    #[serde(skip)]
    pub rerun_passed: bool,
}

/// A check's test census in the report (SPEC §26.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Census {
    /// The runner (`libtest`, `pytest`, …; several joined by `+`).
    pub runner: String,
    /// Tests that ran and passed on the merge base.
    pub base: u64,
    /// Tests that ran and passed on the commit.
    pub commit: u64,
    /// The ids of the base's passing tests missing or not passing on the commit (at most
    /// [`Census::MISSING_MAX`]; the `tests-missing` finding has the count).
    pub missing: Vec<String>,
}

impl Census {
    /// The most missing ids the report lists.
    pub const MISSING_MAX: usize = 1000;
}

/// The test integrity runs of SPEC §23: the overlay (the commit's code under the base's own
/// tests), the reverse overlay (the branch's tests on the base's code) and each run made on
/// the merge base's own tree. `base_tests` and `new_tests_on_base` are `pass`, `fail` or null
/// (not run).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Integrity {
    #[serde(deserialize_with = "words::outcome")]
    pub base_tests: Option<Word>,
    /// Why `base_tests` is null although the overlay ran: it proves nothing (it cannot build
    /// only because of test code moved between files, SPEC §26.4); omitted otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_tests_inconclusive: Option<String>,
    #[serde(deserialize_with = "words::outcome")]
    pub new_tests_on_base: Option<Word>,
    pub checks: Vec<IntegrityRun>,
    /// Every edited test as the test-diff reader classified it (SPEC §27.1).
    #[serde(default)]
    pub edits: Vec<TestEdit>,
    /// The base tests the contract's `expect_changed` let fail in the overlay (SPEC §27.1).
    #[serde(default)]
    pub expect_changed: Vec<String>,
}

/// One edited test (SPEC §27.1): its file, its name, and what the edit did to it (`added`,
/// `strengthened`, `reworded`, `moved`, `fixture`, `weakened`, `dropped`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct TestEdit {
    pub path: String,
    pub test: String,
    pub kind: String,
    /// What the reader saw, in words (`removed \`assert_eq!(a, 2)\``); human output only.
    #[serde(skip)]
    pub detail: String,
}

/// One check's run on a tree that is not the claimed commit's (SPEC §19, §23).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct IntegrityRun {
    /// `overlay`, `reverse-overlay` or `base` (the merge base's own tree).
    #[serde(deserialize_with = "words::run_on")]
    pub on: Word,
    /// The id of the tree the check ran on.
    pub tree: String,
    #[serde(flatten)]
    pub run: CheckRun,
}

/// A check's entry in the `check` record (SPEC §19): its reuse key (name, `run`, `timeout_s`,
/// tree, configuration blob, base commit), the sandbox word it ran under, and its result. Read
/// back from the record, an entry of any other shape is no entry (`ledger::CheckFields`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct CheckEntry {
    pub name: String,
    pub run: String,
    pub timeout_s: u64,
    /// The commit's tree id.
    pub tree: String,
    /// The configuration's blob id; null for the built-in defaults.
    pub config: Option<String>,
    /// `CLOSEGATE_BASE`'s commit; null when the base did not resolve.
    pub base_commit: Option<String>,
    /// The `CLOSEGATE_SLUG` value the check was given (SPEC §19); absent in older records,
    /// which then match no key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slug: Option<String>,
    /// The `CLOSEGATE_BRANCH` value the check was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The commit id, in the key only for a check with `reuse = "commit"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    pub sandbox: String,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub duration_ms: u64,
    pub output: Vec<String>,
    /// The finding's code (`check-failed`, `check-timeout`); null when the check passed.
    pub finding: Option<String>,
    /// The finding's message as first recorded, without a note about reuse.
    pub message: Option<String>,
    /// The `ts` of the record the result was first recorded in, when this run reused it.
    pub reused: Option<String>,
    /// The run's test census (SPEC §26.4), reused with its result; absent for a check without
    /// one and in records written before the census.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub census: Option<crate::runners::census::Stored>,
}

/// A human's approval bound to a commit (SPEC §8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Approval {
    pub by: String,
    pub at: String,
    pub commit: String,
}

/// How the configuration and the base of a run were chosen (SPEC §6 provenance): only a run with
/// the base tip's configuration and the configured (or default) base makes records that count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Provenance {
    pub config_source: ConfigSource,
    /// The base is the configured (or default) one: no `--base`, or a `--base` that names the
    /// same commit with the same configuration.
    pub base_configured: bool,
}

impl Provenance {
    /// Whether records of this run may count as passing, approve or be reused.
    pub fn trusted(self) -> bool {
        self.config_source == ConfigSource::Base && self.base_configured
    }
}

/// Where the configuration came from: the base tip, or `--config FILE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigSource {
    Base,
    File,
}

impl ConfigSource {
    /// `base` or `file`, as records store it.
    pub fn as_str(self) -> &'static str {
        match self {
            ConfigSource::Base => "base",
            ConfigSource::File => "file",
        }
    }
}

/// The report of `check`, `lint`, `guard` and `signal`. It reads back as it was written (the
/// stop hook reads the reports of the `signal` and `guard` it runs as this type); the fields
/// JSON does not carry read back as their defaults.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Report {
    pub schema: u32,
    pub tool: String,
    pub verdict: Verdict,
    pub mergeable: bool,
    pub slug: Option<String>,
    pub state: Option<State>,
    pub commit: Option<String>,
    pub branch: Option<String>,
    pub worktree: Option<String>,
    pub base: Option<String>,
    pub base_commit: Option<String>,
    pub findings: Vec<Finding>,
    pub artifacts: Vec<ArtifactStatus>,
    pub protected: Vec<ProtectedChange>,
    pub checks: Vec<CheckRun>,
    pub approval: Option<Approval>,
    /// Blob id of the configuration read (SPEC §5): null for the built-in defaults.
    pub config: Option<String>,
    /// Blob id of the task contract, when one applied (SPEC §12); null otherwise.
    pub contract: Option<String>,
    /// How the checks were confined (SPEC §4.6): `bwrap`, `off` (the configuration's
    /// `sandbox = "off"`) or `none` (no sandbox could be set up); null when no check was
    /// configured or `--no-checks` was given.
    pub sandbox: Option<String>,
    /// The test integrity runs (SPEC §23).
    pub integrity: Integrity,
    /// Where the configuration came from (`main:.closegate.toml`, a file); `None` for the
    /// built-in defaults. Human output names it (SPEC §5); JSON carries the blob id in `config`.
    #[serde(skip)]
    pub config_origin: Option<String>,
    /// How the configuration and base were chosen; `None` when no gate ran.
    #[serde(skip)]
    pub provenance: Option<Provenance>,
    /// The commit the close line names, exactly as written (it may name no commit at all).
    #[serde(skip)]
    pub claimed_commit: Option<String>,
    /// The gates that ran, in order (the human format prints one line per gate).
    #[serde(skip)]
    pub gates: Vec<Gate>,
    /// The document or file the report is about, for renderers that point at a file (lint).
    #[serde(skip)]
    pub source: Option<String>,
    /// The `check` record's entry of each check, with its reuse key (SPEC §19).
    #[serde(skip)]
    pub check_entries: Vec<CheckEntry>,
    /// The protected policy the gate judged under (each surface whose `[protected.policy]` is
    /// not `all`, with its word); `None` when no gate ran. Records carry it (SPEC §26.1).
    #[serde(skip)]
    pub policy: Option<std::collections::BTreeMap<String, String>>,
    /// The gate ran with `--no-worktree`: `worktree` is the runner's directory, not a worktree
    /// checked to hold the branch, so it anchors nothing (the `check` record says so).
    #[serde(skip)]
    pub no_worktree: bool,
}

impl Default for Report {
    fn default() -> Report {
        Report {
            schema: SCHEMA,
            tool: tool(),
            verdict: Verdict::Unverified,
            mergeable: false,
            slug: None,
            state: None,
            commit: None,
            branch: None,
            worktree: None,
            base: None,
            base_commit: None,
            findings: Vec::new(),
            artifacts: Vec::new(),
            protected: Vec::new(),
            checks: Vec::new(),
            approval: None,
            config: None,
            contract: None,
            sandbox: None,
            integrity: Integrity::default(),
            config_origin: None,
            provenance: None,
            claimed_commit: None,
            gates: Vec::new(),
            source: None,
            check_entries: Vec::new(),
            policy: None,
            no_worktree: false,
        }
    }
}

impl Report {
    /// Record that `gate` ran and add its findings.
    pub fn add_gate(&mut self, gate: Gate, findings: impl IntoIterator<Item = Finding>) {
        if !self.gates.contains(&gate) {
            self.gates.push(gate);
        }
        self.findings.extend(findings);
    }

    /// Derive `verdict` and `mergeable` from the findings (SPEC §1.2, §4.7).
    pub fn finish(&mut self) {
        self.verdict = Verdict::from_findings(&self.findings);
        self.mergeable = self.verdict == Verdict::Verified
            && matches!(self.state, Some(State::CloseOk | State::Stop2Ready));
    }

    /// The finding codes, in report order.
    pub fn codes(&self) -> Vec<Code> {
        self.findings.iter().map(|f| f.code).collect()
    }
}

/// The report of the `doc` gate alone. The verdict is VERIFIED or FAIL only: lint has no gap
/// to report, and it never calls a document mergeable (that needs the repository: `check`).
pub fn lint(bytes: &[u8], source: String, opts: crate::doc::ParseOptions) -> Report {
    let parsed = crate::doc::parse(bytes, opts);
    let mut report = Report {
        source: Some(source),
        ..Report::default()
    };
    if let Some(d) = &parsed.doc {
        report.slug = Some(d.slug.clone());
        report.state = d.state;
        if let Some(c) = &d.close {
            // `commit` is a full sha or null (SPEC §4.7): lint resolves nothing, so a claimed
            // abbreviation is not one.
            let full = matches!(c.commit.len(), 40 | 64);
            report.commit = full.then(|| c.commit.clone());
            report.claimed_commit = Some(c.commit.clone());
            report.branch = Some(c.branch.clone());
            report.worktree = Some(c.worktree.clone());
        }
    }
    report.add_gate(Gate::Doc, parsed.findings);
    report.finish();
    let refused = report
        .findings
        .iter()
        .any(|f| f.severity == crate::finding::Severity::Refusal);
    report.verdict = if refused {
        Verdict::Fail
    } else {
        Verdict::Verified
    };
    report.mergeable = false;
    report
}

/// The report's fixed words, read back: a word this version does not write is an error naming it.
mod words {
    use serde::{Deserialize, Deserializer, de::Error};

    fn one_of<'de, D: Deserializer<'de>>(
        d: D,
        what: &str,
        words: &[&'static str],
    ) -> Result<&'static str, D::Error> {
        let text = String::deserialize(d)?;
        (words.iter().find(|w| **w == text).copied())
            .ok_or_else(|| D::Error::custom(format!("unknown {what} `{text}`")))
    }

    pub fn change<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
        let words = ["added", "modified", "deleted", "renamed", "type-changed"];
        one_of(d, "protected change", &words)
    }

    pub fn run_on<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
        one_of(d, "integrity run", &["overlay", "reverse-overlay", "base"])
    }

    pub fn outcome<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'static str>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(text) => match text.as_str() {
                "pass" => Ok(Some("pass")),
                "fail" => Ok(Some("fail")),
                _ => Err(D::Error::custom(format!("unknown outcome `{text}`"))),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report with every part set reads back as it was written.
    #[test]
    fn a_full_report_round_trips() {
        let run = CheckRun {
            name: "test".into(),
            command: "cargo test".into(),
            exit_code: Some(1),
            timed_out: false,
            duration_ms: 12,
            output: vec!["failed".into()],
            reused: None,
            red_on_base: Some(false),
            census: None,
            tally: None,
            census_note: None,
            snapshot: None,
            parallel: false,
            retries: 0,
            flaky: Vec::new(),
            rerun_passed: false,
        };
        let mut report = Report {
            state: Some(State::CloseOk),
            findings: vec![Finding::new(Code::CheckFailed, "`test` failed")],
            protected: vec![ProtectedChange {
                path: "tests/a.rs".into(),
                surface: "tests".into(),
                change: "type-changed",
            }],
            checks: vec![run.clone()],
            ..Report::default()
        };
        report.integrity.base_tests = Some("fail");
        report.integrity.checks.push(IntegrityRun {
            on: "reverse-overlay",
            tree: "a".repeat(40),
            run,
        });
        let value = serde_json::to_value(&report).unwrap();
        let back: Report = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(serde_json::to_value(&back).unwrap(), value);
    }

    /// A word or code this version does not write is an error naming it, never a default.
    #[test]
    fn an_unknown_word_or_code_is_an_error_naming_it() {
        let value = serde_json::to_value(Report::default()).unwrap();
        for (key, bad, named) in [
            (
                "integrity",
                serde_json::json!({"base_tests": "maybe", "new_tests_on_base": null, "checks": []}),
                "maybe",
            ),
            (
                "findings",
                serde_json::json!([{"code": "no-such-code", "severity": "refusal", "gate": "doc", "message": "m"}]),
                "no-such-code",
            ),
        ] {
            let mut bad_report = value.clone();
            bad_report[key] = bad;
            let err = serde_json::from_value::<Report>(bad_report).unwrap_err();
            assert!(err.to_string().contains(named), "{err}");
        }
    }
}
