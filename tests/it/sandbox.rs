//! The checks' sandbox (SPEC §4.6, §16) on real repositories: a script the agent committed tries
//! every door the gate must keep shut, through the real binary, and the repository, the record,
//! the other worktree, the home directory and the key are byte-identical afterwards.

use std::collections::BTreeMap;
use std::io::Read;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::fixture::{hermetic, parts, report_codes};
use crate::scene::{Scene, json_report};

/// A record key of the 32 bytes SPEC §6 requires, recognisable by its first word.
const KEY: &str = "SECRET-RECORD-KEY-0123456789abcd";

/// The agent's script: each attempt prints `<name>: blocked` or `<name>: ESCAPED`, then the
/// check's own work in its checkout and temporary directory prints `own: ok`.
const ATTACK: &str = r#"try() { name=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "$name: ESCAPED"; else echo "$name: blocked"; fi; }
alt=$(cat .git/objects/info/alternates)
head=$(git rev-parse HEAD)
try audit sh -c 'echo "{\"forged\":true}" >> "$1/closegate/audit.jsonl"' _ "$ATTACK_COMMON"
try ref-via-alternates git --git-dir="$(dirname "$alt")" update-ref refs/heads/main "$head"
try ref-absolute git -C "$ATTACK_REPO" update-ref refs/heads/main "$head"
try objects sh -c 'echo x > "$1/forged"' _ "$alt"
try other-worktree sh -c 'echo forged >> "$1/README.md"' _ "$ATTACK_OTHER"
try hooks sh -c 'echo "exit 0" > "$1/reference-transaction"' _ "$ATTACK_HOOKS"
try home sh -c 'echo x > "$HOME/forged"'
try key sh -c 'grep -q SECRET "$1"' _ "$ATTACK_KEY"
try proc-root sh -c 'for p in /proc/[0-9]*; do echo x >> "$p/root$1/closegate/audit.jsonl" && exit 0; grep -q SECRET "$p/root$2" && exit 0; done; exit 1' _ "$ATTACK_COMMON" "$ATTACK_KEY"
try proc-cwd sh -c 'for p in /proc/[0-9]*; do case $(readlink "$p/cwd") in "$PWD"*|"$TMPDIR"*) continue;; esac; echo x > "$p/cwd/forged" && exit 0; done; exit 1'
echo own > own.txt && t=$(mktemp) && echo tmp > "$t" && [ "$(cat own.txt "$t")" = "own
tmp" ] && git status --porcelain | grep -q own.txt && echo "own: ok"
"#;

const ATTEMPTS: [&str; 11] = [
    "audit",
    "ref-via-alternates",
    "ref-absolute",
    "objects",
    "other-worktree",
    "hooks",
    "home",
    "key",
    "proc-root",
    "proc-cwd",
    "own",
];

/// A repository whose `main` configures `config`, an agent branch `agent/x` (worktree `wt/x`)
/// carrying `files`, another agent's worktree `wt/y`, a home directory, a record, a hook and a
/// record key outside the repository.
fn scene(config: &str, files: &[(&str, Option<&str>)]) -> Scene {
    let s = Scene::with_agent(Some(config))
        .on_agent(files, "add the agent's scripts")
        .worktree();
    s.fx.commit("agent/y", &[("y.txt", Some("y\n"))], "other agent");
    s.fx.worktree("y", "agent/y");
    let s = s.own_home().sandboxed().key_file(KEY);
    let record = s.fx.git_dir().join("closegate");
    std::fs::create_dir_all(&record).unwrap();
    std::fs::write(record.join("audit.jsonl"), "{\"event\":\"check\"}\n").unwrap();
    std::fs::create_dir_all(s.fx.git_dir().join("hooks")).unwrap();
    std::fs::write(
        s.fx.git_dir().join("hooks/reference-transaction"),
        "exit 1\n",
    )
    .unwrap();
    crate::secrets::SecretsScene::write_status(&s);
    s
}

/// The sandbox tests' verbs on a scene.
trait SandboxScene {
    fn check(&self, extra: &[(&str, &str)]) -> (i32, Value);
    fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>>;
}

impl SandboxScene for Scene {
    /// `closegate check --format json --no-record` in `wt/x`, the attack's targets in the
    /// environment the check inherits; `extra` adds variables.
    fn check(&self, extra: &[(&str, &str)]) -> (i32, Value) {
        let args = ["check", "--format", "json", "--no-record"];
        let mut cmd = self.bin(&self.wt, &args);
        cmd.env("ATTACK_KEY", &self.key)
            .env("ATTACK_COMMON", self.fx.git_dir())
            .env("ATTACK_REPO", self.fx.root())
            .env("ATTACK_OTHER", self.fx.tmp.path().join("wt/y"))
            .env("ATTACK_HOOKS", self.fx.git_dir().join("hooks"))
            .envs(extra.iter().copied());
        json_report(&cmd.output().unwrap())
    }

    /// Every file under the fixture (repository, record, worktrees, key) and the home
    /// directory: path → bytes (a symlink's target; a directory's mode).
    fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut files = BTreeMap::new();
        for root in [self.fx.tmp.path(), self.home.path()] {
            for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
                let entry = entry.unwrap();
                let path = entry.path().to_path_buf();
                let bytes = if entry.path_is_symlink() {
                    std::fs::read_link(&path)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes()
                } else if entry.file_type().is_dir() {
                    use std::os::unix::fs::PermissionsExt;
                    let mode = entry.metadata().unwrap().permissions().mode();
                    format!("dir {mode:o}").into_bytes()
                } else {
                    std::fs::read(&path).unwrap()
                };
                files.insert(path, bytes);
            }
        }
        files
    }
}

