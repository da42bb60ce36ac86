//! SPEC §4.6: the key in use, `~/.ssh` and the ssh-agent stay out of the checks of **every**
//! command that runs checks: `check --attest`, `approve --sign`, `teardown`, `guard`, `signal`,
//! `board --check`, the stop hook `agent stop-hook` and the server gate (over `file://`). A real
//! `ssh-agent` holds a generated key; the agent's committed `probe.sh` tries each key file and
//! the agent socket and writes what it could reach into its output, which the test reads back
//! from the record (the server's for the server gate).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::fixture::{git, parts};
use crate::secrets::{Scene, SecretsScene, scene};

/// 32 bytes, as SPEC §6 requires of a record key, holding the word the probe looks for.
const RECORD_KEY: &str = "PRIVATE-RECORD-KEY-0123456789abc";

/// Each file of `$PROBE_FILES` that holds `PRIVATE` (every OpenSSH private key does), the
/// variable `SSH_AUTH_SOCK`, and the agent behind `$PROBE_SOCK` (`ssh-add -l` exits 2 only when
/// it cannot reach an agent): one `probe <name>: blocked|ESCAPED` line each. The paths are
/// written into the committed script, as an agent that guessed them would.
const PROBE: &str = r#"n=0
for f in $PROBE_FILES; do n=$((n+1)); if grep -q PRIVATE "$f" 2>/dev/null; then echo "probe file$n: ESCAPED"; else echo "probe file$n: blocked"; fi; done
if [ -n "$SSH_AUTH_SOCK" ]; then echo "probe env-sock: ESCAPED"; else echo "probe env-sock: blocked"; fi
SSH_AUTH_SOCK="$PROBE_SOCK" ssh-add -l >/dev/null 2>&1
if [ $? -ne 2 ]; then echo "probe agent: ESCAPED"; else echo "probe agent: blocked"; fi
"#;

const CONFIG: &str =
    "server_checks = \"run\"\n[[checks]]\nname = \"probe\"\nrun = \"sh probe.sh\"\n";

/// A running `ssh-agent` holding one generated key; killed on drop.
struct Agent {
    child: Child,
    sock: PathBuf,
    _dir: tempfile::TempDir,
}

impl Agent {
    /// Start an agent on a socket in a fresh directory and `ssh-add` `key`.
    fn start(key: &Path) -> Agent {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("agent.sock");
        Agent::start_at(key, sock, dir)
    }

    /// Start an agent listening on `sock` and `ssh-add` `key`; `dir` is removed on drop.
    fn start_at(key: &Path, sock: PathBuf, dir: tempfile::TempDir) -> Agent {
        let child = Command::new("ssh-agent")
            .arg("-D")
            .arg("-a")
            .arg(&sock)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("ssh-agent (openssh-client) is installed");
        let agent = Agent {
            child,
            sock,
            _dir: dir,
        };
        // The socket appears before the agent listens on it: retry until it takes the key.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let out = Command::new("ssh-add")
                .arg(key)
                .env("SSH_AUTH_SOCK", &agent.sock)
                .output()
                .unwrap();
            if out.status.success() {
                return agent;
            }
            assert!(
                std::time::Instant::now() < until,
                "ssh-add: {:?}",
                parts(&out)
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Generate an ed25519 key without passphrase at `path`.
fn keygen(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "probe", "-f"])
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success(), "ssh-keygen: {:?}", parts(&out));
}

/// A scene for one command: the probe committed on `agent/x`, `~/.ssh/id_ed25519` (held by the
/// agent), git's `user.signingKey` and a record key outside the repository, and, for a command
/// that signs with `--key`, that key (`keys/in-use`, probed as `file4`).
struct Walk {
    s: Scene,
    agent: Agent,
    record_key: PathBuf,
    in_use: PathBuf,
    /// The committed probe, its targets written in.
    probe: String,
    _keys: tempfile::TempDir,
}

