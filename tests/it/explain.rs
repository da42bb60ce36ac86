//! `closegate explain` through the real binary (SPEC §14), and README.md's generated code table.

use std::path::Path;

use closegate::catalog::{CODES, markdown_table};

use crate::fixture::{closegate, parts};

const START: &str = "<!-- codes:start -->\n";
const END: &str = "<!-- codes:end -->";

fn cwd() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn known_code_prints_severity_gate_cause_and_fix() {
    let dir = cwd();
    let (code, out, err) = parts(&closegate(dir.path(), &["explain", "close-commit-not-tip"]));
    assert_eq!(code, 0, "{err}");
    let info = closegate::catalog::lookup("close-commit-not-tip").unwrap();
    assert!(out.starts_with("close-commit-not-tip\n"), "{out}");
    assert!(out.contains("severity  refusal"), "{out}");
    assert!(out.contains("gate      close"), "{out}");
    assert!(out.contains(info.cause) && out.contains(info.fix), "{out}");
}

#[test]
fn unknown_code_exits_2_naming_the_closest_codes() {
    let dir = cwd();
    let (code, out, err) = parts(&closegate(dir.path(), &["explain", "close-commit-unknwn"]));
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.starts_with("closegate: unknown finding code"), "{err}");
    assert!(err.contains("close-commit-unknown"), "{err}");
}

#[test]
fn unknown_code_with_control_characters_is_escaped() {
    let dir = cwd();
    let (code, _, err) = parts(&closegate(dir.path(), &["explain", "bad\x1b[31m"]));
    assert_eq!(code, 2);
    assert!(!err.contains('\x1b'), "{err:?}");
}

#[test]
fn every_catalog_code_explains() {
    let dir = cwd();
    for info in CODES {
        let (code, out, err) = parts(&closegate(dir.path(), &["explain", info.code.as_str()]));
        assert_eq!(code, 0, "{}: {err}", info.code);
        assert!(
            out.contains(info.severity.as_str()) && out.contains(info.fix),
            "{}: {out}",
            info.code
        );
    }
}

#[test]
fn list_prints_every_code_with_severity_and_gate() {
    let dir = cwd();
    let (code, out, err) = parts(&closegate(dir.path(), &["explain", "--list"]));
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let expected: Vec<Vec<&str>> = CODES
        .iter()
        .map(|c| vec![c.code.as_str(), c.severity.as_str(), c.gate.as_str()])
        .collect();
    assert_eq!(rows, expected);
}

#[test]
fn explain_without_a_code_is_a_usage_error() {
    let dir = cwd();
    let (code, _, _) = parts(&closegate(dir.path(), &["explain"]));
    assert_eq!(code, 2);
}

/// The manual's code table (docs/codes.md) is generated; `CLOSEGATE_BLESS=1 cargo test` rewrites
/// it.
#[test]
fn readme_code_table_matches_the_catalog() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/codes.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let start = readme
        .find(START)
        .expect("README.md has no codes:start marker")
        + START.len();
    let end = start
        + readme[start..]
            .find(END)
            .expect("README.md has no codes:end marker");
    let table = markdown_table();
    if std::env::var_os("CLOSEGATE_BLESS").is_some_and(|v| v == "1") {
        let blessed = format!("{}{table}{}", &readme[..start], &readme[end..]);
        std::fs::write(&path, blessed).unwrap();
        return;
    }
    assert!(
        readme[start..end] == table,
        "README.md's code table is stale; run `CLOSEGATE_BLESS=1 cargo test readme_code_table`"
    );
}

/// STYLE: every catalog code has a case that produces it. Each code not on UNBUILT names a test in
/// PRODUCERS; that test is run again (this test binary, `--exact`) with the trace hook
/// (`finding::TRACE_ENV`) set, and the code must come out of a real `Finding` made by the binary
/// or a gate during the run — a test that merely spells the code does not count.
#[test]
fn every_catalog_code_is_produced_by_a_test() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let listed: Vec<&str> = PRODUCERS
        .iter()
        .flat_map(|(_, codes)| *codes)
        .copied()
        .collect();
    for info in CODES {
        let code = info.code.as_str();
        let times = listed.iter().filter(|c| **c == code).count();
        if UNBUILT.contains(&code) {
            assert_eq!(times, 0, "{code} is UNBUILT but has a producer");
        } else {
            assert_eq!(times, 1, "{code} needs exactly one PRODUCERS entry");
        }
    }
    let dir = cwd();
    let mut missing = Vec::new();
    for (i, (test, codes)) in PRODUCERS.iter().enumerate() {
        let trace = dir.path().join(format!("trace-{i}"));
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([test, "--exact", "--test-threads=1", "--quiet"])
            .env(closegate::finding::TRACE_ENV, &trace)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{test}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let seen = std::fs::read_to_string(&trace).unwrap_or_default();
        let seen: std::collections::HashSet<&str> = seen.lines().collect();
        missing.extend(
            codes
                .iter()
                .filter(|c| !seen.contains(*c))
                .map(|c| (*test, *c)),
        );
    }
    assert!(
        missing.is_empty(),
        "tests that do not produce their code: {missing:?}"
    );
}

