//! The task contract gate (SPEC §12) against real repositories: every `contract-*` code, the
//! contract read from the base tip only (or `--contract FILE`), approvals bound to the contract.

use std::path::Path;

use git2::{ObjectType, Oid};
use serde_json::{Value, json};

use crate::fixture::{closegate, parts, report_codes};
use crate::scene::{Scene, StatusDoc};

const CONFIG: &str = "[[checks]]\nname = \"smoke\"\nrun = \"test -f src/lib.rs\"\ntimeout_s = 60\n";
const CONTRACT_PATH: &str = ".closegate/contracts/x.toml";

/// `main` with the configuration and (optionally) a contract for slug `x`; `agent/x` with the
/// agent's files (plus the draft status document) in one commit; a worktree `wt/x` on it.
fn scene(contract: Option<&str>, files: &[(&str, Option<&str>)]) -> Scene {
    scene_with_main(&[], contract, files)
}

/// Like `scene`, with extra files on `main` first.
fn scene_with_main(
    main: &[(&str, Option<&str>)],
    contract: Option<&str>,
    files: &[(&str, Option<&str>)],
) -> Scene {
    let mut on_main = vec![(".closegate.toml", Some(CONFIG))];
    on_main.extend_from_slice(main);
    if let Some(text) = contract {
        on_main.push((CONTRACT_PATH, Some(text)));
    }
    // A first draft of the status document, committed with the work (the document is exempt).
    let draft = StatusDoc::new("x", "in-progress").render();
    let mut work = vec![
        ("src/lib.rs", Some("pub fn x() {}\n")),
        ("_EXEC_STATUS.md", Some(draft.as_str())),
    ];
    work.extend_from_slice(files);
    let s = Scene::new()
        .on_main_only(&on_main, "configure closegate")
        .on_agent(&work, "add x")
        .worktree();
    s.honest(&["src/lib.rs"]);
    s
}

/// The contract tests' verbs on a scene.
trait ContractScene {
    fn commit(&mut self, files: &[(&str, Option<&str>)], msg: &str);
    fn set_main_contract(&self, text: &str);
    fn honest(&self, artifacts: &[&str]);
    fn check(&self, args: &[&str]) -> (i32, Value);
}

impl ContractScene for Scene {
    /// Commit more on the agent's branch and check it out; the status document then names it.
    fn commit(&mut self, files: &[(&str, Option<&str>)], msg: &str) {
        self.tip = self.fx.commit("agent/x", files, msg);
        self.fx.checkout(&self.wt);
        self.honest(&["src/lib.rs"]);
    }

    /// Replace the contract on `main` (the coordinator's side).
    fn set_main_contract(&self, text: &str) {
        self.fx.commit(
            "main",
            &[(CONTRACT_PATH, Some(text))],
            "change the contract",
        );
    }

    /// The honest close-ok document naming the tip, listing `artifacts`.
    fn honest(&self, artifacts: &[&str]) {
        let sha = &self.tip.to_string()[..12];
        StatusDoc::complete("x", "close-ok")
            .last_commit(sha, &self.subject(self.tip))
            .artifacts(artifacts)
            .close(sha, "agent/x", &self.wt_str())
            .write(&self.wt);
    }

    fn check(&self, args: &[&str]) -> (i32, Value) {
        self.check_json(&self.wt, args)
    }
}

fn blob_id(text: &str) -> String {
    Oid::hash_object(ObjectType::Blob, text.as_bytes())
        .unwrap()
        .to_string()
}

fn codes(report: &Value) -> Vec<String> {
    report_codes(report)
}

/// The `(code, path)` of every finding of the contract gate.
fn contract_findings(report: &Value) -> Vec<(String, Option<String>)> {
    let findings = report["findings"].as_array().unwrap();
    findings
        .iter()
        .filter(|f| f["gate"] == "contract")
        .map(|f| {
            let path = f["path"].as_str().map(str::to_string);
            (f["code"].as_str().unwrap().to_string(), path)
        })
        .collect()
}

fn message<'a>(report: &'a Value, code: &str) -> &'a str {
    let findings = report["findings"].as_array().unwrap();
    let found = findings.iter().find(|f| f["code"] == code);
    found
        .and_then(|f| f["message"].as_str())
        .unwrap_or_else(|| panic!("no {code} in {:?}", codes(report)))
}

fn pair(code: &str, path: &str) -> (String, Option<String>) {
    (code.to_string(), Some(path.to_string()))
}

