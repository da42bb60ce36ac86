//! What the stop hook reads about the session (SPEC §18, §26.3): the worktree it started in (the
//! `cwd` of the transcript's first line that has one), the final message from the transcript's
//! tail, and whether the stop claims completion (`claims` mode judges only such a stop). A
//! transcript is opened only as a regular file, never with a blocking open.

use std::path::{Path, PathBuf};

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
/// with a `cwd` from its head.
pub const TRANSCRIPT_TAIL: u64 = 16 << 20;
/// How much of a transcript's head is searched for the first `cwd`.
const HEAD: usize = 4 << 20;

/// The folder the session started in: the `cwd` of the first line that has one in the head of
/// the transcript at `path`. A transcript that is not a regular file (a FIFO, a device) or cannot
/// be read gives none: it is never opened with a blocking open (SPEC §26.3).
pub fn start_cwd(path: &Path) -> Option<PathBuf> {
    use std::io::{BufRead, Read};
    let (file, _) = crate::input_file::open_regular(path).ok()?;
    // Line by line from the head: the first line with a `cwd` is near the top of a transcript
    // that may be many megabytes long.
    let mut lines = std::io::BufReader::new(file.take(HEAD as u64));
    let mut line = Vec::new();
    let key = memchr::memmem::Finder::new(b"\"cwd\"");
    while lines.read_until(b'\n', &mut line).ok()? > 0 {
        // Only a line naming the key is parsed (Gemini CLI's lines never do): a line could
        // spell it escaped, but what it could say that way it could say plainly.
        let named = key.find(&line).is_some();
        if let Some(value) = named
            .then(|| serde_json::from_slice::<Value>(&line).ok())
            .flatten()
        {
            let found = value["cwd"].as_str().or(value["payload"]["cwd"].as_str());
            if let Some(cwd) = found.filter(|c| !c.is_empty()) {
                return Some(PathBuf::from(cwd));
            }
        }
        line.clear();
    }
    None
}

/// The last `max` bytes of the transcript at `path`, opened without blocking (a FIFO or a device
/// is an error naming it, never a wait).
pub fn read_tail(path: &Path, max: u64) -> anyhow::Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    let (mut file, len) = crate::input_file::open_regular(path)?;
    file.seek(SeekFrom::Start(len.saturating_sub(max)))?;
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Whether the final message claims completion (SPEC §26.3): an `@signal done` line, or a
/// `VERIFIED` token at the start of the message (after blank lines and markdown emphasis) or alone
/// on a line. `VERIFIED` in the middle of a sentence — "is this VERIFIED enough?" — claims nothing.
pub fn message_claims(message: &str) -> bool {
    let signals_done = message.lines().any(|line| {
        let mut words = line.split_whitespace();
        words.next() == Some("@signal") && words.next() == Some("done") && words.next().is_none()
    });
    let first = message.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let opens = first
        .trim_start_matches(MARKUP)
        .strip_prefix("VERIFIED")
        .is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_'));
    let alone = message
        .lines()
        .any(|l| l.trim_matches(MARKUP) == "VERIFIED");
    signals_done || opens || alone
}

/// What may stand around a token as markdown: spaces, emphasis, a heading or quote mark, code.
const MARKUP: &[char] = &[' ', '\t', '*', '_', '#', '>', '`', '\r'];

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
        assert!(message_claims("\n\n  VERIFIED: x added"));
        assert!(message_claims("All done.\n\nVERIFIED\n"));
        assert!(message_claims("All done.\n**VERIFIED**\n"));
    }

    /// SPEC §26.3: a question or a progress note passes whatever words it holds mid-sentence.
    #[test]
    fn verified_mid_sentence_is_no_claim() {
        for text in [
            "Is the parser VERIFIED enough, or should I add fuzzing?",
            "The last run was VERIFIED; shall I also update the docs?",
            "progress: VERIFIED the first half, continuing\n@signal blocked",
            "VERIFIEDX is not a word",
            "I will say @signal done when finished",
            "@signal done-ish",
        ] {
            assert!(!message_claims(text), "{text:?}");
        }
    }
}
