//! `closegate sweep` (SPEC §24): the coordinator's cron job. Every agent worktree whose stage is
//! MERGED or STOPPED gets a full teardown (MERGED ones admitted on their records, so no check runs
//! again; their branches deleted compare-and-delete, STOPPED ones' kept); RUNNING or BLOCKED
//! worktrees idle longer than `--older-than` are reported, never removed.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};

use crate::board::{self, Row, Stage};
use crate::repo::Repo;

/// A sweep as asked.
#[derive(Debug, Clone)]
pub struct Request {
    pub older_than: Option<Duration>,
    pub dry_run: bool,
}

/// What a sweep did with one worktree.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Swept {
    pub path: String,
    pub branch: Option<String>,
    pub stage: Stage,
    /// `removed`, `would remove`, `kept` or `idle`.
    pub action: &'static str,
    pub reason: String,
    /// The teardown's codes when it refused.
    pub codes: Vec<String>,
}

/// Sweep the repository of the current directory.
pub fn run(req: &Request) -> Result<Vec<Swept>> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let repo = Repo::discover(&cwd)?;
    // The board's own rows (SPEC §26.1: the one question, under the base tip's configuration).
    let rows = board::recorded(&repo)?.rows;
    let mut swept = Vec::new();
    for row in rows.iter().filter(|r| !r.main) {
        swept.push(sweep_one(&repo, row, req)?);
    }
    Ok(swept)
}

fn sweep_one(repo: &Repo, row: &Row, req: &Request) -> Result<Swept> {
    let mut swept = Swept {
        path: row.path.clone(),
        branch: row.branch.clone(),
        stage: row.stage,
        action: "kept",
        reason: format!("stage {}", row.stage.as_str()),
        codes: Vec::new(),
    };
    let Some(dir) = row.dir.clone() else {
        swept.reason = "its directory is not on this machine".into();
        return Ok(swept);
    };
    match row.stage {
        Stage::Merged | Stage::Stopped => teardown(row, dir, req, &mut swept)?,
        Stage::Running | Stage::Blocked => {
            if let (Some(limit), Some(idle)) = (req.older_than, idle_for(repo, row, &dir))
                && idle > limit
            {
                swept.action = "idle";
                swept.reason = format!(
                    "stage {}, idle for {} (no commit, no file modified)",
                    row.stage.as_str(),
                    human_duration(idle)
                );
            }
        }
        _ => {}
    }
    Ok(swept)
}

/// A full teardown (§7): MERGED deletes the branch, STOPPED keeps it.
fn teardown(row: &Row, dir: PathBuf, req: &Request, swept: &mut Swept) -> Result<()> {
    let request = crate::teardown::Request {
        worktree: Some(dir),
        gate: crate::inputs::GateOptions::default(),
        dry_run: req.dry_run,
        delete_branch: row.stage == Stage::Merged,
        allow_unverified: false,
        // Never overrides a refusal: the escrow is written, but what it names stays.
        force: false,
        reap: false,
    };
    let done = crate::teardown::run(&request)?;
    if done.exit == 0 {
        swept.action = if req.dry_run {
            "would remove"
        } else {
            "removed"
        };
        let branch = match (row.stage, &row.branch) {
            (Stage::Merged, Some(b)) => format!("; branch {b} deleted"),
            (_, Some(b)) => format!("; branch {b} kept"),
            _ => String::new(),
        };
        swept.reason = format!("stage {}{branch}", row.stage.as_str());
        return Ok(());
    }
    let codes: Vec<String> = done
        .report
        .iter()
        .flat_map(|r| r.codes())
        .map(|c| c.as_str().to_string())
        .collect();
    swept.reason = format!(
        "stage {}, the teardown refused: {}",
        row.stage.as_str(),
        done.barred.clone().unwrap_or_else(|| codes.join(", "))
    );
    swept.codes = codes;
    swept.action = "refused";
    Ok(())
}

/// How long since the worktree last changed: its HEAD commit or any file (the `.git` entry aside).
fn idle_for(repo: &Repo, row: &Row, dir: &Path) -> Option<Duration> {
    let mut newest = row
        .head
        .and_then(|h| repo.commit_time(h))
        .map(|s| SystemTime::UNIX_EPOCH + Duration::from_secs(s.max(0) as u64));
    let walk = walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| e.depth() != 1 || e.file_name() != ".git");
    for entry in walk.flatten() {
        if let Some(modified) = entry.metadata().ok().and_then(|m| m.modified().ok()) {
            newest = Some(newest.map_or(modified, |n| n.max(modified)));
        }
    }
    SystemTime::now().duration_since(newest?).ok()
}

/// `90s`, `30m`, `12h`, `7d`, `2w` (a bare number is seconds).
pub fn parse_duration(text: &str) -> Result<Duration> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let Ok(n) = number.parse::<u64>() else {
        bail!("--older-than {text}: expected a number and a unit (90s, 30m, 12h, 7d, 2w)");
    };
    let secs = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 604_800,
        _ => bail!("--older-than {text}: unknown unit `{unit}` (s, m, h, d, w)"),
    };
    Ok(Duration::from_secs(n.saturating_mul(secs)))
}

fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        s if s >= 86_400 => format!("{}d", s / 86_400),
        s if s >= 3600 => format!("{}h", s / 3600),
        s if s >= 60 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_their_units() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("30m").unwrap(), Duration::from_secs(1800));
        assert_eq!(parse_duration("2d").unwrap(), Duration::from_secs(172_800));
        assert_eq!(parse_duration("45").unwrap(), Duration::from_secs(45));
        assert!(parse_duration("3 fortnights").is_err());
        assert!(parse_duration("h").is_err());
    }
}
