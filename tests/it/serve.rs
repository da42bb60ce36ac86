//! `closegate serve` (SPEC §25) over plain HTTP: the token, the read-only promise, the API
//! answering what `board --json` and `log --json` print, escaping, the event stream, and a
//! server that outlives a deleted worktree, a cut-short log line and its repository.
//!
//! Attacks tried here: reading the board without the token, with a wrong or a prefix of the
//! token, through another `Host` (DNS rebinding), writing through it (POST), markup in agent text
//! (the status document, check output), a forged record making a row look COMPLETED.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use git2::Oid;

use crate::fixture::{closegate, hermetic, parts};
use crate::scene::StatusDoc;

pub const CONFIG: &str = "[[checks]]\nname = \"smoke\"\nrun = \"echo '<script>alert(1)</script>'; test -f README.md\"\ntimeout_s = 60\n";

pub use crate::scene::Scene;

/// A repository with the configuration on `main`; agents are added one by one.
pub fn scene() -> Scene {
    Scene::new().on_main(&[(".closegate.toml", Some(CONFIG))], "configure")
}

/// The board tests' verbs on a scene.
pub trait ServeScene {
    fn agent(
        &self,
        name: &str,
        state: &str,
        abstract_text: &str,
        files: &[(&str, Option<&str>)],
    ) -> (PathBuf, Oid);
    fn write_doc(&self, wt: &Path, slug: &str, state: &str, abstract_text: &str, tip: Oid);
    fn four_stages(&self) -> Vec<(&'static str, &'static str)>;
}

impl ServeScene for Scene {
    /// `agent/<name>` with `files` committed, in `wt/<name>`, with a status document in `state`
    /// whose abstract is `abstract_text`.
    fn agent(
        &self,
        name: &str,
        state: &str,
        abstract_text: &str,
        files: &[(&str, Option<&str>)],
    ) -> (PathBuf, Oid) {
        let tip = self
            .fx
            .commit(&format!("agent/{name}"), files, &format!("work on {name}"));
        let wt = self.fx.worktree(name, &format!("agent/{name}"));
        self.write_doc(&wt, name, state, abstract_text, tip);
        (wt, tip)
    }

    /// A complete status document naming `tip`.
    fn write_doc(&self, wt: &Path, slug: &str, state: &str, abstract_text: &str, tip: Oid) {
        let sha = &tip.to_string()[..12];
        let path = wt.canonicalize().unwrap().display().to_string();
        StatusDoc::complete(slug, state)
            .abstract_text(abstract_text)
            .last_commit(sha, &self.subject(tip))
            .done("it is in, proven by the smoke check")
            .artifacts(&[])
            .close(sha, &format!("agent/{slug}"), &path)
            .write(wt);
    }

    /// The four stages the browser tests look for: `done` COMPLETED, `fail` FAILED, `rev`
    /// REVIEW, `run` RUNNING.
    fn four_stages(&self) -> Vec<(&'static str, &'static str)> {
        let (done, _) = self.agent(
            "done",
            "close-ok",
            "done work",
            &[("src/d.rs", Some("d\n"))],
        );
        assert_eq!(check(&done), "VERIFIED");
        let (fail, _) = self.agent("fail", "close-ok", "broke it", &[("README.md", None)]);
        assert_eq!(check(&fail), "FAIL");
        let files = [("tests/a_test.sh", Some("true\n"))];
        let (rev, _) = self.agent("rev", "stop-2-ready", "new tests", &files);
        assert_eq!(check(&rev), "PENDING_REVIEW");
        self.agent(
            "run",
            "in-progress",
            "still going",
            &[("src/r.rs", Some("r\n"))],
        );
        vec![
            ("done", "COMPLETED"),
            ("fail", "FAILED"),
            ("rev", "REVIEW"),
            ("run", "RUNNING"),
        ]
    }
}

/// `closegate check` in `wt` (recorded); its verdict.
pub fn check(wt: &Path) -> String {
    let (_, stdout, stderr) = parts(&closegate(wt, &["check", "--format", "json"]));
    let report: serde_json::Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout} {stderr}"));
    report["verdict"].as_str().unwrap().to_string()
}

/// A running `closegate serve`, stopped when dropped.
pub struct Served {
    child: Child,
    pub port: u16,
    pub token: String,
}

