//! `closegate serve` (SPEC §25): the board in a browser, live, read-only, on 127.0.0.1 only.
//!
//! Every request but a malformed one must carry the random token the printed URL holds; without
//! it the answer is 403, so another user of the machine cannot read the board. Nothing here
//! writes: each answer reads git and the audit log the way `board` and `log` do (authenticated
//! records only, where a record key exists), holds no lock, and is computed afresh, so a deleted
//! worktree, a cut-short log line or a repository that went away is shown, not fatal.
//!
//! Routes (all `GET`, all with `?token=`): `/` the page, `/fragment` its live part, `/app.js`
//! the script, `/events` the event stream, `/api/board` and `/api/log` exactly what `board
//! --json` and `log --json` print (the same functions compute them).

pub mod admit;
pub mod chart;
pub mod http;
pub mod markup;
pub mod page;
pub mod view;
pub mod watch;

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::repo::Repo;
use http::{Refused, Request};
use watch::Changes;

/// The most requests served at once (event streams hold one each); more are answered 503.
/// Connections still sending their head do not count: [`admit`] bounds those, per peer.
const MAX_CONNECTIONS: usize = 64;
/// How long an event stream stays quiet before a keep-alive comment.
const KEEPALIVE: Duration = Duration::from_secs(15);

/// A bound server: its socket, token and the repository it shows.
pub struct Server {
    listener: TcpListener,
    shared: Arc<Shared>,
}

struct Shared {
    token: String,
    /// Where the repository is opened from for each answer: its common dir.
    common: PathBuf,
    port: u16,
    changes: Arc<Changes>,
    active: AtomicUsize,
    /// Connections that have not sent their whole request head yet.
    waiting: admit::Waiting,
    /// The status document's name (what the watcher stats in each worktree).
    status_file: String,
    /// The view last read and the fingerprint (`watch::fingerprint`) of the files it was read
    /// from: read again only when they changed, so every reader of one state shares one read.
    cache: Mutex<Option<(u64, Arc<view::View>)>>,
}

impl Server {
    /// Bind 127.0.0.1 (`port`, or a free one) for the repository `repo`, with a fresh token.
    pub fn bind(repo: &Repo, port: Option<u16>) -> Result<Server> {
        let addr = SocketAddrV4::new(Ipv4Addr::LOCALHOST, port.unwrap_or(0));
        let listener = TcpListener::bind(addr)
            .with_context(|| format!("cannot listen on 127.0.0.1:{}", port.unwrap_or(0)))?;
        let port = listener.local_addr()?.port();
        let common = crate::repo::canonical(&repo.common_dir());
        let status_file = crate::inputs::trusted_config(repo, None, None)
            .map(|t| t.config.status_file)
            .unwrap_or_else(|_| "_EXEC_STATUS.md".to_string());
        let changes = Arc::new(Changes::default());
        watch::spawn(common.clone(), status_file.clone(), changes.clone());
        let shared = Arc::new(Shared {
            token: token()?,
            common,
            port,
            changes,
            active: AtomicUsize::new(0),
            waiting: admit::Waiting::default(),
            status_file,
            cache: Mutex::new(None),
        });
        // Read once before the URL is printed, so the first page is ready when asked for.
        let _ = current_view(&shared);
        Ok(Server { listener, shared })
    }

    /// `http://127.0.0.1:<port>/?token=<token>`.
    pub fn url(&self) -> String {
        format!(
            "http://127.0.0.1:{}/?token={}",
            self.shared.port, self.shared.token
        )
    }

    /// Answer connections until the process ends, each on its own thread. A connection waits
    /// for its head among the peer's few ([`admit`]) and at most [`http::HEAD_DEADLINE`].
    pub fn run(self) -> Result<i32> {
        for stream in self.listener.incoming() {
            let Ok(stream) = stream else { continue };
            let (Ok(peer), Ok(handle_of)) = (stream.peer_addr(), stream.try_clone()) else {
                continue;
            };
            let shared = self.shared.clone();
            let ticket = shared.waiting.admit(peer.ip(), handle_of);
            std::thread::spawn(move || handle(&shared, stream, ticket));
        }
        Ok(0)
    }
}

