//! Gate `contract` (SPEC §12): the coordinator's finish line against the commit.
//!
//! Plan, process and outcome in one place: which paths the branch may change (`scope`,
//! `prohibited`, the status document exempt), how much it may change (`max_changed_files`,
//! `max_commits`), what it must deliver (`required_artifacts`, `required_checks`) and whether a
//! human must approve every return (`approval = "always"`). The gate reads the contract it is
//! given; where the contract comes from (base tip, a branch binding or `--contract`) is decided
//! by the caller (`crate::contract::Lookup`).

use anyhow::Result;
use git2::Oid;

use crate::catalog::Code;
use crate::config::CheckSpec;
use crate::contract::{ApprovalPolicy, Contract};
use crate::doc::{State, StatusDoc};
use crate::finding::Finding;
use crate::repo::{Change, Repo};
use crate::report::CheckRun;

/// What the contract is checked against.
pub struct Ctx<'a> {
    pub repo: &'a Repo,
    pub doc: &'a StatusDoc,
    pub commit: Oid,
    /// `None` when the base did not resolve (`base-unknown` already says so).
    pub merge_base: Option<Oid>,
    /// The changes from the merge base to the commit, computed once for every gate.
    pub changes: Option<&'a [Change]>,
    /// Whether the agent returned (the manifest is read only then).
    pub returned: bool,
    pub status_file: &'a str,
    /// The trusted configuration's checks and the runs of the checks gate.
    pub configured: &'a [CheckSpec],
    pub runs: &'a [CheckRun],
    pub no_checks: bool,
}

/// Every `contract-*` finding of `contract` against the commit.
pub fn run(ctx: &Ctx<'_>, contract: &Contract) -> Result<Vec<Finding>> {
    let mut findings = Vec::new();
    if let (Some(merge_base), Some(changes)) = (ctx.merge_base, ctx.changes) {
        let changes: Vec<&Change> = changes
            .iter()
            .filter(|c| c.paths().iter().any(|p| *p != ctx.status_file))
            .collect();
        findings.extend(paths(ctx, contract, &changes));
        findings.extend(budget(ctx, contract, changes.len(), merge_base)?);
    }
    if ctx.returned {
        findings.extend(artifacts(ctx, contract));
    }
    findings.extend(checks(ctx, contract));
    findings.extend(approval(ctx, contract));
    Ok(findings)
}

/// `contract-prohibited` and `contract-out-of-scope`, per path (both sides of a rename); a
/// prohibited path gives only `contract-prohibited`.
fn paths(ctx: &Ctx<'_>, contract: &Contract, changes: &[&Change]) -> Vec<Finding> {
    let mut findings = Vec::new();
    for change in changes {
        let kind = change.kind.as_str();
        // Matched by the bytes git stores, printed escaped (SPEC §26.4).
        for (bytes, path) in change.touched() {
            if path == ctx.status_file {
                continue;
            }
            let prohibited = contract.prohibited.as_ref();
            if let Some(glob) = prohibited.and_then(|p| p.first_match(bytes)) {
                let msg = format!("{kind} `{path}` matches the prohibited glob `{glob}`");
                findings.push(Finding::new(Code::ContractProhibited, msg).at_path(path));
            } else if let Some(scope) = &contract.scope
                && scope.first_match(bytes).is_none()
            {
                let msg = format!(
                    "{kind} `{path}` lies outside the scope [{}]",
                    quoted(scope.patterns())
                );
                findings.push(Finding::new(Code::ContractOutOfScope, msg).at_path(path));
            }
        }
    }
    findings
}