/// The `<name>: <result>` lines of the attack, from the check's kept output.
fn results(report: &Value) -> BTreeMap<String, String> {
    let check = &report["checks"][0];
    check["output"]
        .as_array()
        .unwrap_or_else(|| panic!("no check output: {report}"))
        .iter()
        .filter_map(|line| {
            let (name, result) = line.as_str()?.split_once(": ")?;
            Some((name.to_string(), result.to_string()))
        })
        .collect()
}

/// The attack's targets reach the check through `env` (SPEC §4.6: nothing else passes).
const ATTACK_CONFIG: &str = "[[checks]]\nname = \"attack\"\nrun = \"sh attack.sh\"\ntimeout_s = 120\n\
     env = [\"ATTACK_KEY\", \"ATTACK_COMMON\", \"ATTACK_REPO\", \"ATTACK_OTHER\", \"ATTACK_HOOKS\"]\n";

#[test]
fn every_door_is_shut_and_nothing_changes() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let s = scene(ATTACK_CONFIG, &[("attack.sh", Some(ATTACK))]);
    let before = s.snapshot();

    let (code, report) = s.check(&[]);

    let results = results(&report);
    for attempt in ATTEMPTS {
        let want = if attempt == "own" { "ok" } else { "blocked" };
        assert_eq!(
            results.get(attempt).map(String::as_str),
            Some(want),
            "{attempt}: {:#}",
            report["checks"]
        );
    }
    assert_eq!(report["sandbox"], "bwrap");
    assert!(
        !report_codes(&report).iter().any(|c| c.starts_with("check")),
        "{report:#}"
    );
    assert_eq!((code, report["verdict"].as_str()), (0, Some("VERIFIED")));
    let after = s.snapshot();
    let changed: Vec<_> = before
        .keys()
        .chain(after.keys())
        .filter(|p| before.get(*p) != after.get(*p))
        .collect();
    assert!(changed.is_empty(), "changed by the check: {changed:?}");
}

