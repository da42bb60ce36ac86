//! What `closegate log` prints (SPEC §6): the listing in aligned columns with its `forged` and
//! `untrusted` markers, the statistics, and the outcome of `--verify`.

use std::io::Write;

use anyhow::Result;
use serde_json::Value;

use super::escape;
use crate::ledger::Record;
use crate::record::{Auth, Verification};
use crate::stats::{Listed, Rate, Stats};

/// The listing: one row per record kept, in columns.
pub fn listing(kept: &[Listed<'_>], out: &mut dyn Write) -> std::io::Result<()> {
    let rows: Vec<(Vec<String>, String)> = (kept.iter())
        .map(|(record, (_, auth))| human_row(record, *auth))
        .collect();
    write_aligned(&rows, out)
}

/// `log --verify`'s outcome; 0 when every line verifies, else 1.
pub fn verification(verification: &Verification, out: &mut dyn Write) -> Result<i32> {
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

/// `--stats` for people: counts per verdict and event, the false-green rate overall and per
/// slug prefix.
pub fn write_stats(stats: &Stats, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "records: {}", stats.records)?;
    if stats.forged_lines > 0 {
        writeln!(
            out,
            "forged lines ignored: {} (see `closegate log --verify`)",
            stats.forged_lines
        )?;
    }
    for (title, counts) in [("verdict", &stats.verdicts), ("event", &stats.events)] {
        let counts: Vec<String> = counts
            .iter()
            .map(|(k, v)| format!("{} {v}", escape(k)))
            .collect();
        writeln!(out, "per {title}: {}", counts.join(", "))?;
    }
    writeln!(out, "false-green rate: {}", rate_text(&stats.false_green))?;
    for (prefix, rate) in &stats.false_green_by_prefix {
        writeln!(out, "  {:<20} {}", escape(prefix), rate_text(rate))?;
    }
    Ok(())
}

/// `25.0% (1 of 4 returns claimed done were FAIL or UNVERIFIED; 1 awaits review)`.
fn rate_text(rate: &Rate) -> String {
    let pct = rate
        .rate
        .map_or("n/a".to_string(), |r| format!("{:.1}%", r * 100.0));
    format!(
        "{pct} ({} of {} returns claimed done were FAIL or UNVERIFIED; {} awaiting review)",
        rate.false_green, rate.returns, rate.pending_review
    )
}
