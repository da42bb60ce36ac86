//! `closegate log`: list audit records, or print verdict statistics (SPEC §6).
//!
//! The false-green rate: a *return* is one distinct (slug, commit) among the `check` records
//! whose `claimed` state is `close-ok` or `stop-2-ready`, and among the `guard` records whose
//! `claimed` token is `VERIFIED`; its verdict is the first one recorded for it (what closegate
//! answered when the agent returned; later re-checks, approvals and teardowns do not rewrite
//! it). A return is a false green when that verdict is not VERIFIED. Per slug prefix: the slug
//! up to its first `-` (the whole slug when it has none).

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::{Result, bail};
use serde_json::{Value, json};

use crate::finding::Verdict;
use crate::record;
use crate::render::escape;
use crate::repo::Repo;

/// The events a record can carry (SPEC §6).
const EVENTS: [&str; 6] = ["check", "teardown", "approve", "guard", "signal", "hook"];

/// List the audit records, or print verdict statistics with the false-green rate
///
/// Lists the records of the repository around the current directory, one line each (ts,
/// event, verdict, slug, commit, branch, codes), or with --stats the counts per verdict and event
/// and the false-green rate (returns claimed done that closegate did not verify), overall and per
/// slug prefix (the slug up to its first `-`). Unreadable lines are reported on stderr and skipped
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only records of this slug
    #[arg(long, value_name = "S")]
    pub slug: Option<String>,
    /// Only records with this verdict (VERIFIED, UNVERIFIED, PENDING_REVIEW, FAIL)
    #[arg(long, value_name = "V")]
    pub verdict: Option<String>,
    /// Only records of this event (check, teardown, approve, guard, signal, hook)
    #[arg(long, value_name = "E")]
    pub event: Option<String>,
    /// Print each record's line as stored (with --stats: one JSON object)
    #[arg(long)]
    pub json: bool,
    /// Counts per verdict and per event, and the false-green rate
    #[arg(long)]
    pub stats: bool,
}

pub fn run(args: Args) -> Result<i32> {
    if let Some(v) = &args.verdict
        && Verdict::parse(v).is_none()
    {
        bail!("--verdict {v}: expected VERIFIED, UNVERIFIED, PENDING_REVIEW or FAIL");
    }
    if let Some(e) = &args.event
        && !EVENTS.contains(&e.as_str())
    {
        bail!("--event {e}: expected one of {}", EVENTS.join(", "));
    }
    let cwd = std::env::current_dir()?;
    let repo = Repo::discover(&cwd)?;
    let read = record::read(&repo.common_dir())?;
    for (line, reason) in &read.skipped {
        eprintln!("closegate: audit.jsonl line {line} skipped: {reason}");
    }
    let records: Vec<&Value> = read.records.iter().filter(|r| keep(&args, r)).collect();
    let mut out = std::io::stdout().lock();
    if args.stats {
        let stats = stats(&records, read.skipped.len());
        if args.json {
            writeln!(out, "{stats}")?;
        } else {
            write_stats(&stats, &mut out)?;
        }
    } else {
        for record in records {
            let line = if args.json {
                record.to_string()
            } else {
                human_line(record)
            };
            writeln!(out, "{line}")?;
        }
    }
    Ok(0)
}

fn keep(args: &Args, r: &Value) -> bool {
    let is = |key: &str, want: &Option<String>| want.as_ref().is_none_or(|w| r[key] == w.as_str());
    is("slug", &args.slug) && is("verdict", &args.verdict) && is("event", &args.event)
}

/// `ts event verdict slug commit branch codes`, `-` for what a record lacks.
fn human_line(r: &Value) -> String {
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
    format!(
        "{} {:<8} {:<14} {} {} {} {}",
        text("ts"),
        text("event"),
        text("verdict"),
        text("slug"),
        commit,
        text("branch"),
        codes
    )
}

/// Whether a record is an agent's return claimed done, and the key that makes it one return.
fn claimed_done(r: &Value) -> Option<(String, String, String)> {
    let claimed = r["claimed"].as_str().unwrap_or_default();
    let event = r["event"].as_str().unwrap_or_default();
    let done = match event {
        "check" => matches!(claimed, "close-ok" | "stop-2-ready"),
        // A guard run without `--worktree` judged only the token: no verdict, no return.
        "guard" => {
            r["verdict"].is_string()
                && claimed
                    .split(|c: char| !c.is_ascii_alphabetic() && c != '_')
                    .any(|w| w == "VERIFIED")
        }
        _ => false,
    };
    let field = |key: &str| r[key].as_str().unwrap_or_default().to_string();
    done.then(|| (event.to_string(), field("slug"), field("commit")))
}

/// The slug up to its first `-`.
fn prefix(slug: &str) -> &str {
    slug.split('-').next().unwrap_or(slug)
}

#[derive(Default)]
struct Rate {
    returns: u64,
    false_green: u64,
}

impl Rate {
    fn json(&self) -> Value {
        let rate = (self.returns > 0).then(|| self.false_green as f64 / self.returns as f64);
        json!({"returns": self.returns, "false_green": self.false_green, "rate": rate})
    }
}

fn stats(records: &[&Value], skipped: usize) -> Value {
    let mut verdicts: BTreeMap<String, u64> = BTreeMap::new();
    let mut events: BTreeMap<String, u64> = BTreeMap::new();
    let mut first: BTreeMap<(String, String, String), bool> = BTreeMap::new();
    for r in records {
        let verdict = r["verdict"].as_str().unwrap_or("none").to_string();
        *verdicts.entry(verdict).or_default() += 1;
        *events
            .entry(r["event"].as_str().unwrap_or("none").to_string())
            .or_default() += 1;
        if let Some(key) = claimed_done(r) {
            first.entry(key).or_insert(r["verdict"] != "VERIFIED");
        }
    }
    let mut overall = Rate::default();
    let mut by_prefix: BTreeMap<String, Rate> = BTreeMap::new();
    for ((_, slug, _), false_green) in &first {
        for rate in [
            &mut overall,
            by_prefix.entry(prefix(slug).to_string()).or_default(),
        ] {
            rate.returns += 1;
            rate.false_green += u64::from(*false_green);
        }
    }
    let by_prefix: BTreeMap<&String, Value> =
        by_prefix.iter().map(|(k, v)| (k, v.json())).collect();
    json!({
        "records": records.len(),
        "skipped_lines": skipped,
        "verdicts": verdicts,
        "events": events,
        "false_green": overall.json(),
        "false_green_by_prefix": by_prefix,
    })
}

fn write_stats(stats: &Value, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "records: {}", stats["records"])?;
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

/// `25.0% (1 of 4 returns claimed done were not verified)`.
fn rate_text(rate: &Value) -> String {
    let pct = rate["rate"]
        .as_f64()
        .map_or("n/a".to_string(), |r| format!("{:.1}%", r * 100.0));
    format!(
        "{pct} ({} of {} returns claimed done were not verified)",
        rate["false_green"], rate["returns"]
    )
}