impl Walk {
    fn new(config: &str, with_key: bool) -> Walk {
        let keys = tempfile::tempdir().unwrap();
        let (signing, in_use) = (keys.path().join("signing"), keys.path().join("in-use"));
        let held = keys.path().join("held");
        for key in [&signing, &in_use, &held] {
            keygen(key);
        }
        let record_key = keys.path().join("record.key");
        std::fs::write(&record_key, RECORD_KEY).unwrap();
        let agent = Agent::start(&held);
        let mut files = vec![
            record_key.display().to_string(),
            "$HOME/.ssh/id_ed25519".to_string(),
            signing.display().to_string(),
        ];
        if with_key {
            files.push(in_use.display().to_string());
        }
        let probe = format!(
            "PROBE_FILES=\"{}\"\nPROBE_SOCK='{}'\n{PROBE}",
            files.join(" "),
            agent.sock.display()
        );
        let s = scene(config, &[("probe.sh", Some(&probe))]);
        let home = s.home.path();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::copy(&held, home.join(".ssh/id_ed25519")).unwrap();
        let gitconfig = format!(
            "[gpg]\n\tformat = ssh\n[user]\n\tsigningKey = {}\n\tname = Op\n\temail = op@example.com\n",
            signing.display()
        );
        std::fs::write(home.join(".gitconfig"), gitconfig).unwrap();
        Walk {
            s,
            agent,
            record_key,
            in_use,
            probe,
            _keys: keys,
        }
    }

    /// The environment every command gets: the agent's socket and the record key.
    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("SSH_AUTH_SOCK", self.agent.sock.display().to_string()),
            (
                "CLOSEGATE_RECORD_KEY_FILE",
                self.record_key.display().to_string(),
            ),
        ]
    }

    /// `closegate <args>` in `dir` with [`Walk::env`] and `stdin`: exit code, stdout, stderr.
    fn run(&self, dir: &Path, args: &[&str], stdin: &str) -> (i32, String, String) {
        let env = self.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let mut cmd = self.s.command(args, &env);
        cmd.current_dir(dir);
        parts(&crate::fixture::output_with_stdin(cmd, stdin.as_bytes()))
    }

    fn audit(&self, common: &Path) -> String {
        std::fs::read_to_string(common.join("closegate/audit.jsonl")).unwrap_or_default()
    }
}

/// Every `probe <name>: <result>` in `text` (JSON-escaped or not), as `name: result`.
fn probes(text: &str) -> std::collections::BTreeSet<String> {
    let mut found = std::collections::BTreeSet::new();
    for piece in text.split("probe ").skip(1) {
        let end = piece
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == ':' || c == ' '))
            .unwrap_or(piece.len());
        let line = piece[..end].trim();
        if line.ends_with(": blocked") || line.ends_with(": ESCAPED") {
            found.insert(line.to_string());
        }
    }
    found
}

/// What the probe must report from a shut sandbox: nothing reached.
fn all_blocked(with_key: bool) -> std::collections::BTreeSet<String> {
    let files = if with_key { 4 } else { 3 };
    let names = (1..=files).map(|n| format!("file{n}"));
    names
        .chain(["env-sock".to_string(), "agent".to_string()])
        .map(|n| format!("{n}: blocked"))
        .collect()
}

/// A command that runs checks, run in its walk scene: what the probe wrote, wherever it went.
type Walker = fn(&Walk) -> String;

/// Every command that runs checks, each in a fresh scene (`true`: it signs with
/// `keys/in-use`, which is then probed too): its checks ran and reached no key, no `~/.ssh`
/// and no ssh-agent.
#[test]
fn every_command_that_runs_checks_keeps_the_keys_and_the_agent_from_them() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let walks: [(&str, bool, Walker); 8] = [
        ("check --attest", true, check_attest),
        ("approve --sign", true, approve_sign),
        ("teardown", false, teardown),
        ("guard", false, guard),
        ("signal", false, signal),
        ("board --check", false, board_check),
        ("agent stop-hook", false, the_stop_hook),
        ("server gate", false, the_server_gate),
    ];
    for (name, with_key, command) in walks {
        let w = Walk::new(CONFIG, with_key);
        let seen = command(&w);
        assert_eq!(probes(&seen), all_blocked(with_key), "{name}: {seen}");
    }
}

/// `check --attest`: what the probe wrote, from the output and the record.
fn check_attest(w: &Walk) -> String {
    let key = w.in_use.display().to_string();
    let args = ["check", "--format", "json", "--attest", "--key", &key];
    let (code, out, err) = w.run(&w.s.wt, &args, "");
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("attested"), "{err}");
    out + &w.audit(&w.s.fx.git_dir())
}

/// `approve --sign`: what the probe wrote, from the output and the record.
fn approve_sign(w: &Walk) -> String {
    let key = w.in_use.display().to_string();
    let args = ["approve", "--yes", "--by", "Op", "--sign", "--key", &key];
    let (_, out, err) = w.run(&w.s.wt, &args, "");
    format!("{out}{err}") + &w.audit(&w.s.fx.git_dir())
}