impl Served {
    /// Start `closegate serve` in `cwd` and read the URL it prints.
    pub fn start(cwd: &Path) -> Served {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
        cmd.arg("serve").current_dir(cwd);
        hermetic(&mut cmd, cwd);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let rest = line
            .trim()
            .strip_prefix("http://127.0.0.1:")
            .unwrap_or_else(|| panic!("serve printed {line:?}"));
        let (port, token) = rest.split_once("/?token=").unwrap();
        assert_eq!(token.len(), 32, "{line}");
        Served {
            child,
            port: port.parse().unwrap(),
            token: token.to_string(),
        }
    }

    /// The page's URL with the token.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}?token={}", self.port, self.token)
    }

    /// `GET path?token=…` (with the token).
    pub fn get(&self, path: &str) -> (u16, String, String) {
        self.raw(
            "GET",
            &format!("{path}?token={}", self.token),
            &format!("127.0.0.1:{}", self.port),
        )
    }

    /// One request as given; its status, headers and body.
    pub fn raw(&self, method: &str, target: &str, host: &str) -> (u16, String, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            stream,
            "{method} {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut all = Vec::new();
        stream.read_to_end(&mut all).unwrap();
        let all = String::from_utf8_lossy(&all).into_owned();
        let (head, body) = all.split_once("\r\n\r\n").unwrap_or((&all, ""));
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        (status, head.to_string(), body.to_string())
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_api_answers_what_board_json_and_log_json_print() {
    let s = scene();
    s.four_stages();
    let served = Served::start(&s.fx.root());
    let (status, head, body) = served.get("/api/board");
    assert_eq!(status, 200, "{head}");
    assert!(head.contains("Content-Type: application/json"), "{head}");
    let board = closegate(&s.fx.root(), &["board", "--json"]);
    assert_eq!(body, String::from_utf8(board.stdout).unwrap());
    let (status, _, body) = served.get("/api/log");
    assert_eq!(status, 200);
    let log = closegate(&s.fx.root(), &["log", "--json"]);
    assert_eq!(body, String::from_utf8(log.stdout).unwrap());
    assert_eq!(body.lines().count(), 3, "three checks recorded");
}

#[test]
fn every_request_needs_the_token() {
    let s = scene();
    let served = Served::start(&s.fx.root());
    let host = format!("127.0.0.1:{}", served.port);
    let token = served.token.clone();
    for path in [
        "/",
        "/fragment",
        "/app.js",
        "/events",
        "/api/board",
        "/api/log",
        "/nope",
    ] {
        for query in [
            String::new(),
            "?token=".to_string(),
            "?token=0".to_string(),
            format!("?token={}", &token[..31]),
            format!("?token={token}0"),
            format!("?tok={token}"),
        ] {
            let (status, _, body) = served.raw("GET", &format!("{path}{query}"), &host);
            assert_eq!(status, 403, "{path}{query}: {body}");
            assert!(!body.contains("worktree"), "{body}");
        }
    }
    // With it: the page; another Host (a page elsewhere whose name resolves to 127.0.0.1) is
    // refused even with the token; nothing but GET is served.
    assert_eq!(served.get("/").0, 200);
    assert_eq!(served.get("/nope").0, 404);
    let with = format!("/api/board?token={token}");
    assert_eq!(served.raw("GET", &with, "evil.example:80").0, 403);
    assert_eq!(
        served
            .raw("GET", &with, &format!("localhost:{}", served.port))
            .0,
        200
    );
    for method in ["POST", "PUT", "DELETE"] {
        assert_eq!(served.raw(method, &with, &host).0, 405, "{method}");
    }
}

#[test]
fn agent_text_is_escaped_and_scripts_come_only_from_the_server() {
    let s = scene();
    let files = [("README.md", None)];
    let (wt, _) = s.agent(
        "x",
        "close-ok",
        "<script>alert('abstract')</script> & <b>bold</b>",
        &files,
    );
    assert_eq!(check(&wt), "FAIL");
    let served = Served::start(&s.fx.root());
    let (status, head, body) = served.get("/");
    assert_eq!(status, 200);
    assert!(
        head.contains("Content-Security-Policy: default-src 'none'; script-src 'self'"),
        "{head}"
    );
    assert!(!body.contains("<script>alert"), "{body}");
    assert!(!body.contains("<b>bold"), "{body}");
    assert!(
        body.contains(
            "&lt;script&gt;alert(&#39;abstract&#39;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;"
        ),
        "{body}"
    );
    // The check's output tail (agent code printed it) and its finding's message.
    assert!(
        body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{body}"
    );
    assert!(body.contains("check-failed"), "{body}");
    // The only script is the server's own file.
    assert_eq!(body.matches("<script").count(), 1, "{body}");
    assert!(body.contains("<script src=\"/app.js?token="), "{body}");
}

#[test]
fn a_check_record_carries_what_the_page_shows() {
    let s = scene();
    let files = [("tests/a_test.sh", Some("true\n")), ("README.md", None)];
    let (wt, _) = s.agent("p", "close-ok", "p", &files);
    assert_eq!(check(&wt), "FAIL");
    let log = closegate(&s.fx.root(), &["log", "--json"]);
    let line: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&log.stdout).trim()).unwrap();
    let findings = line["findings"].as_array().unwrap();
    let codes: Vec<&str> = findings.iter().filter_map(|f| f["code"].as_str()).collect();
    assert_eq!(
        codes,
        line["codes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c.as_str())
            .collect::<Vec<_>>()
    );
    for f in findings {
        for key in ["code", "severity", "gate", "message"] {
            assert!(f[key].is_string(), "{f}");
        }
    }
    let protected = line["protected"].as_array().unwrap();
    assert!(
        protected
            .iter()
            .any(|p| p["path"] == "tests/a_test.sh" && p["change"] == "added"),
        "{line}"
    );
    let check = &line["checks"][0];
    assert!(
        check["output"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap().contains("<script>alert(1)"))
    );

    // The page shows the protected change with its diff and the check with duration and tail.
    let served = Served::start(&s.fx.root());
    let (_, _, body) = served.get("/");
    assert!(
        body.contains("<code>tests/a_test.sh</code> added"),
        "{body}"
    );
    assert!(body.contains("+++ b/tests/a_test.sh"), "{body}");
    assert!(body.contains("+true"), "{body}");
    assert!(
        body.contains("<code>smoke</code> check-failed (exit 1) in "),
        "{body}"
    );
}