#[test]
fn contract_that_holds_is_verified_and_named_by_blob_id() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let contract = "goal = \"x\"\nscope = [\"src/**\"]\nrequired_artifacts = [\"src/lib.rs\"]\n\
                    required_checks = [\"smoke\"]\nmax_changed_files = 1\nmax_commits = 1\n";
    let s = scene(Some(contract), &[]);
    let (code, report) = s.check(&[]);
    assert_eq!(codes(&report), Vec::<String>::new());
    assert_eq!(code, 0);
    assert_eq!(report["contract"], blob_id(contract));
}

#[test]
fn no_contract_means_no_contract_gate() {
    let s = scene(None, &[("notes.md", Some("n\n"))]);
    let (code, report) = s.check(&[]);
    assert_eq!(code, 0, "{:?}", codes(&report));
    assert!(report.get("contract").is_none_or(Value::is_null));
}

#[test]
fn path_outside_scope_is_refused_and_the_status_document_is_exempt() {
    let s = scene(
        Some("scope = [\"src/*\"]\n"),
        &[
            ("docs/notes.md", Some("n\n")),
            ("src/deep/a.rs", Some("a\n")),
        ],
    );
    let (code, report) = s.check(&[]);
    assert_eq!(
        contract_findings(&report),
        [
            pair("contract-out-of-scope", "docs/notes.md"),
            pair("contract-out-of-scope", "src/deep/a.rs"),
        ]
    );
    assert_eq!(code, 1);
    assert_eq!(report["verdict"], "FAIL");
    assert!(message(&report, "contract-out-of-scope").contains("`src/*`"));
}

#[test]
fn both_sides_of_a_rename_are_in_scope_or_not() {
    let body = "line one of a file long enough to be found as a rename\n".repeat(8);
    let s = scene_with_main(
        &[("legacy/a.txt", Some(&body))],
        Some("scope = [\"src/**\"]\n"),
        &[("legacy/a.txt", None), ("src/a.txt", Some(&body))],
    );
    let (_, report) = s.check(&[]);
    assert_eq!(
        contract_findings(&report),
        [pair("contract-out-of-scope", "legacy/a.txt")]
    );
    assert!(message(&report, "contract-out-of-scope").starts_with("renamed"));
}

#[test]
fn prohibited_path_wins_over_scope() {
    let contract = "scope = [\"src/**\"]\nprohibited = [\"db/**\", \"src/billing/**\"]\n";
    let s = scene(
        Some(contract),
        &[
            ("db/schema.sql", Some("create table t;\n")),
            ("src/billing/rates.rs", Some("r\n")),
        ],
    );
    let (code, report) = s.check(&[]);
    assert_eq!(
        contract_findings(&report),
        [
            pair("contract-prohibited", "db/schema.sql"),
            pair("contract-prohibited", "src/billing/rates.rs"),
        ]
    );
    assert_eq!(code, 1);
    assert!(message(&report, "contract-prohibited").contains("`db/**`"));
}

#[test]
fn required_artifact_undeclared_or_absent_is_refused() {
    let contract = "required_artifacts = [\"src/lib.rs\", \"src/extra.rs\", \"docs/\"]\n";
    let s = scene(Some(contract), &[("src/extra.rs", Some("e\n"))]);
    // The document lists src/lib.rs only: src/extra.rs is committed but not declared, and
    // docs/ is neither declared nor in the commit.
    let (code, report) = s.check(&[]);
    assert_eq!(
        contract_findings(&report),
        [
            pair("contract-artifact-missing", "src/extra.rs"),
            pair("contract-artifact-missing", "docs"),
        ]
    );
    assert_eq!(code, 1);
    assert!(message(&report, "contract-artifact-missing").contains("not declared"));
}

#[test]
fn declared_required_artifact_absent_from_the_commit_is_refused() {
    let s = scene(Some("required_artifacts = [\"src/gone.rs\"]\n"), &[]);
    s.honest(&["src/lib.rs", "src/gone.rs"]);
    let (_, report) = s.check(&[]);
    assert_eq!(
        contract_findings(&report),
        [pair("contract-artifact-missing", "src/gone.rs")]
    );
    assert!(message(&report, "contract-artifact-missing").contains("not in the tree of commit"));
}

#[test]
fn required_check_not_configured_is_a_gap() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = scene(Some("required_checks = [\"smoke\", \"lint\"]\n"), &[]);
    let (code, report) = s.check(&[]);
    assert_eq!(codes(&report), ["contract-check-missing"]);
    assert!(message(&report, "contract-check-missing").contains("`lint` is not configured"));
    assert_eq!(code, 4);
    assert_eq!(report["verdict"], "UNVERIFIED");
}

