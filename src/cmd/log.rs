//! `closegate log`: list audit records, verify their chain, or print verdict statistics (SPEC §6).
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

use anyhow::{Result, anyhow, bail};
use serde_json::{Value, json};

use crate::finding::Verdict;
use crate::ledger::{Event, Record};
use crate::record::{self, Auth, key};
use crate::render::escape;
use crate::repo::Repo;

/// The events a record can carry (SPEC §6).
const EVENTS: [&str; 8] = [
    "check", "teardown", "approve", "reject", "guard", "signal", "hook", "land",
];

/// List the audit records, verify their chain, or print verdict statistics with the false-green rate
///
/// Lists the records of the repository around the current directory, one line each (ts,
/// event, verdict, slug, commit, branch, codes; `forged` when a record key exists and the line's
/// mac does not verify), or with --stats the counts per verdict and event and the false-green
/// rate (returns claimed done that closegate found FAIL or UNVERIFIED), overall and per slug
/// prefix (the slug up to its first `-`). With --verify, checks every line's mac and chain and
/// names the first break (exit 1 when any line fails). Unreadable lines are reported on stderr
/// and skipped
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only records of this slug
    #[arg(long, value_name = "S")]
    pub slug: Option<String>,
    /// Only records with this verdict (VERIFIED, UNVERIFIED, PENDING_REVIEW, FAIL; any case)
    #[arg(long, value_name = "V")]
    pub verdict: Option<String>,
    /// Only the N most recent records that pass the other filters (listed oldest first)
    #[arg(long, value_name = "N", conflicts_with_all = ["stats", "verify"])]
    pub limit: Option<usize>,
    /// Only records made at or after DATE: `2026-11-29` (midnight UTC) or a date-time
    /// `2026-11-29T14:05[:09][Z|+01:00]` (UTC when no offset is given)
    #[arg(long, value_name = "DATE", value_parser = parse_since)]
    pub since: Option<i64>,
    /// Only records of this event (check, teardown, approve, reject, guard, signal, hook)
    #[arg(long, value_name = "E")]
    pub event: Option<String>,
    /// Print each record's line as stored (with --stats: one JSON object)
    #[arg(long)]
    pub json: bool,
    /// Counts per verdict and per event, and the false-green rate
    #[arg(long)]
    pub stats: bool,
    /// Check every line's mac and prev against the record key; name the first break (exit 1)
    #[arg(long, conflicts_with = "stats")]
    pub verify: bool,
}

/// `--verdict` in any case read as its token; `--event` one of the events SPEC §6 names.
fn normalise_filters(args: &mut Args) -> Result<()> {
    if let Some(v) = &args.verdict {
        match Verdict::parse(&v.to_ascii_uppercase()) {
            Some(verdict) => args.verdict = Some(verdict.as_str().to_string()),
            // Raw: main escapes an error's text once, where it is printed.
            None => bail!(
                "--verdict {v}: expected VERIFIED, UNVERIFIED, PENDING_REVIEW or FAIL (any case)"
            ),
        }
    }
    if let Some(e) = &args.event
        && !EVENTS.contains(&e.as_str())
    {
        bail!("--event {e}: expected one of {}", EVENTS.join(", "));
    }
    Ok(())
}

pub fn run(mut args: Args) -> Result<i32> {
    normalise_filters(&mut args)?;
    let cwd = std::env::current_dir()?;
    let repo = Repo::discover(&cwd)?;
    if args.verify {
        return verify(&repo);
    }
    let read = crate::ledger::read(&repo.common_dir())?;
    for (line, reason) in &read.skipped {
        eprintln!("closegate: audit.jsonl line {line} skipped: {reason}");
    }
    let mut out = if args.json {
        crate::term::stdout()
    } else {
        crate::term::human()
    };
    if args.stats {
        let forged = read.lines.iter().filter(|(_, a)| !a.counts()).count();
        let records: Vec<&Value> = read.counted().filter(|r| keep(&args, r)).collect();
        let stats = stats(&records, read.skipped.len(), forged);
        if args.json {
            writeln!(out, "{stats}")?;
        } else {
            write_stats(&stats, &mut out)?;
        }
        return Ok(0);
    }
    let kept = listing(&read, &args);
    let kept = &kept[..];
    if args.json {
        for (_, (number, auth)) in kept {
            if let Auth::Forged(why) = auth {
                eprintln!("closegate: audit.jsonl line {number} is forged: {why}");
            }
        }
        out.write_all(&json_text(kept))?;
    } else {
        let rows: Vec<(Vec<String>, String)> = kept
            .iter()
            .map(|(record, (_, auth))| human_row(record, *auth))
            .collect();
        write_aligned(&rows, &mut out)?;
    }
    Ok(0)
}

