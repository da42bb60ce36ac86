//! The append-only record: `<git common dir>/closegate/audit.jsonl` and archived documents (SPEC §6).
//!
//! Every append serialises the record to one line first, takes an exclusive lock on the file and
//! writes that line with a single `write_all`; the file is opened for append only and is never
//! rewritten or truncated. Reading never fails on a bad line: torn or foreign lines are skipped
//! and reported with their line number.
//!
//! With a record key (`key`), every line written carries `prev` (the previous line's `mac`, read
//! under the same lock) and `mac`, and [`read_mentioning`] and [`read_authentic`] — the readers
//! whose records decide something — return only the lines whose `mac` verifies. Both go through
//! [`authentic`], the one place that decides whether a line counts.

pub mod key;
mod search;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use self::key::Key;

/// `<common>/closegate`: where closegate keeps its record.
pub fn dir(common_dir: &Path) -> PathBuf {
    common_dir.join("closegate")
}

/// `<common>/closegate/audit.jsonl`: one JSON record per line.
pub fn audit_path(common_dir: &Path) -> PathBuf {
    dir(common_dir).join("audit.jsonl")
}

/// The record's time stamps are written by the one date module.
pub use crate::date::{now_rfc3339, rfc3339};

/// Append one record as one whole line under an exclusive lock. With a record key the line is
/// signed (`prev`, then `mac`); the previous line's `mac` is read under the same lock.
pub fn append(common_dir: &Path, record: &Value) -> Result<()> {
    let key = key::load()?;
    let path = audit_path(common_dir);
    if key.is_some() && !record.is_object() {
        bail!("an audit record must be a JSON object to be signed");
    }
    std::fs::create_dir_all(dir(common_dir))
        .with_context(|| format!("creating {}", dir(common_dir).display()))?;
    refuse_link_dir(&dir(common_dir))?;
    let mut file = open_log(
        &path,
        OpenOptions::new().read(true).append(true).create(true),
    )?;
    file.lock()
        .with_context(|| format!("locking {}", path.display()))?;
    let written = locked_append(&mut file, record, key.as_ref());
    let unlocked = file.unlock();
    written.with_context(|| format!("appending to {}", path.display()))?;
    unlocked.with_context(|| format!("unlocking {}", path.display()))
}

/// Open the audit log without following a symbolic link and without blocking, and take it only
/// when the opened handle is a regular file: the log lives in the common directory the agent can
/// write, so a link to another file, a FIFO or a device planted at its name is an error naming
/// it (SPEC §11), never a write elsewhere or a hang.
fn open_log(path: &Path, options: &mut OpenOptions) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = options
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .with_context(|| {
            format!(
                "cannot open the audit log {} (a symbolic link is refused)",
                path.display()
            )
        })?;
    let meta = file
        .metadata()
        .with_context(|| format!("cannot stat the audit log {}", path.display()))?;
    if !meta.is_file() {
        bail!("the audit log {} is not a regular file", path.display());
    }
    Ok(file)
}

/// The record's folder lives in the common directory the agent can write: a symbolic link planted
/// at its name is an error naming it, never a record written where it points.
fn refuse_link_dir(dir: &Path) -> Result<()> {
    let meta =
        std::fs::symlink_metadata(dir).with_context(|| format!("cannot stat {}", dir.display()))?;
    if !meta.is_dir() {
        bail!(
            "{} is a symbolic link or not a directory: closegate keeps its record only inside the \
             common directory and follows no link there",
            dir.display()
        );
    }
    Ok(())
}

/// Whether anything (a link included) is at `path`.
fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Under the lock: serialise (and sign) the record and write it.
fn locked_append(file: &mut File, record: &Value, key: Option<&Key>) -> Result<()> {
    let mut line = match key {
        Some(key) => signed_line(key, record, &last_mac(file)?),
        None => serde_json::to_string(record).context("serialising the audit record")?,
    };
    line.push('\n');
    write_line(file, line)?;
    Ok(())
}

