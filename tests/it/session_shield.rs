//! Issue #31: every command that runs checks takes the checks' sandbox shield from one
//! `gates::Session`, so what the checks cannot read is the same whichever command runs them.
//!
//! Attack, once per command: the agent's check reads the operator's signing key (git's
//! `user.signingKey`, and the `--key FILE` of a command that signs) and a file `[sandbox] hide`
//! names. The check passes only when every one of them reads empty (the sandbox covers each with
//! an empty file), so a command that forgot a secret turns its own outcome: FAIL, a refused
//! approval, a refused landing or push, a red base. The control shows the same check fails when
//! nothing is hidden (`sandbox = "off"`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::attest::Signer;
use crate::fixture::{Fixture, git, parts};
use crate::scene::Scene;
use crate::secrets::{SecretsScene, json};

/// The operator's secrets, outside the repository and the home directory.
struct Secrets {
    dir: tempfile::TempDir,
    /// git's `user.signingKey` (with `gpg.format = ssh`).
    signing: Signer,
    /// The key a command is given with `--key FILE`.
    flag: Signer,
    /// A file `[sandbox] hide` names.
    hidden: PathBuf,
}

impl Secrets {
    /// The directory is under none of the host's shared temporary directories (`/tmp`,
    /// `/var/tmp`): each check has its own empty copy of those (SPEC §4.6), so a secret kept
    /// there would read empty whether or not the session hid it, and every test below would pass
    /// for nothing. Where `fixture::readable_by_checks` says: the build's scratch directory, else
    /// (a checkout under `/tmp`) a cache directory in the user's home.
    fn new() -> Secrets {
        let dir = tempfile::tempdir_in(crate::fixture::readable_by_checks()).unwrap();
        let signing = Signer::new(&dir.path().join("git"), "operator@example.com");
        let flag = Signer::new(&dir.path().join("flag"), "ci@example.com");
        let hidden = dir.path().join("app.secret");
        std::fs::write(&hidden, "SECRET app\n").unwrap();
        Secrets {
            dir,
            signing,
            flag,
            hidden,
        }
    }

    /// `prefix`, `[sandbox] hide` naming the hidden file, and the check `peek` that fails when
    /// the signing key, the hidden file or (with `flag`) the `--key FILE` has any content.
    fn config(&self, prefix: &str, flag: bool) -> String {
        let mut peek = vec![self.signing.key.clone(), self.hidden.clone()];
        peek.extend(flag.then(|| self.flag.key.clone()));
        let run: Vec<String> = peek
            .iter()
            .map(|p| format!("test ! -s '{}'", p.display()))
            .collect();
        format!(
            "{prefix}[sandbox]\nhide = [\"{}\"]\n\n[[checks]]\nname = \"peek\"\nrun = \"{}\"\n",
            self.hidden.display(),
            run.join(" && ")
        )
    }

    /// Make `signing` git's signing key in the repository at `dir`.
    fn configure_git(&self, dir: &Path) {
        git(dir, &["config", "gpg.format", "ssh"]);
        git(dir, &["config", "user.signingKey", &self.signing.key_arg()]);
    }
}

/// A scene whose base configures the peeking check (`flag`: it peeks at `--key FILE` too) and
/// whose agent branch also commits `files`; git's signing key set in the repository.
fn scene(secrets: &Secrets, prefix: &str, flag: bool, files: &[(&str, Option<&str>)]) -> Scene {
    let s = crate::secrets::scene(&secrets.config(prefix, flag), files);
    secrets.configure_git(&s.fx.root());
    s
}

/// Run `cmd`, feeding `input` on stdin: exit code, stdout, stderr.
fn run_with_stdin(cmd: Command, input: &str) -> (i32, String, String) {
    parts(&crate::fixture::output_with_stdin(cmd, input.as_bytes()))
}

/// The check passed, in the sandbox (a run outside it proves nothing here).
fn assert_sealed(report: &Value) {
    assert_eq!(report["sandbox"], "bwrap", "{report:#}");
    let check = &report["checks"][0];
    assert_eq!(check["name"], "peek", "{report:#}");
    assert_eq!(check["exit_code"], 0, "a secret was readable: {report:#}");
}

