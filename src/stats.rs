//! The audit log read as numbers (SPEC §6): which records a listing keeps, the returns and their
//! false-green rate, and the record's time stamps as instants. `log --stats`, `log --json` and
//! `serve`'s `/api/log` and charts all count here, so the page and the command cannot disagree.
//!
//! The false-green rate (SPEC §6): a *return* is one distinct (slug, claimed commit) — the commit
//! as the close line wrote it, even when it names no commit — among the `check` records whose
//! `claimed` state is `close-ok` or `stop-2-ready` and the `guard` records whose claimed token is
//! `VERIFIED` and whose gate ran (a verdict was recorded). Each return is judged by its first
//! record (what closegate answered when the agent returned; later re-checks, approvals and
//! teardowns do not rewrite it): a false green when that verdict is FAIL or UNVERIFIED; a
//! PENDING_REVIEW return awaits a human and is counted apart. The rate is false greens over all
//! returns, overall and per slug prefix (the slug up to its first `-`). Only records that count
//! are read: authenticated ones when a record key exists, and only those made with the base
//! tip's configuration and the configured base (a `--config` or `--base` run judges nothing).

use std::collections::BTreeMap;
use std::io::Write;

use serde_json::Value;

use crate::finding::Verdict;
use crate::ledger::{Event, Record};
use crate::record::{self, Auth};

/// The events a record can carry (SPEC §6).
pub const EVENTS: [&str; 8] = [
    "check", "teardown", "approve", "reject", "guard", "signal", "hook", "land",
];

/// Which records a listing keeps: each field that is set must match (`log`'s filters).
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub slug: Option<String>,
    /// A verdict token as SPEC spells it.
    pub verdict: Option<String>,
    /// Only the N most recent records that pass the other filters.
    pub limit: Option<usize>,
    /// Seconds since the epoch: records made at or after it.
    pub since: Option<i64>,
    pub event: Option<String>,
}

impl Filter {
    /// No filter, no limit: every record, as `closegate log --json` lists them.
    pub fn everything() -> Filter {
        Filter::default()
    }

    /// Whether record `r` passes the filters (`limit` aside).
    pub fn keeps(&self, r: &Value) -> bool {
        let is =
            |key: &str, want: &Option<String>| want.as_ref().is_none_or(|w| r[key] == w.as_str());
        let since = self.since.is_none_or(|since| {
            r["ts"]
                .as_str()
                .and_then(instant)
                .is_some_and(|ts| ts >= since)
        });
        is("slug", &self.slug) && is("verdict", &self.verdict) && is("event", &self.event) && since
    }
}

/// A listed record and its line number and authentication.
pub type Listed<'a> = (&'a Value, &'a (usize, Auth));

/// The records `filter` keeps (filters, then `limit`), in log order, forged ones included (they
/// are listed, marked).
pub fn listing<'a>(read: &'a record::ReadResult, filter: &Filter) -> Vec<Listed<'a>> {
    let kept: Vec<Listed<'a>> = read
        .records
        .iter()
        .zip(&read.lines)
        .filter(|(record, _)| filter.keeps(record))
        .collect();
    let from = filter
        .limit
        .map_or(0, |limit| kept.len().saturating_sub(limit));
    kept[from..].to_vec()
}

