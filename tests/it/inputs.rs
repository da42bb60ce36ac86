//! Agent-written input files (SPEC §11): regular files only, read without blocking, at most
//! 16 MiB, for every command that reads one. Each run is bounded by a timeout, so a regression
//! (a FIFO that blocks, `/dev/zero` read to the end of memory) fails the test instead of hanging.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::fixture::{hermetic, parts};
use crate::teardown::{Scene, agent};

/// Longer than any of these runs takes, far shorter than a hang.
const TIMEOUT: Duration = Duration::from_secs(60);

/// 17 MiB: over the 16 MiB cap.
const BIG: usize = 17 * 1024 * 1024;

/// Run `closegate args` in `cwd` (feeding `stdin`), killed and failed after [`TIMEOUT`].
fn bounded(cwd: &Path, args: &[&str], stdin: Option<Vec<u8>>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
    cmd.args(args).current_dir(cwd);
    hermetic(&mut cmd, cwd);
    bounded_cmd(cmd, stdin)
}

/// Run `cmd` (feeding `stdin`), killed and failed after [`TIMEOUT`]: a hang fails the test.
pub fn bounded_cmd(mut cmd: Command, stdin: Option<Vec<u8>>) -> Output {
    let shown = format!("{cmd:?}");
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let feeder = stdin.map(|bytes| {
        let mut pipe = child.stdin.take().unwrap();
        // The command may stop reading at the cap: a broken pipe is expected then.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        })
    });
    // Drain the output on threads so a full pipe cannot stall the child.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut v).unwrap();
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut v).unwrap();
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{shown} did not finish within {TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if let Some(feeder) = feeder {
        feeder.join().unwrap();
    }
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

fn dev_zero(path: &Path) {
    let _ = std::fs::remove_file(path);
    std::os::unix::fs::symlink("/dev/zero", path).unwrap();
}

/// The status document of the scene's worktree, replaced by `make`.
fn doc_replaced(make: fn(&Path)) -> (Scene, std::path::PathBuf) {
    let s = Scene::honest_return();
    let doc = s.wt.join("_EXEC_STATUS.md");
    make(&doc);
    (s, doc)
}

fn assert_exit_2_naming(out: &Output, what: &str, name: &str) {
    let (code, stdout, stderr) = parts(out);
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(stderr.contains(name), "stderr names {name}: {stderr}");
    assert!(stderr.contains(what), "stderr says {what}: {stderr}");
}

#[test]
fn a_fifo_status_document_is_an_error_not_a_hang() {
    let (s, doc) = doc_replaced(mkfifo);
    let wt = s.wt.to_str().unwrap();
    let out = bounded(&s.fx.root(), &["check", wt], None);
    assert_exit_2_naming(&out, "is a FIFO, not a regular file", "_EXEC_STATUS.md");
    let out = bounded(&s.fx.root(), &["teardown", wt], None);
    assert_exit_2_naming(&out, "is a FIFO, not a regular file", "_EXEC_STATUS.md");
    assert!(s.wt.join("src/lib.rs").exists(), "teardown removed nothing");
    let status = doc.to_str().unwrap();
    let out = bounded(&s.fx.root(), &["check", wt, "--status", status], None);
    assert_exit_2_naming(&out, "is a FIFO", status);
}

#[test]
fn a_status_document_linked_to_dev_zero_is_an_error_not_a_memory_sink() {
    let (s, _doc) = doc_replaced(dev_zero);
    let wt = s.wt.to_str().unwrap();
    let out = bounded(&s.fx.root(), &["check", wt], None);
    assert_exit_2_naming(&out, "is a character device", "_EXEC_STATUS.md");
    let out = bounded(&s.fx.root(), &["teardown", wt], None);
    assert_exit_2_naming(&out, "is a character device", "_EXEC_STATUS.md");
    assert!(s.wt.join("src/lib.rs").exists(), "teardown removed nothing");
}

#[test]
fn a_folder_or_an_oversized_file_as_the_status_document_is_an_error_naming_it() {
    let s = Scene::honest_return();
    let doc = s.wt.join("_EXEC_STATUS.md");
    let wt = s.wt.to_str().unwrap();
    std::fs::remove_file(&doc).unwrap();
    std::fs::create_dir(&doc).unwrap();
    let out = bounded(&s.fx.root(), &["check", wt], None);
    assert_exit_2_naming(&out, "is a directory", "_EXEC_STATUS.md");
    std::fs::remove_dir(&doc).unwrap();
    let file = std::fs::File::create(&doc).unwrap();
    file.set_len(BIG as u64).unwrap();
    let out = bounded(&s.fx.root(), &["check", wt], None);
    assert_exit_2_naming(&out, "17825792 bytes", "_EXEC_STATUS.md");
}

/// One agent's FIFO or `/dev/zero` neither hangs nor aborts the coordinator's board: that row is
/// unreadable (no state, the file named on stderr), the other agent's row is read as usual, exit
/// 0; with `--check`, that row's
/// gate reaches no verdict (exit 2, named on stderr) and the other row gets its verdict.
#[test]
fn one_bad_document_does_not_hold_up_the_board() {
    for make in [mkfifo as fn(&Path), dev_zero] {
        let s = Scene::honest_return();
        let (other, _) = agent(&s.fx, "y", "close-ok");
        make(&s.wt.join("_EXEC_STATUS.md"));
        let out = bounded(&s.fx.root(), &["board", "--json"], None);
        let (code, stdout, stderr) = parts(&out);
        assert_eq!(code, 0, "{stdout}\n{stderr}");
        assert!(
            stderr.contains("_EXEC_STATUS.md") && stderr.contains("not a regular file"),
            "the unreadable row is named: {stderr}"
        );
        let board: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let row = |wt: &Path| {
            let path = wt.canonicalize().unwrap().display().to_string();
            let rows = board["worktrees"].as_array().unwrap();
            rows.iter()
                .find(|r| r["path"] == path.as_str())
                .unwrap()
                .clone()
        };
        assert_eq!(row(&s.wt)["state"], serde_json::Value::Null);
        assert_eq!(row(&other)["state"], "close-ok");

        let out = bounded(&s.fx.root(), &["board", "--check", "--json"], None);
        let (code, stdout, stderr) = parts(&out);
        assert_eq!(code, 2, "{stdout}\n{stderr}");
        assert!(stderr.contains("_EXEC_STATUS.md"), "{stderr}");
        let board: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let rows = board["worktrees"].as_array().unwrap();
        let path = other.canonicalize().unwrap().display().to_string();
        let row = rows.iter().find(|r| r["path"] == path.as_str()).unwrap();
        assert_eq!(row["verdict"], "VERIFIED", "{stdout}");
    }
}

/// A message over 16 MiB is refused by every command that reads one, from a file and from stdin.
#[test]
fn a_17_mib_message_is_refused_by_guard_signal_and_check() {
    let s = Scene::honest_return();
    let mut message = b"done\n\n@signal done\n**VERIFIED**\n".to_vec();
    message.resize(BIG, b'x');
    let file = s.fx.tmp.path().join("message.txt");
    std::fs::write(&file, &message).unwrap();
    let file_s = file.to_str().unwrap();
    let wt = s.wt.to_str().unwrap();
    for args in [
        vec!["guard", file_s],
        vec!["signal", file_s],
        vec!["check", wt, "--message", file_s],
    ] {
        let out = bounded(&s.fx.root(), &args, None);
        assert_exit_2_naming(
            &out,
            "17825792 bytes (17.0 MiB), larger than the 16 MiB",
            file_s,
        );
    }
    for args in [vec!["guard"], vec!["signal"]] {
        let out = bounded(&s.fx.root(), &args, Some(message.clone()));
        assert_exit_2_naming(&out, "larger than the 16 MiB limit", "standard input");
    }
    let out = bounded(
        &s.fx.root(),
        &["check", wt, "--message", "-"],
        Some(message),
    );
    assert_exit_2_naming(&out, "larger than the 16 MiB limit", "standard input");
}

/// `--config`, `--contract` and `lint` take the same rule.
#[test]
fn config_contract_and_lint_inputs_take_regular_files_only() {
    let s = Scene::honest_return();
    let fifo = s.fx.tmp.path().join("fifo");
    mkfifo(&fifo);
    let fifo_s = fifo.to_str().unwrap();
    let wt = s.wt.to_str().unwrap();
    for args in [
        vec!["check", wt, "--config", fifo_s],
        vec!["check", wt, "--contract", fifo_s],
        vec!["lint", fifo_s],
    ] {
        let out = bounded(&s.fx.root(), &args, None);
        assert_exit_2_naming(&out, "is a FIFO, not a regular file", fifo_s);
    }
}

/// A sparse 2 GiB file: no disk space, and no memory if it is refused before it is read.
fn huge(path: &Path) {
    let file = std::fs::File::create(path).unwrap();
    file.set_len(2 << 30).unwrap();
}

/// The worktree's index lies in the agent's admin dir: a FIFO, a link to `/dev/zero` or a huge
/// sparse file there is no verdict on the worktree (`close-worktree-absent` naming it), never a
/// hang or an exhausted memory, and teardown, even with `--allow-unverified`, removes nothing.
#[test]
fn an_index_that_is_a_fifo_or_dev_zero_is_a_gap_not_a_hang() {
    for (make, why) in [
        (mkfifo as fn(&Path), "is not a regular file"),
        (dev_zero, "is not a regular file"),
        (huge, "larger than the 1 GiB"),
    ] {
        let s = Scene::honest_return();
        let index = s.fx.git_dir().join("worktrees/x/index");
        make(&index);
        let wt = s.wt.to_str().unwrap();
        let out = bounded(&s.fx.root(), &["check", wt, "--format", "json"], None);
        let (code, stdout, stderr) = parts(&out);
        assert_eq!(code, 4, "{stdout}\n{stderr}");
        assert!(stdout.contains("close-worktree-absent"), "{stdout}");
        assert!(stdout.contains(why), "{stdout}");
        let out = bounded(&s.fx.root(), &["teardown", wt, "--allow-unverified"], None);
        let (code, stdout, stderr) = parts(&out);
        assert_ne!(code, 0, "{stdout}\n{stderr}");
        assert!(s.wt.join("src/lib.rs").exists(), "teardown removed nothing");
    }
}

/// The audit log lives in the common directory the agent can write: a FIFO, a link to
/// `/dev/zero` or a link to another file planted at its name is an exit-2 error naming it —
/// never a hang, never memory to the end, never a record written into the link's target.
#[test]
fn an_audit_log_that_is_a_fifo_or_a_link_is_an_error_not_a_hang() {
    let s = Scene::honest_return();
    let wt = s.wt.to_str().unwrap().to_string();
    let log = s.fx.git_dir().join("closegate/audit.jsonl");
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    for make in [mkfifo, dev_zero] {
        make(&log);
        for args in [
            &["log"][..],
            &["log", "--stats"],
            &["board"],
            &["check", &wt],
        ] {
            let out = bounded(&s.fx.root(), args, None);
            assert_exit_2_naming(&out, "audit log", "audit.jsonl");
        }
    }
    let elsewhere = s.fx.root().join("other.txt");
    std::fs::write(&elsewhere, "kept\n").unwrap();
    std::fs::remove_file(&log).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &log).unwrap();
    let out = bounded(&s.fx.root(), &["check", &wt], None);
    assert_exit_2_naming(&out, "symbolic link", "audit.jsonl");
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "kept\n");
}

