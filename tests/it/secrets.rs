//! SPEC §4.6 "Nothing of the operator's reaches the agent's code", on real repositories through
//! the real binary: the agent's committed script looks for the operator's environment, shell,
//! descriptors, secret files and agent sockets, and writes what it found into the check's output,
//! which the tests read back from the report.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use git2::Oid;
use serde_json::Value;

use crate::fixture::{Fixture, git, hermetic, parts, report_codes};

/// A repository whose `main` configures `config`, and an agent worktree `wt/x` on `agent/x`
/// carrying `files` with an honest close-ok status document; a home directory of its own.
pub struct Scene {
    pub fx: Fixture,
    pub wt: PathBuf,
    pub home: tempfile::TempDir,
    pub tip: Oid,
}

impl Scene {
    pub fn new(config: &str, files: &[(&str, Option<&str>)]) -> Scene {
        let (fx, _) = Fixture::with_agent(Some(config));
        let tip = fx.commit("agent/x", files, "add the agent's scripts");
        let wt = fx.worktree("x", "agent/x");
        let home = tempfile::tempdir().unwrap();
        let scene = Scene { fx, wt, home, tip };
        scene.write_status();
        scene
    }

    /// An honest close-ok status document for the tip in `wt/x`.
    pub fn write_status(&self) {
        let sha = self.tip.to_string();
        let root = self.wt.canonicalize().unwrap().display().to_string();
        let text = format!(
            "# STATUS — x\n\n- state: close-ok\n- abstract: adds x, proven by the checks\n\
             - last commit: {} — add the agent's scripts\n- done: x exists, proven by the checks\n\
             - next / blocked-on: none\n- artifacts:\n  - src/lib.rs\n- updated: 2026-11-29\n\n\
             CLOSE-OK · x · commit {sha} · branch agent/x · worktree {root}\n",
            &sha[..12]
        );
        std::fs::write(self.wt.join("_EXEC_STATUS.md"), text).unwrap();
    }

    /// `closegate <args>` in `wt/x`, hermetic, the sandbox available, `extra` in its environment.
    pub fn command(&self, args: &[&str], extra: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
        cmd.args(args).current_dir(&self.wt);
        hermetic(&mut cmd, self.home.path());
        cmd.env_remove("CLOSEGATE_TEST_NO_SANDBOX")
            .envs(extra.iter().copied())
            .stdin(Stdio::null());
        cmd
    }

    /// `closegate check --format json --no-record`: the exit code and the report.
    pub fn check(&self, extra: &[(&str, &str)]) -> (i32, Value) {
        let args = ["check", "--format", "json", "--no-record"];
        let out = self.command(&args, extra).output().unwrap();
        json(&out)
    }
}

/// The exit code and JSON report of a run; panics with both streams when stdout is not JSON.
pub fn json(out: &std::process::Output) -> (i32, Value) {
    let (code, stdout, stderr) = parts(out);
    let report = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!("no JSON report (exit {code}): {e}\nstdout: {stdout}\nstderr: {stderr}")
    });
    (code, report)
}

/// The kept output of check `i`, one string per line.
pub fn output(report: &Value, i: usize) -> Vec<String> {
    report["checks"][i]["output"]
        .as_array()
        .unwrap_or_else(|| panic!("no output of check {i}: {report:#}"))
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
}

const ENV_SCRIPT: &str = "for v in GITHUB_TOKEN GIT_EDITOR SSH_AUTH_SOCK GPG_AGENT_INFO \
    DBUS_SESSION_BUS_ADDRESS CLOSEGATE_RECORD_KEY_FILE OPERATOR_NOTE LISTED_NAME CARGO_HOME LC_ALL; do \
    eval \"val=\\${$v-unset}\"; echo \"$v=$val\"; done; echo \"commit=${#CLOSEGATE_COMMIT}\"\n";

