//! `check --attest` and `check --require-attestation` with real SSH keys (SPEC §20).

use std::path::{Path, PathBuf};

use git2::Oid;
use serde_json::Value;

use crate::fixture::{Fixture, closegate, git, parts};
use crate::hook::{PASSING_CONFIG, status_doc};

/// An ed25519 key made by `ssh-keygen -t ed25519 -N ''` in a temporary directory.
pub struct Signer {
    pub key: PathBuf,
    pub public: String,
    pub name: String,
}

impl Signer {
    pub fn new(dir: &Path, name: &str) -> Signer {
        std::fs::create_dir_all(dir).unwrap();
        let key = dir.join(format!("{name}.key"));
        let out = std::process::Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
            .arg(&key)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let public = std::fs::read_to_string(key.with_extension("key.pub")).unwrap();
        Signer {
            key,
            public: public.trim().to_string(),
            name: name.to_string(),
        }
    }

    /// This signer's line in git's allowed-signers format, limited to closegate's namespaces.
    pub fn allowed_line(&self) -> String {
        format!(
            "{} namespaces=\"closegate-attest,closegate-approve\" {}\n",
            self.name, self.public
        )
    }

    pub fn key_arg(&self) -> String {
        self.key.display().to_string()
    }
}

/// `main` with a passing check and `allowed_signers` naming `ci`; `agent/x` adds x (`work`) and
/// then commits its close-ok status document (`tip`), as an agent on another machine would.
pub struct Scene {
    pub fx: Fixture,
    pub ci: Signer,
    pub stranger: Signer,
    pub work: Oid,
    pub tip: Oid,
}

impl Scene {
    pub fn new() -> Scene {
        Scene::with_config(PASSING_CONFIG)
    }

    pub fn with_config(config: &str) -> Scene {
        let fx = Fixture::new();
        let keys = fx.tmp.path().join("keys");
        let ci = Signer::new(&keys, "ci@example.com");
        let stranger = Signer::new(&keys, "stranger@example.com");
        let allowed = ci.allowed_line();
        let files = [
            (".closegate.toml", Some(config)),
            (".closegate/allowed_signers", Some(allowed.as_str())),
        ];
        fx.commit("main", &files, "configure closegate");
        fx.checkout(&fx.root());
        let (work, tip) = agent_branch(&fx, "x");
        Scene {
            fx,
            ci,
            stranger,
            work,
            tip,
        }
    }

    pub fn root(&self) -> PathBuf {
        self.fx.root()
    }