/// The control: the same script with `sandbox = "off"` gets through every door, so the
/// sandbox, not a broken script, is what shut them above.
#[test]
fn without_the_sandbox_the_same_script_gets_through() {
    let config = format!("sandbox = \"off\"\n{ATTACK_CONFIG}");
    let s = scene(&config, &[("attack.sh", Some(ATTACK))]);

    let (_, report) = s.check(&[]);

    let results = results(&report);
    for attempt in ATTEMPTS {
        let want = if attempt == "own" { "ok" } else { "ESCAPED" };
        assert_eq!(
            results.get(attempt).map(String::as_str),
            Some(want),
            "{attempt}: {:#}",
            report["checks"]
        );
    }
    assert_eq!(report["sandbox"], "off");
    let audit = std::fs::read_to_string(s.fx.git_dir().join("closegate/audit.jsonl")).unwrap();
    assert!(audit.contains("forged"), "{audit}");
}

/// `network = false` leaves only loopback: a listener the test opened on the host's 127.0.0.1
/// is reached by a check with the network on and never by the one with it off.
#[test]
fn network_false_reaches_no_listener_outside() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let script = "if bash -c 'exec 3<>/dev/tcp/127.0.0.1/$ATTACK_PORT && echo \"$1\" >&3' _ \"$1\" 2>/dev/null; \
                  then echo \"$1: connected\"; else echo \"$1: refused\"; fi\n";
    let config = "[[checks]]\nname = \"on\"\nrun = \"sh net.sh net-on\"\nenv = [\"ATTACK_PORT\"]\n\n\
                  [[checks]]\nname = \"off\"\nrun = \"sh net.sh net-off\"\nnetwork = false\n\
                  env = [\"ATTACK_PORT\"]\n";
    let s = scene(config, &[("net.sh", Some(script))]);

    let (_, report) = s.check(&[("ATTACK_PORT", &port)]);

    assert_eq!(report["sandbox"], "bwrap");
    let outputs: Vec<&Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["output"])
        .collect();
    assert_eq!(
        outputs,
        [
            &serde_json::json!(["net-on: connected"]),
            &serde_json::json!(["net-off: refused"])
        ]
    );
    listener.set_nonblocking(true).unwrap();
    let mut heard = Vec::new();
    while let Ok((mut conn, _)) = listener.accept() {
        conn.set_nonblocking(false).unwrap();
        let mut text = String::new();
        conn.read_to_string(&mut text).unwrap();
        heard.push(text.trim().to_string());
    }
    assert_eq!(heard, ["net-on"]);
}

const PASSING: &str = "[[checks]]\nname = \"smoke\"\nrun = \"test -f src/lib.rs\"\n";

#[test]
fn unsandboxed_under_auto_is_a_warning_and_the_check_runs() {
    let s = scene(PASSING, &[]);
    let (code, report) = s.check(&[("CLOSEGATE_TEST_NO_SANDBOX", "1")]);
    let finding = &report["findings"][0];
    assert_eq!(
        (finding["code"].as_str(), finding["severity"].as_str()),
        (Some("checks-unsandboxed"), Some("warning")),
        "{report:#}"
    );
    assert!(
        finding["message"]
            .as_str()
            .unwrap()
            .contains("CLOSEGATE_TEST_NO_SANDBOX"),
        "the message names why: {finding}"
    );
    assert_eq!(report["checks"][0]["exit_code"], 0);
    assert_eq!(report["sandbox"], "none");
    assert_eq!((code, report["verdict"].as_str()), (0, Some("VERIFIED")));
}

#[test]
fn unsandboxed_under_required_is_a_gap_and_no_check_runs() {
    let s = scene(&format!("sandbox = \"required\"\n{PASSING}"), &[]);
    let (code, report) = s.check(&[("CLOSEGATE_TEST_NO_SANDBOX", "1")]);
    assert_eq!(report_codes(&report), ["checks-unsandboxed"]);
    assert_eq!(report["findings"][0]["severity"], "gap");
    assert_eq!(report["checks"], serde_json::json!([]));
    assert_eq!((code, report["verdict"].as_str()), (4, Some("UNVERIFIED")));
}

