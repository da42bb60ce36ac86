//! `closegate check`: run the gate sequence against the repository (SPEC §4).

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::finding::Verdict;
use crate::inputs::{self, GateArgs};
use crate::render::{self, Format};
use crate::{attest, gates, ledger};

/// Check an agent's return against the repository and answer with one verdict
///
/// Gates: doc, state, close, manifest, protected, checks and (with a task contract) contract.
/// Exit 0 VERIFIED, 1 FAIL, 2 error, 3 PENDING_REVIEW, 4 UNVERIFIED.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent's worktree (default: the current directory)
    pub worktree: Option<PathBuf>,
    #[command(flatten)]
    pub gate: GateArgs,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Do not append this verdict to the audit log
    #[arg(long)]
    pub no_record: bool,
    /// On VERIFIED, sign an attestation with an SSH key and store it as a note under
    /// refs/notes/closegate (SPEC §20)
    #[arg(long, conflicts_with = "require_attestation")]
    pub attest: bool,
    /// The SSH key that signs (default: git's user.signingKey when gpg.format = ssh)
    #[arg(long, value_name = "FILE", requires = "attest")]
    pub key: Option<PathBuf>,
    /// Do not run the checks: a valid signed attestation for this commit stands for them
    /// (what the server gate does, SPEC §20)
    #[arg(long, conflicts_with = "no_checks")]
    pub require_attestation: bool,
    /// Stop at the first failing check: the checks after it are not run and are reported as
    /// not run (`checks-skipped`, a gap; the verdict is FAIL anyway)
    #[arg(long, conflicts_with = "no_checks")]
    pub fail_fast: bool,
}

pub fn run(args: Args, color: bool) -> Result<i32> {
    let mut inputs = inputs::resolve(args.worktree.as_deref(), &args.gate)?;
    inputs.require_attestation = args.require_attestation;
    inputs.fail_fast = args.fail_fast;
    // The key is found before anything runs: no key is an error, not a verdict.
    let key = match args.attest {
        true => Some(attest::ssh::signing_key(&inputs.repo, args.key.as_deref())?),
        false => None,
    };
    if let Some(key) = &key {
        // The checks run the agent's code: the signing key is covered in their sandbox.
        inputs.keys.push(key.clone());
        // A recorded result stands for a run only when no one else could have written it: without
        // a record key, anyone who can write the repository can append one (SPEC §6), so nothing
        // is signed on the strength of an unauthenticated record.
        if crate::record::key::load()?.is_none() {
            inputs.rerun = true;
        }
    }
    let outcome = gates::evaluate(&inputs)?;
    if !args.no_record {
        ledger::record_check(&inputs.repo.common_dir(), &outcome.report)?;
    }
    let mut stdout = crate::term::report(args.format);
    render::render(&outcome.report, args.format, color, &mut stdout)?;
    if let Some(key) = key {
        attest_outcome(&inputs, &outcome, &key)?;
    }
    let code = outcome.report.verdict.exit_code();
    // The process ends next: the repository handle, its caches and the report are left to the
    // exit instead of being freed one by one (0.08M instructions of a check, scripts/bench.sh).
    std::mem::forget((inputs, outcome));
    Ok(code)
}

/// SPEC §20: on VERIFIED, sign the statement and store it as a note on the commit; otherwise
/// say why nothing was signed.
fn attest_outcome(inputs: &gates::Inputs, outcome: &gates::Outcome, key: &Path) -> Result<()> {
    let report = &outcome.report;
    let commit = match outcome.commit {
        Some(commit) if report.verdict == Verdict::Verified => commit,
        _ => {
            eprintln!(
                "closegate: not attested: the verdict is {}, and only VERIFIED is signed",
                report.verdict.as_str()
            );
            return Ok(());
        }
    };
    // Checks that ran unconfined could have read the key or forged their own results.
    if report.sandbox.as_deref() == Some("none") {
        eprintln!(
            "closegate: not attested: the checks could not be sandboxed (checks-unsandboxed), so \
             the code they ran could have read the signing key"
        );
        return Ok(());
    }
    let expect = attest::Expect {
        commit,
        tree: inputs.repo.tree_of(commit),
        config: report.config.as_deref(),
        contract: report.contract.as_deref(),
    };
    let statement = attest::attest_statement(&expect, &report.checks, report.verdict.as_str());
    let trust = (&inputs.config, &inputs.trust);
    attest::sign_and_store(&inputs.repo, trust, key, "attest", commit, &statement)?;
    eprintln!(
        "closegate: attested {commit} under {} (push it: git push <remote> {})",
        attest::NOTES_REF,
        attest::NOTES_REF
    );
    Ok(())
}