/// `log --json`'s output: each listed record's line as stored, one per line. `serve`'s
/// `/api/log` answers with exactly this (SPEC §25).
pub fn json_text(kept: &[Listed<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    for (record, _) in kept {
        // Writing to a Vec cannot fail.
        let _ = writeln!(out, "{record}");
    }
    out
}

/// Seconds since the epoch of a date or date-time in the lenient form of the one grammar
/// ([`crate::date`]: midnight UTC for a date, UTC when no zone is named). `None` for anything
/// else, an impossible date included.
pub fn instant(text: &str) -> Option<i64> {
    crate::date::parse(text, crate::date::Form::Lenient).map(|i| i.seconds)
}

/// Whether a record is an agent's return claimed done (SPEC §6), and the (slug, claimed commit)
/// that makes it one return. The claimed commit is the close line's text; a record without a
/// close line falls back to the commit it judged.
fn return_key(r: &Value) -> Option<(String, String)> {
    let r = Record::read(r)?;
    let claimed = r.claimed.as_deref().unwrap_or_default();
    let done = match r.event {
        Event::Check(_) => matches!(claimed, "close-ok" | "stop-2-ready"),
        // A guard run without `--worktree` judged only the token: no verdict, no return.
        Event::Guard(_) => {
            r.verdict.is_some()
                && claimed
                    .split(|c: char| !c.is_ascii_alphabetic() && c != '_')
                    .any(|w| w == "VERIFIED")
        }
        _ => false,
    };
    if !done || !r.is_trusted() {
        return None;
    }
    let commit = r.claimed_commit.or(r.commit).unwrap_or_default();
    Some((r.slug.unwrap_or_default(), commit))
}

/// One return (SPEC §6), judged by its first record.
pub struct Return {
    pub slug: String,
    /// The `ts` of its first record.
    pub ts: String,
    /// The first record's verdict.
    pub verdict: Option<Verdict>,
}

impl Return {
    /// A false green: the agent claimed done and closegate found FAIL or UNVERIFIED.
    pub fn is_false_green(&self) -> bool {
        matches!(self.verdict, Some(Verdict::Fail | Verdict::Unverified))
    }
}

/// The returns among `records` (those that count, in log order), each judged by its first
/// record, ordered by (slug, claimed commit): what `--stats` and `serve`'s charts count.
pub fn returns(records: &[&Value]) -> Vec<Return> {
    let mut first: BTreeMap<(String, String), Return> = BTreeMap::new();
    for r in records {
        if let Some(key) = return_key(r) {
            first.entry(key.clone()).or_insert_with(|| Return {
                slug: key.0,
                ts: r["ts"].as_str().unwrap_or_default().to_string(),
                verdict: Record::read(r).and_then(|r| r.verdict),
            });
        }
    }
    first.into_values().collect()
}

/// The slug up to its first `-`; `-` for a record without a slug.
pub fn prefix(slug: &str) -> &str {
    match slug.split('-').next() {
        Some(p) if !p.is_empty() => p,
        _ => "-",
    }
}

/// The false-green rate over some returns (SPEC §6), as `log --stats --json` prints it.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Rate {
    /// Returns whose first verdict was FAIL or UNVERIFIED.
    pub false_green: u64,
    /// Returns whose first verdict was PENDING_REVIEW (awaiting a human, counted apart).
    pub pending_review: u64,
    /// `false_green / returns`; `null` with no return.
    pub rate: Option<f64>,
    pub returns: u64,
}

impl Rate {
    fn add(&mut self, verdict: Option<Verdict>) {
        self.returns += 1;
        match verdict {
            Some(Verdict::Fail | Verdict::Unverified) => self.false_green += 1,
            Some(Verdict::PendingReview) => self.pending_review += 1,
            _ => {}
        }
        self.rate = Some(self.false_green as f64 / self.returns as f64);
    }
}

/// `log --stats --json`: one object under the one [`crate::report::SCHEMA`]; it reads back
/// through `Deserialize` as it was written. The fields after `schema` are in the order the
/// output has always had (alphabetical).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    pub schema: u32,
    /// Records per event name (`none` for a record without one).
    pub events: BTreeMap<String, u64>,
    pub false_green: Rate,
    /// The rate per slug prefix (the slug up to its first `-`).
    pub false_green_by_prefix: BTreeMap<String, Rate>,
    /// Lines whose mac does not verify (ignored).
    pub forged_lines: usize,
    /// The records that count and pass the filter.
    pub records: usize,
    /// Lines that are no record (skipped).
    pub skipped_lines: usize,
    /// Records per verdict (`none` for a record without one).
    pub verdicts: BTreeMap<String, u64>,
}

