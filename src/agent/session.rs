//! What the stop hook reads about the session (SPEC §18): the worktree it started in (the `cwd`
//! of the transcript's first line that has one), when it began, and whether the stop claims
//! completion (`claims` mode judges only such a stop).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

/// The hook's modes: `claims` judges only a stop that claims completion, `always` every stop
/// (`--mode`: `cmd::values` lets clap read it, with [`Mode::help`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Claims,
    Always,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Claims => "claims",
            Mode::Always => "always",
        }
    }

    /// What the mode does, as `--help` shows it.
    pub fn help(self) -> &'static str {
        match self {
            Mode::Claims => {
                "Block only a stop that claims completion and whose claim is false; a question or a progress note passes"
            }
            Mode::Always => {
                "Hold every stop to the protocol (for unattended agents): no signal blocks"
            }
        }
    }
}

/// Most of a transcript the hook reads: its last 16 MiB for the final message; its first line
/// with a `cwd` (and the first timestamp) from its head.
pub const TRANSCRIPT_TAIL: u64 = 16 << 20;
/// How much of a transcript's head is searched for the first `cwd` and timestamp.
const HEAD: usize = 4 << 20;

/// The `cwd` of the transcript's first line that has one, and the first timestamp seen.
pub struct Start {
    pub cwd: Option<PathBuf>,
    pub began: Option<SystemTime>,
}

/// Read the session's start from the head of the transcript at `path`.
pub fn start(path: &Path) -> Start {
    use std::io::Read;
    let mut head = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(HEAD as u64).read_to_end(&mut head));
    if read.is_err() {
        return Start {
            cwd: None,
            began: None,
        };
    }
    let text = String::from_utf8_lossy(&head);
    let mut cwd = None;
    let mut began = None;
    for line in text.lines() {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if began.is_none() {
            began = timestamp(&value);
        }
        if cwd.is_none() {
            let found = value["cwd"].as_str().or(value["payload"]["cwd"].as_str());
            cwd = found.filter(|c| !c.is_empty()).map(PathBuf::from);
        }
        if cwd.is_some() && began.is_some() {
            break;
        }
    }
    Start { cwd, began }
}

/// A line's `timestamp` (RFC 3339, as both harnesses write it).
fn timestamp(value: &Value) -> Option<SystemTime> {
    let text = value["timestamp"].as_str()?;
    let secs = u64::try_from(crate::stats::instant(text)?).ok()?;
    Some(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(secs))
}

/// Whether the final message claims completion: an `@signal done` line, or a `VERIFIED` token
/// as a word of its first line.
pub fn message_claims(message: &str) -> bool {
    let signals_done = message.lines().any(|line| {
        let mut words = line.split_whitespace();
        words.next() == Some("@signal") && words.next() == Some("done")
    });
    let first = message.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let verified = first
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .any(|w| w == "VERIFIED");
    signals_done || verified
}

/// Whether the status document at `path` is in a returned state.
pub fn doc_returned(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    text.lines().any(|line| {
        let line = line.trim_start_matches(['-', '*', ' ']);
        let Some(rest) = line.strip_prefix("state:") else {
            return false;
        };
        matches!(
            rest.trim().trim_matches('`'),
            "close-ok" | "stop-2-ready" | "closed-without-merge"
        )
    })
}

/// Whether the status document at `path` changed since the session began: its mtime is later
/// than `began`; without a start time, when it differs from `head_version` (HEAD's bytes, `None`
/// when HEAD has none).
pub fn doc_changed(path: &Path, began: Option<SystemTime>, head_version: Option<&[u8]>) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    match began {
        Some(began) => meta.modified().is_ok_and(|m| m > began),
        None => {
            let now = crate::input_file::read(path).unwrap_or_default();
            head_version != Some(now.as_slice())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_is_no_claim_and_done_or_verified_is() {
        assert!(!message_claims("Should I also update the docs?"));
        assert!(!message_claims("progress: 3 of 5 done\n@signal blocked"));
        assert!(!message_claims(
            "UNVERIFIED — the suite is slow\n@signal done-ish"
        ));
        assert!(message_claims("VERIFIED\nall tests pass\n@signal done"));
        assert!(message_claims("finished\n@signal done"));
        assert!(message_claims("**VERIFIED** all good"));
    }

    #[test]
    fn returned_states_are_read_from_the_document() {
        assert!(doc_returned(b"# x\n- state: close-ok\n"));
        assert!(doc_returned(b"# x\n- state: `stop-2-ready`\n"));
        assert!(!doc_returned(b"# x\n- state: in-progress\n"));
    }
}
