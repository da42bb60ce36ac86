//! `closegate serve`'s page in a real browser (SPEC §25): Chromium headless from the
//! distribution's package (`.ci/run` installs it), driven with `--screenshot` and the DevTools
//! protocol over its websocket (a few lines of framing here rather than an async client crate).
//! `--dump-dom` is not used: it needs the page's scripts on to serialise it, and a virtual time
//! budget never runs out while the event stream is open.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fixture::{self, Part};
use crate::serve::{ServeScene, Served, check, scene};

/// The browser binary: `chromium` on PATH (Debian's package). Each test first asks
/// [`fixture::require`] for it, and is skipped (saying so) when it is absent.
fn chromium() -> PathBuf {
    fixture::require(Part::Chromium).expect("chromium: the test checks for it first")
}

/// A headless Chromium command with a fresh profile under `tmp`.
fn browser(tmp: &Path, extra: &[&str]) -> Command {
    let profile = tempfile::tempdir_in(tmp).unwrap().keep();
    let mut cmd = Command::new(chromium());
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .env("HOME", tmp)
    .stdin(Stdio::null());
    cmd
}

/// The page's DOM once it has loaded, with scripts on or off (`--dump-dom` needs scripts to
/// serialise the page, so the DevTools protocol reads it instead). With scripts, also waits for
/// the event stream to connect.
fn dom(tmp: &Path, url: &str, scripts: bool) -> String {
    let mut page = Page::open(tmp, url, scripts);
    let start = Instant::now();
    loop {
        let html = page.html();
        if html.contains("</main>") {
            if !scripts {
                return html;
            }
            let state = "document.getElementById('live-state').textContent";
            page.wait_for(state, &json!("live"), Duration::from_secs(20));
            return page.html();
        }
        assert!(start.elapsed() < Duration::from_secs(20), "no page: {html}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `(slug, stage)` of every row in a dumped DOM, in order.
fn rows(dom: &str) -> Vec<(String, String)> {
    dom.split("<tr class=\"row ")
        .skip(1)
        .map(|rest| {
            let attr = |name: &str| {
                let at = rest.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
                rest[at..at + rest[at..].find('"').unwrap()].to_string()
            };
            (attr("data-slug"), attr("data-stage"))
        })
        .collect()
}

#[test]
fn one_row_per_worktree_with_its_stage_with_and_without_scripts() {
    if fixture::require(Part::Chromium).is_none() {
        return;
    }
    let s = scene();
    let want = s.four_stages();
    let served = Served::start(&s.fx.root());
    let url = served.url("/");
    let tmp = s.fx.tmp.path();
    let with = dom(tmp, &url, true);
    let without = dom(tmp, &url, false);
    let got = rows(&with);
    assert_eq!(got.len(), 5, "the main worktree and four agents: {got:?}");
    assert_eq!(got[0], (String::new(), "RUNNING".to_string()), "main first");
    for (slug, stage) in want {
        assert!(
            got.contains(&(slug.to_string(), stage.to_string())),
            "{slug} {stage} in {got:?}"
        );
    }
    assert_eq!(rows(&without), got, "the same rows without JavaScript");
    // With scripts the event stream connected; without, the page is as served.
    assert!(with.contains("id=\"live-state\">live<"), "{with}");
    assert!(
        without.contains("id=\"live-state\">as loaded<"),
        "{without}"
    );
    // The charts are in the page itself.
    assert_eq!(without.matches("<svg").count(), 3, "{without}");
}

#[test]
fn html_in_agent_text_renders_as_text() {
    if fixture::require(Part::Chromium).is_none() {
        return;
    }
    let s = scene();
    let abstract_text =
        "<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>";
    let (wt, _) = s.agent("esc", "close-ok", abstract_text, &[("README.md", None)]);
    assert_eq!(check(&wt), "FAIL");
    let served = Served::start(&s.fx.root());
    let dom = dom(s.fx.tmp.path(), &served.url("/"), true);
    assert!(dom.contains("<title>closegate board</title>"), "{dom}");
    assert!(!dom.contains("pwned</title>"), "{dom}");
    assert!(!dom.contains("<img"), "{dom}");
    // The browser shows the characters: in the DOM they are text, serialised as entities.
    assert!(
        dom.contains("&lt;img src=x onerror=\"document.title='pwned'\"&gt;&lt;script&gt;"),
        "{dom}"
    );
    assert!(
        dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "check output: {dom}"
    );
}

#[test]
fn a_screenshot_at_1280_by_800_is_not_blank() {
    if fixture::require(Part::Chromium).is_none() {
        return;
    }
    let s = scene();
    s.four_stages();
    let served = Served::start(&s.fx.root());
    let shot = s.fx.tmp.path().join("serve.png");
    let out = browser(
        s.fx.tmp.path(),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,800",
            "--hide-scrollbars",
        ],
    )
    .arg(served.url("/"))
    .stderr(Stdio::null())
    .stdout(Stdio::null())
    .status()
    .unwrap();
    assert!(out.success());
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
    assert_eq!((width, height), (1280, 800));
    // A blank 1280×800 page compresses to about a kilobyte; text, tables and charts do not.
    assert!(png.len() > 20_000, "{} bytes", png.len());
    if std::env::var_os("CLOSEGATE_UPDATE_SCREENSHOT").is_some() {
        let to = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/serve-board.png");
        std::fs::write(to, &png).unwrap();
    }
}

#[test]
fn a_check_run_while_the_page_is_open_shows_without_a_reload() {
    if fixture::require(Part::Chromium).is_none() {
        return;
    }
    let s = scene();
    let (wt, _) = s.agent("live", "close-ok", "live", &[("src/l.rs", Some("l\n"))]);
    let served = Served::start(&s.fx.root());
    let mut page = Page::open(s.fx.tmp.path(), &served.url("/"), true);
    let stage = "document.querySelector('tr.row[data-slug=\"live\"]').dataset.stage";
    let state = "document.getElementById('live-state').textContent";
    page.wait_for(state, &json!("live"), Duration::from_secs(20));
    assert_eq!(page.eval(stage), json!("VERIFYING"));
    page.eval("window.loadedOnce = true");
    assert_eq!(check(&wt), "VERIFIED");
    let done = Instant::now();
    page.wait_for(stage, &json!("COMPLETED"), Duration::from_secs(2));
    eprintln!(
        "check finished → page shows COMPLETED: {:?}",
        done.elapsed()
    );
    // Without a reload: the window's own state survived.
    assert_eq!(page.eval("window.loadedOnce === true"), json!(true));
}

/// A page in headless Chromium, driven over the DevTools protocol.
struct Page {
    child: Child,
    socket: TcpStream,
    next_id: u64,
}

impl Page {
    fn open(tmp: &Path, url: &str, scripts: bool) -> Page {
        let mut extra = vec!["--remote-debugging-port=0", "--window-size=1280,800"];
        if !scripts {
            extra.push("--blink-settings=scriptEnabled=false");
        }
        let mut child = browser(tmp, &extra)
            .arg(url)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let port = loop {
            let mut line = String::new();
            assert!(stderr.read_line(&mut line).unwrap() > 0, "chromium ended");
            if let Some(rest) = line
                .trim()
                .strip_prefix("DevTools listening on ws://127.0.0.1:")
            {
                break rest.split('/').next().unwrap().parse::<u16>().unwrap();
            }
        };
        // Keep draining stderr so the browser never blocks on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        let ws = page_socket_path(port);
        let socket = websocket(port, &ws);
        socket
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        Page {
            child,
            socket,
            next_id: 0,
        }
    }

    /// Call a DevTools method; its result.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({"id": id, "method": method, "params": params});
        send_text(&mut self.socket, &message.to_string());
        loop {
            let reply: Value = serde_json::from_str(&read_text(&mut self.socket)).unwrap();
            if reply["id"] == id {
                return reply["result"].clone();
            }
        }
    }

    /// The value of a JavaScript expression in the page.
    fn eval(&mut self, expression: &str) -> Value {
        let params = json!({"expression": expression, "returnByValue": true});
        self.call("Runtime.evaluate", params)["result"]["value"].clone()
    }

    /// The document's markup as the browser holds it (no script of the page's needed).
    fn html(&mut self) -> String {
        let root = self.call("DOM.getDocument", json!({"depth": 0}));
        let id = root["root"]["nodeId"].clone();
        let html = self.call("DOM.getOuterHTML", json!({"nodeId": id}));
        html["outerHTML"].as_str().unwrap_or_default().to_string()
    }

    /// Poll `expression` until it is `want`; panics after `within`.
    fn wait_for(&mut self, expression: &str, want: &Value, within: Duration) {
        let start = Instant::now();
        loop {
            let got = self.eval(expression);
            if got == *want {
                return;
            }
            assert!(
                start.elapsed() < within,
                "{expression} is {got}, not {want}, after {within:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The websocket path of the first page target (`/json/list`), waiting for it to appear.
fn page_socket_path(port: u16) -> String {
    let start = Instant::now();
    loop {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(
            s,
            "GET /json/list HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        // Chromium keeps the connection open: read the head, then exactly Content-Length bytes.
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let head = read_head(&mut s);
        let length = head
            .lines()
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse::<usize>().ok())?
            })
            .unwrap_or(0);
        let mut body = vec![0u8; length];
        s.read_exact(&mut body).unwrap();
        let targets: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let page = targets
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["type"] == "page");
        if let Some(url) = page.and_then(|t| t["webSocketDebuggerUrl"].as_str()) {
            let at = url.find("/devtools/").unwrap();
            return url[at..].to_string();
        }
        assert!(start.elapsed() < Duration::from_secs(20), "no page target");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A client websocket on `path` (RFC 6455 handshake; the accept key is not checked: this is
/// the browser we started, on 127.0.0.1).
fn websocket(port: u16, path: &str) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    .unwrap();
    let head = read_head(&mut s);
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    s
}

/// An HTTP response's head, byte by byte up to the blank line (nothing of the body).
fn read_head(s: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        s.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// Send one masked text frame.
fn send_text(s: &mut TcpStream, text: &str) {
    let payload = text.as_bytes();
    let mut frame = vec![0x81u8];
    match payload.len() {
        n if n < 126 => frame.push(0x80 | n as u8),
        n if n < 65536 => {
            frame.push(0x80 | 126);
            frame.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            frame.push(0x80 | 127);
            frame.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    let mask = [0x37u8, 0xfa, 0x21, 0x3d];
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    s.write_all(&frame).unwrap();
}

/// Read one whole text message (continuation frames joined; control frames skipped).
fn read_text(s: &mut TcpStream) -> String {
    let mut message = Vec::new();
    loop {
        let mut head = [0u8; 2];
        s.read_exact(&mut head).unwrap();
        let (fin, opcode) = (head[0] & 0x80 != 0, head[0] & 0x0f);
        let len = match head[1] & 0x7f {
            126 => {
                let mut b = [0u8; 2];
                s.read_exact(&mut b).unwrap();
                u16::from_be_bytes(b) as usize
            }
            127 => {
                let mut b = [0u8; 8];
                s.read_exact(&mut b).unwrap();
                u64::from_be_bytes(b) as usize
            }
            n => n as usize,
        };
        let mut payload = vec![0u8; len];
        s.read_exact(&mut payload).unwrap();
        if opcode >= 0x8 {
            continue; // ping, pong, close: nothing this client needs
        }
        message.extend_from_slice(&payload);
        if fin {
            return String::from_utf8(message).unwrap();
        }
    }
}
