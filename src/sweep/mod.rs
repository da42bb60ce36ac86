//! `closegate sweep` (SPEC §24): the coordinator's cron job. Every agent worktree whose stage is
//! MERGED or STOPPED gets a full teardown (MERGED ones admitted on their records, so no check runs
//! again; their branches deleted compare-and-delete, STOPPED ones' kept); RUNNING or BLOCKED
//! worktrees idle longer than `--older-than` are reported, never removed.
//!
//! Each worktree is judged alone (SPEC §26.5): one sweep cannot read (its status document a FIFO
//! or over 16 MiB, a folder it cannot list, broken administrative data) is kept with the reason
//! and the next step, and the others are still swept; the exit status then says so (1).

mod probe;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};

use crate::board::{self, Row, Stage};
use crate::date::{self, Grain};
use crate::repo::Repo;

/// A sweep as asked.
#[derive(Debug, Clone)]
pub struct Request {
    pub older_than: Option<Duration>,
    pub dry_run: bool,
}

/// What a sweep did with one worktree.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Swept {
    pub path: String,
    pub branch: Option<String>,
    /// Null when sweep could not tell (administrative data git cannot read).
    pub stage: Option<Stage>,
    /// `removed`, `would remove`, `kept`, `refused` (its teardown refused) or `idle`.
    #[serde(deserialize_with = "action")]
    pub action: Action,
    pub reason: String,
    /// The teardown's codes when it refused.
    pub codes: Vec<String>,
    /// Why sweep could not judge or finish this worktree (it is kept), or null.
    pub error: Option<String>,
}

/// One of sweep's fixed action words. Through this alias serde does not take the field for one
/// borrowed from the input: [`action`] reads it back.
pub type Action = &'static str;

/// The actions sweep writes; any other word reads back as an error naming it.
const ACTIONS: [&str; 5] = ["removed", "would remove", "kept", "refused", "idle"];

fn action<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Action, D::Error> {
    use serde::Deserialize;
    let text = String::deserialize(d)?;
    (ACTIONS.iter().find(|a| **a == text).copied())
        .ok_or_else(|| serde::de::Error::custom(format!("unknown sweep action `{text}`")))
}

impl Swept {
    /// Whether this worktree makes the sweep exit 1: its teardown refused, or it could not be
    /// read or finished.
    pub fn failed(&self) -> bool {
        self.action == "refused" || self.error.is_some()
    }
}

/// Sweep the repository of the current directory.
pub fn run(req: &Request) -> Result<Vec<Swept>> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let repo = Repo::discover(&cwd)?;
    // The board's own rows (SPEC §26.1: the one question, under the base tip's configuration).
    let rows = board::recorded(&repo)?.rows;
    let mut swept = Vec::new();
    for row in rows.iter().filter(|r| !r.main) {
        let one = match &row.unreadable {
            Some(why) => Err(anyhow::anyhow!("{why}")),
            None => sweep_one(&repo, row, req),
        };
        swept.push(one.unwrap_or_else(|err| unreadable(row, &err)));
    }
    swept.extend(probe::unlisted(&repo).into_iter().map(unlisted));
    Ok(swept)
}

/// An administrative folder git could not read as a worktree: kept, with the way to repair it.
fn unlisted((admin, path): (PathBuf, Option<PathBuf>)) -> Swept {
    let why = format!(
        "git cannot read the administrative data {} as a worktree",
        admin.display()
    );
    Swept {
        path: path.unwrap_or_else(|| admin.clone()).display().to_string(),
        branch: None,
        stage: None,
        action: "kept",
        reason: format!(
            "{why}; repair it (`git worktree repair <path>`, or `git worktree prune` when the \
             worktree is gone), then sweep again"
        ),
        codes: Vec::new(),
        error: Some(why),
    }
}

/// A worktree sweep could not judge (its teardown reached no verdict or stopped): kept, with why
/// and the next step.
fn unreadable(row: &Row, err: &anyhow::Error) -> Swept {
    let why = format!("{err:#}");
    Swept {
        path: row.path.clone(),
        branch: row.branch.clone(),
        stage: Some(row.stage),
        action: "kept",
        reason: format!(
            "stage {}, but it cannot be read: {why}; fix that (or run `closegate teardown {}` \
             to see it alone), then sweep again",
            row.stage.as_str(),
            crate::shell::shell_word(&row.path)
        ),
        codes: Vec::new(),
        error: Some(why),
    }
}

fn sweep_one(repo: &Repo, row: &Row, req: &Request) -> Result<Swept> {
    let mut swept = Swept {
        path: row.path.clone(),
        branch: row.branch.clone(),
        stage: Some(row.stage),
        action: "kept",
        reason: format!("stage {}", row.stage.as_str()),
        codes: Vec::new(),
        error: None,
    };
    let Some(dir) = row.dir.clone() else {
        if let Some(why) = probe::hidden(row) {
            bail!("{why}");
        }
        swept.reason = "its directory is not on this machine".into();
        return Ok(swept);
    };
    if let Some(why) = probe::admin_fault(repo, row, &dir) {
        bail!("{why}");
    }
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
                    date::duration(idle, Grain::Largest)
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
        starters: crate::teardown::busy::Starters::Exempt,
    };
    let done = crate::teardown::run(&request)?;
    if let Some(error) = &done.error {
        // The removal stopped midway (teardown says what is left and how to finish).
        anyhow::bail!("{error}");
    }
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