/// The line of a keyed record: `prev` set, the JSON without `mac` signed, then `mac` added. The
/// line's keys are in serde_json's order (sorted), so removing `mac` from the stored line and
/// serialising again gives back exactly the bytes that were signed.
fn signed_line(key: &Key, record: &Value, prev: &str) -> String {
    let mut value = record.clone();
    let object = value.as_object_mut().expect("checked to be an object");
    object.remove("mac");
    object.insert("prev".into(), Value::String(prev.to_string()));
    let unsigned = value.to_string();
    let mac = key.mac_hex(unsigned.as_bytes());
    value["mac"] = Value::String(mac);
    value.to_string()
}

/// The `mac` of the last non-blank line of the file, or `""` when that line has none (or there
/// is no line). The file is read backwards from its end, one chunk at a time.
fn last_mac(file: &File) -> Result<String> {
    const CHUNK: u64 = 1 << 16;
    let len = file.metadata()?.len();
    let mut end = len;
    let mut tail: Vec<u8> = Vec::new();
    while end > 0 {
        let start = end.saturating_sub(CHUNK);
        let mut chunk = vec![0u8; (end - start) as usize];
        file.read_exact_at(&mut chunk, start)?;
        chunk.extend_from_slice(&tail);
        tail = chunk;
        end = start;
        let trimmed = tail.trim_ascii_end();
        if let Some(nl) = search::memrchr(b'\n', trimmed) {
            return Ok(mac_of(&trimmed[nl + 1..]));
        }
    }
    Ok(mac_of(tail.trim_ascii_end()))
}

/// The `mac` member of one raw line, `""` when it has none.
fn mac_of(raw: &[u8]) -> String {
    match parse_line(raw) {
        Ok(Some(value)) => value["mac"].as_str().unwrap_or_default().to_string(),
        _ => String::new(),
    }
}

/// Write `line` in one `write_all`. When a crashed writer left the file without a final newline,
/// a newline is written first (in the same write) so the new record does not join the torn one.
fn write_line(file: &mut File, mut line: String) -> std::io::Result<()> {
    let len = file.metadata()?.len();
    if len > 0 {
        let mut last = [0u8; 1];
        file.read_exact_at(&mut last, len - 1)?;
        if last[0] != b'\n' {
            line.insert(0, '\n');
        }
    }
    file.write_all(line.as_bytes())
}

/// Whether a line counts, as far as its MAC goes (SPEC §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// There is no record key: nothing can be authenticated and records are plain.
    Plain,
    /// The line's `mac` verifies under the record key.
    Valid,
    /// A record key exists and the line has no `mac`, or one that does not verify: written by
    /// someone without the key (or altered since).
    Forged(&'static str),
}

impl Auth {
    /// Whether a reader that decides something may use the line.
    pub fn counts(self) -> bool {
        !matches!(self, Auth::Forged(_))
    }
}

/// Authenticate one parsed line: the one place that decides whether a record counts. Without
/// a key every line is plain; with one, only a line whose `mac` is the HMAC of the line's JSON
/// without `mac` (keys in the order written) counts.
pub fn authenticate(key: Option<&Key>, record: &Value) -> Auth {
    let Some(key) = key else {
        return Auth::Plain;
    };
    let Some(mac) = record.get("mac") else {
        return Auth::Forged("no mac");
    };
    let Some(mac) = mac.as_str() else {
        return Auth::Forged("mac is not a string");
    };
    let mut unsigned = record.clone();
    if let Some(object) = unsigned.as_object_mut() {
        object.remove("mac");
    }
    if key.verifies(unsigned.to_string().as_bytes(), mac) {
        Auth::Valid
    } else {
        Auth::Forged("mac does not verify")
    }
}