#[test]
fn required_check_that_did_not_run_is_a_gap() {
    let s = scene(Some("required_checks = [\"smoke\"]\n"), &[]);
    let (code, report) = s.check(&["--no-checks"]);
    assert_eq!(codes(&report), ["checks-skipped", "contract-check-missing"]);
    assert!(message(&report, "contract-check-missing").contains("--no-checks"));
    assert_eq!(code, 4);
}

#[test]
fn too_many_files_or_commits_exceed_the_budget() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let contract = "max_changed_files = 2\nmax_commits = 1\n";
    let mut s = scene(Some(contract), &[("src/a.rs", Some("a\n"))]);
    // Two files changed (the status document does not count), one commit: within budget.
    let (code, report) = s.check(&[]);
    assert_eq!(codes(&report), Vec::<String>::new());
    assert_eq!(code, 0);
    s.commit(&[("src/b.rs", Some("b\n"))], "add b");
    let (code, report) = s.check(&[]);
    assert_eq!(
        codes(&report),
        ["contract-budget-exceeded", "contract-budget-exceeded"]
    );
    let all: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert!(all[0].contains("changes 3 files") && all[0].contains("max_changed_files"));
    assert!(all[1].contains("2 commits") && all[1].contains("max_commits"));
    assert_eq!(code, 1);
}

#[test]
fn malformed_contract_is_refused_naming_key_and_reason() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = scene(Some("scope = \"src/**\"\n"), &[]);
    let (code, report) = s.check(&[]);
    assert_eq!(codes(&report), ["contract-malformed"]);
    assert_eq!(
        message(&report, "contract-malformed"),
        "main:.closegate/contracts/x.toml: `scope` must be an array of strings, found string"
    );
    assert_eq!(code, 1);
    s.set_main_contract("scope = [\"src/**\"]\ndeadline = 3\n");
    let (_, report) = s.check(&[]);
    assert!(message(&report, "contract-malformed").contains("unknown key `deadline`"));
}

#[test]
fn contract_file_flag_is_used_and_named_by_its_blob_id() {
    let s = scene(None, &[("notes.md", Some("n\n"))]);
    let text = "scope = [\"src/**\"]\n";
    let file = s.fx.tmp.path().join("contract.toml");
    std::fs::write(&file, text).unwrap();
    let (code, report) = s.check(&["--contract", file.to_str().unwrap()]);
    assert_eq!(
        contract_findings(&report),
        [pair("contract-out-of-scope", "notes.md")]
    );
    assert_eq!(code, 1);
    assert_eq!(report["contract"], blob_id(text));
}

#[test]
fn contract_file_flag_overrides_the_base_contract() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = scene(
        Some("scope = [\"nothing/**\"]\n"),
        &[("notes.md", Some("n\n"))],
    );
    let file = s.fx.tmp.path().join("wide.toml");
    std::fs::write(&file, "scope = [\"**\"]\n").unwrap();
    let (code, report) = s.check(&["--contract", file.to_str().unwrap()]);
    assert_eq!(codes(&report), Vec::<String>::new());
    assert_eq!(code, 0);
}

#[test]
fn unreadable_contract_file_is_an_error() {
    let s = scene(None, &[]);
    let out = closegate(&s.wt, &["check", "--contract", "/nonexistent/c.toml"]);
    let (code, _, stderr) = parts(&out);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("cannot read the contract /nonexistent/c.toml"),
        "{stderr}"
    );
}

#[test]
fn contract_edited_on_the_agent_branch_has_no_effect() {
    let main_contract = "scope = [\"src/**\"]\n";
    let wide = "scope = [\"**\"]\napproval = \"never\"\n";
    let s = scene(
        Some(main_contract),
        &[(CONTRACT_PATH, Some(wide)), ("notes.md", Some("n\n"))],
    );
    let (code, report) = s.check(&[]);
    assert_eq!(
        contract_findings(&report),
        [
            pair("contract-out-of-scope", CONTRACT_PATH),
            pair("contract-out-of-scope", "notes.md"),
        ]
    );
    assert!(codes(&report).contains(&"protected-surface".to_string()));
    assert_eq!(report["contract"], blob_id(main_contract));
    assert_eq!(code, 1);
}

