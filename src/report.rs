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

/// One changed path on a protected surface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProtectedChange {
    pub path: String,
    pub surface: String,
    /// `added`, `modified`, `deleted`, `renamed` or `type-changed`.
    pub change: &'static str,
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
    /// The last 40 lines of combined output.
    pub output: Vec<String>,
    /// The `ts` of the `check` record whose result stands for this run (SPEC §19); null when the
    /// check ran now.
    pub reused: Option<String>,
    /// For a check that failed on the commit: whether it also fails on the merge base's own
    /// tree (SPEC §23); omitted when that run was not made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub red_on_base: Option<bool>,
}

/// The test integrity runs of SPEC §23: the overlay (the commit's code under the base's own
/// tests), the reverse overlay (the branch's tests on the base's code) and each run made on
/// the merge base's own tree. `base_tests` and `new_tests_on_base` are `pass`, `fail` or null
/// (not run).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Integrity {
    pub base_tests: Option<&'static str>,
    /// Why `base_tests` is null although the overlay ran: it proves nothing (it cannot build
    /// only because of test code moved between files, SPEC §26.4); omitted otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_tests_inconclusive: Option<String>,
    pub new_tests_on_base: Option<&'static str>,
    pub checks: Vec<IntegrityRun>,
}

/// One check's run on a tree that is not the claimed commit's (SPEC §19, §23).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IntegrityRun {
    /// `overlay`, `reverse-overlay` or `base` (the merge base's own tree).
    pub on: &'static str,
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

/// The report of `check`, `lint`, `guard` and `signal`.
#[derive(Debug, Clone, Serialize)]
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
