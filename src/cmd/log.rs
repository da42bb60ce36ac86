//! `closegate log`: list audit records, verify their chain, or print verdict statistics (SPEC §6).
//!
//! The rules (which records a listing keeps, what a return is, the false-green rate) live in
//! `stats`; this file maps the flags to a `stats::Filter`, and `render::log` words the result.

use std::io::Write;

use anyhow::{Result, anyhow, bail};
use serde_json::Value;

use crate::finding::Verdict;
use crate::record::{self, Auth, key};
use crate::render::{escape, log};
use crate::repo::Repo;
use crate::stats::{self, EVENTS, Filter, instant};

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
        let filter = args.filter();
        let records: Vec<&Value> = read.counted().filter(|r| filter.keeps(r)).collect();
        let stats = stats::stats(&records, read.skipped.len(), forged);
        if args.json {
            writeln!(out, "{}", serde_json::to_string(&stats)?)?;
        } else {
            log::write_stats(&stats, &mut out)?;
        }
        return Ok(0);
    }
    let kept = stats::listing(&read, &args.filter());
    let kept = &kept[..];
    if args.json {
        for (_, (number, auth)) in kept {
            if let Auth::Forged(why) = auth {
                eprintln!("closegate: audit.jsonl line {number} is forged: {why}");
            }
        }
        out.write_all(&stats::json_text(kept))?;
    } else {
        log::listing(kept, &mut out)?;
    }
    Ok(0)
}

impl Args {
    /// The filters as `stats` reads them.
    fn filter(&self) -> Filter {
        Filter {
            slug: self.slug.clone(),
            verdict: self.verdict.clone(),
            limit: self.limit,
            since: self.since,
            event: self.event.clone(),
        }
    }
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
    log::verification(&verification, &mut crate::term::human())
}
