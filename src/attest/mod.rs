//! Attestations and signed approvals carried by git itself (SPEC §20).
//!
//! A note under `refs/notes/closegate` on a commit holds one JSON line per entry:
//! `{"closegate": "attest" | "approve", "statement": <the exact signed text>, "signature":
//! <ssh-keygen's armored signature>}`. The statement is stored as the very bytes that were
//! signed, so verification needs no canonical form; it is parsed only after its signature
//! verifies. Signatures are checked as `ssh-keygen -Y verify` checks them (in process for a plain
//! ed25519 key in the narrow case [`sshsig`] understands exactly, by ssh-keygen otherwise and for
//! every failure) against the allowed-signers file named by the trusted configuration, read from
//! the base tip's tree (never from the branch, the worktree or the notes). A note is only a
//! carrier: whoever can push can write one, so nothing in it counts unless an allowed signer
//! signed it for exactly this commit, tree, configuration blob and contract blob. An entry that
//! is unsigned, garbled or signed for anything else is invalid, never a pass.

pub mod ssh;
pub mod sshsig;

use anyhow::{Context, Result};
use git2::Oid;
use serde_json::{Value, json};

use crate::config::Config;
use crate::repo::Repo;
use crate::report::{Approval, CheckRun};

/// The notes ref attestations and signed approvals live under.
pub const NOTES_REF: &str = "refs/notes/closegate";
/// `ssh-keygen -Y` namespace of attestations.
pub const ATTEST_NAMESPACE: &str = "closegate-attest";
/// `ssh-keygen -Y` namespace of approvals.
pub const APPROVE_NAMESPACE: &str = "closegate-approve";
const ATTEST_TYPE: &str = "closegate-attest/v1";
const APPROVE_TYPE: &str = "closegate-approve/v1";

/// Where notes and signers are read from: the trusted tip (whose tree names the allowed
/// signers) and the notes commits to look in (the notes ref's value; on the server also the
/// value being pushed, still in quarantine).
#[derive(Debug, Clone, Default)]
pub struct Trust {
    pub tip: Option<(String, Oid)>,
    pub notes: Vec<Oid>,
}

impl Trust {
    /// The base tip `tip` and this repository's `refs/notes/closegate`.
    pub fn new(repo: &Repo, tip: Option<(String, Oid)>) -> Trust {
        Trust {
            tip,
            notes: repo.ref_target(NOTES_REF).into_iter().collect(),
        }
    }
}

/// What a commit and its configuration must be for an attestation or approval to stand.
#[derive(Debug, Clone)]
pub struct Expect<'a> {
    pub commit: Oid,
    pub tree: Option<Oid>,
    pub config: Option<&'a str>,
    pub contract: Option<&'a str>,
}

/// The outcome of looking for an attestation.
#[derive(Debug, Clone)]
pub enum Attested {
    /// A valid attestation by `principal`; `runs` are the check runs it attests.
    Valid {
        principal: String,
        runs: Vec<CheckRun>,
    },
    /// No attestation entry on the commit.
    Missing,
    /// Entries exist and none is valid: why each is not.
    Invalid(Vec<String>),
}

/// Signed approvals found for a commit.
#[derive(Debug, Clone, Default)]
pub struct Approvals {
    /// The newest valid signed approval.
    pub valid: Option<Approval>,
    /// Approval entries that are unsigned or do not verify (or are for something else): why.
    pub invalid: Vec<String>,
}

/// A note line that is not a signed entry: its kind when it names one, and why.
struct Bad {
    kind: Option<String>,
    why: String,
}

/// One note line as the carrier holds it.
struct Entry {
    kind: String,
    statement: String,
    signature: String,
    /// Who the signer expected to be in `allowed_signers` (a hint only: `verify` decides).
    signer: Option<String>,
}

/// The note line for a signed `statement`; `signer` is the principal hint, if one was found.
pub fn entry_line(kind: &str, statement: &str, signature: &str, signer: Option<&str>) -> String {
    let mut line = json!({"closegate": kind, "statement": statement, "signature": signature});
    if let Some(signer) = signer {
        line["signer"] = json!(signer);
    }
    line.to_string()
}

/// The attestation statement of a VERIFIED report (SPEC §20): commit, tree, configuration and
/// contract blobs, the checks with their exit codes, the verdict and the tool version.
pub fn attest_statement(expect: &Expect<'_>, runs: &[CheckRun], verdict: &str) -> String {
    let checks: Vec<Value> = runs
        .iter()
        .map(|r| json!({"name": r.name, "command": r.command, "exit_code": r.exit_code}))
        .collect();
    json!({
        "type": ATTEST_TYPE,
        "commit": expect.commit.to_string(),
        "tree": expect.tree.map(|t| t.to_string()),
        "config": expect.config,
        "contract": expect.contract,
        "checks": checks,
        "verdict": verdict,
        "tool": crate::report::tool(),
    })
    .to_string()
}