#[test]
fn contract_added_only_on_the_agent_branch_has_no_effect() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = scene(None, &[(CONTRACT_PATH, Some("approval = \"always\"\n"))]);
    let (code, report) = s.check(&[]);
    // Only the protected gate notices the file; no contract applies.
    assert_eq!(codes(&report), ["protected-surface"]);
    assert!(report.get("contract").is_none_or(Value::is_null));
    assert_eq!(code, 3);
}

#[test]
fn contract_in_the_worktree_only_has_no_effect() {
    let s = scene(None, &[]);
    s.fx.write(&s.wt, CONTRACT_PATH, "approval = \"always\"\n");
    let (_, report) = s.check(&["--no-record"]);
    assert!(!codes(&report).iter().any(|c| c.starts_with("contract-")));
    assert!(report.get("contract").is_none_or(Value::is_null));
}

/// Write the approval `approve` would record for `commit` on `agent/x` under `contract` (and the
/// scene's configuration, from the base with the configured base: SPEC §6, §8, §26.1).
fn approve(common: &Path, commit: Oid, contract: &str) {
    let record = json!({
        "ts": "2026-11-29T12:00:00Z",
        "event": "approve",
        "slug": "x",
        "branch": "agent/x",
        "commit": commit.to_string(),
        "contract": contract,
        "config": blob_id(CONFIG),
        "config_source": "base",
        "base_source": "configured",
        "by": "reviewer",
        "verdict": "VERIFIED",
    });
    closegate::record::append(common, &record).unwrap();
}

#[test]
fn approval_always_needs_an_approval_bound_to_the_contract() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let contract = "goal = \"x\"\napproval = \"always\"\n";
    let s = scene(Some(contract), &[]);
    let (code, report) = s.check(&[]);
    assert_eq!(codes(&report), ["contract-approval-required"]);
    assert_eq!(code, 3);
    assert_eq!(report["verdict"], "PENDING_REVIEW");

    approve(&s.fx.git_dir(), s.tip, &blob_id(contract));
    let (code, report) = s.check(&[]);
    assert_eq!(code, 0, "{:?}", codes(&report));
    assert_eq!(report["approval"]["by"], "reviewer");
    assert_eq!(report["approval"]["commit"], s.tip.to_string());

    // The coordinator changes the contract on main: the approval no longer applies.
    let changed = "goal = \"x, and y\"\napproval = \"always\"\n";
    s.set_main_contract(changed);
    let (code, report) = s.check(&[]);
    assert_eq!(code, 3);
    assert_eq!(report["contract"], blob_id(changed));
    assert!(report["approval"].is_null());
}

#[test]
fn approval_never_does_not_waive_the_protected_gate() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = scene(
        Some("approval = \"never\"\n"),
        &[("tests/x_test.sh", Some("true\n"))],
    );
    let (code, report) = s.check(&[]);
    assert_eq!(codes(&report), ["protected-surface"]);
    assert_eq!(code, 3);
}

#[test]
fn closed_without_merge_needs_no_contract_approval() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = scene(Some("approval = \"always\"\n"), &[]);
    let doc = std::fs::read_to_string(s.wt.join("_EXEC_STATUS.md")).unwrap();
    let doc = doc.replace("state: close-ok", "state: closed-without-merge");
    std::fs::write(s.wt.join("_EXEC_STATUS.md"), doc).unwrap();
    let (code, report) = s.check(&[]);
    assert_eq!(codes(&report), Vec::<String>::new());
    assert_eq!(code, 0);
}

/// SPEC §11: a configuration or contract that is not a regular file is an exit-2 error naming
/// it. A directory committed at the slug's contract path, or at `.closegate.toml`, on the base tip
/// is not "no contract" or "no configuration" (which would drop the contract's scope, or fall back
/// to the built-in defaults, without a word).
#[test]
fn a_directory_at_the_contract_or_configuration_path_is_an_error_naming_it() {
    for path in [CONTRACT_PATH, ".closegate.toml"] {
        let s = scene(None, &[]);
        let inside = format!("{path}/f");
        let mut on_main = vec![(inside.as_str(), Some("x\n"))];
        if path == ".closegate.toml" {
            on_main.push((".closegate.toml", None));
        }
        s.fx.commit("main", &on_main, "a directory where a file belongs");
        let (code, stdout, stderr) = parts(&closegate(&s.wt, &["check", "--no-record"]));
        assert_eq!(code, 2, "{path}: {stdout}{stderr}");
        assert!(stderr.contains(&format!("main:{path}")), "{path}: {stderr}");
        assert!(stderr.contains("is a directory"), "{path}: {stderr}");
    }
}