#[test]
fn sandbox_off_is_named_in_the_report_and_human_output() {
    let s = scene(&format!("sandbox = \"off\"\n{PASSING}"), &[]);
    let (code, report) = s.check(&[]);
    assert_eq!(report["sandbox"], "off");
    assert!(report_codes(&report).is_empty(), "{report:#}");
    assert_eq!(code, 0);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
    cmd.args(["check", "--no-record"]).current_dir(&s.wt);
    hermetic(&mut cmd, s.home.path());
    let (_, stdout, _) = parts(&cmd.output().unwrap());
    assert!(stdout.starts_with("VERIFIED"), "{stdout}");
    assert!(stdout.contains("sandbox: off"), "{stdout}");
}

/// The record key in its default place (`$XDG_CONFIG_HOME/closegate/record.key`) is hidden too.
#[test]
fn the_default_key_location_is_hidden() {
    let script = "if cat \"$XDG_CONFIG_HOME/closegate/record.key\" 2>/dev/null | grep -q SECRET; \
                  then echo key: ESCAPED; else echo key: blocked; fi\n";
    let config = "[[checks]]\nname = \"key\"\nrun = \"sh key.sh\"\n";
    let s = scene(config, &[("key.sh", Some(script))]);
    let dir = s.home.path().join("closegate");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("record.key"), KEY).unwrap();
    let (_, report) = s.check(&[("CLOSEGATE_RECORD_KEY_FILE", "")]);
    assert_eq!(
        report["checks"][0]["output"],
        serde_json::json!(["key: blocked"])
    );
}

/// SPEC §4.6: the record key is not readable at all, through any path. A hard link is another
/// path no mount over the key's names covers, so with one (to the named key file, or to a key in
/// the default directory) no check runs: a gap naming the file, whatever `sandbox` says but `off`.
#[test]
fn a_record_key_with_another_name_lets_no_check_run() {
    let script = "if cat \"$ATTACK_KEY.other\" 2>/dev/null | grep -q SECRET; \
                  then echo key: ESCAPED; else echo key: blocked; fi\n";
    let config = "[[checks]]\nname = \"key\"\nrun = \"sh key.sh\"\nenv = [\"ATTACK_KEY\"]\n";
    for default_place in [false, true] {
        let s = scene(config, &[("key.sh", Some(script))]);
        let mut extra = vec![];
        let key = if default_place {
            let dir = s.home.path().join("closegate");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("record.key"), KEY).unwrap();
            extra.push(("CLOSEGATE_RECORD_KEY_FILE", ""));
            dir.join("record.key")
        } else {
            s.key.clone()
        };
        let other = format!("{}.other", s.key.display());
        let _ = std::fs::remove_file(&other);
        std::fs::hard_link(&key, &other).unwrap();
        let (code, report) = s.check(&extra);
        assert_eq!(report_codes(&report), ["checks-unsandboxed"], "{report:#}");
        assert_eq!(report["findings"][0]["severity"], "gap");
        let message = report["findings"][0]["message"].as_str().unwrap();
        assert!(message.contains("hard links"), "{message}");
        assert_eq!(report["checks"], serde_json::json!([]), "no check ran");
        assert_eq!((code, report["verdict"].as_str()), (4, Some("UNVERIFIED")));
    }
}

/// Issue 12: a close line naming a 200 KB branch is judged (`close-branch-unknown`), and the
/// checks still start: nothing the agent wrote reaches a check's environment unbounded. The check
/// is told the branch that was checked — the worktree's `agent/x` (SPEC §26.1) — never the text
/// of the close line.
#[test]
fn a_long_claimed_branch_is_a_finding_not_an_error() {
    let config = "[[checks]]\nname = \"env\"\nrun = \"echo branch=${#CLOSEGATE_BRANCH}\"\n";
    let s = scene(config, &[]);
    let long = "b".repeat(200 * 1024);
    let text = std::fs::read_to_string(s.wt.join("_EXEC_STATUS.md")).unwrap();
    let text = text.replace("branch agent/x", &format!("branch {long}"));
    std::fs::write(s.wt.join("_EXEC_STATUS.md"), text).unwrap();

    let (code, report) = s.check(&[]);

    assert_eq!(code, 1, "{:#}", report["findings"]);
    assert!(report_codes(&report).contains(&"close-branch-unknown".to_string()));
    assert_eq!(
        report["checks"][0]["output"],
        serde_json::json!(["branch=7"])
    );
}

