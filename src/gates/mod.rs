//! The gate sequence (SPEC §4, §12), written once: doc, state, close, manifest, protected, checks,
//! contract.
//!
//! Every gate whose inputs exist runs, so one report names all problems. Gates return findings;
//! only `evaluate` assembles the report.

pub mod attested;
pub mod census;
pub mod checks;
pub mod close;
pub mod contract;
pub mod doc;
pub mod flaky;
pub mod graded;
pub mod integrity;
pub mod manifest;
pub mod nochange;
pub mod protected;
pub mod reuse;
pub mod runner;
pub mod session;
pub mod state;
pub mod workspace;

use anyhow::Result;
use git2::Oid;

use crate::catalog::Code;
use crate::doc::{ParseOptions, StatusDoc};
use crate::finding::{Finding, Gate, Severity};
use crate::repo::Repo;
use crate::report::{Approval, ProtectedChange, Report};
use crate::verdict::{Claim, Owner, Review};

pub use session::Session;

/// The report plus what later steps (teardown, approve, signal) need.
pub struct Outcome {
    pub report: Report,
    pub doc: Option<StatusDoc>,
    /// The commit that was verified (the close line's, else the checked HEAD).
    pub commit: Option<Oid>,
    /// The close gate's scan of the checked worktree, when it made one.
    pub worktree_status: Option<crate::repo::WorktreeStatus>,
    /// The report before any recorded approval or rejection was applied: what `approve`
    /// applies the approval it is about to record to ([`apply_given_approval`]).
    pub unapproved: Report,
}

/// Run every gate in order and fold the findings into a verdict.
pub fn evaluate(session: &Session) -> Result<Outcome> {
    let Some(status) = session.status() else {
        anyhow::bail!("no status document was read: a session on the base judges no claim");
    };
    let mut report = Report {
        worktree: Some(session.worktree().display().to_string()),
        no_worktree: session.no_worktree(),
        source: Some(session.config().status_file.clone()),
        base: session.base().map(|(name, _)| name.clone()),
        base_commit: session.base().map(|(_, id)| id.to_string()),
        config: session.config_blob().map(str::to_string),
        provenance: Some(session.provenance()),
        config_origin: session.config_origin().map(str::to_string),
        policy: Some(session.config().policies()),
        ..Report::default()
    };
    report.findings.extend(session.findings().iter().cloned());

    // The merge base of the base and HEAD, computed once: the inherited-document rule needs it
    // and so do the gates on the commit when the commit is HEAD.
    let mut known = None;
    if let Some(outcome) = inherited(session, status, &mut report, &mut known)? {
        return Ok(outcome);
    }
    let opts = ParseOptions {
        legacy: session.legacy(),
    };
    let parsed = doc::run(status, opts, session.message());
    report.add_gate(Gate::Doc, parsed.findings);
    // A document whose H1 is missing (or that is not UTF-8) is read no further, but the gates
    // whose inputs exist still run on the checked HEAD (SPEC §4: one report names all problems).
    let read = parsed.doc.is_some();
    let doc = parsed.doc.unwrap_or_default();
    if read {
        report.slug = Some(doc.slug.clone());
        report.state = doc.state;
        report.claimed_commit = doc.close.as_ref().map(|c| c.commit.clone());
    }

    let (returned, findings) = state::run(&doc);
    report.add_gate(Gate::State, findings);

    let (commit, worktree_status) = commit_to_check(session, &doc, returned, &mut report);
    report.commit = commit.map(|c| c.to_string());
    if let Some(commit) = commit {
        gates_on_commit(session, &doc, commit, returned, known, &mut report)?;
    }
    let unapproved = finished(&report);
    if let Some(commit) = commit {
        apply_approval(session, commit, &mut report)?;
    }
    report.finish();
    Ok(Outcome {
        report,
        doc: read.then_some(doc),
        commit,
        worktree_status,
        unapproved,
    })
}

