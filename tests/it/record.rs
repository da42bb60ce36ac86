//! The audit log (SPEC §6): whole lines under a lock, torn lines skipped and reported.

use std::io::Write;

use closegate::record;
use serde_json::json;

fn common() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn paths_live_under_the_common_dir() {
    let dir = common();
    assert_eq!(record::dir(dir.path()), dir.path().join("closegate"));
    assert_eq!(
        record::audit_path(dir.path()),
        dir.path().join("closegate/audit.jsonl")
    );
}

#[test]
fn missing_log_reads_as_empty() {
    let dir = common();
    let got = record::read(dir.path()).unwrap();
    assert!(got.records.is_empty() && got.skipped.is_empty());
}

#[test]
fn append_then_read_round_trips() {
    let dir = common();
    let first = json!({"ts": "2026-01-01T00:00:00Z", "event": "check", "verdict": "FAIL",
                       "codes": ["check-failed"], "note": "line\nbreak"});
    let second = json!({"ts": "2026-01-01T00:00:01Z", "event": "teardown", "verdict": "VERIFIED"});
    record::append(dir.path(), &first).unwrap();
    record::append(dir.path(), &second).unwrap();
    let got = record::read(dir.path()).unwrap();
    assert_eq!(got.records, [first, second]);
    assert!(got.skipped.is_empty());
    let text = std::fs::read_to_string(record::audit_path(dir.path())).unwrap();
    assert_eq!(text.lines().count(), 2, "one line per record: {text}");
    assert!(text.ends_with('\n'));
}

#[test]
fn torn_last_line_is_skipped_with_its_line_number() {
    let dir = common();
    record::append(dir.path(), &json!({"event": "check", "n": 1})).unwrap();
    record::append(dir.path(), &json!({"event": "check", "n": 2})).unwrap();
    let path = record::audit_path(dir.path());
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(br#"{"event": "check", "n": 3, "ver"#)
        .unwrap();
    let got = record::read(dir.path()).unwrap();
    assert_eq!(got.records.len(), 2);
    assert_eq!(got.skipped.len(), 1);
    assert_eq!(got.skipped[0].0, 3);
    assert!(
        got.skipped[0].1.starts_with("not json"),
        "{:?}",
        got.skipped
    );
}

#[test]
fn append_after_a_torn_line_keeps_the_new_record_whole() {
    let dir = common();
    record::append(dir.path(), &json!({"n": 1})).unwrap();
    let path = record::audit_path(dir.path());
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    file.write_all(br#"{"n": 2, "to"#).unwrap();
    let before = std::fs::read(&path).unwrap();
    record::append(dir.path(), &json!({"n": 3})).unwrap();
    let after = std::fs::read(&path).unwrap();
    assert!(after.starts_with(&before), "existing bytes were rewritten");
    let got = record::read(dir.path()).unwrap();
    assert_eq!(got.records, [json!({"n": 1}), json!({"n": 3})]);
    assert_eq!(got.skipped.len(), 1);
    assert_eq!(got.skipped[0].0, 2);
}

#[test]
fn foreign_lines_are_skipped_and_reported() {
    let dir = common();
    std::fs::create_dir_all(record::dir(dir.path())).unwrap();
    let mut bytes = b"{\"n\": 1}\n\n[1, 2]\nhello\n\xff\xfe\n".to_vec();
    bytes.extend_from_slice(b"{\"n\": 2}\n");
    std::fs::write(record::audit_path(dir.path()), bytes).unwrap();
    let got = record::read(dir.path()).unwrap();
    assert_eq!(got.records, [json!({"n": 1}), json!({"n": 2})]);
    let lines: Vec<usize> = got.skipped.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        lines,
        [3, 4, 5],
        "the blank line 2 is ignored: {:?}",
        got.skipped
    );
    assert_eq!(got.skipped[0].1, "not a json object");
    assert_eq!(got.skipped[2].1, "not valid utf-8");
}

#[test]
fn now_is_rfc3339_utc() {
    let ts = record::now_rfc3339();
    let b = ts.as_bytes();
    assert_eq!(ts.len(), 20, "{ts}");
    assert!(ts.ends_with('Z'));
    assert_eq!(
        (b[4], b[7], b[10], b[13], b[16]),
        (b'-', b'-', b'T', b':', b':'),
        "{ts}"
    );
    let field = |r: std::ops::Range<usize>| ts[r].parse::<u32>().unwrap();
    assert!(field(0..4) >= 2024);
    assert!((1..=12).contains(&field(5..7)));
    assert!((1..=31).contains(&field(8..10)));
    assert!(field(11..13) < 24 && field(14..16) < 60 && field(17..19) < 61);
}

#[test]
fn known_conversions() {
    assert_eq!(record::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(record::rfc3339(1_956_343_296), "2031-12-29T20:41:36Z");
}

#[test]
fn concurrent_appends_lose_and_tear_no_line() {
    let dir = common();
    let pad = "x".repeat(2000);
    std::thread::scope(|s| {
        for t in 0..16 {
            let (root, pad) = (dir.path(), &pad);
            s.spawn(move || {
                for i in 0..50 {
                    record::append(root, &json!({"t": t, "i": i, "pad": pad})).unwrap();
                }
            });
        }
    });
    let got = record::read(dir.path()).unwrap();
    assert!(got.skipped.is_empty(), "{:?}", got.skipped);
    assert_eq!(got.records.len(), 800);
    let mut seen: Vec<(u64, u64)> = got
        .records
        .iter()
        .map(|r| (r["t"].as_u64().unwrap(), r["i"].as_u64().unwrap()))
        .collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 800, "every (thread, index) pair exactly once");
}