    /// `closegate check --rev agent/x --no-worktree <extra…> --format json`: exit code and report.
    pub fn check(&self, extra: &[&str]) -> (i32, Value, String) {
        let mut args = vec![
            "check",
            "--rev",
            "agent/x",
            "--no-worktree",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let (code, stdout, stderr) = parts(&closegate(&self.root(), &args));
        let report = serde_json::from_str(&stdout).unwrap_or(Value::Null);
        (code, report, stderr)
    }

    pub fn attest_with(&self, signer: &Signer) {
        let key = signer.key_arg();
        let (code, report, stderr) = self.check(&["--attest", "--key", &key]);
        assert_eq!(code, 0, "{report}\n{stderr}");
    }

    /// The note on `commit` under refs/notes/closegate.
    pub fn note(&self, commit: Oid) -> String {
        git(
            &self.root(),
            &[
                "notes",
                "--ref",
                "refs/notes/closegate",
                "show",
                &commit.to_string(),
            ],
        )
    }
}

/// Commit `agent/<name>`: one commit of work, then the status document naming it.
pub fn agent_branch(fx: &Fixture, name: &str) -> (Oid, Oid) {
    agent_branch_with(fx, name, &[])
}

/// [`agent_branch`] whose work commit also writes `extra`.
pub fn agent_branch_with(fx: &Fixture, name: &str, extra: &[(&str, Option<&str>)]) -> (Oid, Oid) {
    let branch = format!("agent/{name}");
    let mut files = vec![("src/lib.rs", Some("pub fn x() {}\n"))];
    files.extend_from_slice(extra);
    let work = fx.commit(&branch, &files, "add x");
    let doc = status_doc("close-ok", &work.to_string()[..12], "/nonexistent/wt/x")
        .replace("branch agent/x", &format!("branch {branch}"));
    let tip = fx.commit(
        &branch,
        &[("_EXEC_STATUS.md", Some(doc.as_str()))],
        "status",
    );
    (work, tip)
}

pub fn codes(report: &Value) -> Vec<String> {
    crate::fixture::report_codes(report)
}

#[test]
fn an_attested_commit_verifies_without_running_the_checks() {
    let s = Scene::new();
    s.attest_with(&s.ci);
    let note = s.note(s.work);
    let entry: Value = serde_json::from_str(note.lines().next().unwrap()).unwrap();
    assert_eq!(entry["closegate"], "attest");
    assert!(
        entry["signature"]
            .as_str()
            .unwrap()
            .contains("BEGIN SSH SIGNATURE")
    );
    let statement: Value = serde_json::from_str(entry["statement"].as_str().unwrap()).unwrap();
    assert_eq!(statement["commit"], s.work.to_string());
    assert_eq!(statement["verdict"], "VERIFIED");
    assert_eq!(statement["checks"][0]["exit_code"], 0);
    // The note is on the commit the close line names, not on the status commit after it.
    let tip = s.tip.to_string();
    let args = [
        "notes",
        "--ref",
        "refs/notes/closegate",
        "show",
        tip.as_str(),
    ];
    assert!(
        !crate::fixture::git_output(&s.root(), &args)
            .status
            .success()
    );
    // A check that would fail if it ran: the attestation stands for the checks.
    let (code, report, stderr) = s.check(&["--require-attestation"]);
    assert_eq!(code, 0, "{report}\n{stderr}");
    assert_eq!(report["verdict"], "VERIFIED");
    assert_eq!(report["checks"][0]["name"], "smoke");
}

#[test]
fn no_attestation_is_a_gap_naming_attestation_missing() {
    let s = Scene::new();
    let (code, report, _) = s.check(&["--require-attestation"]);
    assert_eq!(code, 4, "{report}");
    assert_eq!(report["verdict"], "UNVERIFIED");
    assert!(codes(&report).contains(&"attestation-missing".to_string()));
}

#[test]
fn a_key_not_in_allowed_signers_is_attestation_invalid() {
    let s = Scene::new();
    s.attest_with(&s.stranger);
    let (code, report, _) = s.check(&["--require-attestation"]);
    assert_eq!(code, 1, "{report}");
    assert!(codes(&report).contains(&"attestation-invalid".to_string()));
}

#[test]
fn an_altered_statement_or_garbage_note_is_invalid_never_a_pass() {
    let s = Scene::new();
    s.attest_with(&s.ci);
    let note = s.note(s.work);
    // The agent edits the signed statement (claims another tree): the signature breaks.
    let mut entry: Value = serde_json::from_str(note.lines().next().unwrap()).unwrap();
    let statement = entry["statement"]
        .as_str()
        .unwrap()
        .replace("\"exit_code\":0", "\"exit_code\":0 ");
    entry["statement"] = Value::String(statement);
    let commit = s.work.to_string();
    for forged in [
        entry.to_string(),
        "VERIFIED".to_string(),
        "{\"closegate\":\"attest\",\"statement\":\"{}\"}".to_string(),
    ] {
        git(
            &s.root(),
            &[
                "notes",
                "--ref",
                "refs/notes/closegate",
                "add",
                "-f",
                "-m",
                &forged,
                &commit,
            ],
        );
        let (code, report, _) = s.check(&["--require-attestation"]);
        assert_eq!(code, 1, "{forged}: {report}");
        assert!(
            codes(&report).contains(&"attestation-invalid".to_string()),
            "{report}"
        );
    }
}

#[test]
fn an_attestation_moved_to_another_commit_or_config_is_invalid() {
    let s = Scene::new();
    s.attest_with(&s.ci);
    // Copied onto another commit: the statement names the commit it was signed for.
    let (other_work, _) = agent_branch(&s.fx, "y");
    git(
        &s.root(),
        &[
            "notes",
            "--ref",
            "refs/notes/closegate",
            "copy",
            &s.work.to_string(),
            &other_work.to_string(),
        ],
    );
    let (code, report, _) = s.check(&["--require-attestation"]);
    assert_eq!(code, 0, "{report}");
    let out = closegate(
        &s.root(),
        &[
            "check",
            "--rev",
            "agent/y",
            "--no-worktree",
            "--require-attestation",
            "--format",
            "json",
        ],
    );
    let (code, stdout, stderr) = parts(&out);
    let report: Value = serde_json::from_str(&stdout).expect(&stderr);
    assert_eq!(code, 1, "{report}");
    let invalid = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "attestation-invalid")
        .unwrap();
    assert!(
        invalid["message"].as_str().unwrap().contains("for commit"),
        "{invalid}"
    );
    // The base's configuration changes: the attestation was given under another blob.
    let config = format!("jobs = 1\n{PASSING_CONFIG}");
    s.fx.commit(
        "main",
        &[(".closegate.toml", Some(config.as_str()))],
        "reconfigure",
    );
    let (code, report, _) = s.check(&["--require-attestation"]);
    assert_eq!(code, 1, "{report}");
    assert!(codes(&report).contains(&"attestation-invalid".to_string()));
}