/// A listed record and its line number and authentication.
pub type Listed<'a> = (&'a Value, &'a (usize, Auth));

/// The records `args` keeps (filters, then `--limit`), in log order, forged ones included (they
/// are listed, marked).
pub fn listing<'a>(read: &'a record::ReadResult, args: &Args) -> Vec<Listed<'a>> {
    let kept: Vec<Listed<'a>> = read
        .records
        .iter()
        .zip(&read.lines)
        .filter(|(record, _)| keep(args, record))
        .collect();
    let from = args
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

impl Args {
    /// No filter, no limit: every record, as `closegate log --json` lists them.
    pub fn everything() -> Args {
        Args {
            slug: None,
            verdict: None,
            limit: None,
            since: None,
            event: None,
            json: true,
            stats: false,
            verify: false,
        }
    }
}

/// The rows' cells in columns as wide as their widest cell (the last column and the markers
/// unpadded), so a listing reads down like `git log --format` tables do.
fn write_aligned(rows: &[(Vec<String>, String)], out: &mut dyn Write) -> std::io::Result<()> {
    let columns = rows.iter().map(|(cells, _)| cells.len()).max().unwrap_or(0);
    let mut widths = vec![0; columns];
    for (cells, _) in rows {
        for (width, cell) in widths.iter_mut().zip(cells) {
            *width = (*width).max(cell.chars().count());
        }
    }
    for (cells, markers) in rows {
        let mut line = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 < cells.len() {
                line.push_str(cell);
                let pad = widths[i] - cell.chars().count() + 1;
                line.extend(std::iter::repeat_n(' ', pad));
            } else {
                line.push_str(cell);
            }
        }
        line.push_str(markers);
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// `--since DATE` as seconds since the epoch. clap prints this error itself (not main), so the
/// text it quotes is escaped here.
fn parse_since(text: &str) -> std::result::Result<i64, String> {
    instant(text).ok_or_else(|| {
        format!(
            "expected a date (2026-11-29) or a date-time (2026-11-29T14:05:09Z, +01:00 or no offset = UTC), got {}",
            escape(text)
        )
    })
}

/// Seconds since the epoch of an ISO 8601 date (`YYYY-MM-DD`, midnight UTC) or date-time
/// (`YYYY-MM-DDTHH:MM[:SS[.fraction]]` then `Z`, `±HH:MM` or nothing for UTC; a space may stand
/// for the `T`). `None` for anything else, an impossible date included.
pub fn instant(text: &str) -> Option<i64> {
    let num = |s: &str| -> Option<i64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
    };
    let b = text.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (year, month, day) = (num(&text[..4])?, num(&text[5..7])?, num(&text[8..10])?);
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days_in = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&month) || day < 1 || day > days_in[month as usize - 1] {
        return None;
    }
    let mut secs = days_from_civil(year, month, day) * 86_400;
    let rest = &text[10..];
    if rest.is_empty() {
        return Some(secs);
    }
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    let zone_at = rest.find(['Z', 'z', '+', '-']).unwrap_or(rest.len());
    let (clock, zone) = rest.split_at(zone_at);
    let clock = clock.split('.').next()?; // a fraction of a second changes nothing here
    let parts: Vec<&str> = clock.split(':').collect();
    if !(2..=3).contains(&parts.len()) || parts.iter().any(|p| p.len() != 2) {
        return None;
    }
    let (h, m) = (num(parts[0])?, num(parts[1])?);
    let s = parts.get(2).map_or(Some(0), |p| num(p))?;
    if h > 23 || m > 59 || s > 60 {
        return None;
    }
    secs += h * 3600 + m * 60 + s;
    let offset = match zone {
        "" | "Z" | "z" => 0,
        _ => {
            let sign = if zone.starts_with('-') { -1 } else { 1 };
            let (oh, om) = zone[1..].split_once(':')?;
            if oh.len() != 2 || om.len() != 2 {
                return None;
            }
            sign * (num(oh)? * 3600 + num(om)? * 60)
        }
    };
    Some(secs - offset)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `log --verify`: every line's mac and chain under the record key; exit 1 at any break.
fn verify(repo: &Repo) -> Result<i32> {
    let Some(key) = key::load()? else {
        let at = key::location().map_or("nowhere (HOME is not set)".to_string(), |l| {
            l.path.display().to_string()
        });
        return Err(anyhow!(
            "log --verify needs the record key, and there is none at {at}; create one with `closegate key init` (records written without it are plain)"
        ));
    };
    let verification = record::verify(&repo.common_dir(), &key)?;
    let mut out = crate::term::human();
    let Some(first) = verification.breaks.first() else {
        writeln!(
            out,
            "verified: all {} lines carry a valid mac and chain to the line before (a lost tail cannot be seen)",
            verification.lines
        )?;
        return Ok(0);
    };
    writeln!(
        out,
        "first break: audit.jsonl line {}: {}",
        first.line,
        escape(&first.reason)
    )?;
    for other in &verification.breaks[1..] {
        writeln!(out, "  line {}: {}", other.line, escape(&other.reason))?;
    }
    writeln!(
        out,
        "{} of {} lines fail verification",
        verification.breaks.len(),
        verification.lines
    )?;
    Ok(1)
}