/// Issue 12: a closegate killed with SIGKILL mid-check leaves its scratch directory behind;
/// the next run removes it.
#[test]
fn a_killed_run_leaves_a_checkout_the_next_run_removes() {
    let config = "[[checks]]\nname = \"slow\"\n\
                  run = \"if [ -n \\\"$SLOW\\\" ]; then touch started; sleep 60; fi\"\n\
                  env = [\"SLOW\"]\n";
    let s = scene(config, &[]);
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
    cmd.args(["check", "--no-record"]).current_dir(&s.wt);
    hermetic(&mut cmd, s.home.path());
    cmd.env("TMPDIR", tmp.path())
        .env("SLOW", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let started = || {
        std::fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .find(|e| e.path().join("checkout/started").exists())
            .map(|e| e.path())
    };
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let leftover = loop {
        if let Some(dir) = started() {
            break dir;
        }
        assert!(std::time::Instant::now() < until, "the check never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let name = leftover.file_name().unwrap().to_str().unwrap().to_string();
    assert!(
        name.contains(&format!("-{}-", child.id())),
        "the name {name} names its owner"
    );
    assert!(leftover.exists(), "SIGKILL left nothing to sweep");

    let mut again = Command::new(env!("CARGO_BIN_EXE_closegate"));
    again
        .args(["check", "--no-record", "--format", "json"])
        .current_dir(&s.wt);
    hermetic(&mut again, s.home.path());
    again.env("TMPDIR", tmp.path());
    let (code, stdout, _) = parts(&again.output().unwrap());
    assert_eq!(code, 0, "{stdout}");
    assert!(!leftover.exists(), "{} was not swept", leftover.display());
}

/// The `<name>: <result>` lines of check `i`'s kept output.
fn results_of(report: &Value, i: usize) -> BTreeMap<String, String> {
    let output = report["checks"][i]["output"].as_array();
    output
        .unwrap_or_else(|| panic!("no output of check {i}: {report}"))
        .iter()
        .filter_map(|line| {
            let (name, result) = line.as_str()?.split_once(": ")?;
            Some((name.to_string(), result.to_string()))
        })
        .collect()
}

/// What the host's `/tmp` holds beside the repository: another agent's directory with a file,
/// and a tool the operator installed there, on `PATH`.
struct HostTmp {
    other: tempfile::TempDir,
    tools: tempfile::TempDir,
    /// Where a check tries to leave a file in its `/tmp` (absent on the host before and after).
    plant: PathBuf,
}

impl HostTmp {
    fn new() -> HostTmp {
        HostTmp::new_in("/tmp")
    }

    /// The same in the host's shared directory `dir` (`/tmp`, `/var/tmp`).
    fn new_in(dir: &str) -> HostTmp {
        let other = tempfile::Builder::new()
            .prefix("other-agent-")
            .tempdir_in(dir)
            .unwrap();
        std::fs::write(other.path().join("secret.txt"), "OTHER-AGENT-FILE\n").unwrap();
        let tools = tempfile::Builder::new()
            .prefix("operator-tools-")
            .tempdir_in(dir)
            .unwrap();
        let tool = tools.path().join("cg-host-tool");
        std::fs::write(&tool, "#!/bin/sh\necho tool-ok\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let plant = other.path().with_file_name(format!(
            "closegate-plant-{}",
            other.path().file_name().unwrap().to_str().unwrap()
        ));
        HostTmp {
            other,
            tools,
            plant,
        }
    }

    /// `PATH` with the operator's tool directory first.
    fn path(&self) -> String {
        let path = std::env::var("PATH").unwrap_or_default();
        format!("{}:{path}", self.tools.path().display())
    }

    /// The attack with the places it targets written in: the agent's code knows or guesses
    /// them, and no variable hands them over (a path the check's environment names is shown).
    fn attack(&self) -> String {
        TMP_ATTACK
            .replace("$OTHER_DIR", &self.other.path().display().to_string())
            .replace("$PLANT", &self.plant.display().to_string())
    }
}

/// The attack on the host's `/tmp`: the first check reads another agent's directory there,
/// lists `/tmp`, and leaves a file in it (as flow does) that the second check looks for.
const TMP_ATTACK: &str = r#"try() { name=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "$name: ESCAPED"; else echo "$name: blocked"; fi; }
if [ "$1" = first ]; then
try other-file cat "$OTHER_DIR/secret.txt"
try other-dir ls "$OTHER_DIR"
try listed sh -c 'ls -A /tmp | grep -q "^$(basename "$1")$"' _ "$OTHER_DIR"
echo planted > "$PLANT" && echo planted > /tmp/flow-like.bin && echo "write: ok"
[ -w "$TMPDIR" ] && [ "$TMPDIR" != /tmp ] && echo "tmpdir: ok"
cg-host-tool | grep -q tool-ok && echo "tool: ok"
test -d "$HOME" && ! touch "$HOME/forged" 2>/dev/null && echo "home: ok"
git status --porcelain >/dev/null && git cat-file -e HEAD && echo "git: ok"
else
try planted test -e "$PLANT"
try flow-like test -e /tmp/flow-like.bin
fi
"#;

const TMP_CONFIG: &str = "[[checks]]\nname = \"first\"\nrun = \"sh tmp.sh first\"\n\n\
     [[checks]]\nname = \"second\"\nrun = \"sh tmp.sh second\"\n";

/// SPEC §4.6: every check gets its own empty, writable `/tmp`. Attacks: read another agent's
/// file in the host's `/tmp`; list the host's `/tmp`; leave a file in `/tmp` for the next check
/// (or for the host). Kept working: the repository, `HOME` and a `PATH` tool under the host's
/// `/tmp` stay readable, `HOME` stays read-only, `TMPDIR` stays the check's own.
#[test]
fn each_check_has_its_own_empty_tmp() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let host = HostTmp::new();
    let s = scene(TMP_CONFIG, &[("tmp.sh", Some(&host.attack()))]);
    let path = host.path();

    let (code, report) = s.check(&[("PATH", &path)]);

    assert_eq!(report["sandbox"], "bwrap");
    let first = results_of(&report, 0);
    for (name, want) in [
        ("other-file", "blocked"),
        ("other-dir", "blocked"),
        ("listed", "blocked"),
        ("write", "ok"),
        ("tmpdir", "ok"),
        ("tool", "ok"),
        ("home", "ok"),
        ("git", "ok"),
    ] {
        assert_eq!(
            first.get(name).map(String::as_str),
            Some(want),
            "{name}: {report:#}"
        );
    }
    let second = results_of(&report, 1);
    for name in ["planted", "flow-like"] {
        assert_eq!(
            second.get(name).map(String::as_str),
            Some("blocked"),
            "{name}: {report:#}"
        );
    }
    assert!(!host.plant.exists(), "a check wrote into the host's /tmp");
    assert_eq!(
        (code, report["verdict"].as_str()),
        (0, Some("VERIFIED")),
        "{report:#}"
    );
}

/// The control: with the sandbox off the same script reads the other agent's file, so the
/// private `/tmp`, not a broken script, is what hid it above.
#[test]
fn without_the_sandbox_the_host_tmp_is_seen() {
    let host = HostTmp::new();
    let config = format!("sandbox = \"off\"\n{TMP_CONFIG}");
    let s = scene(&config, &[("tmp.sh", Some(&host.attack()))]);
    let path = host.path();

    let (_, report) = s.check(&[("PATH", &path)]);

    let first = results_of(&report, 0);
    assert_eq!(
        first.get("other-file").map(String::as_str),
        Some("ESCAPED"),
        "{report:#}"
    );
    assert_eq!(
        first.get("listed").map(String::as_str),
        Some("ESCAPED"),
        "{report:#}"
    );
    let _ = std::fs::remove_file(&host.plant);
}

/// The agent writes the common dir: a forged worktree entry naming a directory of the host's
/// `/tmp` that holds the check's `writable` cache and, beside it, another agent's file.
/// Re-protecting that "worktree" must not bind it whole back into the sandbox: the writable
/// path inside it is made read-only instead, and the file beside it stays hidden.
#[test]
fn a_forged_worktree_never_shows_the_host_tmp() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let shared = tempfile::Builder::new()
        .prefix("shared-")
        .tempdir_in("/tmp")
        .unwrap();
    let cache = shared.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    let beside = shared.path().join("other-agent.txt");
    std::fs::write(&beside, "OTHER-AGENT-FILE\n").unwrap();
    let script = format!(
        "if cat '{}' >/dev/null 2>&1; then echo beside: ESCAPED; else echo beside: blocked; fi\n\
         if touch '{}/x' 2>/dev/null; then echo cache: writable; else echo cache: read-only; fi\n",
        beside.display(),
        cache.display()
    );
    let config = format!(
        "[[checks]]\nname = \"first\"\nrun = \"sh forged.sh\"\nwritable = ['{}']\n",
        cache.display()
    );
    let s = scene(&config, &[("forged.sh", Some(&script))]);
    let admin = s.fx.git_dir().join("worktrees/forged");
    std::fs::create_dir_all(&admin).unwrap();
    let gitdir = format!("{}\n", shared.path().join(".git").display());
    std::fs::write(admin.join("gitdir"), gitdir).unwrap();
    std::fs::write(admin.join("commondir"), "../..\n").unwrap();
    std::fs::write(admin.join("HEAD"), "ref: refs/heads/main\n").unwrap();

    let (_, report) = s.check(&[]);

    assert_eq!(
        report["checks"][0]["output"],
        serde_json::json!(["beside: blocked", "cache: read-only"]),
        "{report:#}"
    );
}