/// Attack: the agent's test prints the operator's environment (a token, git's and the agents'
/// variables, the record key's name). Only the allow-list and the names `env` lists get in, and
/// never the caller's `CLOSEGATE_RECORD_KEY_FILE`, listed or not.
#[test]
fn a_check_receives_only_the_allow_list_and_its_env_names() {
    let config = "[[checks]]\nname = \"env\"\nrun = \"sh env.sh\"\n\
                  env = [\"LISTED_NAME\", \"CLOSEGATE_RECORD_KEY_FILE\"]\n";
    let s = Scene::new(config, &[("env.sh", Some(ENV_SCRIPT))]);
    let key = s.fx.tmp.path().join("record.key");
    std::fs::write(&key, "SECRET-RECORD-KEY-0123456789abcd").unwrap();
    let key = key.display().to_string();
    let extra = [
        ("GITHUB_TOKEN", "ghp_operatorsecret123"),
        ("GIT_EDITOR", "vim"),
        ("SSH_AUTH_SOCK", "/nonexistent/agent.sock"),
        ("GPG_AGENT_INFO", "/nonexistent/S.gpg-agent"),
        ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus"),
        ("CLOSEGATE_RECORD_KEY_FILE", key.as_str()),
        ("OPERATOR_NOTE", "private"),
        ("LISTED_NAME", "passed"),
        ("CARGO_HOME", "/opt/cargo"),
    ];
    let (code, report) = s.check(&extra);
    assert_eq!(
        output(&report, 0),
        [
            "GITHUB_TOKEN=unset",
            "GIT_EDITOR=unset",
            "SSH_AUTH_SOCK=unset",
            "GPG_AGENT_INFO=unset",
            "DBUS_SESSION_BUS_ADDRESS=unset",
            "CLOSEGATE_RECORD_KEY_FILE=unset",
            "OPERATOR_NOTE=unset",
            "LISTED_NAME=passed",
            "CARGO_HOME=/opt/cargo",
            "LC_ALL=C",
            "commit=40",
        ]
    );
    assert_eq!(code, 0, "{report:#}");
}

/// Attack: the check prints a token closegate holds (the operator listed it in `env` because the
/// tests need it, or the check found it some other way); the report and the record keep `***`.
#[test]
fn secret_values_are_masked_in_the_report_and_the_record() {
    let config = "[[checks]]\nname = \"leak\"\n\
                  run = \"echo token=$API_TOKEN; echo pw=$DB_PASSWORD; echo short=$SHORT_SECRET; \
                  echo other=$PLAIN_VALUE; echo multi $API_TOKEN$API_TOKEN\"\n\
                  env = [\"API_TOKEN\", \"DB_PASSWORD\", \"SHORT_SECRET\", \"PLAIN_VALUE\"]\n";
    let s = Scene::new(config, &[]);
    let extra = [
        ("API_TOKEN", "tok-0123456789"),
        ("DB_PASSWORD", "hunter2hunter2"),
        ("SHORT_SECRET", "1234567"),
        ("PLAIN_VALUE", "not-a-secret-value"),
    ];
    let out = s
        .command(&["check", "--format", "json"], &extra)
        .output()
        .unwrap();
    let (code, report) = json(&out);
    assert_eq!(
        output(&report, 0),
        [
            "token=***",
            "pw=***",
            "short=1234567",
            "other=not-a-secret-value",
            "multi ******"
        ]
    );
    assert_eq!(code, 0, "{report:#}");
    let audit = std::fs::read_to_string(s.fx.git_dir().join("closegate/audit.jsonl")).unwrap();
    assert!(audit.contains("token=***"), "{audit}");
    assert!(
        !audit.contains("tok-0123456789") && !audit.contains("hunter2hunter2"),
        "{audit}"
    );
}