/// The approval statement (SPEC §8, §20): bound to commit, configuration and contract.
pub fn approve_statement(expect: &Expect<'_>, approval: &Approval, note: Option<&str>) -> String {
    json!({
        "type": APPROVE_TYPE,
        "commit": expect.commit.to_string(),
        "config": expect.config,
        "contract": expect.contract,
        "by": approval.by,
        "at": approval.at,
        "note": note,
    })
    .to_string()
}

/// Sign `statement` in `namespace` with `key` and append it to the note on `commit`, with the
/// principal the base's `allowed_signers` gives the key as a hint for verifiers.
pub fn sign_and_store(
    repo: &Repo,
    (config, trust): (&Config, &Trust),
    key: &std::path::Path,
    kind: &str,
    commit: Oid,
    statement: &str,
) -> Result<()> {
    let namespace = match kind {
        "attest" => ATTEST_NAMESPACE,
        _ => APPROVE_NAMESPACE,
    };
    let signature = ssh::sign(key, namespace, statement.as_bytes())?;
    let signer = match allowed_signers(repo, config, trust)? {
        Ok(allowed) => ssh::principals_for(&allowed, &signature)?
            .into_iter()
            .next(),
        Err(_) => None,
    };
    let line = entry_line(kind, statement, &signature, signer.as_deref());
    repo.append_note(NOTES_REF, commit, &line)
}

/// Every line of the notes on `commit` in the trusted notes commits (each distinct line once):
/// a parsed entry, or why the line is not one.
fn entries(repo: &Repo, trust: &Trust, commit: Oid) -> Result<Vec<Result<Entry, Bad>>> {
    let mut seen: Vec<String> = Vec::new();
    for notes in &trust.notes {
        let Some(bytes) = repo
            .note_in(*notes, commit)
            .with_context(|| format!("cannot read the note on {commit} in {NOTES_REF}"))?
        else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if !seen.iter().any(|s| s == line) {
                seen.push(line.to_string());
            }
        }
    }
    Ok(seen.iter().map(|line| parse_entry(line)).collect())
}

fn parse_entry(line: &str) -> Result<Entry, Bad> {
    let value: Value = serde_json::from_str(line).map_err(|_| Bad {
        kind: None,
        why: "a note line that is not a closegate entry (not JSON)".to_string(),
    })?;
    let field = |name: &str| value[name].as_str().map(str::to_string);
    match (field("closegate"), field("statement"), field("signature")) {
        (Some(kind), Some(statement), Some(signature)) => Ok(Entry {
            kind,
            statement,
            signature,
            signer: field("signer"),
        }),
        (Some(kind), _, _) => Err(Bad {
            why: format!("an unsigned or incomplete `{kind}` entry"),
            kind: Some(kind),
        }),
        _ => Err(Bad {
            kind: None,
            why: "a note line that is not a closegate entry".to_string(),
        }),
    }
}

/// The allowed-signers file the trusted configuration names, from the base tip's tree; `Err`
/// says why there is none.
fn allowed_signers(repo: &Repo, config: &Config, trust: &Trust) -> Result<Result<Vec<u8>, String>> {
    let Some((name, tip)) = &trust.tip else {
        return Ok(Err("no base tip to read allowed_signers from".into()));
    };
    let path = &config.allowed_signers;
    match repo.read_file(*tip, path)? {
        Some(bytes) => Ok(Ok(bytes)),
        None => Ok(Err(format!("{name}:{path} does not exist"))),
    }
}

/// The allowed signers of the base tip, read the first time an entry needs them, and the one
/// way an entry's signature is checked against them.
struct Signers<'a> {
    repo: &'a Repo,
    config: &'a Config,
    trust: &'a Trust,
    read: Option<std::result::Result<Vec<u8>, String>>,
}

