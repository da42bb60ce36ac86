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

pub mod intoto;
pub mod ssh;
pub mod sshsig;
pub mod statement;

use anyhow::{Context, Result};
use git2::Oid;

use crate::config::Config;
use crate::repo::Repo;
use crate::report::{Approval, CheckRun};

use self::statement::{
    APPROVE_TYPE, ATTEST_TYPE, ApproveStatement, AttestStatement, AttestedCheck, BadLine, NoteLine,
};

/// The notes ref attestations and signed approvals live under.
pub const NOTES_REF: &str = "refs/notes/closegate";
/// `ssh-keygen -Y` namespace of attestations.
pub const ATTEST_NAMESPACE: &str = "closegate-attest";
/// `ssh-keygen -Y` namespace of approvals.
pub const APPROVE_NAMESPACE: &str = "closegate-approve";

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

/// The note line for a signed `statement`; `signer` is the principal hint, if one was found.
pub fn entry_line(kind: &str, statement: &str, signature: &str, signer: Option<&str>) -> String {
    NoteLine {
        kind: kind.to_string(),
        signature: signature.to_string(),
        signer: signer.map(str::to_string),
        statement: statement.to_string(),
    }
    .to_line()
}

/// The attestation statement of a VERIFIED report (SPEC §20): commit, tree, configuration and
/// contract blobs, the checks with their exit codes, the verdict and the tool version.
pub fn attest_statement(expect: &Expect<'_>, runs: &[CheckRun], verdict: &str) -> String {
    AttestStatement {
        checks: runs
            .iter()
            .map(|r| AttestedCheck {
                command: r.command.clone(),
                exit_code: r.exit_code.map(i64::from),
                name: r.name.clone(),
            })
            .collect(),
        commit: expect.commit.to_string(),
        config: expect.config.map(str::to_string),
        contract: expect.contract.map(str::to_string),
        tool: crate::report::tool(),
        tree: expect.tree.map(|t| t.to_string()),
        kind: ATTEST_TYPE.to_string(),
        verdict: verdict.to_string(),
    }
    .to_text()
}

/// The approval statement (SPEC §8, §20): bound to commit, configuration and contract.
pub fn approve_statement(expect: &Expect<'_>, approval: &Approval, note: Option<&str>) -> String {
    ApproveStatement {
        at: approval.at.clone(),
        by: Some(approval.by.clone()),
        commit: expect.commit.to_string(),
        config: expect.config.map(str::to_string),
        contract: expect.contract.map(str::to_string),
        note: note.map(str::to_string),
        kind: APPROVE_TYPE.to_string(),
    }
    .to_text()
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
fn entries(repo: &Repo, trust: &Trust, commit: Oid) -> Result<Vec<Result<NoteLine, BadLine>>> {
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
    Ok(seen.iter().map(|line| NoteLine::parse(line)).collect())
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
        entry: &NoteLine,
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
    let statement = AttestStatement::parse(statement)?;
    bound_to(
        (&statement.commit, &statement.config, &statement.contract),
        expect,
    )?;
    let tree = expect.tree.map(|t| t.to_string());
    if statement.tree != tree {
        return Err(format!("it attests tree {}", shown(&statement.tree)));
    }
    if statement.verdict != "VERIFIED" {
        return Err(format!("it attests the verdict {}", statement.verdict));
    }
    if statement.checks.is_empty() {
        return Err("it attests no check run".into());
    }
    let mut runs = Vec::new();
    for check in statement.checks {
        if check.exit_code != Some(0) {
            let exit = check.exit_code.map(|e| e.to_string());
            return Err(format!(
                "it attests check {} exiting {}",
                check.name,
                shown(&exit)
            ));
        }
        runs.push(CheckRun {
            name: check.name,
            command: check.command,
            exit_code: Some(0),
            timed_out: false,
            duration_ms: 0,
            output: Vec::new(),
            reused: None,
            red_on_base: None,
            census: None,
            tally: None,
            census_note: None,
            snapshot: None,
            parallel: false,
            retries: 0,
            flaky: Vec::new(),
            rerun_passed: false,
        });
    }
    Ok(runs)
}

/// Whether a statement's (commit, configuration blob, contract blob) are `expect`'s.
fn bound_to(
    (commit, config, contract): (&str, &Option<String>, &Option<String>),
    expect: &Expect<'_>,
) -> Result<(), String> {
    let want = expect.commit.to_string();
    if commit != want {
        return Err(format!("it is for commit {commit}, not {want}"));
    }
    if config.as_deref() != expect.config {
        return Err(format!(
            "it is for configuration blob {}, not {}",
            shown(config),
            expect.config.unwrap_or("null (the built-in defaults)")
        ));
    }
    if contract.as_deref() != expect.contract {
        return Err(format!(
            "it is for contract blob {}, not {}",
            shown(contract),
            expect.contract.unwrap_or("null (no contract)")
        ));
    }
    Ok(())
}

/// A statement's optional field as the messages show it (`null` when none).
fn shown(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or("null")
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
    entry: &NoteLine,
    expect: &Expect<'_>,
) -> std::result::Result<Approval, String> {
    let statement = ApproveStatement::parse(&entry.statement).and_then(|statement| {
        bound_to(
            (&statement.commit, &statement.config, &statement.contract),
            expect,
        )?;
        Ok(statement)
    });
    let statement = statement.map_err(|why| format!("signed by {principal}, but {why}"))?;
    Ok(Approval {
        by: statement.by.unwrap_or_else(|| principal.to_string()),
        at: statement.at,
        commit: expect.commit.to_string(),
    })
}