/// The records of the audit log and the lines that could not be read.
#[derive(Debug, Default)]
pub struct ReadResult {
    pub records: Vec<Value>,
    /// Per record, in the same order: its 1-based line number and whether it counts.
    pub lines: Vec<(usize, Auth)>,
    /// 1-based line number and the reason it was skipped.
    pub skipped: Vec<(usize, String)>,
    /// Whether a record key was found (lines were authenticated).
    pub keyed: bool,
}

impl ReadResult {
    /// The records that count (every one without a key; the authenticated ones with a key).
    pub fn counted(&self) -> impl Iterator<Item = &Value> {
        self.records
            .iter()
            .zip(&self.lines)
            .filter(|(_, (_, auth))| auth.counts())
            .map(|(record, _)| record)
    }
}

/// The records that count (see [`authenticate`]) whose line mentions `needle` as written (a full
/// commit id: hex is never escaped in JSON); a missing file reads as empty and unreadable lines
/// are left out. One substring scan of the log and a JSON parse of the few lines that match, so
/// a check's approval lookup does not grow with every record the repository ever kept.
pub fn read_mentioning(common_dir: &Path, needle: &str) -> Result<Vec<Value>> {
    read_mentioning_where(common_dir, &[needle], |_| true)
}

/// [`read_mentioning`] for several needles at once, parsing only the lines `wanted` keeps
/// (asked of the line's bytes; a reader that wants a few kinds of record need not parse the
/// others): the lines that mention any needle, each once and in log order (the order "newest"
/// is decided by, never the timestamps).
pub fn read_mentioning_where(
    common_dir: &Path,
    needles: &[&str],
    wanted: impl Fn(&[u8]) -> bool,
) -> Result<Vec<Value>> {
    mentioning(common_dir, needles, key::load()?.as_ref(), &wanted)
}

fn mentioning(
    common_dir: &Path,
    needles: &[&str],
    key: Option<&Key>,
    wanted: &dyn Fn(&[u8]) -> bool,
) -> Result<Vec<Value>> {
    use std::io::Read;
    const CHUNK: usize = 1 << 17;
    let path = audit_path(common_dir);
    let needles: Vec<&str> = needles.iter().copied().filter(|n| !n.is_empty()).collect();
    if needles.is_empty() || !exists(&path) {
        return Ok(Vec::new());
    }
    let mut file = open_log(&path, OpenOptions::new().read(true))?;
    let finders: Vec<search::Finder<'_>> = needles
        .iter()
        .map(|n| search::Finder::new(n.as_bytes()))
        .collect();
    let mut records = Vec::new();
    // Streamed in chunks: `pending` holds the bytes after the last complete line. A small log
    // takes a buffer of its own size (one more byte sees its end): zeroing 128 KiB for a log of
    // a few records was most of the stop hook's reading of it.
    let size = file.metadata().map_or(CHUNK as u64, |m| m.len());
    let buffer = usize::try_from(size).map_or(CHUNK, |n| n.saturating_add(1).min(CHUNK));
    let (mut chunk, mut pending) = (vec![0u8; buffer], Vec::new());
    loop {
        let read = file
            .read(&mut chunk)
            .with_context(|| format!("reading {}", path.display()))?;
        if read == 0 {
            scan_lines(&pending, &finders, wanted, &mut records);
            break;
        }
        pending.extend_from_slice(&chunk[..read]);
        if let Some(last) = search::memrchr(b'\n', &pending) {
            scan_lines(&pending[..last], &finders, wanted, &mut records);
            pending.drain(..=last);
        }
    }
    records.retain(|r| authenticate(key, r).counts());
    Ok(records)
}