/// For each test (path inside this binary), the codes it produces; every produced code once.
const PRODUCERS: &[(&str, &[&str])] = &[
    (
        "agent_install::doctor_names_each_reason_the_hook_would_not_run",
        &["agent-hook-inactive"],
    ),
    (
        "doc::corpus_produces_exactly_the_listed_codes",
        &[
            "doc-not-utf8",
            "doc-h1-missing",
            "doc-stray-line",
            "doc-key-unknown",
            "doc-key-duplicated",
            "doc-key-alias",
            "doc-state-missing",
            "doc-state-decorated",
            "doc-state-legacy",
            "doc-state-unknown",
            "doc-abstract-missing",
            "doc-abstract-overflow",
            "doc-prose-key-empty",
            "doc-blocked-on-none",
            "doc-last-commit-malformed",
            "doc-updated-malformed",
            "doc-return-manifest-missing",
            "doc-artifact-path-invalid",
            "doc-artifact-duplicated",
            "doc-claim-no-instrument",
            "doc-soft-claim",
            "doc-close-missing",
            "doc-close-malformed",
            "doc-close-duplicated",
            "doc-close-not-last",
            "doc-close-unexpected",
            "doc-close-slug-mismatch",
        ],
    ),
    (
        "keyed::stats_count_returns_exactly_as_defined",
        &[
            "state-not-returned",
            "close-commit-unknown",
            "close-worktree-dirty",
            "protected-surface",
            "claim-overclaimed",
        ],
    ),
    (
        "check::ambiguous_commit_is_refused",
        &["close-commit-ambiguous"],
    ),
    (
        "check::unknown_branch_is_refused",
        &["close-branch-unknown", "close-worktree-branch"],
    ),
    (
        "check::commit_on_another_branch_is_refused",
        &[
            "close-commit-not-on-branch",
            "close-last-commit-mismatch",
            "artifact-missing",
            "check-failed",
        ],
    ),
    (
        "teardown::head_moved_after_the_status_is_refused_and_the_branch_kept",
        &[
            "close-commit-not-tip",
            "teardown-unmerged",
            "teardown-moved",
        ],
    ),
    (
        "check::path_that_is_no_worktree_is_refused",
        &["close-worktree-unknown"],
    ),
    (
        "check::close_line_naming_another_worktree_is_refused",
        &["close-worktree-mismatch"],
    ),
    (
        "integrity::a_shallow_clone_hiding_the_fork_point_says_shallow",
        &["close-worktree-absent", "base-unrelated"],
    ),
    (
        "teardown::untracked_files_are_named_one_by_one",
        &["close-worktree-untracked", "teardown-untracked"],
    ),
    (
        "check::unresolvable_base_is_a_gap",
        &["config-not-from-worktree", "base-unknown", "checks-none"],
    ),
    (
        "keyed::a_required_artifact_the_branch_did_not_change_is_missing",
        &["artifact-unchanged", "contract-artifact-missing"],
    ),
    ("checks::timeout_kills_the_whole_group", &["check-timeout"]),
    (
        "contract::required_check_that_did_not_run_is_a_gap",
        &["checks-skipped", "contract-check-missing"],
    ),
    (
        "reuse::an_unconfined_result_does_not_stand_for_a_sandboxed_run",
        &["checks-unsandboxed"],
    ),
    (
        "teardown::submodule_with_changes_of_its_own_is_refused",
        &["teardown-dirty", "teardown-nested-repo"],
    ),
    ("teardown::locked_worktree_is_refused", &["teardown-locked"]),
    (
        "teardown::main_worktree_is_refused",
        &["teardown-main-worktree"],
    ),
    (
        "teardown::operation_in_progress_is_refused",
        &["teardown-operation-in-progress"],
    ),
    (
        "teardown::hidden_changes_are_refused_by_content_not_stat",
        &["teardown-hidden-changes"],
    ),
    (
        "teardown_safety::detached_head_with_new_commits_is_refused_naming_them",
        &["teardown-unreachable-commits"],
    ),
    (
        "land::an_unchecked_or_failed_branch_is_not_verified",
        &["land-not-verified"],
    ),
    (
        "land::a_textual_conflict_changes_nothing",
        &["land-conflict"],
    ),
    (
        "land::two_branches_that_pass_alone_and_break_together",
        &["land-check-failed"],
    ),
    (
        "land::a_base_that_keeps_moving_is_busy",
        &["land-base-busy"],
    ),
    (
        "land::a_dirty_base_worktree_is_refused_before_anything_moves",
        &["land-base-dirty"],
    ),
    (
        "escrow::a_process_inside_the_worktree_refuses_and_reap_ends_it",
        &["teardown-busy"],
    ),
    (
        "restore::a_forged_escrow_is_never_restored_at_the_path_its_message_names",
        &["restore-unrecorded"],
    ),
    (
        "agent::subagent_stop_reads_the_subagents_own_transcript",
        &["claim-token-missing"],
    ),
    (
        "guard::unverified_must_name_the_gap",
        &["claim-gap-unnamed"],
    ),
    (
        "guard::claiming_fail_while_the_gate_verifies_is_a_warning",
        &["claim-underclaimed"],
    ),
    (
        "signal::a_missing_or_unknown_signal_is_refused",
        &["signal-missing", "signal-unknown"],
    ),
    (
        "agent::the_loop_guard_gives_up_after_max_blocks_and_resets_on_acceptance",
        &["signal-no-op-contradicted", "signal-done-contradicted"],
    ),
    (
        "signal::blocked_holds_only_with_a_named_blocker",
        &["signal-blocked-contradicted"],
    ),
    (
        "keyed::a_contract_bound_to_a_branch_applies_whatever_slug_the_agent_writes",
        &["contract-out-of-scope", "contract-slug-mismatch"],
    ),
    (
        "contract::prohibited_path_wins_over_scope",
        &["contract-prohibited"],
    ),
    (
        "contract::too_many_files_or_commits_exceed_the_budget",
        &["contract-budget-exceeded"],
    ),
    (
        "contract::approval_always_needs_an_approval_bound_to_the_contract",
        &["contract-approval-required"],
    ),
    (
        "contract::malformed_contract_is_refused_naming_key_and_reason",
        &["contract-malformed"],
    ),
    (
        "keyed::require_contract_makes_a_return_without_one_a_gap",
        &["contract-missing"],
    ),
    (
        "attest::no_attestation_is_a_gap_naming_attestation_missing",
        &["attestation-missing"],
    ),
    (
        "attest::a_key_not_in_allowed_signers_is_attestation_invalid",
        &["attestation-invalid"],
    ),
    (
        "overlay::a_weakened_test_for_a_wrong_change_is_tests_weakened_naming_the_check",
        &["tests-weakened"],
    ),
    (
        "overlay::a_test_that_passes_on_the_old_code_is_tests_pass_on_base",
        &["tests-pass-on-base"],
    ),
    (
        "attest::under_require_signed_approvals_only_a_signed_approval_counts",
        &["approval-unsigned"],
    ),
    (
        "reject::a_rejection_refuses_the_commit_naming_who_and_the_note",
        &["review-rejected"],
    ),
    (
        "first_contact::an_agent_that_changed_nothing_is_refused",
        &["close-no-change"],
    ),
    (
        "first_contact::validate_lists_tests_a_replaced_surface_leaves_unprotected",
        &["validate-unprotected-tests"],
    ),
    (
        "first_contact::validate_run_finds_a_check_red_on_base",
        &["check-red-on-base"],
    ),
    (
        "agent::checks_that_cannot_finish_in_time_block_with_checks_running",
        &["checks-running"],
    ),
    (
        "census::a_deleted_test_is_tests_missing_naming_it_and_the_count",
        &["tests-missing"],
    ),
    (
        "evidence::a_removed_assertion_is_tests_weakened_edit_although_the_overlay_passes",
        &["tests-weakened-edit"],
    ),
    (
        "evidence::a_base_test_the_contract_expects_changed_is_a_warning",
        &["tests-changed-as-expected"],
    ),
    (
        "flaky::a_check_that_fails_once_then_passes_is_check_flaky_never_check_failed_nor_verified",
        &["check-flaky"],
    ),
];