/// `/var/tmp` is the host's other shared temporary directory (kept across reboots), and gets the
/// same treatment as `/tmp`. Attacks: read another agent's file there, list it, and leave a file
/// there for the next check; writing to it works (a tool that uses `/var/tmp` keeps working),
/// and a `PATH` tool the operator keeps there stays visible.
#[test]
fn each_check_has_its_own_empty_var_tmp() {
    if crate::fixture::require(crate::fixture::Part::Sandbox).is_none() {
        return;
    }
    let Ok(var) = std::fs::canonicalize("/var/tmp") else {
        return;
    };
    let tmp = std::fs::canonicalize("/tmp").unwrap();
    if !var.is_dir() || var.starts_with(&tmp) || tmp.starts_with(&var) {
        return;
    }
    let host = HostTmp::new_in("/var/tmp");
    let (other, plant) = (&host.other, host.plant.display());
    let script = format!(
        r#"try() {{ name=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "$name: ESCAPED"; else echo "$name: blocked"; fi; }}
if [ "$1" = first ]; then
try other-file cat "{other}/secret.txt"
try listed sh -c 'ls -A /var/tmp | grep -q "^{name}$"'
echo planted > {plant} && echo "write: ok"
cg-host-tool | grep -q tool-ok && echo "tool: ok"
else
try planted test -e {plant}
fi
"#,
        other = other.path().display(),
        name = other.path().file_name().unwrap().to_str().unwrap(),
    );
    let s = scene(TMP_CONFIG, &[("tmp.sh", Some(&script))]);
    let path = host.path();

    let (code, report) = s.check(&[("PATH", &path)]);

    assert_eq!(report["sandbox"], "bwrap");
    let first = results_of(&report, 0);
    let want = [
        ("other-file", "blocked"),
        ("listed", "blocked"),
        ("write", "ok"),
        ("tool", "ok"),
    ];
    for (name, want) in want {
        assert_eq!(
            first.get(name).map(String::as_str),
            Some(want),
            "{name}: {report:#}"
        );
    }
    let second = results_of(&report, 1);
    assert_eq!(
        second.get("planted").map(String::as_str),
        Some("blocked"),
        "{report:#}"
    );
    assert!(
        !host.plant.exists(),
        "a check wrote into the host's /var/tmp"
    );
    assert_eq!((code, report["verdict"].as_str()), (0, Some("VERIFIED")));
}