/// SPEC §4: `--status FILE` stands for `<WORKTREE>/<status_file>`. A status document passed
/// from inside the worktree at another path is the run's status document: it is not an untracked
/// file of the worktree, and `github`/`sarif` findings are located in it (SPEC §4.7), not in an
/// `_EXEC_STATUS.md` that does not exist.
#[test]
fn a_status_file_inside_the_worktree_is_the_status_document_of_the_run() {
    let s = Scene::honest_return();
    std::fs::create_dir(s.wt.join("notes")).unwrap();
    std::fs::rename(s.wt.join("_EXEC_STATUS.md"), s.wt.join("notes/st.md")).unwrap();
    let json = bounded(
        &s.wt,
        &[
            "check",
            "--status",
            "notes/st.md",
            "--format",
            "json",
            "--no-record",
        ],
        None,
    );
    let (code, stdout, stderr) = parts(&json);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!stdout.contains("close-worktree-untracked"), "{stdout}");

    let doc = std::fs::read_to_string(s.wt.join("notes/st.md")).unwrap();
    let doc = doc.replace("  - src/lib.rs\n", "  - src/missing.rs\n");
    std::fs::write(s.wt.join("notes/st.md"), doc).unwrap();
    for format in ["github", "sarif"] {
        let out = bounded(
            &s.wt,
            &[
                "check",
                "--status",
                "notes/st.md",
                "--format",
                format,
                "--no-record",
            ],
            None,
        );
        let (code, stdout, _) = parts(&out);
        assert_eq!(code, 1, "{format}: {stdout}");
        assert!(stdout.contains("notes/st.md"), "{format}: {stdout}");
        assert!(!stdout.contains("_EXEC_STATUS.md"), "{format}: {stdout}");
    }
}