/// Parse the lines of `bytes` that contain one of the needles, in order, each line once.
fn scan_lines(
    bytes: &[u8],
    finders: &[search::Finder<'_>],
    wanted: &dyn Fn(&[u8]) -> bool,
    out: &mut Vec<Value>,
) {
    if let [finder] = finders {
        // One needle: jump from match to match instead of walking every line.
        let mut rest = bytes;
        while let Some(at) = finder.find(rest) {
            let start = search::memrchr(b'\n', &rest[..at]).map_or(0, |i| i + 1);
            let end = search::memchr(b'\n', &rest[at..]).map_or(rest.len(), |i| at + i);
            let line = &rest[start..end];
            if wanted(line)
                && let Ok(Some(record)) = parse_line(line)
            {
                out.push(record);
            }
            rest = &rest[(end + 1).min(rest.len())..];
        }
        return;
    }
    for line in bytes.split(|b| *b == b'\n') {
        if finders.iter().any(|f| f.find(line).is_some())
            && wanted(line)
            && let Ok(Some(record)) = parse_line(line)
        {
            out.push(record);
        }
    }
}

/// Every record that counts (see [`authenticate`]), in log order: what the hook, the board and
/// teardown decide from.
pub fn read_authentic(common_dir: &Path) -> Result<Vec<Value>> {
    read_authentic_where(common_dir, |_| true)
}

/// The records that count and that `wanted` keeps, in log order. `wanted` is asked first, so only
/// the few records a decision can use pay for a MAC (the hook asks for passing verdicts only).
pub fn read_authentic_where(
    common_dir: &Path,
    wanted: impl Fn(&Value) -> bool,
) -> Result<Vec<Value>> {
    let key = key::load()?;
    Ok(raw_lines(common_dir)?
        .into_iter()
        .filter_map(|(_, parsed)| parsed.ok())
        .filter(|record| wanted(record) && authenticate(key.as_ref(), record).counts())
        .collect())
}

/// Read every record, each with its line number and its authentication; a missing file reads as
/// empty. Blank lines are ignored; lines that are not UTF-8, not JSON or not a JSON object are
/// skipped and reported.
pub fn read(common_dir: &Path) -> Result<ReadResult> {
    let key = key::load()?;
    let mut result = ReadResult {
        keyed: key.is_some(),
        ..ReadResult::default()
    };
    for (number, parsed) in raw_lines(common_dir)? {
        match parsed {
            Ok(record) => {
                let auth = authenticate(key.as_ref(), &record);
                result.lines.push((number, auth));
                result.records.push(record);
            }
            Err(reason) => result.skipped.push((number, reason)),
        }
    }
    Ok(result)
}

/// Each non-blank line of the log with its 1-based number, parsed or with the reason it is not a
/// record.
fn raw_lines(common_dir: &Path) -> Result<Vec<(usize, std::result::Result<Value, String>)>> {
    let path = audit_path(common_dir);
    if !exists(&path) {
        return Ok(Vec::new());
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut open_log(&path, OpenOptions::new().read(true))?,
        &mut bytes,
    )
    .with_context(|| format!("reading {}", path.display()))?;
    let lines = bytes.split(|b| *b == b'\n').enumerate();
    Ok(lines
        .filter_map(|(i, raw)| parse_line(raw).transpose().map(|parsed| (i + 1, parsed)))
        .collect())
}

/// One place where the keyed log breaks: a line that does not authenticate, or whose `prev` is
/// not the `mac` of the line before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Break {
    pub line: usize,
    pub reason: String,
}

/// The outcome of `log --verify`.
#[derive(Debug, Default)]
pub struct Verification {
    /// Non-blank lines read.
    pub lines: usize,
    /// Every break, in line order; the first is the first break.
    pub breaks: Vec<Break>,
}