/// The commit the gates on the commit read: the close line's, checked by the close gate (which
/// scans the worktree), for a returned document with a close line; else the checked HEAD.
fn commit_to_check(
    session: &Session,
    doc: &StatusDoc,
    returned: bool,
    report: &mut Report,
) -> (Option<Oid>, Option<crate::repo::WorktreeStatus>) {
    let mut worktree_status = None;
    let commit = match (returned, &doc.close) {
        (true, Some(close)) => {
            let ctx = close::Ctx {
                repo: session.repo(),
                worktree: session.worktree(),
                status_file: &session.config().status_file,
                pushed: session.pushed(),
                no_worktree: session.no_worktree(),
            };
            report.branch = session.checked_branch(Some(&close.branch));
            let closed = close::run(&ctx, doc, close);
            report.add_gate(Gate::Close, closed.findings);
            worktree_status = closed.status;
            closed.commit
        }
        _ => {
            report.branch = session.checked_branch(None);
            let head = || session.repo().worktree_head(session.worktree());
            session.rev().or_else(head)
        }
    };
    (commit, worktree_status)
}

/// Whose claim this run judges (SPEC §26.1): the checked branch, else the checked worktree (a
/// detached HEAD).
fn owner(session: &Session, branch: Option<&str>) -> Option<Owner> {
    Owner::of(branch, Some(session.worktree()))
}

/// SPEC §17: a status document byte-identical to the one at the merge base is not this agent's
/// claim. It is read as absent: state `in-progress`, gap `state-not-returned`; the gates on the
/// commit run as for any agent that has not returned.
/// `known` receives HEAD and its merge base with the base, for the gates on the commit.
fn inherited(
    session: &Session,
    status: &[u8],
    report: &mut Report,
    known: &mut Option<(Oid, Option<Oid>)>,
) -> Result<Option<Outcome>> {
    let status_file = &session.config().status_file;
    let head = session
        .rev()
        .or_else(|| session.repo().worktree_head(session.worktree()));
    let base = session.base().map(|(_, id)| *id);
    let (Some(head), Some(base)) = (head, base) else {
        return Ok(None);
    };
    let merge_base = session.repo().merge_base(base, head);
    *known = Some((head, merge_base));
    let repo = session.repo();
    let branch = session.checked_branch(None);
    let attested = || {
        owner(session, branch.as_deref()).is_some_and(|owner| {
            let claim = Claim::new(owner, head);
            crate::verdict::attested(repo, &claim, status_file)
        })
    };
    if !crate::inherited::is_at_merge_base(repo, merge_base, status_file, status, attested) {
        return Ok(None);
    }
    let head = Some(head);
    let doc = StatusDoc {
        state: Some(crate::doc::State::InProgress),
        ..StatusDoc::default()
    };
    report.state = doc.state;
    let finding = Finding::new(
        Code::StateNotReturned,
        crate::inherited::message(status_file),
    );
    report.add_gate(Gate::State, [finding]);
    report.branch = branch;
    report.commit = head.map(|c| c.to_string());
    if let Some(commit) = head {
        gates_on_commit(session, &doc, commit, false, *known, report)?;
    }
    let unapproved = finished(report);
    if let Some(commit) = head {
        apply_approval(session, commit, report)?;
    }
    report.finish();
    Ok(Some(Outcome {
        report: std::mem::take(report),
        doc: Some(doc),
        commit: head,
        worktree_status: None,
        unapproved,
    }))
}

/// The gates that read the commit: manifest, protected, checks, contract.
fn gates_on_commit(
    session: &Session,
    doc: &StatusDoc,
    commit: Oid,
    returned: bool,
    known: Option<(Oid, Option<Oid>)>,
    report: &mut Report,
) -> Result<()> {
    let repo = session.repo();
    let merge_base = match known {
        Some((head, merge_base)) if head == commit => merge_base,
        _ => session
            .base()
            .and_then(|(_, base)| repo.merge_base(*base, commit)),
    };
    if returned {
        let owner = owner(session, report.branch.as_deref());
        let status_file = &session.config().status_file;
        returned_gates(repo, doc, commit, merge_base, (owner, status_file), report)?;
    }
    let changes = match merge_base {
        Some(merge_base) => Some(repo.changes(Some(merge_base), commit)?),
        None => None,
    };
    if let (Some((name, base)), None) = (session.base(), merge_base) {
        // SPEC §4.5: never silently empty; the contract gate judges no path either.
        let finding = Finding::new(
            Code::BaseUnrelated,
            unrelated_message(repo, name, *base, commit),
        );
        report.add_gate(Gate::Protected, [finding]);
    }
    if let (Some(changes), Some(from)) = (&changes, merge_base) {
        let (hits, findings) = protected_changes(session, changes, from, commit)?;
        report.protected = hits;
        report.add_gate(Gate::Protected, findings);
    }
    let around = Around {
        merge_base,
        changes: changes.as_deref(),
    };
    run_checks(session, doc, commit, &around, report)?;
    let runs = report.checks.clone();
    let ctx = contract::Ctx {
        repo,
        doc,
        commit,
        merge_base,
        changes: changes.as_deref(),
        returned,
        status_file: &session.config().status_file,
        configured: &session.config().checks,
        runs: &runs,
        no_checks: session.no_checks(),
    };
    run_contract(session, &ctx, report)
}