/// SPEC §4: every gate whose inputs exist runs. A status document without its H1 is read no
/// further (SPEC §2), but the commit (the worktree's HEAD) and the base exist, so the protected
/// and checks gates still run and the one report names the agent's edit to `tests/` too.
#[test]
fn a_document_without_its_h1_still_gets_the_gates_on_the_commit() {
    let s = Scene::honest_return();
    let tip = s.fx.commit(
        "agent/x",
        &[("tests/t.py", Some("assert True\n"))],
        "edit tests",
    );
    s.fx.checkout(&s.wt);
    std::fs::write(
        s.wt.join("_EXEC_STATUS.md"),
        "oops no h1\n- state: close-ok\n",
    )
    .unwrap();
    let out = bounded(&s.wt, &["check", "--format", "json", "--no-record"], None);
    let (code, stdout, stderr) = parts(&out);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let codes = crate::fixture::report_codes(&report);
    assert!(codes.contains(&"doc-h1-missing".to_string()), "{codes:?}");
    assert!(
        codes.contains(&"protected-surface".to_string()),
        "{codes:?}"
    );
    assert_eq!(report["commit"], tip.to_string());
    assert!(report["slug"].is_null(), "{report}");
    assert_eq!(
        report["checks"].as_array().map(Vec::len),
        Some(1),
        "{report}"
    );
}