/// Walk the whole log under `key`: every non-blank line must be a record whose `mac` verifies and
/// whose `prev` is the `mac` of the non-blank line before it (`""` when that line has none, or
/// for the first line). A deleted, inserted or moved line breaks the chain at the line after it;
/// a lost tail leaves no trace.
pub fn verify(common_dir: &Path, key: &Key) -> Result<Verification> {
    let mut out = Verification::default();
    let mut before: Option<(usize, String)> = None;
    for (number, parsed) in raw_lines(common_dir)? {
        out.lines += 1;
        let mac = parsed
            .as_ref()
            .ok()
            .map(|r| r["mac"].as_str().unwrap_or_default());
        let fault = match &parsed {
            Err(reason) => Some(format!("not a record ({reason})")),
            Ok(record) => match authenticate(Some(key), record) {
                Auth::Forged(why) => Some(format!("forged: {why}")),
                _ => chain_fault(record, before.as_ref()),
            },
        };
        if let Some(reason) = fault {
            out.breaks.push(Break {
                line: number,
                reason,
            });
        }
        before = Some((number, mac.unwrap_or_default().to_string()));
    }
    Ok(out)
}

/// Why `record`'s `prev` does not chain to the line before it, if it does not.
fn chain_fault(record: &Value, before: Option<&(usize, String)>) -> Option<String> {
    let prev = record["prev"].as_str();
    let expected = before.map_or("", |(_, mac)| mac.as_str());
    if prev == Some(expected) {
        return None;
    }
    Some(match before {
        Some((line, _)) if !expected.is_empty() => format!(
            "prev does not match the mac of line {line}: a line was deleted, inserted or moved here"
        ),
        Some((line, _)) => format!(
            "prev does not match line {line}, which has no mac: a line was deleted, inserted or moved here"
        ),
        None => "prev is not empty on the first line: a line was deleted or moved here".to_string(),
    })
}