/// Attack: a relative `PATH` entry (`bin`) in the coordinator's environment would make the
/// trusted `sh -c` (and every `sh` inside the check) the agent's committed `bin/sh`.
#[test]
fn a_relative_path_entry_never_runs_the_agents_sh() {
    let config = "[[checks]]\nname = \"shell\"\nrun = \"echo trusted; sh -c 'echo inner'; echo \\\"PATH=$PATH\\\"\"\n";
    for sandbox in ["auto", "off"] {
        let config = format!("sandbox = \"{sandbox}\"\n{config}");
        let s = Scene::new(&config, &[]);
        std::fs::create_dir_all(s.wt.join("bin")).unwrap();
        let fake = "#!/bin/sh\necho AGENT-SH; exit 0\n";
        std::fs::write(s.wt.join("bin/sh"), fake).unwrap();
        let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(s.wt.join("bin/sh"), mode).unwrap();
        git(&s.wt, &["add", "bin/sh"]);
        git(&s.wt, &["commit", "-q", "-m", "add bin/sh"]);
        let tip = git(&s.wt, &["rev-parse", "HEAD"]);
        let s = Scene {
            tip: Oid::from_str(tip.trim()).unwrap(),
            ..s
        };
        s.write_status();
        let path = format!("bin::{}", std::env::var("PATH").unwrap());
        let (_, report) = s.check(&[("PATH", &path)]);
        let lines = output(&report, 0);
        assert_eq!(lines[..2], ["trusted", "inner"], "{sandbox}: {report:#}");
        let seen = lines[2].strip_prefix("PATH=").unwrap();
        assert!(
            seen.split(':').all(|e| e.starts_with('/')),
            "{sandbox}: {seen}"
        );
        assert!(!lines.iter().any(|l| l.contains("AGENT-SH")));
    }
}

/// Attack: a descriptor the coordinator left open (fd 7, a file it writes) is written from the
/// check. Only 0, 1 and 2 reach the check, sandboxed or not; stdin is `/dev/null`.
#[test]
fn an_inherited_descriptor_does_not_reach_the_check() {
    let config = "[[checks]]\nname = \"fds\"\n\
                  run = \"if (echo forged >&7) 2>/dev/null; then echo fd7: ESCAPED; else echo fd7: blocked; fi; \
                  ls /proc/self/fd | sort -n | tr '\\\\n' ' '; echo; test -c /dev/stdin && cat | wc -c\"\n";
    for sandbox in ["auto", "off"] {
        let config = format!("sandbox = \"{sandbox}\"\n{config}");
        let s = Scene::new(&config, &[]);
        let held = s.fx.tmp.path().join("held.log");
        std::fs::write(&held, "coordinator\n").unwrap();
        let mut cmd = s.command(&[], &[]);
        // The coordinator: a shell that opens fd 7 (not close-on-exec) and execs closegate.
        let mut shell = Command::new("/bin/sh");
        shell
            .arg("-c")
            .arg("exec 7>>\"$HELD\"; exec \"$@\"")
            .arg("sh")
            .arg(env!("CARGO_BIN_EXE_closegate"))
            .args(["check", "--format", "json", "--no-record"])
            .current_dir(&s.wt)
            .env("HELD", &held);
        for (k, v) in cmd.get_envs() {
            match v {
                Some(v) => shell.env(k, v),
                None => shell.env_remove(k),
            };
        }
        cmd = shell;
        let (_, report) = json(&cmd.stdin(Stdio::null()).output().unwrap());
        let lines = output(&report, 0);
        assert_eq!(lines[0], "fd7: blocked", "{sandbox}: {report:#}");
        // The listing's own descriptor (`ls` opens one for /proc/self/fd) is the only other.
        let fds: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(fds[..3], ["0", "1", "2"], "{sandbox}: {lines:?}");
        assert!(fds.len() <= 4, "{sandbox}: {lines:?}");
        assert_eq!(lines[2], "0", "stdin is empty: {lines:?}");
        assert_eq!(std::fs::read_to_string(&held).unwrap(), "coordinator\n");
    }
}

/// Attack 4 of issue 24: with `jobs = 1` the first check (the agent's build) rewrites a file the
/// second (trusted) check compares against, and leaves a file in the shared `TMPDIR`. Each check
/// gets its own pristine checkout and its own `TMPDIR`.
#[test]
fn each_check_gets_its_own_checkout_and_tmpdir() {
    let config = "jobs = 1\n[[checks]]\nname = \"build\"\nrun = \"sh build.sh\"\n\n\
                  [[checks]]\nname = \"golden\"\n\
                  run = \"cat expected.txt; ls \\\"$TMPDIR\\\" | wc -l; if test -e planted; then echo planted; fi\"\n";
    let build = "echo gutted > expected.txt; touch planted; touch \"$TMPDIR/left\"; echo built\n";
    let files = [("expected.txt", Some("42\n")), ("build.sh", Some(build))];
    let s = Scene::new(config, &files);
    let (code, report) = s.check(&[]);
    assert_eq!(output(&report, 0), ["built"]);
    assert_eq!(output(&report, 1), ["42", "0"], "{report:#}");
    assert_eq!(code, 0, "{report:#}");
}