#[test]
fn allowed_signers_come_from_the_base_tip_not_the_branch() {
    let s = Scene::new();
    // The agent lists its own key on its branch; the base tip's list is what counts.
    let line = s.stranger.allowed_line();
    agent_branch_with(
        &s.fx,
        "z",
        &[(".closegate/allowed_signers", Some(line.as_str()))],
    );
    let key = s.stranger.key_arg();
    let z = [
        "check",
        "--rev",
        "agent/z",
        "--no-worktree",
        "--format",
        "json",
    ];
    let mut attest = z.to_vec();
    attest.extend(["--attest", "--key", &key]);
    closegate(&s.root(), &attest);
    let mut require = z.to_vec();
    require.push("--require-attestation");
    let (code, stdout, _) = parts(&closegate(&s.root(), &require));
    assert_ne!(code, 0, "{stdout}");
    assert!(!stdout.contains("\"verdict\":\"VERIFIED\""), "{stdout}");
}

#[test]
fn attest_without_a_key_is_an_error_naming_both_sources() {
    let s = Scene::new();
    let (code, _, stderr) = s.check(&["--attest"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--key") && stderr.contains("user.signingKey"),
        "{stderr}"
    );
    let (code, _, stderr) = s.check(&["--attest", "--key", "/nonexistent/key"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("/nonexistent/key"), "{stderr}");
}

#[test]
fn attest_reads_the_key_from_git_config_with_gpg_format_ssh() {
    let s = Scene::new();
    git(&s.root(), &["config", "gpg.format", "ssh"]);
    git(&s.root(), &["config", "user.signingKey", &s.ci.key_arg()]);
    let (code, report, stderr) = s.check(&["--attest"]);
    assert_eq!(code, 0, "{report}\n{stderr}");
    assert!(s.note(s.work).contains("\"closegate\":\"attest\""));
}

#[test]
fn nothing_is_signed_short_of_verified() {
    let s = Scene::with_config("[[checks]]\nname = \"smoke\"\nrun = \"false\"\n");
    let key = s.ci.key_arg();
    let (code, _, stderr) = s.check(&["--attest", "--key", &key]);
    assert_eq!(code, 1);
    assert!(stderr.contains("not attested"), "{stderr}");
    let out = crate::fixture::git_output(
        &s.root(),
        &["notes", "--ref", "refs/notes/closegate", "list"],
    );
    assert!(out.stdout.is_empty());
}

/// `require_signed_approvals = true` and a passing check; `agent/t` touches a test (review).
fn review_scene(require: bool) -> Scene {
    let head = if require {
        "require_signed_approvals = true\n"
    } else {
        ""
    };
    let s = Scene::with_config(&format!("{head}{PASSING_CONFIG}"));
    agent_branch_with(&s.fx, "t", &[("tests/t.rs", Some("#[test] fn t() {}\n"))]);
    s
}

#[test]
fn under_require_signed_approvals_only_a_signed_approval_counts() {
    let s = review_scene(true);
    let approve = |extra: &[&str]| {
        let mut args = vec![
            "approve",
            "--rev",
            "agent/t",
            "--no-worktree",
            "--by",
            "Reviewer",
        ];
        args.extend_from_slice(extra);
        parts(&closegate(&s.root(), &args))
    };
    let check = || {
        let args = [
            "check",
            "--rev",
            "agent/t",
            "--no-worktree",
            "--format",
            "json",
        ];
        let (code, stdout, _) = parts(&closegate(&s.root(), &args));
        (code, serde_json::from_str::<Value>(&stdout).unwrap())
    };
    let (code, report) = check();
    assert_eq!(code, 3, "{report}");
    assert!(
        !codes(&report).contains(&"approval-unsigned".to_string()),
        "{report}"
    );
    // An unsigned approval: recorded, but it does not count, and the report says why.
    let (code, out, err) = approve(&[]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, report) = check();
    assert_eq!(code, 3, "{report}");
    assert!(
        codes(&report).contains(&"approval-unsigned".to_string()),
        "{report}"
    );
    assert!(report["approval"].is_null());
    // Signed by a key the base does not list: still unsigned as far as the gate goes.
    let stranger = s.stranger.key_arg();
    let (code, out, err) = approve(&["--sign", "--key", &stranger]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, report) = check();
    assert_eq!(code, 3, "{report}");
    assert!(
        codes(&report).contains(&"approval-unsigned".to_string()),
        "{report}"
    );
    // Signed by an allowed signer: the protected change is approved.
    let ci = s.ci.key_arg();
    let (code, out, err) = approve(&["--sign", "--key", &ci]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("refs/notes/closegate"), "{out}");
    let (code, report) = check();
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["approval"]["by"], "Reviewer");
}

#[test]
fn approve_sign_without_a_key_is_an_error_and_records_nothing() {
    let s = review_scene(false);
    let args = [
        "approve",
        "--rev",
        "agent/t",
        "--no-worktree",
        "--by",
        "R",
        "--sign",
    ];
    let (code, _, stderr) = parts(&closegate(&s.root(), &args));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("user.signingKey"), "{stderr}");
    let records = closegate::record::read(&s.fx.git_dir()).unwrap().records;
    assert!(!records.iter().any(|r| r["event"] == "approve"));
}