/// One line: `Ok(None)` when blank, `Err(reason)` when it is not a JSON object.
fn parse_line(raw: &[u8]) -> std::result::Result<Option<Value>, String> {
    let text = std::str::from_utf8(raw).map_err(|_| "not valid utf-8".to_string())?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value) if value.is_object() => Ok(Some(value)),
        Ok(_) => Err("not a json object".to_string()),
        Err(e) => Err(format!("not json: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line that names one of `needles` (no `wanted` filter, no key).
    fn every(common_dir: &Path, needles: &[&str]) -> Vec<Value> {
        mentioning(common_dir, needles, None, &|_| true).unwrap()
    }

    /// `wanted` is asked of each matching line's bytes before it is parsed: the lines it leaves
    /// out are never parsed, the rest come back in log order.
    #[test]
    fn read_mentioning_where_parses_only_the_lines_wanted() {
        let dir = tempfile::tempdir().unwrap();
        let log = audit_path(dir.path());
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        let lines = [
            r#"{"event":"check","commit":"aaaa","n":1}"#,
            r#"{"event":"approve","commit":"aaaa","n":2}"#,
            r#"{"event":"approve","commit":"bbbb","n":3}"#,
            r#"{"event":"approve","commit":"aaaa","n":4}"#,
        ];
        std::fs::write(&log, lines.join("\n")).unwrap();
        let approve = |line: &[u8]| line.starts_with(br#"{"event":"approve""#);
        let found = mentioning(dir.path(), &["aaaa"], None, &approve).unwrap();
        let numbers: Vec<_> = found.iter().map(|r| r["n"].as_i64().unwrap()).collect();
        assert_eq!(numbers, [2, 4]);
        let asked = std::cell::Cell::new(0);
        let count = |_: &[u8]| {
            asked.set(asked.get() + 1);
            false
        };
        assert!(
            mentioning(dir.path(), &["aaaa"], None, &count)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            asked.get(),
            3,
            "asked once for each line that names the needle"
        );
    }

    #[test]
    fn read_mentioning_parses_only_the_lines_that_name_the_needle() {
        let dir = tempfile::tempdir().unwrap();
        let log = audit_path(dir.path());
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        let lines = [
            r#"{"event":"check","commit":"aaaa","n":1}"#,
            r#"{"event":"check","commit":"bbbb","n":2}"#,
            r#"{"event":"approve","commit":"aaaa","note":"aaaa twice","n":3}"#,
            r#"not json but aaaa"#,
            r#"{"event":"check","commit":"aaaa","n":4}"#,
        ];
        std::fs::write(&log, lines.join("\n")).unwrap();
        let found = every(dir.path(), &["aaaa"]);
        let numbers: Vec<_> = found.iter().map(|r| r["n"].as_i64().unwrap()).collect();
        assert_eq!(
            numbers,
            [1, 3, 4],
            "in order, once each, the broken line left out"
        );
        assert!(every(dir.path(), &["cccc"]).is_empty());
        // Several needles: every line that mentions one, once, in log order.
        let both = every(dir.path(), &["bbbb", "aaaa", "twice"]);
        let numbers: Vec<_> = both.iter().map(|r| r["n"].as_i64().unwrap()).collect();
        assert_eq!(numbers, [1, 2, 3, 4]);
        // Lines that straddle the reader's chunks are found whole.
        let padding = format!(
            r#"{{"event":"check","commit":"dddd","pad":"{}"}}"#,
            "x".repeat(70_000)
        );
        let long: Vec<String> = (0..6)
            .map(|n| format!(r#"{{"event":"check","commit":"aaaa","n":{n}}}"#))
            .flat_map(|line| [padding.clone(), line])
            .collect();
        std::fs::write(&log, long.join("\n")).unwrap();
        let found_long = every(dir.path(), &["aaaa"]);
        let numbers: Vec<_> = found_long
            .iter()
            .map(|r| r["n"].as_i64().unwrap())
            .collect();
        assert_eq!(numbers, [0, 1, 2, 3, 4, 5]);
        assert_eq!(every(dir.path(), &["dddd"]).len(), 6);
        std::fs::write(&log, lines.join("\n")).unwrap();
        let all: Vec<Value> = raw_lines(dir.path())
            .unwrap()
            .into_iter()
            .filter_map(|(_, r)| r.ok())
            .collect();
        let by_filter: Vec<_> = all.iter().filter(|r| r["commit"] == "aaaa").collect();
        assert_eq!(found.iter().collect::<Vec<_>>(), by_filter);
        let missing = tempfile::tempdir().unwrap();
        assert!(every(missing.path(), &["aaaa"]).is_empty());
    }

    #[test]
    fn a_chain_starts_after_plain_lines_and_breaks_where_a_line_went() {
        let dir = tempfile::tempdir().unwrap();
        let log = audit_path(dir.path());
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        let key = Key::from_bytes([1; key::LEN]);
        let a = signed_line(&key, &serde_json::json!({"n": 1, "mac": "stale"}), "");
        let b = signed_line(&key, &serde_json::json!({"n": 2}), &mac_of(a.as_bytes()));
        let plain = r#"{"n":0}"#;
        std::fs::write(&log, format!("{plain}\n{a}\n\n{b}\n")).unwrap();
        let v = verify(dir.path(), &key).unwrap();
        assert_eq!(v.lines, 3);
        let lines: Vec<usize> = v.breaks.iter().map(|b| b.line).collect();
        assert_eq!(lines, [1], "only the plain line fails: {:?}", v.breaks);
        assert_eq!(v.breaks[0].reason, "forged: no mac");
        // The previous mac is found past blank lines and a torn last line has none.
        let file = File::open(&log).unwrap();
        assert_eq!(last_mac(&file).unwrap(), mac_of(b.as_bytes()));
        std::fs::write(&log, format!("{plain}\n{b}\n")).unwrap();
        let v = verify(dir.path(), &key).unwrap();
        assert_eq!(v.breaks.len(), 2);
        assert!(
            v.breaks[1].reason.contains("line 1, which has no mac"),
            "{:?}",
            v.breaks
        );
        std::fs::write(&log, format!("{a}\n{{\"torn")).unwrap();
        assert_eq!(last_mac(&File::open(&log).unwrap()).unwrap(), "");
        assert!(authenticate(Some(&key), &serde_json::from_str(&a).unwrap()) == Auth::Valid);
        assert_eq!(authenticate(None, &serde_json::json!({})), Auth::Plain);
    }
}
