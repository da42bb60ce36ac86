//! The typed value the `doc` gate produces and the later gates consume.

use serde::Serialize;

/// The five writable state words (SPEC §1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
pub enum State {
    #[serde(rename = "in-progress")]
    InProgress,
    #[serde(rename = "blocked")]
    Blocked,
    #[serde(rename = "stop-2-ready")]
    Stop2Ready,
    #[serde(rename = "close-ok")]
    CloseOk,
    #[serde(rename = "closed-without-merge")]
    ClosedWithoutMerge,
}

impl State {
    pub const ALL: [State; 5] = [
        State::InProgress,
        State::Blocked,
        State::Stop2Ready,
        State::CloseOk,
        State::ClosedWithoutMerge,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            State::InProgress => "in-progress",
            State::Blocked => "blocked",
            State::Stop2Ready => "stop-2-ready",
            State::CloseOk => "close-ok",
            State::ClosedWithoutMerge => "closed-without-merge",
        }
    }

    /// The writable word, exactly.
    pub fn parse(word: &str) -> Option<State> {
        State::ALL.into_iter().find(|s| s.as_str() == word)
    }

    /// One of the eight older spellings, read as its canonical word.
    pub fn legacy(word: &str) -> Option<State> {
        Some(match word {
            "in_progress" | "working" => State::InProgress,
            "stuck" => State::Blocked,
            "stop-2" | "ready" => State::Stop2Ready,
            "done" | "closed" => State::CloseOk,
            "abandoned" => State::ClosedWithoutMerge,
            _ => return None,
        })
    }

    /// The agent has stopped: `stop-2-ready`, `close-ok` or `closed-without-merge`.
    pub fn is_returned(self) -> bool {
        matches!(
            self,
            State::Stop2Ready | State::CloseOk | State::ClosedWithoutMerge
        )
    }

    /// States that require a close line.
    pub fn needs_close_line(self) -> bool {
        matches!(self, State::Stop2Ready | State::CloseOk)
    }
}

/// The parsed `CLOSE-OK · <slug> · commit <sha> · branch <branch> · worktree <path>` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloseLine {
    pub slug: String,
    /// 7–64 lowercase hex digits, as written.
    pub commit: String,
    pub branch: String,
    /// Absolute path, as written (may contain spaces).
    pub worktree: String,
    /// 1-based line number in the document (or the message it came from).
    pub line: usize,
}

/// `- last commit: <sha> — <subject>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastCommit {
    pub sha: String,
    pub subject: String,
    pub line: usize,
}

/// One entry of a prose or manifest key, with the line it sits on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub text: String,
    pub line: usize,
}

/// A status document as far as it could be read. Every field is optional because the parser
/// reports problems as findings and keeps going.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusDoc {
    /// The slug of the H1 `# STATUS — <slug>`.
    pub slug: String,
    /// The state, when one word of the vocabulary was read (legacy words only with `--legacy`).
    pub state: Option<State>,
    pub state_line: Option<usize>,
    /// `abstract`, continuation lines joined with `\n`.
    pub abstract_text: Option<String>,
    pub last_commit: Option<LastCommit>,
    /// The claims of `done`.
    pub done: Vec<Entry>,
    /// `next / blocked-on`, joined.
    pub next: Option<String>,
    /// `artifacts` / `return`: `None` when neither key is present; `Some(vec![])` for a bare key.
    /// Paths have surrounding backticks stripped; invalid paths are left out (and reported).
    pub artifacts: Option<Vec<Entry>>,
    pub note: Option<String>,
    pub updated: Option<String>,
    /// The close line, when one was read and parsed.
    pub close: Option<CloseLine>,
}

/// The result of parsing: the document (absent on `doc-not-utf8` / `doc-h1-missing`) and findings.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    pub doc: Option<StatusDoc>,
    pub findings: Vec<crate::finding::Finding>,
}