/// Codes in the catalog that nothing produces yet (none now: SPEC §27.2's `check-flaky` is
/// produced since issue 48). A code on this list needs no producer; remove it from the list in
/// the change that makes it produced.
const UNBUILT: &[&str] = &[];

/// An unbuilt code is really unbuilt: no source file outside the catalog spells it (as SPEC does,
/// or as its `Code` variant), so the list above can never hide a code that is produced.
#[test]
fn unbuilt_codes_are_produced_nowhere() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for entry in walkdir::WalkDir::new(&src) {
        let path = entry.unwrap().into_path();
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("catalog.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for code in UNBUILT {
            let variant: String = code.split('-').map(camel).collect();
            assert!(
                !names(&text, code) && !names(&text, &variant),
                "{} spells {code}: take it off UNBUILT and give it a producer",
                path.display()
            );
        }
    }
}

fn camel(part: &str) -> String {
    let mut chars = part.chars();
    let first = chars.next().map(|c| c.to_ascii_uppercase());
    first.into_iter().chain(chars).collect()
}

/// Whether `text` holds `code` as a whole word (not inside a longer code).
fn names(text: &str, code: &str) -> bool {
    let part = |c: char| c.is_ascii_alphanumeric() || c == '-';
    text.match_indices(code).any(|(at, _)| {
        let before = text[..at].chars().next_back().is_none_or(|c| !part(c));
        let after = text[at + code.len()..]
            .chars()
            .next()
            .is_none_or(|c| !part(c));
        before && after
    })
}