/// Files a test home holds, each with a recognisable secret line.
const HOME_SECRETS: [&str; 16] = [
    ".ssh/id_ed25519",
    ".gnupg/private-keys-v1.d/key.key",
    ".aws/credentials",
    ".azure/accessTokens.json",
    ".config/gcloud/credentials.db",
    ".config/gh/hosts.yml",
    ".docker/config.json",
    ".kube/config",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/vault/token",
];

/// Write every [`HOME_SECRETS`] file under `home` with the line `SECRET <path>`.
pub fn plant_home_secrets(home: &Path) {
    for rel in HOME_SECRETS {
        let path = home.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("SECRET {rel}\n")).unwrap();
    }
}

/// Attack: the agent's test reads the operator's credentials in `$HOME`, also through a
/// `writable` path that opens the whole home. None is readable but `~/.config/vault/token`,
/// which no built-in rule covers (the next test hides it); the control under `sandbox = "off"`
/// reads them all.
#[test]
fn secrets_in_home_are_not_readable_from_a_check() {
    let list = HOME_SECRETS.join(" ");
    let run = format!(
        "for f in {list}; do cat \\\"$HOME/$f\\\" 2>/dev/null; done; \
         echo done"
    );
    let base = format!("[[checks]]\nname = \"read\"\nrun = \"{run}\"\n");
    let opened = format!("{base}writable = [\"~\"]\n");
    for config in [&base, &opened] {
        let s = Scene::new(config, &[]);
        plant_home_secrets(s.home.path());
        let (code, report) = s.check(&[]);
        let lines = output(&report, 0);
        assert_eq!(report["sandbox"], "bwrap");
        let vault = "SECRET .config/vault/token";
        assert_eq!(lines, [vault, "done"], "{config}: {report:#}");
        assert_eq!(code, 0, "{report:#}");
    }
    let off = format!("sandbox = \"off\"\n{base}");
    let s = Scene::new(&off, &[]);
    plant_home_secrets(s.home.path());
    let (_, report) = s.check(&[]);
    assert_eq!(report["sandbox"], "off");
    assert_eq!(
        output(&report, 0).len(),
        HOME_SECRETS.len() + 1,
        "{report:#}"
    );
}

/// When no sandbox can be set up, `checks-unsandboxed` names what stays visible to the checks.
#[test]
fn unsandboxed_names_what_stays_visible() {
    let config = "[[checks]]\nname = \"t\"\nrun = \"true\"\n";
    for (mode, severity) in [("auto", "warning"), ("required", "gap")] {
        let s = Scene::new(&format!("sandbox = \"{mode}\"\n{config}"), &[]);
        plant_home_secrets(s.home.path());
        let (_, report) = s.check(&[("CLOSEGATE_TEST_NO_SANDBOX", "1")]);
        assert_eq!(report_codes(&report), ["checks-unsandboxed"], "{report:#}");
        let finding = &report["findings"][0];
        assert_eq!(finding["severity"], severity);
        let message = finding["message"].as_str().unwrap();
        let ssh = s.home.path().canonicalize().unwrap().join(".ssh");
        assert!(message.contains("visible to them"), "{message}");
        assert!(message.contains(&ssh.display().to_string()), "{message}");
    }
}

