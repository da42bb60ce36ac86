//! Just enough HTTP/1.1 for one local reader (SPEC §25): a `GET` request line and its headers
//! in, one response with a length (or an event stream) out, then the connection closes.
//!
//! Written by hand over std's `TcpListener` rather than with a server crate: the server answers
//! a handful of `GET`s from one browser on 127.0.0.1, and this file is smaller than the
//! configuration of any crate that would do it (and adds nothing to the build or the lock file).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The most a request line and its headers may take; a longer request is refused (431).
const MAX_HEAD: u64 = 16 * 1024;

/// One parsed request: its method, path and query (still percent-encoded) and `Host`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub query: String,
    pub host: Option<String>,
}

impl Request {
    /// The value of `name` in the query (`a=1&b=2`), percent-decoded.
    pub fn param(&self, name: &str) -> Option<String> {
        self.query.split('&').find_map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (key == name).then(|| percent_decode(value))
        })
    }
}

/// Why a request could not be read: the status to answer with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    BadRequest,
    TooLarge,
    /// The peer closed or went silent before a request arrived: answer nothing.
    Gone,
}

/// How long a connection may take to send its whole request head (SPEC §26.5): a deadline for
/// the head, not a timeout per read, so a peer trickling one byte at a time is closed too.
pub const HEAD_DEADLINE: Duration = Duration::from_secs(5);

/// Read one request's head from `stream`: the whole head within `within` of now, or
/// [`Refused::Gone`].
pub fn read_request(stream: &TcpStream, within: Duration) -> Result<Request, Refused> {
    let until = Instant::now() + within;
    let reader = Deadline { stream, until };
    let mut reader = BufReader::new(reader.take(MAX_HEAD + 1));
    let mut head = Vec::new();
    loop {
        let before = head.len();
        let read = reader
            .read_until(b'\n', &mut head)
            .map_err(|_| Refused::Gone)?;
        if read == 0 {
            return Err(if head.is_empty() {
                Refused::Gone
            } else if head.len() as u64 > MAX_HEAD {
                Refused::TooLarge
            } else {
                Refused::BadRequest
            });
        }
        if head[before..] == *b"\r\n" || head[before..] == *b"\n" {
            break;
        }
    }
    parse_head(&head)
}

/// A stream whose reads all end by `until`: each read waits at most the time left.
struct Deadline<'a> {
    stream: &'a TcpStream,
    until: Instant,
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left))?;
        (&mut &*self.stream).read(buf)
    }
}

/// The request line and the `Host` header of a request's head.
pub fn parse_head(head: &[u8]) -> Result<Request, Refused> {
    let text = std::str::from_utf8(head).map_err(|_| Refused::BadRequest)?;
    let mut lines = text.lines();
    let line = lines.next().ok_or(Refused::BadRequest)?;
    let mut words = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return Err(Refused::BadRequest);
    };
    if !version.starts_with("HTTP/1.") || !target.starts_with('/') {
        return Err(Refused::BadRequest);
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let host = lines.find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("host")
            .then(|| value.trim().to_string())
    });
    Ok(Request {
        method: method.to_string(),
        path: path.to_string(),
        query: query.to_string(),
        host,
    })
}

/// `%XX` decoded (and `+` as a space, as forms write it); a bad escape is kept as written.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The headers every answer carries: nothing is cached, nothing is framed, no script or style
/// is loaded from anywhere but this server, and the token in the URL is never sent on as a
/// referrer. The policy is the second line of defence behind escaping: a value that slipped
/// through as markup still cannot run a script.
const SECURITY: &str = "Cache-Control: no-store\r\n\
    X-Content-Type-Options: nosniff\r\n\
    X-Frame-Options: DENY\r\n\
    Referrer-Policy: no-referrer\r\n\
    Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'\r\n";

/// Write a whole response: status, type, length, the security headers and the body.
pub fn respond(
    out: &mut dyn Write,
    status: u16,
    content_type: &str,
    body: &[u8],
) -> std::io::Result<()> {
    respond_with(out, status, content_type, body, "")
}

