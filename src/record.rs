//! The append-only record: `<git common dir>/closegate/audit.jsonl` and archived documents (SPEC §6).
//!
//! Every append serialises the record to one line first, takes an exclusive lock on the file and
//! writes that line with a single `write_all`; the file is opened for append only and is never
//! rewritten or truncated. Reading never fails on a bad line: torn or foreign lines are skipped
//! and reported with their line number.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use serde_json::Value;

/// `<common>/closegate`: where closegate keeps its record.
pub fn dir(common_dir: &Path) -> PathBuf {
    common_dir.join("closegate")
}

/// `<common>/closegate/audit.jsonl`: one JSON record per line.
pub fn audit_path(common_dir: &Path) -> PathBuf {
    dir(common_dir).join("audit.jsonl")
}

/// The current time as RFC 3339 UTC with second precision, e.g. `2026-11-29T20:41:36Z`.
pub fn now_rfc3339() -> String {
    let secs = match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
    };
    rfc3339(secs)
}

/// Seconds since the Unix epoch as RFC 3339 UTC, e.g. `951782400` → `2000-02-29T00:00:00Z`.
pub fn rfc3339(unix_secs: i64) -> String {
    let days = unix_secs.div_euclid(86_400);
    let secs = unix_secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (secs / 3600, secs % 3600 / 60, secs % 60);
    format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z")
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day), after Howard Hinnant's
/// `civil_from_days`: shift to eras of 400 years starting on March 1st so leap days fall last.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // day of era, [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of year from March 1st, [0, 365]
    let mp = (5 * doy + 2) / 153; // month from March, [0, 11]
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Append one record as one whole line under an exclusive lock.
pub fn append(common_dir: &Path, record: &Value) -> Result<()> {
    let path = audit_path(common_dir);
    let mut line = serde_json::to_string(record).context("serialising the audit record")?;
    line.push('\n');
    std::fs::create_dir_all(dir(common_dir))
        .with_context(|| format!("creating {}", dir(common_dir).display()))?;
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    file.lock()
        .with_context(|| format!("locking {}", path.display()))?;
    let written = write_line(&mut file, line);
    let unlocked = file.unlock();
    written.with_context(|| format!("appending to {}", path.display()))?;
    unlocked.with_context(|| format!("unlocking {}", path.display()))
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

/// The records of the audit log and the lines that could not be read.
#[derive(Debug, Default)]
pub struct ReadResult {
    pub records: Vec<Value>,
    /// 1-based line number and the reason it was skipped.
    pub skipped: Vec<(usize, String)>,
}

/// The records whose line mentions `needle` as written (a full commit id: hex is never escaped
/// in JSON); a missing file reads as empty and unreadable lines are left out. One substring scan
/// of the log and a JSON parse of the few lines that match, so a check's approval lookup does not
/// grow with every record the repository ever kept.
pub fn read_mentioning(common_dir: &Path, needle: &str) -> Result<Vec<Value>> {
    use std::io::Read;
    const CHUNK: usize = 1 << 17;
    let path = audit_path(common_dir);
    let mut file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let mut records = Vec::new();
    // Streamed in chunks: `pending` holds the bytes after the last complete line.
    let (mut chunk, mut pending) = (vec![0u8; CHUNK], Vec::new());
    loop {
        let read = file
            .read(&mut chunk)
            .with_context(|| format!("reading {}", path.display()))?;
        if read == 0 {
            scan_lines(&pending, &finder, &mut records);
            return Ok(records);
        }
        pending.extend_from_slice(&chunk[..read]);
        if let Some(last) = memchr::memrchr(b'\n', &pending) {
            scan_lines(&pending[..last], &finder, &mut records);
            pending.drain(..=last);
        }
    }
}

/// Parse the lines of `bytes` that contain the needle.
fn scan_lines(bytes: &[u8], finder: &memchr::memmem::Finder<'_>, out: &mut Vec<Value>) {
    let mut rest = bytes;
    while let Some(at) = finder.find(rest) {
        let start = memchr::memrchr(b'\n', &rest[..at]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &rest[at..]).map_or(rest.len(), |i| at + i);
        if let Ok(Some(record)) = parse_line(&rest[start..end]) {
            out.push(record);
        }
        rest = &rest[(end + 1).min(rest.len())..];
    }
}

/// Read every record; a missing file reads as empty. Blank lines are ignored; lines that are not
/// UTF-8, not JSON or not a JSON object are skipped and reported.
pub fn read(common_dir: &Path) -> Result<ReadResult> {
    let path = audit_path(common_dir);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ReadResult::default()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let mut result = ReadResult::default();
    for (i, raw) in bytes.split(|b| *b == b'\n').enumerate() {
        match parse_line(raw) {
            Ok(Some(record)) => result.records.push(record),
            Ok(None) => {}
            Err(reason) => result.skipped.push((i + 1, reason)),
        }
    }
    Ok(result)
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
        let found = read_mentioning(dir.path(), "aaaa").unwrap();
        let numbers: Vec<_> = found.iter().map(|r| r["n"].as_i64().unwrap()).collect();
        assert_eq!(
            numbers,
            [1, 3, 4],
            "in order, once each, the broken line left out"
        );
        assert!(read_mentioning(dir.path(), "cccc").unwrap().is_empty());
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
        let found_long = read_mentioning(dir.path(), "aaaa").unwrap();
        let numbers: Vec<_> = found_long
            .iter()
            .map(|r| r["n"].as_i64().unwrap())
            .collect();
        assert_eq!(numbers, [0, 1, 2, 3, 4, 5]);
        assert_eq!(read_mentioning(dir.path(), "dddd").unwrap().len(), 6);
        std::fs::write(&log, lines.join("\n")).unwrap();
        let all = read(dir.path()).unwrap().records;
        let by_filter: Vec<_> = all.iter().filter(|r| r["commit"] == "aaaa").collect();
        assert_eq!(found.iter().collect::<Vec<_>>(), by_filter);
        let missing = tempfile::tempdir().unwrap();
        assert!(read_mentioning(missing.path(), "aaaa").unwrap().is_empty());
    }

    #[test]
    fn civil_conversion_at_known_instants() {
        let cases = [
            (0, "1970-01-01T00:00:00Z"),
            (-1, "1969-12-31T23:59:59Z"),
            (68_169_600, "1972-02-29T00:00:00Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (951_868_800, "2000-03-01T00:00:00Z"),
            (978_307_199, "2000-12-31T23:59:59Z"),
            (1_700_000_000, "2023-11-14T22:13:20Z"),
            (1_709_164_800, "2024-02-29T00:00:00Z"),
            (4_107_542_400, "2100-03-01T00:00:00Z"),
            (1_956_343_296, "2031-12-29T20:41:36Z"),
        ];
        for (secs, want) in cases {
            assert_eq!(rfc3339(secs), want, "at {secs}");
        }
    }

    #[test]
    fn year_2100_is_not_a_leap_year() {
        // 2100-02-28T00:00:00Z plus one day is March 1st.
        assert_eq!(rfc3339(4_107_456_000), "2100-02-28T00:00:00Z");
        assert_eq!(rfc3339(4_107_456_000 + 86_400), "2100-03-01T00:00:00Z");
    }
}