#[test]
fn the_event_stream_announces_a_new_record_and_a_new_commit() {
    let s = scene();
    let (wt, _) = s.agent("live", "close-ok", "live", &[("src/l.rs", Some("l\n"))]);
    let served = Served::start(&s.fx.root());
    let mut stream = TcpStream::connect(("127.0.0.1", served.port)).unwrap();
    write!(
        stream,
        "GET /events?token={} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n",
        served.token, served.port
    )
    .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut events = BufReader::new(stream);
    let next_event = |events: &mut BufReader<TcpStream>| -> String {
        let mut line = String::new();
        loop {
            line.clear();
            assert!(events.read_line(&mut line).unwrap() > 0, "stream ended");
            if let Some(name) = line.strip_prefix("event: ") {
                return name.trim().to_string();
            }
        }
    };
    assert_eq!(next_event(&mut events), "hello");
    assert_eq!(check(&wt), "VERIFIED");
    let done = Instant::now();
    assert_eq!(next_event(&mut events), "change");
    eprintln!("record → event: {:?}", done.elapsed());
    // Let the check's other writes settle, then a commit in the worktree.
    std::thread::sleep(Duration::from_millis(300));
    s.fx.commit("agent/live", &[("src/l2.rs", Some("more\n"))], "more");
    assert_eq!(next_event(&mut events), "change");
    // The page now says the tip has no verdict yet.
    let (_, _, body) = served.get("/fragment");
    assert!(
        body.contains("data-slug=\"live\" data-stage=\"VERIFYING\""),
        "{body}"
    );
}