/// `log --stats`: counts per verdict and event, and the false-green rate overall and per slug
/// prefix, over the `records` that count; `skipped` and `forged` lines are named.
pub fn stats(records: &[&Value], skipped: usize, forged: usize) -> Stats {
    let mut verdicts: BTreeMap<String, u64> = BTreeMap::new();
    let mut events: BTreeMap<String, u64> = BTreeMap::new();
    for r in records {
        let verdict = r["verdict"].as_str().unwrap_or("none").to_string();
        *verdicts.entry(verdict).or_default() += 1;
        *events
            .entry(r["event"].as_str().unwrap_or("none").to_string())
            .or_default() += 1;
    }
    let mut overall = Rate::default();
    let mut by_prefix: BTreeMap<String, Rate> = BTreeMap::new();
    for ret in returns(records) {
        overall.add(ret.verdict);
        by_prefix
            .entry(prefix(&ret.slug).to_string())
            .or_default()
            .add(ret.verdict);
    }
    Stats {
        schema: crate::report::SCHEMA,
        events,
        false_green: overall,
        false_green_by_prefix: by_prefix,
        forged_lines: forged,
        records: records.len(),
        skipped_lines: skipped,
        verdicts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stats_are_the_documented_object_and_read_back_as_written() {
        let records = [
            json!({"event": "check", "slug": "a-x", "commit": "c1", "claimed": "close-ok",
                   "claimed_commit": "c1", "verdict": "FAIL", "ts": "2026-11-29T00:00:00Z",
                   "config_source": "base", "base_source": "configured"}),
            json!({"event": "check", "slug": "a-y", "commit": "c2", "claimed": "close-ok",
                   "claimed_commit": "c2", "verdict": "VERIFIED", "ts": "2026-11-29T00:00:01Z",
                   "config_source": "base", "base_source": "configured"}),
        ];
        let refs: Vec<&Value> = records.iter().collect();
        let stats = stats(&refs, 1, 0);
        let text = serde_json::to_string(&stats).unwrap();
        let keys: Vec<String> = serde_json::from_str::<serde_json::Map<String, Value>>(&text)
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert!(text.starts_with("{\"schema\":1,\"events\":"), "{text}");
        assert_eq!(keys.len(), 8, "{keys:?}");
        assert_eq!(stats.false_green.returns, 2);
        assert_eq!(stats.false_green.rate, Some(0.5));
        assert_eq!(Rate::default().rate, None, "no return: the rate is null");
        let back: Stats = serde_json::from_str(&text).unwrap();
        assert_eq!(back, stats);
    }

    #[test]
    fn instants_read_dates_and_date_times_in_utc_or_an_offset() {
        assert_eq!(instant("1970-01-02"), Some(86_400));
        assert_eq!(
            instant("2026-11-29T14:05:09Z"),
            instant("2026-11-29 15:05:09+01:00")
        );
        assert_eq!(
            instant("2026-11-29T14:05"),
            Some(instant("2026-11-29").unwrap() + 50_700)
        );
        assert_eq!(
            instant("2026-11-29T14:05:09.5z"),
            instant("2026-11-29T14:05:09")
        );
        for bad in [
            "2026-02-30",
            "2026-11-29T24:00",
            "2026-11-29T14",
            "29-11-2026",
            "x",
        ] {
            assert_eq!(instant(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_filter_keeps_what_matches_and_the_limit_keeps_the_newest() {
        let filter = Filter {
            slug: Some("a".into()),
            since: instant("2026-11-29"),
            ..Filter::everything()
        };
        let r = json!({"slug": "a", "ts": "2026-11-29T00:00:00Z"});
        assert!(filter.keeps(&r));
        assert!(!filter.keeps(&json!({"slug": "b", "ts": "2026-11-29T00:00:00Z"})));
        assert!(!filter.keeps(&json!({"slug": "a", "ts": "2026-11-28T23:59:59Z"})));
        assert!(Filter::everything().keeps(&json!({})));
    }

    #[test]
    fn prefixes_stop_at_the_first_dash() {
        assert_eq!(prefix("ui-login"), "ui");
        assert_eq!(prefix(""), "-");
        assert_eq!(prefix("-x"), "-");
    }
}