/// What only a returned state is judged on: a change of its own (`close-no-change`, SPEC §17)
/// and the manifest.
fn returned_gates(
    repo: &crate::repo::Repo,
    doc: &StatusDoc,
    commit: Oid,
    merge_base: Option<Oid>,
    (owner, status_file): (Option<Owner>, &str),
    report: &mut Report,
) -> Result<()> {
    let nothing = nochange::run(repo, doc, commit, merge_base, owner, status_file)?;
    report.add_gate(Gate::Close, nothing);
    let artifacts = doc.artifacts.as_deref().unwrap_or_default();
    let (statuses, findings) = manifest::run(repo, commit, merge_base, artifacts);
    report.artifacts = statuses;
    report.add_gate(Gate::Manifest, findings);
    Ok(())
}

/// SPEC §4.5, §26.4: the protected rule whole, on the changes `from`..`to` under the session's
/// configuration: every changed path on a protected surface (an added file is runner wiring by its
/// name or by what the trees say), the runner's own configuration keys the checks depend on (on
/// surface `ci`), and the tests inside source files. `check` and `land`'s re-check (§22 step 3)
/// both ask it, so they cannot judge one change differently.
pub fn protected_changes(
    session: &Session,
    changes: &[crate::repo::Change],
    from: Oid,
    to: Oid,
) -> Result<(Vec<ProtectedChange>, Vec<Finding>)> {
    let (mut hits, mut findings) = protected_paths(session, changes, from, to);
    let (graded, graded_findings) = graded_input(session, changes, from, to)?;
    hits.extend(graded);
    findings.extend(graded_findings);
    let config = session.config();
    let inline = protected::inline::inline_changes(session.repo(), config, changes, from, to)?;
    let (inline_hits, inline_findings) = protected::inline::findings(config, &inline);
    hits.extend(inline_hits);
    findings.extend(inline_findings);
    Ok((hits, findings))
}

/// SPEC §4.5: every changed path on a protected surface; an added file is runner wiring by its
/// name or by what the trees say (SPEC §26.4).
fn protected_paths(
    session: &Session,
    changes: &[crate::repo::Change],
    from: Oid,
    to: Oid,
) -> (Vec<ProtectedChange>, Vec<Finding>) {
    let repo = session.repo();
    // Read only when an addition's name alone would let it through (policy `modify`).
    let wiring = std::cell::OnceCell::new();
    let rewires = |path: &[u8]| {
        let wiring = wiring.get_or_init(|| protected::wiring::Wiring::read(repo, from, to));
        let Ok(wiring) = wiring else {
            return true; // a tree that cannot be read vouches for nothing
        };
        let content = repo.read_file(to, path).ok().flatten();
        wiring.rewires(session.config(), path, content.as_deref())
    };
    protected::run_with(session.config(), changes, &rewires)
}

/// SPEC §4.5: the runner's own configuration keys the checks depend on, on surface `ci`.
fn graded_input(
    session: &Session,
    changes: &[crate::repo::Change],
    from: Oid,
    to: Oid,
) -> Result<(Vec<ProtectedChange>, Vec<Finding>)> {
    let runners = graded::runners(&session.config().checks);
    let on_ci = |path: &[u8]| {
        session
            .config()
            .surfaces_for(path)
            .iter()
            .any(|s| s == "ci")
    };
    graded::run(session.repo(), &runners, changes, from, to, &on_ci)
}