fn keep(args: &Args, r: &Value) -> bool {
    let is = |key: &str, want: &Option<String>| want.as_ref().is_none_or(|w| r[key] == w.as_str());
    let since = args.since.is_none_or(|since| {
        r["ts"]
            .as_str()
            .and_then(instant)
            .is_some_and(|ts| ts >= since)
    });
    is("slug", &args.slug) && is("verdict", &args.verdict) && is("event", &args.event) && since
}

/// `ts event verdict slug commit branch codes`, `-` for what a record lacks, then the markers:
/// `forged (why)` after a line whose mac does not verify and `untrusted (why)` after one made
/// with `--config` or another `--base` (SPEC §6: kept and listed, never trusted).
fn human_row(r: &Value, auth: Auth) -> (Vec<String>, String) {
    let text = |key: &str| escape(r[key].as_str().unwrap_or("-"));
    let commit: String = text("commit").chars().take(12).collect();
    let codes: Vec<String> = r["codes"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).map(escape).collect())
        .unwrap_or_default();
    let codes = if codes.is_empty() {
        "-".into()
    } else {
        codes.join(",")
    };
    let cells = vec![
        text("ts"),
        text("event"),
        text("verdict"),
        text("slug"),
        commit,
        text("branch"),
        codes,
    ];
    let mut line = String::new();
    if let Auth::Forged(why) = auth {
        line.push_str(&format!(" forged ({why})"));
    }
    let trusted = Record::read(r).is_some_and(|r| r.is_trusted());
    if r["config_source"].is_string() && !trusted {
        let why = if r["config_source"] == "base" {
            "made with another --base"
        } else {
            "made with --config"
        };
        line.push_str(&format!(" untrusted ({why})"));
    }
    (cells, line)
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

#[derive(Default)]
struct Rate {
    returns: u64,
    false_green: u64,
    pending_review: u64,
}

impl Rate {
    fn add(&mut self, verdict: Option<Verdict>) {
        self.returns += 1;
        match verdict {
            Some(Verdict::Fail | Verdict::Unverified) => self.false_green += 1,
            Some(Verdict::PendingReview) => self.pending_review += 1,
            _ => {}
        }
    }

    fn json(&self) -> Value {
        let rate = (self.returns > 0).then(|| self.false_green as f64 / self.returns as f64);
        json!({
            "returns": self.returns,
            "false_green": self.false_green,
            "pending_review": self.pending_review,
            "rate": rate,
        })
    }
}

pub fn stats(records: &[&Value], skipped: usize, forged: usize) -> Value {
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
    let by_prefix: BTreeMap<&String, Value> =
        by_prefix.iter().map(|(k, v)| (k, v.json())).collect();
    json!({
        "records": records.len(),
        "skipped_lines": skipped,
        "forged_lines": forged,
        "verdicts": verdicts,
        "events": events,
        "false_green": overall.json(),
        "false_green_by_prefix": by_prefix,
    })
}

fn write_stats(stats: &Value, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "records: {}", stats["records"])?;
    if stats["forged_lines"].as_u64().unwrap_or(0) > 0 {
        writeln!(
            out,
            "forged lines ignored: {} (see `closegate log --verify`)",
            stats["forged_lines"]
        )?;
    }
    for (title, key) in [("verdict", "verdicts"), ("event", "events")] {
        let counts: Vec<String> = stats[key]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| format!("{} {v}", escape(k)))
                    .collect()
            })
            .unwrap_or_default();
        writeln!(out, "per {title}: {}", counts.join(", "))?;
    }
    writeln!(
        out,
        "false-green rate: {}",
        rate_text(&stats["false_green"])
    )?;
    if let Some(prefixes) = stats["false_green_by_prefix"].as_object() {
        for (prefix, rate) in prefixes {
            writeln!(out, "  {:<20} {}", escape(prefix), rate_text(rate))?;
        }
    }
    Ok(())
}

/// `25.0% (1 of 4 returns claimed done were FAIL or UNVERIFIED; 1 awaits review)`.
fn rate_text(rate: &Value) -> String {
    let pct = rate["rate"]
        .as_f64()
        .map_or("n/a".to_string(), |r| format!("{:.1}%", r * 100.0));
    format!(
        "{pct} ({} of {} returns claimed done were FAIL or UNVERIFIED; {} awaiting review)",
        rate["false_green"], rate["returns"], rate["pending_review"]
    )
}
