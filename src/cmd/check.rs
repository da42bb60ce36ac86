//! `closegate check`: run the gate sequence against the repository (SPEC §4).

use std::path::PathBuf;

use std::io::Write;

use anyhow::Result;

use crate::cmd::gate::GateArgs;
use crate::gates::Session;
use crate::gates::attested::Attested;
use crate::inputs::{GateOptions, Signing, Signs};
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
    /// Output format (`in-toto`, with --attest: an in-toto Statement v1 with the test-result
    /// predicate instead of the report)
    #[arg(long, value_enum, default_value_t = CheckFormat::Report(Format::Human))]
    pub format: CheckFormat,
    /// Do not append this verdict to the audit log
    #[arg(long)]
    pub no_record: bool,
    /// On VERIFIED, sign an attestation with an SSH key and store it as a note under
    /// refs/notes/closegate
    #[arg(long, conflicts_with = "require_attestation")]
    pub attest: bool,
    /// The SSH key that signs (default: git's user.signingKey when gpg.format = ssh)
    #[arg(long, value_name = "FILE", requires = "attest")]
    pub key: Option<PathBuf>,
    /// After attesting, push refs/notes/closegate to REMOTE, merging concurrent notes and
    /// retrying a rejected push (`closegate notes push REMOTE`)
    #[arg(long, value_name = "REMOTE", requires = "attest")]
    pub push: Option<String>,
    /// Do not run the checks: a valid signed attestation for this commit stands for them
    /// (what the server gate does)
    #[arg(long, conflicts_with = "no_checks")]
    pub require_attestation: bool,
    /// Stop at the first failing check: the checks after it are not run and are reported as
    /// not run (`checks-skipped`, a gap; the verdict is FAIL anyway)
    #[arg(long, conflicts_with = "no_checks")]
    pub fail_fast: bool,
}

/// `--format` of `check`: a report format, or the in-toto statement (SPEC §27.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckFormat {
    Report(Format),
    InToto,
}

impl clap::ValueEnum for CheckFormat {
    fn value_variants<'a>() -> &'a [Self] {
        use CheckFormat::{InToto, Report};
        &[
            Report(Format::Human),
            Report(Format::Json),
            Report(Format::Github),
            Report(Format::Sarif),
            InToto,
        ]
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let name = match self {
            CheckFormat::Report(format) => format.as_str(),
            CheckFormat::InToto => "in-toto",
        };
        Some(clap::builder::PossibleValue::new(name))
    }
}

pub fn run(args: Args, color: bool) -> Result<i32> {
    if args.format == CheckFormat::InToto && !args.attest {
        anyhow::bail!("--format in-toto: the in-toto statement is written with --attest only");
    }
    let signing = args.attest.then(|| Signing {
        key: args.key.clone(),
        signs: Signs::Attestation,
    });
    let opts = GateOptions {
        require_attestation: args.require_attestation,
        fail_fast: args.fail_fast,
        signing,
        ..args.gate.options()
    };
    let session = Session::open(args.worktree.as_deref(), &opts)?;
    let outcome = gates::evaluate(&session)?;
    if !args.no_record {
        ledger::record_check(&session.repo().common_dir(), &outcome.report)?;
    }
    match args.format {
        CheckFormat::Report(format) => {
            let mut stdout = crate::render::out(format);
            render::render(&outcome.report, format, color, &mut stdout)?;
        }
        CheckFormat::InToto => {
            let statement = attest::intoto::statement(&outcome.report)
                .map_err(|why| anyhow::anyhow!("--format in-toto: {why}"))?;
            let mut stdout = crate::term::stdout();
            writeln!(stdout, "{}", serde_json::to_string(&statement)?)?;
        }
    }
    if let Some(key) = session.signing_key() {
        say_attested(&gates::attested::attest(&session, &outcome, key)?);
    }
    if let Some(remote) = &args.push {
        push_notes(session.repo(), remote)?;
    }
    Ok(outcome.report.verdict.exit_code())
}

/// `--push REMOTE` (SPEC §20): the notes, merged with the remote's, pushed until the push lands.
fn push_notes(repo: &crate::repo::Repo, remote: &str) -> Result<()> {
    if repo.ref_target(attest::NOTES_REF).is_none() {
        eprintln!("closegate: nothing pushed: there are no notes");
        return Ok(());
    }
    match crate::notes_sync::push(repo, remote)? {
        crate::notes_sync::Outcome::Pushed { attempts } => {
            eprintln!(
                "closegate: pushed {} to {remote} ({attempts} attempt(s))",
                attest::NOTES_REF
            );
            Ok(())
        }
        _ => anyhow::bail!(
            "{remote} rejected every push of {}: run `closegate notes push {remote}`",
            attest::NOTES_REF
        ),
    }
}

/// SPEC §20: what `--attest` did (on stderr).
fn say_attested(attested: &Attested) {
    let notes = attest::NOTES_REF;
    match attested {
        Attested::Signed(commit) => {
            eprintln!(
                "closegate: attested {commit} under {notes} (push it: git push <remote> {notes})"
            )
        }
        Attested::NotVerified(verdict) => eprintln!(
            "closegate: not attested: the verdict is {}, and only VERIFIED is signed",
            verdict.as_str()
        ),
        Attested::Unsandboxed => eprintln!(
            "closegate: not attested: the checks could not be sandboxed (checks-unsandboxed), so \
             the code they ran could have read the signing key"
        ),
    }
}