/// `teardown`: what the probe wrote, from the output and the record.
fn teardown(w: &Walk) -> String {
    let wt = w.s.wt.display().to_string();
    let (_, out, err) = w.run(&w.s.fx.root(), &["teardown", &wt], "");
    let audit = w.audit(&w.s.fx.git_dir());
    assert!(
        audit.contains("\"event\":\"teardown\""),
        "{out}{err}{audit}"
    );
    audit
}

/// `guard`: what the probe wrote, from the output and the record.
fn guard(w: &Walk) -> String {
    let wt = w.s.wt.display().to_string();
    let report = "VERIFIED: x added, checks passed\n";
    let (_, out, err) = w.run(&w.s.wt, &["guard", "--worktree", &wt], report);
    format!("{out}{err}") + &w.audit(&w.s.fx.git_dir())
}

/// `signal`: what the probe wrote, from the output and the record.
fn signal(w: &Walk) -> String {
    let (_, out, err) = w.run(&w.s.wt, &["signal"], "x added\n\n@signal done\n");
    format!("{out}{err}") + &w.audit(&w.s.fx.git_dir())
}

/// `board --check`: what the probe wrote, from the output and the record.
fn board_check(w: &Walk) -> String {
    let (code, out, err) = w.run(&w.s.fx.root(), &["board", "--check", "--json"], "");
    assert_eq!(code, 0, "{out}{err}");
    out + &w.audit(&w.s.fx.git_dir())
}

/// `agent stop-hook`: what the probe wrote, from the output and the record.
fn the_stop_hook(w: &Walk) -> String {
    let input = serde_json::json!({
        "session_id": "abc123",
        "transcript_path": "/nonexistent.jsonl",
        "cwd": w.s.wt,
        "permission_mode": "default",
        "hook_event_name": "Stop",
        "stop_hook_active": false,
        "last_assistant_message": "VERIFIED: x added, closegate check passed\n\n@signal done\n",
    });
    let (code, out, err) = w.run(&w.s.wt, &["agent", "stop-hook"], &input.to_string());
    assert_eq!(code, 0, "{out}{err}");
    format!("{out}{err}") + &w.audit(&w.s.fx.git_dir())
}

/// `server gate`: what the probe wrote, from the output and the record.
fn the_server_gate(w: &Walk) -> String {
    let tmp = w.s.fx.tmp.path();
    git(tmp, &["clone", "-q", "--bare", "repo", "server.git"]);
    // A new agent branch, its status document committed (CI and servers read it there).
    let (_, tip) = crate::attest::agent_branch_with(&w.s.fx, "y", &[("probe.sh", Some(&w.probe))]);
    let _ = tip;
    let bare = tmp.join("server.git");
    let (code, out, err) = w.run(&bare, &["hook", "install", "--server"], "");
    assert_eq!(code, 0, "{out}{err}");
    let url = format!("file://{}", bare.display());
    // The push runs the server's hook with the pusher's environment (file://): the agent's
    // socket and the record key are in it, as on a server whose operator pushes.
    let mut push = Command::new("git");
    push.args(["push", &url, "agent/y"])
        .current_dir(w.s.fx.root());
    crate::fixture::hermetic(&mut push, w.s.home.path());
    for (k, v) in w.env() {
        push.env(k, v);
    }
    push.env_remove("CLOSEGATE_TEST_NO_SANDBOX");
    let (_, out, err) = parts(&push.output().unwrap());
    let audit = w.audit(&bare);
    assert!(audit.contains("\"event\":\"check\""), "{out}{err}{audit}");
    audit
}