#[test]
fn attest_reuses_recorded_results_only_when_they_are_authenticated() {
    let s = Scene::new();
    let key = s.ci.key_arg();
    let reused = |s: &Scene| {
        let (code, _, stderr) = s.check(&[]);
        assert_eq!(code, 0, "{stderr}");
        let (code, report, stderr) = s.check(&["--attest", "--key", &key]);
        assert_eq!(code, 0, "{report}\n{stderr}");
        !report["checks"][0]["reused"].is_null()
    };
    // Plain records can be written by anyone who can write the repository: the checks run again.
    assert!(!reused(&s));
    let (code, _, stderr) = parts(&closegate(&s.root(), &["key", "init"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(reused(&s));
}

#[test]
fn the_signing_key_is_hidden_from_the_checks_it_signs_for() {
    let s = Scene::new();
    // A check that fails if it can read the key (the sandbox covers it with an empty file).
    let key = s.ci.key_arg();
    let config = format!("[[checks]]\nname = \"peek\"\nrun = \"test ! -s '{key}'\"\n");
    s.fx.commit(
        "main",
        &[(".closegate.toml", Some(config.as_str()))],
        "peek",
    );
    let (code, report, stderr) = s.check(&["--attest", "--key", &key]);
    if report["sandbox"] != "bwrap" {
        eprintln!("skipped: no sandbox here ({})", report["sandbox"]);
        return;
    }
    assert_eq!(code, 0, "{report}\n{stderr}");
    // Without --attest the key is not this run's secret, and the same check sees it.
    let (code, report, _) = s.check(&["--rerun"]);
    assert_eq!(code, 1, "{report}");
}