impl<'a> Signers<'a> {
    fn new(repo: &'a Repo, config: &'a Config, trust: &'a Trust) -> Signers<'a> {
        Signers {
            repo,
            config,
            trust,
            read: None,
        }
    }

    /// The principal that signed `entry` in `namespace`, or why it does not verify (including
    /// why there are no allowed signers to check it against).
    fn verify(
        &mut self,
        namespace: &str,
        entry: &Entry,
    ) -> Result<std::result::Result<String, String>> {
        if self.read.is_none() {
            self.read = Some(allowed_signers(self.repo, self.config, self.trust)?);
        }
        let allowed = match self.read.as_ref().expect("just read") {
            Ok(bytes) => bytes,
            Err(why) => return Ok(Err(why.clone())),
        };
        ssh::verify(
            allowed,
            namespace,
            entry.statement.as_bytes(),
            &entry.signature,
            entry.signer.as_deref(),
        )
    }
}

/// Look for a valid attestation of `expect` (SPEC §20).
pub fn attested(
    repo: &Repo,
    config: &Config,
    trust: &Trust,
    expect: &Expect<'_>,
) -> Result<Attested> {
    let mut reasons = Vec::new();
    let mut signers = Signers::new(repo, config, trust);
    for entry in entries(repo, trust, expect.commit)? {
        let entry = match entry {
            Ok(entry) if entry.kind == "attest" => entry,
            Ok(_) => continue,
            // A line that is no entry at all counts against the note: garbage is never a pass.
            Err(bad) if bad.kind.as_deref() != Some("approve") => {
                reasons.push(bad.why);
                continue;
            }
            _ => continue,
        };
        let principal = match signers.verify(ATTEST_NAMESPACE, &entry)? {
            Ok(principal) => principal,
            Err(why) => {
                reasons.push(why);
                continue;
            }
        };
        match attest_matches(&entry.statement, expect) {
            Ok(runs) => return Ok(Attested::Valid { principal, runs }),
            Err(why) => reasons.push(format!("signed by {principal}, but {why}")),
        }
    }
    Ok(if reasons.is_empty() {
        Attested::Missing
    } else {
        Attested::Invalid(reasons)
    })
}

/// Whether the signed statement attests exactly `expect` with every check passed: its runs.
fn attest_matches(statement: &str, expect: &Expect<'_>) -> Result<Vec<CheckRun>, String> {
    let value: Value =
        serde_json::from_str(statement).map_err(|_| "its statement is not JSON".to_string())?;
    if value["type"] != ATTEST_TYPE {
        return Err(format!("its statement is not a {ATTEST_TYPE} statement"));
    }
    bound_to(&value, expect)?;
    let tree = expect.tree.map(|t| t.to_string());
    if value["tree"].as_str() != tree.as_deref() {
        return Err(format!("it attests tree {}", shown(&value["tree"])));
    }
    if value["verdict"] != "VERIFIED" {
        return Err(format!(
            "it attests the verdict {}",
            shown(&value["verdict"])
        ));
    }
    let checks = value["checks"].as_array().cloned().unwrap_or_default();
    if checks.is_empty() {
        return Err("it attests no check run".into());
    }
    let mut runs = Vec::new();
    for check in checks {
        let exit = check["exit_code"].as_i64();
        if exit != Some(0) {
            return Err(format!(
                "it attests check {} exiting {}",
                shown(&check["name"]),
                shown(&check["exit_code"])
            ));
        }
        runs.push(CheckRun {
            name: check["name"].as_str().unwrap_or_default().to_string(),
            command: check["command"].as_str().unwrap_or_default().to_string(),
            exit_code: Some(0),
            timed_out: false,
            duration_ms: 0,
            output: Vec::new(),
            reused: None,
            red_on_base: None,
        });
    }
    Ok(runs)
}

/// Whether a statement names `expect`'s commit, configuration blob and contract blob.
fn bound_to(value: &Value, expect: &Expect<'_>) -> Result<(), String> {
    let commit = expect.commit.to_string();
    if value["commit"].as_str() != Some(commit.as_str()) {
        return Err(format!(
            "it is for commit {}, not {commit}",
            shown(&value["commit"])
        ));
    }
    if value["config"].as_str() != expect.config {
        return Err(format!(
            "it is for configuration blob {}, not {}",
            shown(&value["config"]),
            expect.config.unwrap_or("null (the built-in defaults)")
        ));
    }
    if value["contract"].as_str() != expect.contract {
        return Err(format!(
            "it is for contract blob {}, not {}",
            shown(&value["contract"]),
            expect.contract.unwrap_or("null (no contract)")
        ));
    }
    Ok(())
}

fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The signed approvals on `expect.commit` (SPEC §20): the newest valid one, and why the others
/// do not count.
pub fn approvals(
    repo: &Repo,
    config: &Config,
    trust: &Trust,
    expect: &Expect<'_>,
) -> Result<Approvals> {
    let mut found = Approvals::default();
    let mut signers = Signers::new(repo, config, trust);
    for entry in entries(repo, trust, expect.commit)? {
        let entry = match entry {
            Ok(entry) if entry.kind == "approve" => entry,
            Err(bad) if bad.kind.as_deref() == Some("approve") => {
                found.invalid.push(bad.why);
                continue;
            }
            _ => continue,
        };
        let signed = signers.verify(APPROVE_NAMESPACE, &entry)?;
        match signed.and_then(|principal| signed_approval(&principal, &entry, expect)) {
            Ok(approval) => {
                if found.valid.as_ref().is_none_or(|v| v.at <= approval.at) {
                    found.valid = Some(approval);
                }
            }
            Err(why) => found.invalid.push(why),
        }
    }
    Ok(found)
}

/// One approval entry whose signature verified (by `principal`): the approval it stands for
/// (bound to this commit, configuration and contract), or why it does not count.
fn signed_approval(
    principal: &str,
    entry: &Entry,
    expect: &Expect<'_>,
) -> std::result::Result<Approval, String> {
    let value: Value = serde_json::from_str(&entry.statement).unwrap_or(Value::Null);
    let checked = if value["type"] == APPROVE_TYPE {
        bound_to(&value, expect)
    } else {
        Err(format!("its statement is not a {APPROVE_TYPE} statement"))
    };
    if let Err(why) = checked {
        return Err(format!("signed by {principal}, but {why}"));
    }
    Ok(Approval {
        by: value["by"].as_str().unwrap_or(principal).to_string(),
        at: value["at"].as_str().unwrap_or_default().to_string(),
        commit: expect.commit.to_string(),
    })
}