/// The control: with `sandbox = "off"` the same probe reads every key and reaches the agent
/// through the socket's path (the variable itself is still not handed over), so the probe, not
/// a broken script, is what the tests above see blocked.
#[test]
fn without_the_sandbox_the_probe_reaches_the_keys_and_the_agent() {
    let w = Walk::new(&format!("sandbox = \"off\"\n{CONFIG}"), true);
    let (_, out, err) = w.run(&w.s.wt, &["check", "--format", "json", "--no-record"], "");
    let want: std::collections::BTreeSet<String> = [
        "file1: ESCAPED",
        "file2: ESCAPED",
        "file3: ESCAPED",
        "file4: ESCAPED",
        "env-sock: blocked",
        "agent: ESCAPED",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(probes(&out), want, "{out}{err}");
}

/// An agent socket directly in a directory the checks need (here the home directory, which
/// also holds the checks' `writable` caches) is covered alone, not with its directory: the
/// check still cannot reach the agent, and the rest of the home stays readable.
#[test]
fn an_agent_socket_in_a_shared_directory_is_covered_alone() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let keys = tempfile::tempdir().unwrap();
    let held = keys.path().join("held");
    keygen(&held);
    let probe = "SSH_AUTH_SOCK=\"$HOME/agent.sock\" ssh-add -l >/dev/null 2>&1\n\
                 if [ $? -ne 2 ]; then echo \"probe agent: ESCAPED\"; else echo \"probe agent: blocked\"; fi\n\
                 cat \"$HOME/notes.txt\"\n";
    let config = "[[checks]]\nname = \"probe\"\nrun = \"sh probe.sh\"\n";
    let s = scene(config, &[("probe.sh", Some(probe))]);
    std::fs::write(s.home.path().join("notes.txt"), "readable\n").unwrap();
    let sock = s.home.path().join("agent.sock");
    let agent = Agent::start_at(&held, sock.clone(), tempfile::tempdir().unwrap());
    let sock = sock.display().to_string();
    let (code, report) = s.check(&[("SSH_AUTH_SOCK", &sock)]);
    assert_eq!(
        crate::secrets::output(&report, 0),
        ["probe agent: blocked", "readable"],
        "{report:#}"
    );
    assert_eq!(code, 0, "{report:#}");
    drop(agent);
}

/// Attack: a hard link to the signing key elsewhere is a name no cover reaches. As for the
/// record key, no check runs: `checks-unsandboxed` is a gap naming the file, and nothing is
/// signed.
#[test]
fn a_signing_key_with_another_name_lets_no_check_run() {
    let w = Walk::new(CONFIG, true);
    let other = w.in_use.with_file_name("in-use.other");
    std::fs::hard_link(&w.in_use, &other).unwrap();
    let key = w.in_use.display().to_string();
    let args = ["check", "--format", "json", "--attest", "--key", &key];
    let (code, out, err) = w.run(&w.s.wt, &args, "");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        crate::fixture::report_codes(&report),
        ["checks-unsandboxed"],
        "{out}{err}"
    );
    assert_eq!(report["findings"][0]["severity"], "gap");
    let message = report["findings"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("hard links") && message.contains("in-use"),
        "{message}"
    );
    assert_eq!(report["checks"], serde_json::json!([]));
    assert_eq!(code, 4, "{out}{err}");
    assert!(!err.contains("closegate: attested"), "{err}");
}

/// A careless operator's agent socket sits in the directory that also holds the repository: the
/// directory is not covered whole (the checkout borrows the repository's objects from there), so
/// `git` in the check still reads the commit, and the socket alone is covered.
#[test]
fn an_agent_socket_beside_the_repository_is_covered_alone() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let keys = tempfile::tempdir().unwrap();
    let held = keys.path().join("held");
    keygen(&held);
    let config = "[[checks]]\nname = \"p\"\nrun = \"sh probe.sh\"\n";
    let s = scene(config, &[]);
    let sock = s.fx.tmp.path().join("agent.sock");
    let agent = Agent::start_at(&held, sock.clone(), tempfile::tempdir().unwrap());
    // The probe names the socket's absolute path, committed with the work.
    let probe = format!(
        "SSH_AUTH_SOCK='{}' ssh-add -l >/dev/null 2>&1\n\
         if [ $? -ne 2 ]; then echo \"probe agent: ESCAPED\"; else echo \"probe agent: blocked\"; fi\n\
         git log -1 --format=%s\n",
        sock.display()
    );
    let subject = "add the agent's scripts";
    let tip =
        s.fx.commit("agent/x", &[("probe.sh", Some(&probe))], subject);
    crate::fixture::git(&s.wt, &["reset", "-q", "--hard", &tip.to_string()]);
    let mut s = s;
    s.tip = tip;
    s.write_status();
    let sock = sock.display().to_string();
    let (code, report) = s.check(&[("SSH_AUTH_SOCK", &sock)]);
    let lines = crate::secrets::output(&report, 0);
    assert_eq!(lines, ["probe agent: blocked", subject], "{report:#}");
    assert_eq!(code, 0, "{report:#}");
    drop(agent);
}