/// Why the commit and the base share no merge base: a shallow boundary, or no common history.
fn unrelated_message(repo: &Repo, name: &str, base: Oid, commit: Oid) -> String {
    let (base, commit) = (&base.to_string()[..12], &commit.to_string()[..12]);
    if repo.is_shallow() {
        format!(
            "no merge base of {commit} and `{name}` ({base}) in this shallow repository: fetch with \
             --unshallow or --depth large enough to reach the fork point; the protected and \
             contract gates judged nothing"
        )
    } else {
        format!(
            "{commit} shares no history with `{name}` ({base}): an orphan branch or unrelated \
             histories; the protected and contract gates judged nothing"
        )
    }
}

/// The contract gate, when a contract applies; its blob id goes into the report before the
/// approval is looked up, so an approval is bound to commit and contract together. With
/// `require_contract`, a return no contract applies to is `contract-missing`.
fn run_contract(session: &Session, ctx: &contract::Ctx<'_>, report: &mut Report) -> Result<()> {
    let slug = &ctx.doc.slug;
    let branch = report.branch.clone();
    let Some(found) = session
        .contract()
        .find(session.repo(), slug, branch.as_deref())?
    else {
        if session.config().require_contract && ctx.returned {
            let on = branch.map_or("no branch".to_string(), |b| format!("branch `{b}`"));
            let msg = format!(
                "require_contract = true and no contract applies to this return: none for slug `{slug}` and none bound to {on}"
            );
            report.add_gate(Gate::Contract, [Finding::new(Code::ContractMissing, msg)]);
        }
        return Ok(());
    };
    let mut findings = found.findings;
    if let Some(source) = found.source {
        match crate::contract::parse(&source.bytes) {
            Ok(mut parsed) => {
                if session.repo().ignore_case() {
                    parsed.fold_case();
                }
                findings.extend(contract::run(ctx, &parsed)?)
            }
            Err(reason) => {
                let msg = format!("{}: {reason}", source.origin);
                findings.push(Finding::new(Code::ContractMalformed, msg));
            }
        }
        report.contract = Some(source.blob_id());
    }
    report.add_gate(Gate::Contract, findings);
    Ok(())
}

/// The terms of the contract that binds this return (`expect_changed`, `fail_to_pass`: SPEC
/// §27.1), found as the contract gate finds it; `None` when none applies or it does not parse
/// (the contract gate reports that).
fn binding_contract(
    session: &Session,
    slug: &str,
    branch: Option<&str>,
) -> Option<crate::contract::Contract> {
    let found = session
        .contract()
        .find(session.repo(), slug, branch)
        .ok()??;
    let mut parsed = crate::contract::parse(&found.source?.bytes).ok()?;
    if session.repo().ignore_case() {
        parsed.fold_case();
    }
    Some(parsed)
}

/// What the branch changed, for the test integrity runs (SPEC §23).
struct Around<'a> {
    merge_base: Option<Oid>,
    changes: Option<&'a [crate::repo::Change]>,
}

fn run_checks(
    session: &Session,
    doc: &StatusDoc,
    commit: Oid,
    around: &Around<'_>,
    report: &mut Report,
) -> Result<()> {
    let specs = &session.config().checks;
    let findings = if session.require_attestation() && !session.no_checks() {
        attestation(session, doc, commit, report)?
    } else if session.no_checks() {
        vec![Finding::new(
            Code::ChecksSkipped,
            "checks were not run: --no-checks was given",
        )]
    } else if specs.is_empty() {
        vec![Finding::new(
            Code::ChecksNone,
            "no checks are configured in the base branch's .closegate.toml",
        )]
    } else {
        run_configured(session, doc, commit, around, report)?;
        Vec::new()
    };
    report.add_gate(Gate::Checks, findings);
    Ok(())
}