/// `contract-budget-exceeded`: changed files (the status document aside) and commits beyond the
/// merge base.
fn budget(
    ctx: &Ctx<'_>,
    contract: &Contract,
    changed: usize,
    merge_base: Oid,
) -> Result<Vec<Finding>> {
    let mut findings = Vec::new();
    if let Some(max) = contract.max_changed_files
        && changed as u64 > max
    {
        let msg = format!(
            "the branch changes {changed} files, the contract allows at most {max} (max_changed_files)"
        );
        findings.push(Finding::new(Code::ContractBudgetExceeded, msg));
    }
    if let Some(max) = contract.max_commits {
        let commits = ctx.repo.count_commits(Some(merge_base), ctx.commit)?;
        if commits as u64 > max {
            let msg = format!(
                "the branch has {commits} commits beyond the merge base, the contract allows at most {max} (max_commits)"
            );
            findings.push(Finding::new(Code::ContractBudgetExceeded, msg));
        }
    }
    Ok(findings)
}

/// `contract-artifact-missing`: each required artifact must be declared under `artifacts`, be in
/// the commit's tree (a path ending in `/` as a directory) and be changed by the branch (added or
/// modified since the merge base; when the merge base is unknown, `base-unknown` already says the
/// branch's changes could not be judged).
fn artifacts(ctx: &Ctx<'_>, contract: &Contract) -> Vec<Finding> {
    let declared = ctx.doc.artifacts.as_deref().unwrap_or_default();
    let mut findings = Vec::new();
    for path in &contract.required_artifacts {
        let bare = path.trim_end_matches('/');
        let is_declared = declared
            .iter()
            .any(|e| e.text.trim_end_matches('/') == bare);
        let entry = ctx.repo.tree_entry(ctx.commit, path);
        let present = matches!(entry, Some((_, is_dir)) if is_dir || !path.ends_with('/'));
        let before = ctx
            .merge_base
            .and_then(|base| ctx.repo.tree_entry_mode(base, path));
        let now = ctx.repo.tree_entry_mode(ctx.commit, path);
        let unchanged = present && before.is_some() && before == now;
        let short = &ctx.commit.to_string()[..12];
        let msg = match (is_declared, present) {
            (true, true) if unchanged => format!(
                "required artifact `{path}` is identical at the merge base: the branch did not produce it"
            ),
            (true, true) => continue,
            (false, true) => {
                format!("required artifact `{path}` is not declared under `artifacts`")
            }
            (true, false) => {
                format!("required artifact `{path}` is not in the tree of commit {short}")
            }
            (false, false) => format!(
                "required artifact `{path}` is neither declared under `artifacts` nor in the tree of commit {short}"
            ),
        };
        findings.push(Finding::new(Code::ContractArtifactMissing, msg).at_path(bare));
    }
    findings
}

/// `contract-check-missing`: a required check that is not configured or did not run. A required
/// check that ran and failed is refused by the checks gate already.
fn checks(ctx: &Ctx<'_>, contract: &Contract) -> Vec<Finding> {
    let mut findings = Vec::new();
    for name in &contract.required_checks {
        let why = if !ctx.configured.iter().any(|c| &c.name == name) {
            "is not configured in the base branch's .closegate.toml"
        } else if ctx.no_checks {
            "did not run: --no-checks was given"
        } else if !ctx.runs.iter().any(|r| &r.name == name) {
            "did not run"
        } else {
            continue;
        };
        let msg = format!("required check `{name}` {why}");
        findings.push(Finding::new(Code::ContractCheckMissing, msg));
    }
    findings
}

/// `contract-approval-required` for `approval = "always"`, on a return that asks to be merged
/// (`closed-without-merge` work is not merged, so there is nothing to approve).
fn approval(ctx: &Ctx<'_>, contract: &Contract) -> Option<Finding> {
    let merge_wanted = ctx.returned && ctx.doc.state != Some(State::ClosedWithoutMerge);
    (contract.approval == ApprovalPolicy::Always && merge_wanted).then(|| {
        Finding::new(
            Code::ContractApprovalRequired,
            "the contract requires a human approval of every return (approval = \"always\")",
        )
    })
}

fn quoted(patterns: &[String]) -> String {
    let quoted: Vec<String> = patterns.iter().map(|p| format!("`{p}`")).collect();
    quoted.join(", ")
}