/// 16 random bytes as hex.
fn token() -> Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| anyhow::anyhow!("no random bytes for the token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Equal in constant time (`subtle`, whose comparison the optimiser cannot turn into an early
/// exit), so the time an answer takes says nothing about the token. The length is public: every
/// token is 32 hex digits.
fn same(given: &str, token: &str) -> bool {
    use subtle::ConstantTimeEq;
    given.len() == token.len() && bool::from(given.as_bytes().ct_eq(token.as_bytes()))
}

fn handle(shared: &Shared, stream: TcpStream, ticket: u64) {
    let read = http::read_request(&stream, http::HEAD_DEADLINE);
    shared.waiting.done(ticket);
    let mut out = &stream;
    let request = match read {
        Ok(r) => r,
        Err(Refused::Gone) => return,
        Err(Refused::TooLarge) => {
            let _ = http::respond(&mut out, 431, "text/plain", b"request too large\n");
            return;
        }
        Err(Refused::BadRequest) => {
            let _ = http::respond(&mut out, 400, "text/plain", b"bad request\n");
            return;
        }
    };
    if let Some(why) = refusal(shared, &request) {
        let _ = http::respond(&mut out, 403, "text/plain", why.as_bytes());
        return;
    }
    if request.method != "GET" {
        let _ = http::respond(&mut out, 405, "text/plain", b"read-only: GET only\n");
        return;
    }
    if shared.active.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
        let _ = http::respond(&mut out, 503, "text/plain", b"too many connections\n");
    } else {
        let _ = answer(shared, &request, &mut out);
    }
    shared.active.fetch_sub(1, Ordering::SeqCst);
}

/// Why a request is refused (403): no or a wrong token, or a `Host` that is not this server
/// (a page elsewhere that resolved its own name to 127.0.0.1).
fn refusal(shared: &Shared, request: &Request) -> Option<&'static str> {
    if !request
        .param("token")
        .is_some_and(|t| same(&t, &shared.token))
    {
        return Some("forbidden: the URL closegate serve printed carries the token\n");
    }
    let host_ok = request.host.as_deref().is_none_or(|host| {
        let port = shared.port.to_string();
        host.strip_prefix("127.0.0.1:")
            .or_else(|| host.strip_prefix("localhost:"))
            == Some(port.as_str())
    });
    (!host_ok).then_some("forbidden: wrong Host\n")
}

fn answer(shared: &Shared, request: &Request, out: &mut dyn Write) -> std::io::Result<()> {
    match request.path.as_str() {
        "/" | "/fragment" => {
            let started = Instant::now();
            let (status, body) = match current_view(shared) {
                Ok((generation, v)) if request.path == "/" => {
                    let root = shown_root(&shared.common);
                    (200, page::page(&v, &root, &shared.token, generation))
                }
                Ok((generation, v)) => (200, page::live(&v, generation)),
                Err(e) => (503, gone_page(shared, &e)),
            };
            let timing = started.elapsed().as_secs_f64() * 1000.0;
            http::respond_timed(
                out,
                status,
                "text/html; charset=utf-8",
                body.as_bytes(),
                timing,
            )
        }
        "/app.js" => http::respond(
            out,
            200,
            "text/javascript; charset=utf-8",
            page::SCRIPT.as_bytes(),
        ),
        "/events" => events(shared, out),
        "/api/board" => api(shared, out, "application/json", |repo| {
            let recorded = crate::board::recorded(repo)?;
            Ok(crate::render::board::json_text(&recorded.rows)?)
        }),
        "/api/log" => api(shared, out, "application/x-ndjson", |repo| {
            let read = crate::ledger::read(&repo.common_dir())?;
            let everything = crate::stats::Filter::everything();
            Ok(crate::stats::json_text(&crate::stats::listing(
                &read,
                &everything,
            )))
        }),
        _ => http::respond(out, 404, "text/plain", b"not found\n"),
    }
}