/// [`respond`] with a `Server-Timing` header: the milliseconds the server took to compute
/// `body` (what `scripts/bench-serve.sh` reads).
pub fn respond_timed(
    out: &mut dyn Write,
    status: u16,
    content_type: &str,
    body: &[u8],
    ms: f64,
) -> std::io::Result<()> {
    let timing = format!("Server-Timing: total;dur={ms:.3}\r\n");
    respond_with(out, status, content_type, body, &timing)
}

fn respond_with(
    out: &mut dyn Write,
    status: u16,
    content_type: &str,
    body: &[u8],
    extra: &str,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{SECURITY}{extra}Connection: close\r\n\r\n",
        reason(status),
        body.len()
    );
    // One write for head and body: a small answer leaves in one segment.
    let mut all = head.into_bytes();
    all.extend_from_slice(body);
    out.write_all(&all)?;
    out.flush()
}

/// Start an event stream (`text/event-stream`); events follow with [`event`].
pub fn start_events(out: &mut dyn Write) -> std::io::Result<()> {
    write!(
        out,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n{SECURITY}Connection: close\r\n\r\nretry: 500\n\n"
    )?;
    out.flush()
}

/// One server-sent event named `name` with one line of `data`.
pub fn event(out: &mut dyn Write, name: &str, data: &str) -> std::io::Result<()> {
    write!(out, "event: {name}\ndata: {data}\n\n")?;
    out.flush()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_line_and_its_host() {
        let r = parse_head(b"GET /api/board?token=ab%63&x HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n")
            .unwrap();
        assert_eq!(r.method, "GET");
        assert_eq!(r.path, "/api/board");
        assert_eq!(r.param("token").as_deref(), Some("abc"));
        assert_eq!(r.param("x").as_deref(), Some(""));
        assert_eq!(r.param("y"), None);
        assert_eq!(r.host.as_deref(), Some("127.0.0.1:9"));
    }

    #[test]
    fn malformed_requests_are_refused() {
        for head in [
            &b"GET\r\n\r\n"[..],
            b"GET / HTTP/1.1 extra\r\n\r\n",
            b"GET http://x/ HTTP/1.1\r\n\r\n",
            b"GET / SPDY/3\r\n\r\n",
            b"\xff / HTTP/1.1\r\n\r\n",
        ] {
            assert_eq!(parse_head(head), Err(Refused::BadRequest), "{head:?}");
        }
    }

    /// A peer that sends a byte every 50 ms never finishes its head within 300 ms: it is gone at
    /// the deadline, however recent its last byte; a whole head sent in pieces within it is read.
    #[test]
    fn the_head_has_a_deadline_not_a_timeout_per_read() {
        use std::net::TcpListener;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let trickle = |bytes: &'static [u8]| {
            std::thread::spawn(move || {
                let mut client = TcpStream::connect(addr).unwrap();
                for b in bytes {
                    if client.write_all(&[*b]).is_err() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                client
            })
        };
        let slow =
            trickle(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: aaaaaaaaaaaaaaaaaa\r\n\r\n");
        let (server, _) = listener.accept().unwrap();
        let started = Instant::now();
        assert_eq!(
            read_request(&server, Duration::from_millis(300)),
            Err(Refused::Gone)
        );
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(290) && took < Duration::from_millis(1500),
            "{took:?}"
        );
        drop(slow.join());
        // The control: a short head in pieces, inside the deadline.
        let quick = trickle(b"GET /x HTTP/1.1\r\n\r\n");
        let (server, _) = listener.accept().unwrap();
        let read = read_request(&server, Duration::from_secs(10)).unwrap();
        assert_eq!(read.path, "/x");
        drop(quick.join());
    }

    #[test]
    fn percent_escapes() {
        assert_eq!(percent_decode("a%2Fb+c"), "a/b c");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }
}