/// Controls: with nothing hidden (`mode = "off"`) the same check reads the secrets and fails;
/// in the sandbox, a key that is not this run's (`--key FILE` of a command that does not sign)
/// is readable there too. So a pass below means the session hid them.
#[test]
fn the_peek_reads_every_secret_that_is_not_hidden() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let secrets = Secrets::new();
    let config = secrets
        .config("", false)
        .replace("[sandbox]\n", "[sandbox]\nmode = \"off\"\n");
    let s = crate::secrets::scene(&config, &[]);
    secrets.configure_git(&s.fx.root());
    let (code, report) = s.check(&[]);
    assert_eq!(report["sandbox"], "off", "{report:#}");
    assert_eq!(report["checks"][0]["exit_code"], 1, "{report:#}");
    assert_eq!(code, 1, "{report:#}");

    let s = scene(&secrets, "", true, &[]);
    let (code, report) = s.check(&[]);
    assert_eq!(report["sandbox"], "bwrap", "{report:#}");
    assert_eq!(report["checks"][0]["exit_code"], 1, "{report:#}");
    assert_eq!(code, 1, "{report:#}");
}

#[test]
fn check_hides_the_signing_key_and_hidden_files() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let secrets = Secrets::new();
    let s = scene(&secrets, "", false, &[]);
    let (code, report) = s.check(&[]);
    assert_sealed(&report);
    assert_eq!(code, 0, "{report:#}");
}

#[test]
fn check_attest_hides_the_key_it_signs_with() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let secrets = Secrets::new();
    let s = scene(&secrets, "", true, &[]);
    let key = secrets.flag.key_arg();
    let args = [
        "check",
        "--attest",
        "--key",
        &key,
        "--format",
        "json",
        "--no-record",
    ];
    let out = s.command(&args, &[]).output().unwrap();
    let (code, report) = json(&out);
    assert_sealed(&report);
    assert_eq!(code, 0, "{report:#}");
    let (_, _, stderr) = parts(&out);
    assert!(stderr.contains("closegate: attested"), "{stderr}");
}

/// `approve --sign` runs the agent's checks while it holds the signing key: the key is the
/// session's, hidden like every other.
#[test]
fn approve_sign_hides_the_key_it_signs_with() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let secrets = Secrets::new();
    let files = [("tests/t.rs", Some("#[test] fn t() {}\n"))];
    let s = scene(&secrets, "", true, &files);
    let key = secrets.flag.key_arg();
    let args = [
        "approve", "--sign", "--key", &key, "--yes", "--by", "Reviewer",
    ];
    let (code, stdout, stderr) = parts(&s.command(&args, &[]).output().unwrap());
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("approved ") && stdout.contains("signed under"),
        "{stdout}"
    );
}

/// Issue 36: the overlays of SPEC §23 run the agent's code as well, through the same runner, so
/// they hide what the commit's run hides: a peek that passes on the commit passes on the overlay
/// and the reverse overlay (a weaker shield there reads the secrets: a failing overlay run and
/// `tests-weakened`).
#[test]
fn the_overlays_hide_the_signing_key_and_hidden_files() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let secrets = Secrets::new();
    let files = [("tests/t.rs", Some("#[test] fn t() {}\n"))];
    // Both overlays (SPEC §27.1 runs the reverse one only when asked).
    let s = scene(
        &secrets,
        "[protected.integrity]\nfail_to_pass = true\n",
        false,
        &files,
    );
    let (_, report) = s.check(&[]);
    assert_sealed(&report);
    let runs = report["integrity"]["checks"].as_array().unwrap();
    let on: Vec<&str> = runs.iter().filter_map(|r| r["on"].as_str()).collect();
    assert!(on.contains(&"overlay"), "{report:#}");
    assert!(on.contains(&"reverse-overlay"), "{report:#}");
    for run in runs {
        assert_eq!(run["exit_code"], 0, "a secret was readable: {report:#}");
    }
    let weakened = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["code"] == "tests-weakened");
    assert!(!weakened, "{report:#}");
}

#[test]
fn signal_done_hides_the_signing_key_and_hidden_files() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    sealed_with_stdin(
        &["signal", "--format", "json"],
        "finished x\n@signal done\n",
    );
}

#[test]
fn guard_hides_the_signing_key_and_hidden_files() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    sealed_with_stdin(
        &["guard", "--worktree", ".", "--format", "json"],
        "VERIFIED\n",
    );
}