/// The current view and the watcher's generation: the cached view when none of the files the
/// watcher looks at changed since it was read (their stat is taken now, so a change is never
/// missed between two polls), else read now, under the cache's lock so that readers of one
/// change share one read. A repository that cannot be read is never cached.
fn current_view(shared: &Shared) -> Result<(u64, Arc<view::View>)> {
    let mut cache = shared.cache.lock().unwrap_or_else(|e| e.into_inner());
    let generation = shared.changes.now();
    let fingerprint = watch::fingerprint(&shared.common, &shared.status_file);
    if let Some((at, v)) = cache.as_ref()
        && *at == fingerprint
        && !view::gone(&shared.common)
    {
        return Ok((generation, v.clone()));
    }
    *cache = None;
    let v = Arc::new(view::read(&open(shared)?)?);
    *cache = Some((fingerprint, v.clone()));
    Ok((generation, v))
}

/// The repository, opened afresh from its common dir.
fn open(shared: &Shared) -> Result<Repo> {
    if view::gone(&shared.common) {
        anyhow::bail!("it is gone (nothing at {})", shared.common.display());
    }
    Repo::discover(&shared.common)
}

fn gone_page(shared: &Shared, err: &anyhow::Error) -> String {
    page::gone(&shown_root(&shared.common), &format!("{err:#}"))
}

/// The repository as people name it: the main worktree for a `.git` folder, else the folder.
fn shown_root(common: &std::path::Path) -> String {
    let root = match common.file_name() {
        Some(name) if name == ".git" => common.parent().unwrap_or(common),
        _ => common,
    };
    root.display().to_string()
}

/// An API answer: `compute`'s bytes, or 503 with the reason as JSON.
fn api(
    shared: &Shared,
    out: &mut dyn Write,
    content_type: &str,
    compute: impl FnOnce(&Repo) -> Result<Vec<u8>>,
) -> std::io::Result<()> {
    let started = Instant::now();
    match open(shared).and_then(|repo| compute(&repo)) {
        Ok(body) => {
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            http::respond_timed(out, 200, content_type, &body, ms)
        }
        Err(e) => {
            let body = serde_json::to_string(&ApiError {
                error: format!("{e:#}"),
            })?;
            http::respond(out, 503, "application/json", body.as_bytes())
        }
    }
}

/// The event stream: `hello` with the current generation, then `change` each time the watcher
/// saw the board change, and a comment when quiet (a closed page ends the thread).
fn events(shared: &Shared, out: &mut dyn Write) -> std::io::Result<()> {
    http::start_events(out)?;
    let mut seen = shared.changes.now();
    http::event(out, "hello", &seen.to_string())?;
    loop {
        let now = shared.changes.wait_past(seen, KEEPALIVE);
        if now > seen {
            seen = now;
            http::event(out, "change", &seen.to_string())?;
        } else {
            out.write_all(b": keep-alive\n\n")?;
            out.flush()?;
        }
    }
}

/// The body of an `/api/…` answer when the repository cannot be read: `{"error": "…"}`.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct ApiError {
    error: String,
}

#[cfg(test)]
mod tests {
    /// The token compare: equal only byte for byte and length for length.
    #[test]
    fn same_is_equality_of_the_whole_token() {
        let token = "0123456789abcdef0123456789abcdef";
        assert!(super::same(token, token));
        assert!(!super::same("0123456789abcdef0123456789abcdee", token));
        assert!(!super::same(&token[..31], token));
        assert!(!super::same("", token));
        assert!(!super::same(&format!("{token}0"), token));
    }
}