#[test]
fn it_survives_a_cut_short_line_a_deleted_worktree_and_a_repository_gone() {
    let s = scene();
    let (wt, _) = s.agent("gone", "close-ok", "gone", &[("src/g.rs", Some("g\n"))]);
    assert_eq!(check(&wt), "VERIFIED");
    let served = Served::start(&s.fx.root());
    let audit = s.fx.git_dir().join("closegate/audit.jsonl");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&audit)
        .unwrap();
    file.write_all(b"{\"ts\":\"2026-11-29T00:00:00Z\",\"event\":\"che")
        .unwrap();
    std::fs::remove_dir_all(&wt).unwrap();
    let (status, _, body) = served.get("/");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("1 audit lines are no record"), "{body}");
    assert!(body.contains("(directory gone)"), "{body}");
    assert!(body.contains("data-slug=\"\" data-stage="), "{body}");
    assert_eq!(served.get("/api/board").0, 200);

    let moved = s.fx.tmp.path().join("moved-away");
    std::fs::rename(s.fx.root(), &moved).unwrap();
    let (status, _, body) = served.get("/");
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("cannot be read"), "{body}");
    let (status, _, body) = served.get("/api/board");
    assert_eq!(status, 503);
    assert!(body.contains("\"error\""), "{body}");
    // And back: the page shows the board again.
    std::fs::rename(&moved, s.fx.root()).unwrap();
    assert_eq!(served.get("/").0, 200);
}

#[test]
fn a_forged_record_does_not_make_a_row_completed_where_a_key_exists() {
    let s = scene();
    let out = closegate(&s.fx.root(), &["key", "init"]);
    assert!(out.status.success(), "{:?}", parts(&out));
    let (_, tip) = s.agent("forge", "close-ok", "forged", &[("src/f.rs", Some("f\n"))]);
    // The agent writes a VERIFIED record itself: it has no key, so no valid mac.
    let forged = serde_json::json!({
        "ts": "2026-11-29T12:00:00Z", "event": "check", "slug": "forge",
        "commit": tip.to_string(), "verdict": "VERIFIED", "claimed": "close-ok",
        "config_source": "base", "base_source": "configured", "codes": [],
    });
    let audit = s.fx.git_dir().join("closegate");
    std::fs::create_dir_all(&audit).unwrap();
    std::fs::write(audit.join("audit.jsonl"), format!("{forged}\n")).unwrap();
    let served = Served::start(&s.fx.root());
    let (_, _, body) = served.get("/");
    assert!(
        body.contains("data-slug=\"forge\" data-stage=\"VERIFYING\""),
        "{body}"
    );
    assert!(
        body.contains("1 audit lines do not carry a valid mac"),
        "{body}"
    );
}

#[test]
fn open_hands_the_url_to_the_desktop_browser() {
    let s = scene();
    let bin = s.fx.tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let opened = s.fx.tmp.path().join("opened");
    let opener = bin.join("xdg-open");
    std::fs::write(
        &opener,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$1\" > {}.tmp && mv {0}.tmp {0}\n",
            opened.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_closegate"));
    cmd.args(["serve", "--open"]).current_dir(s.fx.root());
    hermetic(&mut cmd, &s.fx.root());
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.env("PATH", path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut url = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let start = Instant::now();
    while !opened.exists() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(std::fs::read_to_string(&opened).unwrap(), url);
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
}

/// The conflict radar (SPEC §22, §25): two live agent branches that change the same line
/// differently appear as a pair with the path, as `board --conflicts` lists them; the branch
/// names are agent text and escaped.
#[test]
fn the_page_draws_the_conflict_radar_that_board_conflicts_lists() {
    let s = scene();
    let (one, _) = s.agent(
        "one",
        "close-ok",
        "first take",
        &[("src/shared.rs", Some("fn f() -> u8 { 1 }\n"))],
    );
    let (two, _) = s.agent(
        "two",
        "close-ok",
        "second take",
        &[("src/shared.rs", Some("fn f() -> u8 { 2 }\n"))],
    );
    assert_eq!(check(&one), "VERIFIED");
    assert_eq!(check(&two), "VERIFIED");
    let listed = closegate(&s.fx.root(), &["board", "--conflicts", "--json"]);
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(
        listed["conflicts"][0]["paths"][0], "src/shared.rs",
        "{listed}"
    );
    let served = Served::start(&s.fx.root());
    let (status, _, page) = served.get("/");
    assert_eq!(status, 200);
    let radar = page
        .split("<section class=\"radar\">")
        .nth(1)
        .unwrap_or_else(|| panic!("no radar section: {page}"));
    let item = radar.split("</section>").next().unwrap();
    assert!(item.contains("agent/one"), "{item}");
    assert!(item.contains("agent/two"), "{item}");
    assert!(item.contains("src/shared.rs"), "{item}");
}