/// The configured checks on `commit` (run, or reused from a trusted record), then the test
/// integrity runs of SPEC §23 when the branch's changes are known.
fn run_configured(
    session: &Session,
    doc: &StatusDoc,
    commit: Oid,
    around: &Around<'_>,
    report: &mut Report,
) -> Result<()> {
    let branch = report.branch.clone().unwrap_or_default();
    let claimed = runner::Claimed {
        commit,
        branch: &branch,
        slug: &doc.slug,
    };
    let target = runner::Target::Commit(claimed);
    let specs = &session.config().checks;
    let Some((merge_base, changes)) = around.merge_base.zip(around.changes) else {
        let checked = session.runner().run(&target, specs, false)?;
        take_checked(report, checked);
        census::no_base(session.config(), report);
        return Ok(());
    };
    let contract = binding_contract(session, &doc.slug, report.branch.as_deref());
    let ctx = integrity::Ctx {
        repo: session.repo(),
        config: session.config(),
        runner: session.runner(),
        claimed,
        merge_base,
        changes,
        contract: contract.as_ref(),
    };
    let (checked, early) = integrity::commit_and_overlay(&ctx, &target, specs)?;
    take_checked(report, checked);
    integrity::run(&ctx, early, report)
}

/// The commit's own runs into the report.
fn take_checked(report: &mut Report, checked: crate::gates::checks::Checked) {
    report.checks = checked.runs;
    report.check_entries = checked.entries;
    report.sandbox = checked.sandbox.map(str::to_string);
    report.add_gate(Gate::Checks, checked.findings);
}

/// SPEC §20: the checks are not run; a valid attestation by an allowed signer for this commit,
/// tree, configuration blob and contract blob stands for them.
fn attestation(
    session: &Session,
    doc: &StatusDoc,
    commit: Oid,
    report: &mut Report,
) -> Result<Vec<Finding>> {
    let repo = session.repo();
    // The contract is judged after the checks; its blob is bound into the attestation.
    let contract = session
        .contract()
        .find(repo, &doc.slug, report.branch.as_deref())?
        .and_then(|found| found.source)
        .map(|source| source.blob_id());
    let expect = crate::attest::Expect {
        commit,
        tree: repo.tree_of(commit),
        config: report.config.as_deref(),
        contract: contract.as_deref(),
    };
    let short = &commit.to_string()[..12];
    let found = crate::attest::attested(repo, session.config(), session.trust(), &expect)?;
    Ok(match found {
        crate::attest::Attested::Valid {
            principal,
            mut runs,
        } => {
            for run in &mut runs {
                run.output = vec![format!("attested by {principal}")];
            }
            report.checks = runs;
            Vec::new()
        }
        crate::attest::Attested::Missing => vec![Finding::new(
            Code::AttestationMissing,
            format!(
                "no signed check attestation for {short} under {}: the checks were not run here \
                 (run `closegate check --attest` in CI and push {} with the branch)",
                crate::attest::NOTES_REF,
                crate::attest::NOTES_REF
            ),
        )],
        crate::attest::Attested::Invalid(reasons) => vec![Finding::new(
            Code::AttestationInvalid,
            format!(
                "the attestation for {short} under {} does not stand: {}",
                crate::attest::NOTES_REF,
                reasons.join("; ")
            ),
        )],
    })
}

/// With an approval for this exact commit, configuration and contract, review findings become
/// warnings (SPEC §8). An approval signed by an allowed signer (SPEC §20) counts too; under
/// `require_signed_approvals` only such an approval counts, and an unsigned one that would have
/// applied is `approval-unsigned`.
fn apply_approval(session: &Session, commit: Oid, report: &mut Report) -> Result<()> {
    let contract = report.contract.as_deref();
    let config = report.config.as_deref();
    // SPEC §21, §26.1: the newer of this branch's approval and rejection of this commit wins, in
    // log order (`Book::review`); another branch's word on the same commit says nothing here.
    let review = match owner(session, report.branch.as_deref()) {
        Some(owner) => {
            let claim = Claim::new(owner, commit);
            let status_file = &session.config().status_file;
            let book = crate::verdict::Book::about(session.repo(), &claim, status_file)?;
            book.review(session.repo(), &claim, config, contract)
        }
        None => Review::None,
    };
    let recorded = match review {
        Review::Approved(approval) => (Some(approval), None),
        Review::Rejected(rejection) => (None, Some(rejection)),
        Review::None => (None, None),
    };
    decide_approval(session, session.trust(), commit, report, recorded)
}

