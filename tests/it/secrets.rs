//! SPEC §4.6 "Nothing of the operator's reaches the agent's code", on real repositories through
//! the real binary: the agent's committed script looks for the operator's environment, shell,
//! descriptors, secret files and agent sockets, and writes what it found into the check's output,
//! which the tests read back from the report.

use std::path::Path;
use std::process::{Command, Stdio};

use git2::Oid;
use serde_json::Value;

use crate::fixture::{git, parts, report_codes};
use crate::scene::StatusDoc;

pub use crate::scene::Scene;

/// A repository whose `main` configures `config`, and an agent worktree `wt/x` on `agent/x`
/// carrying `files` with an honest close-ok status document; a home directory of its own, and
/// the sandbox available.
pub fn scene(config: &str, files: &[(&str, Option<&str>)]) -> Scene {
    let s = Scene::with_agent(Some(config))
        .on_agent(files, "add the agent's scripts")
        .worktree()
        .own_home()
        .sandboxed();
    s.write_status();
    s
}

/// The secrets tests' verbs on a scene.
pub trait SecretsScene {
    fn write_status(&self);
    fn command(&self, args: &[&str], extra: &[(&str, &str)]) -> Command;
    fn check(&self, extra: &[(&str, &str)]) -> (i32, Value);
}

impl SecretsScene for Scene {
    /// An honest close-ok status document for the tip in `wt/x`.
    fn write_status(&self) {
        let sha = self.tip.to_string();
        StatusDoc::complete("x", "close-ok")
            .abstract_text("adds x, proven by the checks")
            .last_commit(&sha[..12], "add the agent's scripts")
            .done("x exists, proven by the checks")
            .close(&sha, "agent/x", &self.wt_str())
            .write(&self.wt);
    }

    /// `closegate <args>` in `wt/x`, hermetic, the sandbox available, `extra` in its environment.
    fn command(&self, args: &[&str], extra: &[(&str, &str)]) -> Command {
        let mut cmd = self.bin(&self.wt, args);
        cmd.envs(extra.iter().copied());
        cmd
    }