/// Run `args` on a plain scene with `stdin` (the agent's message): the JSON report's checks ran
/// sealed ([`assert_sealed`]) and the command exited 0.
fn sealed_with_stdin(args: &[&str], stdin: &str) {
    let secrets = Secrets::new();
    let s = scene(&secrets, "", false, &[]);
    let (code, stdout, stderr) = run_with_stdin(s.command(args, &[]), stdin);
    let report: Value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    assert_sealed(&report);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

#[test]
fn board_check_hides_the_signing_key_and_hidden_files() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let secrets = Secrets::new();
    let s = scene(&secrets, "", false, &[]);
    let mut cmd = s.command(&["board", "--check", "--json"], &[]);
    cmd.current_dir(s.fx.root());
    let (code, stdout, stderr) = parts(&cmd.output().unwrap());
    assert_eq!(code, 0, "{stdout}{stderr}");
    let board: Value = serde_json::from_str(&stdout).unwrap();
    let rows = board["worktrees"].as_array().unwrap();
    let row = rows.iter().find(|r| r["slug"] == "x").unwrap();
    assert_eq!(row["verdict"], "VERIFIED", "{board:#}");
}

#[test]
fn teardown_hides_the_signing_key_and_hidden_files() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let secrets = Secrets::new();
    let s = scene(&secrets, "", false, &[]);
    let wt = s.wt.display().to_string();
    let mut cmd = s.command(&["teardown", &wt, "--json"], &[]);
    cmd.current_dir(s.fx.root());
    let (code, stdout, stderr) = parts(&cmd.output().unwrap());
    let shown: Value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    assert_sealed(&shown["report"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!s.wt.exists());
}

/// `land` checks the composed tree (new, as the base moved) with the session's shield.
#[test]
fn land_hides_the_signing_key_and_hidden_files() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let secrets = Secrets::new();
    let s = scene(&secrets, "", false, &[]);
    let (code, stdout, stderr) = parts(&s.command(&["check"], &[]).output().unwrap());
    assert_eq!(code, 0, "{stdout}{stderr}");
    s.fx.commit("main", &[("docs.md", Some("docs\n"))], "docs");
    s.fx.checkout(&s.fx.root());
    let mut cmd = s.command(&["land", "--json", "agent/x"], &[]);
    cmd.current_dir(s.fx.root());
    let (code, stdout, stderr) = parts(&cmd.output().unwrap());
    assert_eq!(code, 0, "{stdout}{stderr}");
    let landing: Value = serde_json::from_str(&stdout).unwrap();
    assert!(landing["checks_run"].as_u64().unwrap() >= 1, "{landing:#}");
}

#[test]
fn validate_run_hides_the_signing_key_and_hidden_files() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let secrets = Secrets::new();
    let s = scene(&secrets, "", false, &[]);
    let mut cmd = s.command(&["validate", "--run"], &[]);
    cmd.current_dir(s.fx.root());
    let (code, stdout, stderr) = parts(&cmd.output().unwrap());
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("check `peek` passed on main"), "{stdout}");
}

/// `init` tries the check it guessed (`make test`) in the sandbox; the project's Makefile peeks.
#[test]
fn init_try_hides_the_signing_key() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let secrets = Secrets::new();
    let fx = Fixture::new();
    let makefile = format!("test:\n\ttest ! -s '{}'\n", secrets.signing.key.display());
    fx.commit("main", &[("Makefile", Some(makefile.as_str()))], "make");
    fx.checkout(&fx.root());
    secrets.configure_git(&fx.root());
    let home = secrets.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
    cmd.arg("init").current_dir(fx.root());
    crate::fixture::hermetic(&mut cmd, &home);
    cmd.env_remove("CLOSEGATE_TEST_NO_SANDBOX")
        .stdin(Stdio::null());
    let (code, stdout, stderr) = parts(&cmd.output().unwrap());
    assert!(stdout.contains("try: `test` passed"), "{stdout}{stderr}");
    assert_eq!(code, 0, "{stdout}{stderr}");
}

/// The server gate with `server_checks = "run"` runs the checks in the server's repository,
/// hiding the server's signing key and hidden files.
#[test]
fn the_server_gate_hides_the_signing_key_and_hidden_files() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    use crate::server::{Server, Transport};
    let secrets = Secrets::new();
    let config = secrets.config("server_checks = \"run\"\n", false);
    let srv = Server::from_scene(crate::attest::Signed::with_config(&config), Transport::File);
    secrets.configure_git(&srv.bare);
    srv.merge("x");
    let (ok, stderr) = srv.push(&["main"]);
    assert!(ok, "{stderr}");
}