/// `approve` (SPEC §26.5): the report as the next gate run will read it once `given` is
/// recorded — then this branch's newest word on the commit, newer in log order than any
/// rejection — by the rule every gate run applies, so `approve` never prints (or records) a
/// verdict of its own making. Applied to [`Outcome::unapproved`]; with `--sign`, after the
/// signed note is stored. `given` stands for what `Book::review` (`crate::verdict`) reads once
/// it is in the log: this branch's newest word on the commit.
pub fn apply_given_approval(
    session: &Session,
    commit: Oid,
    report: &mut Report,
    given: Approval,
) -> Result<()> {
    // The signed approvals as they are now: `approve --sign` has just stored its note.
    let trust = crate::attest::Trust::new(session.repo(), session.trust().tip.clone());
    decide_approval(session, &trust, commit, report, (Some(given), None))?;
    report.finish();
    Ok(())
}

/// The approval rule over what is recorded: the approvals signed in the notes `trust` names
/// (SPEC §20), this branch's recorded approval and the rejection that stands.
fn decide_approval(
    session: &Session,
    trust: &crate::attest::Trust,
    commit: Oid,
    report: &mut Report,
    (recorded, rejection): (Option<Approval>, Option<crate::ledger::Rejection>),
) -> Result<()> {
    let expect = crate::attest::Expect {
        commit,
        tree: None,
        config: report.config.as_deref(),
        contract: report.contract.as_deref(),
    };
    let signed = crate::attest::approvals(session.repo(), session.config(), trust, &expect)?;
    let approval = if session.config().require_signed_approvals {
        signed_only(commit, signed, recorded.is_some(), report)
    } else {
        signed.valid.or(recorded)
    };
    // A rejection newer in the log than every recorded approval stands, unless a signed approval
    // (notes travel between machines, outside the log's order) was given after it.
    if let Some(rejection) = rejection
        && approval.as_ref().is_none_or(|a| a.at <= rejection.at)
    {
        report.add_gate(Gate::Protected, [rejected(&rejection)]);
        return Ok(());
    }
    if let Some(approval) = approval {
        approve(report, approval);
    }
    Ok(())
}

/// Under `require_signed_approvals` (SPEC §20) only a signed approval counts: an unsigned one
/// (`recorded`, or a signature that does not verify) that would have applied is
/// `approval-unsigned`.
fn signed_only(
    commit: Oid,
    signed: crate::attest::Approvals,
    recorded: bool,
    report: &mut Report,
) -> Option<Approval> {
    let needed = report
        .findings
        .iter()
        .any(|f| f.severity == Severity::Review);
    let unsigned = recorded || !signed.invalid.is_empty();
    if signed.valid.is_none() && unsigned && needed {
        let why = match signed.invalid.first() {
            Some(why) => format!(": {why}"),
            None => String::new(),
        };
        let msg = format!(
            "require_signed_approvals = true and the approval of {} is not signed by an allowed \
             signer{why}; have an allowed signer run `closegate approve --sign`",
            &commit.to_string()[..12]
        );
        report.add_gate(Gate::Protected, [Finding::new(Code::ApprovalUnsigned, msg)]);
    }
    signed.valid
}

/// A copy of `report` with its verdict folded.
fn finished(report: &Report) -> Report {
    let mut copy = report.clone();
    copy.finish();
    copy
}

/// SPEC §8, the approval rule: with an approval for this exact commit, configuration and
/// contract, every review finding becomes a warning and the report carries the approval. Every
/// gate run applies it to a recorded approval, and `approve` to the one it is about to record.
pub fn approve(report: &mut Report, approval: Approval) {
    for finding in &mut report.findings {
        if finding.severity == Severity::Review {
            finding.severity = Severity::Warning;
        }
    }
    report.approval = Some(approval);
}

/// `review-rejected`, naming who rejected the commit, when, and the note.
pub fn rejected(rejection: &crate::ledger::Rejection) -> Finding {
    let msg = format!(
        "rejected by {} at {}: {}; change the work and commit again, or have the reviewer \
         approve this commit",
        rejection.by, rejection.at, rejection.note
    );
    Finding::new(Code::ReviewRejected, msg)
}