    /// `closegate check --format json --no-record`: the exit code and the report.
    fn check(&self, extra: &[(&str, &str)]) -> (i32, Value) {
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
    let s = scene(config, &[("env.sh", Some(ENV_SCRIPT))]);
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
    let s = scene(config, &[]);
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
        let s = scene(&config, &[]);
        std::fs::create_dir_all(s.wt.join("bin")).unwrap();
        let fake = "#!/bin/sh\necho AGENT-SH; exit 0\n";
        std::fs::write(s.wt.join("bin/sh"), fake).unwrap();
        let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(s.wt.join("bin/sh"), mode).unwrap();
        git(&s.wt, &["add", "bin/sh"]);
        git(&s.wt, &["commit", "-q", "-m", "add bin/sh"]);
        let tip = git(&s.wt, &["rev-parse", "HEAD"]);
        let mut s = s;
        s.tip = Oid::from_str(tip.trim()).unwrap();
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
        let s = scene(&config, &[]);
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
    let s = scene(config, &files);
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
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let list = HOME_SECRETS.join(" ");
    let run = format!(
        "for f in {list}; do cat \\\"$HOME/$f\\\" 2>/dev/null; done; \
         echo done"
    );
    let base = format!("[[checks]]\nname = \"read\"\nrun = \"{run}\"\n");
    let opened = format!("{base}writable = [\"~\"]\n");
    for config in [&base, &opened] {
        let s = scene(config, &[]);
        plant_home_secrets(s.home.path());
        let (code, report) = s.check(&[]);
        let lines = output(&report, 0);
        assert_eq!(report["sandbox"], "bwrap");
        let vault = "SECRET .config/vault/token";
        assert_eq!(lines, [vault, "done"], "{config}: {report:#}");
        assert_eq!(code, 0, "{report:#}");
    }
    let off = format!("sandbox = \"off\"\n{base}");
    let s = scene(&off, &[]);
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
        let s = scene(&format!("sandbox = \"{mode}\"\n{config}"), &[]);
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
    let s = scene(config, &[]);
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

    let quiet = scene(
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
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let outside = tempfile::tempdir_in(crate::fixture::readable_by_checks()).unwrap();
    let file = outside.path().join("app.secret");
    std::fs::write(&file, "SECRET app\n").unwrap();
    let config = format!(
        "[sandbox]\nhide = [\"~/.config/vault\", \"{}\"]\n\n[[checks]]\nname = \"read\"\n\
         run = \"cat $HOME/.config/vault/token {} 2>/dev/null; echo done\"\nwritable = [\"~\"]\n",
        file.display(),
        file.display()
    );
    let s = scene(&config, &[]);
    plant_home_secrets(s.home.path());
    let (code, report) = s.check(&[]);
    assert_eq!(output(&report, 0), ["done"], "{report:#}");
    assert_eq!(code, 0, "{report:#}");
}

/// Attack: the operator keeps a credential where a variable points (`GNUPGHOME`,
/// `DOCKER_CONFIG`, `KUBECONFIG`), outside `$HOME`. The check does not receive the variable, but
/// the agent's code can guess the path: it is covered like the default place.
#[test]
fn credentials_moved_by_a_variable_are_covered_too() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let outside = tempfile::tempdir_in(crate::fixture::readable_by_checks()).unwrap();
    let gnupg = outside.path().join("gnupg");
    let docker = outside.path().join("docker");
    std::fs::create_dir_all(&gnupg).unwrap();
    std::fs::create_dir_all(&docker).unwrap();
    std::fs::write(gnupg.join("secring"), "SECRET gpg\n").unwrap();
    std::fs::write(docker.join("config.json"), "SECRET docker\n").unwrap();
    let (kube_a, kube_b) = (outside.path().join("kube-a"), outside.path().join("kube-b"));
    std::fs::write(&kube_a, "SECRET kube a\n").unwrap();
    std::fs::write(&kube_b, "SECRET kube b\n").unwrap();
    let run = format!(
        "cat {} {} {} {} 2>/dev/null; echo \\\"GNUPGHOME=${{GNUPGHOME-unset}}\\\"",
        gnupg.join("secring").display(),
        docker.join("config.json").display(),
        kube_a.display(),
        kube_b.display()
    );
    let config = format!("[[checks]]\nname = \"read\"\nrun = \"{run}\"\n");
    let s = scene(&config, &[]);
    let kube = format!("{}:{}", kube_a.display(), kube_b.display());
    let extra = [
        ("GNUPGHOME", gnupg.to_str().unwrap()),
        ("DOCKER_CONFIG", docker.to_str().unwrap()),
        ("KUBECONFIG", kube.as_str()),
    ];
    let (code, report) = s.check(&extra);
    assert_eq!(output(&report, 0), ["GNUPGHOME=unset"], "{report:#}");
    assert_eq!(code, 0, "{report:#}");
}

/// Attack: the agent's code connects to a container daemon's socket (docker, podman, …) and
/// starts a container with the host's `/` mounted: root on the host, network or not. The
/// well-known places are covered, and so is the socket `DOCKER_HOST` or `CONTAINER_HOST` names
/// (the check does not receive the variable, but the agent's code may guess the path).
#[test]
fn container_daemon_sockets_are_not_reachable_from_a_check() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let outside = tempfile::tempdir_in(crate::fixture::readable_by_checks()).unwrap();
    let docker = outside.path().join("docker.sock");
    let podman = outside.path().join("podman.sock");
    let _docker = std::os::unix::net::UnixListener::bind(&docker).unwrap();
    let _podman = std::os::unix::net::UnixListener::bind(&podman).unwrap();
    // Every well-known socket this machine has must be covered as well.
    let known = [
        "/run/docker.sock",
        "/var/run/docker.sock",
        "/run/containerd/containerd.sock",
        "/run/podman/podman.sock",
    ];
    let mut probes: Vec<String> = vec![docker.display().to_string(), podman.display().to_string()];
    probes.extend(
        known
            .iter()
            .filter(|p| Path::new(p).exists())
            .map(|p| p.to_string()),
    );
    let run: String = probes
        .iter()
        .map(|p| format!("if [ -S {p} ]; then echo reachable {p}; fi; "))
        .collect::<String>()
        + "echo done";
    let config = format!("[[checks]]\nname = \"reach\"\nrun = \"{run}\"\n");
    let s = scene(&config, &[]);
    let docker_host = format!("unix://{}", docker.display());
    let extra = [
        ("DOCKER_HOST", docker_host.as_str()),
        ("CONTAINER_HOST", podman.to_str().unwrap()),
    ];
    let (code, report) = s.check(&extra);
    assert_eq!(report["sandbox"], "bwrap", "{report:#}");
    assert_eq!(output(&report, 0), ["done"], "{report:#}");
    assert_eq!(code, 0, "{report:#}");
}