/// A careless operator hands a check the ssh-agent (or another agent socket) through `env`:
/// `validate` warns, naming the check and the variable, and still exits 0 (the operator may
/// mean it); a configuration without one gets no warning.
#[test]
fn validate_warns_when_env_lists_an_agent_socket() {
    let config = "[[checks]]\nname = \"deploy\"\nrun = \"true\"\n\
                  env = [\"DATABASE_URL\", \"SSH_AUTH_SOCK\", \"DBUS_SESSION_BUS_ADDRESS\"]\n\n\
                  [[checks]]\nname = \"plain\"\nrun = \"true\"\nenv = [\"DATABASE_URL\"]\n";
    let s = Scene::new(config, &[]);
    let (code, stdout, stderr) = parts(&s.command(&["validate"], &[]).output().unwrap());
    assert_eq!(code, 0, "{stdout}{stderr}");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect();
    assert_eq!(warnings.len(), 2, "{stderr}");
    assert!(warnings[0].contains("`SSH_AUTH_SOCK`") && warnings[0].contains("`deploy`"));
    assert!(warnings[1].contains("`DBUS_SESSION_BUS_ADDRESS`"));
    assert!(stderr.contains("main:.closegate.toml"), "{stderr}");

    let quiet = Scene::new(
        "[[checks]]\nname = \"t\"\nrun = \"true\"\nenv = [\"X\"]\n",
        &[],
    );
    let (code, _, stderr) = parts(&quiet.command(&["validate"], &[]).output().unwrap());
    assert_eq!((code, stderr.as_str()), (0, ""));
}

/// `sandbox` is a word or a `[sandbox]` table (`mode`, `hide`); `env` holds variable names.
/// Every bad shape is an error naming the key.
#[test]
fn sandbox_table_and_env_names_parse_or_name_the_bad_key() {
    use closegate::config::{Config, SandboxMode};
    let c = Config::parse(
        "[sandbox]\nmode = \"required\"\nhide = [\"~/.vault\", \"/etc/app/secret\"]\n",
        "t",
    )
    .unwrap();
    assert_eq!(c.sandbox, SandboxMode::Required);
    assert_eq!(c.sandbox_hide, ["~/.vault", "/etc/app/secret"]);
    let c = Config::parse("sandbox = \"off\"\n", "t").unwrap();
    assert_eq!((c.sandbox, c.sandbox_hide.len()), (SandboxMode::Off, 0));
    let c = Config::parse(
        "[[checks]]\nname = \"t\"\nrun = \"true\"\nenv = [\"A\", \"lower_b\"]\n",
        "t",
    )
    .unwrap();
    assert_eq!(c.checks[0].env, ["A", "lower_b"]);
    for (text, says) in [
        ("[sandbox]\nnetwork = 1\n", "unknown key `sandbox.network`"),
        ("[sandbox]\nmode = \"strict\"\n", "`sandbox.mode` must be"),
        ("[sandbox]\nhide = [\"relative/x\"]\n", "`sandbox.hide`"),
        ("sandbox = 3\n", "`sandbox`"),
        (
            "[[checks]]\nname = \"t\"\nrun = \"true\"\nenv = [\"A=B\"]\n",
            "`checks[0].env`",
        ),
        (
            "[[checks]]\nname = \"t\"\nrun = \"true\"\nenv = [\"\"]\n",
            "`checks[0].env`",
        ),
        (
            "[[checks]]\nname = \"t\"\nrun = \"true\"\nenv = \"A\"\n",
            "checks[0].env",
        ),
    ] {
        let err = format!("{:#}", Config::parse(text, "t").unwrap_err());
        assert!(err.contains(says), "{text}: {err}");
    }
}

/// A secret the operator keeps elsewhere is hidden by naming it in `[sandbox] hide`, a folder
/// (`~/…`) or a file (absolute), also under a `writable` path.
#[test]
fn a_path_in_sandbox_hide_is_not_readable() {
    let outside = tempfile::tempdir().unwrap();
    let file = outside.path().join("app.secret");
    std::fs::write(&file, "SECRET app\n").unwrap();
    let config = format!(
        "[sandbox]\nhide = [\"~/.config/vault\", \"{}\"]\n\n[[checks]]\nname = \"read\"\n\
         run = \"cat $HOME/.config/vault/token {} 2>/dev/null; echo done\"\nwritable = [\"~\"]\n",
        file.display(),
        file.display()
    );
    let s = Scene::new(&config, &[]);
    plant_home_secrets(s.home.path());
    let (code, report) = s.check(&[]);
    assert_eq!(output(&report, 0), ["done"], "{report:#}");
    assert_eq!(code, 0, "{report:#}");
}
