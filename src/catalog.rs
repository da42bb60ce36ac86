//! The one catalog of finding codes (SPEC §2–§12): name, severity, gate and explanation.
//!
//! Codes are never renumbered or renamed; scripts outside this repository match on them.
//! `closegate explain` and the manual's code table (docs/codes.md) are both generated from this list.
//!
//! Each entry declares a variant of [`Code`] beside its kebab-case spelling, so a code is a type:
//! a misspelt code is a compile error, not a panic at run time. The kebab-case spelling written
//! here is the only one output ever uses ([`Code::as_str`]); the variant name is the spelling in
//! CamelCase (`attestation-missing` → `AttestationMissing`, checked by a test), so
//! `scripts/codes-to-enum.sh` converts string call sites mechanically.
//!
//! This module depends on nothing else in the crate: [`Severity`] and [`Gate`] live here, and
//! `finding` builds on them.

pub mod lookup;

use serde::Serialize;

/// How a finding affects the verdict.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The claim is refused: verdict FAIL.
    Refusal,
    /// A human must look: verdict PENDING_REVIEW.
    Review,
    /// Something could not be verified: verdict UNVERIFIED.
    Gap,
    /// Reported, never changes the verdict.
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Refusal => "refusal",
            Severity::Review => "review",
            Severity::Gap => "gap",
            Severity::Warning => "warning",
        }
    }
}

/// The gate a finding belongs to, in the order the gates run.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Gate {
    Doc,
    State,
    Close,
    Manifest,
    Protected,
    Checks,
    Contract,
    Claim,
    Signal,
    Teardown,
    Land,
    /// The agent harness's installed stop hook (`agent install`, `agent doctor`, `validate`).
    Agent,
    /// `closegate restore`.
    Restore,
}

impl Gate {
    pub fn as_str(self) -> &'static str {
        match self {
            Gate::Doc => "doc",
            Gate::State => "state",
            Gate::Close => "close",
            Gate::Manifest => "manifest",
            Gate::Protected => "protected",
            Gate::Checks => "checks",
            Gate::Contract => "contract",
            Gate::Claim => "claim",
            Gate::Signal => "signal",
            Gate::Teardown => "teardown",
            Gate::Land => "land",
            Gate::Agent => "agent",
            Gate::Restore => "restore",
        }
    }
}

/// Everything closegate knows about one finding code.
#[derive(Debug, Clone, Copy)]
pub struct CodeInfo {
    pub code: Code,
    pub severity: Severity,
    pub gate: Gate,
    /// One line: when the code is reported.
    pub summary: &'static str,
    /// What usually causes it.
    pub cause: &'static str,
    /// How to fix it.
    pub fix: &'static str,
    /// The fix in a few words, where a headline names the cause of a refusal and its next step
    /// (`teardown refused: …`); the codes no headline names have none.
    pub next: Option<&'static str>,
}

/// An entry's optional field: `None` when the entry leaves it out.
macro_rules! optional {
    () => {
        None
    };
    ($value:expr) => {
        Some($value)
    };
}

/// Declares [`Code`] (one variant per entry, in entry order), its spellings, and [`CODES`].
macro_rules! catalog {
    ($(CodeInfo {
        code: $variant:ident = $kebab:literal,
        severity: $severity:expr,
        gate: $gate:expr,
        summary: $summary:expr,
        cause: $cause:expr,
        fix: $fix:expr
        $(, next: $next:expr)? $(,)?
    }),* $(,)?) => {
        /// A finding code (SPEC §2–§12). Serialized, printed and recorded as its kebab-case
        /// spelling, [`Code::as_str`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code {
            $($variant),*
        }

        impl Code {
            /// Every code, in catalog order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// The code as SPEC spells it: the one spelling any output uses.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $kebab),*
                }
            }

            /// The variant's name as written in the source (for the test that names are
            /// mechanical).
            #[cfg(test)]
            const fn variant_name(self) -> &'static str {
                match self {
                    $(Code::$variant => stringify!($variant)),*
                }
            }
        }

        /// Every code, grouped by gate in the order the gates run.
        pub const CODES: &[CodeInfo] = &[$(CodeInfo {
            code: Code::$variant,
            severity: $severity,
            gate: $gate,
            summary: $summary,
            cause: $cause,
            fix: $fix,
            next: optional!($($next)?),
        }),*];
    };
}

impl Code {
    /// The catalog entry for this code.
    pub fn info(self) -> &'static CodeInfo {
        // CODES holds one entry per variant, in declaration order.
        &CODES[self as usize]
    }

    /// The code SPEC spells `s`, if there is one.
    pub fn parse(s: &str) -> Option<Code> {
        lookup(s).map(|info| info.code)
    }

    pub fn severity(self) -> Severity {
        self.info().severity
    }

    pub fn gate(self) -> Gate {
        self.info().gate
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A code reads back from the spelling SPEC gives it; any other string is an error naming it.
impl<'de> serde::Deserialize<'de> for Code {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Code, D::Error> {
        let text = String::deserialize(deserializer)?;
        Code::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown finding code `{text}`")))
    }
}

catalog! {
    CodeInfo {
        code: DocNotUtf8 = "doc-not-utf8",
        severity: Severity::Refusal,
        gate: Gate::Doc,
        summary: "the status document is not valid UTF-8",
        cause: "the status document was saved in another encoding (UTF-16 from a Windows editor, Latin-1) or holds binary bytes; nothing else in it is read",
        fix: "re-save the status document as UTF-8 (a leading BOM and CRLF line ends are accepted) and run the gate again",
    },
    CodeInfo {
        code: DocH1Missing = "doc-h1-missing",
        severity: Severity::Refusal,
        gate: Gate::Doc,
        summary: "the first non-blank line is not `# STATUS — <slug>`",
        cause: "the first non-blank line is missing, uses another heading level or title, a hyphen or en dash instead of the em dash (U+2014), or a slug with characters outside `[A-Za-z0-9._-]`; nothing else in the document is read",
        fix: "make the first non-blank line exactly `# STATUS — <slug>` with a U+2014 em dash and a slug of 1–100 letters, digits, `.`, `_` or `-` that starts with a letter or digit",
    },
    CodeInfo {
        code: DocStrayLine = "doc-stray-line",
        severity: Severity::Warning,
        gate: Gate::Doc,
        summary: "a line before the close line that is neither a header item nor a continuation",
        cause: "free prose, a second heading or a table before the close line, or a continuation indented by fewer than two spaces",
        fix: "move the text into a header item (usually `note`), indent continuation lines by at least two spaces or a tab, or delete it; the line is ignored, so nothing it says counts",
    },
    CodeInfo {
        code: DocKeyUnknown = "doc-key-unknown",
        severity: Severity::Refusal,
        gate: Gate::Doc,
        summary: "a header key outside the closed key set",
        cause: "a key outside the closed set (`state`, `abstract`, `last commit`, `done`, `next / blocked-on`, `artifacts`, `return`, `evidence`, `note`, `updated`), often a near miss in case, spacing or punctuation such as `State` or `last_commit`",
        fix: "rename the key to the one the message names (keys are case-sensitive), or move the content under `note`",
    },
    CodeInfo {
        code: DocKeyDuplicated = "doc-key-duplicated",
        severity: Severity::Refusal,
        gate: Gate::Doc,
        summary: "a header key (counting its aliases) appears twice",
        cause: "the same key written twice, or a key together with its alias (`return` with `artifacts`, `commit` with `last commit`), often after appending a new block instead of editing the old one",
        fix: "merge the two items on the lines the message names into one item under the canonical key",
    },
    CodeInfo {
        code: DocKeyAlias = "doc-key-alias",
        severity: Severity::Warning,
        gate: Gate::Doc,
        summary: "an older key spelling was read as its canonical key",
        cause: "an older key spelling (`last-commit`, `commit`, `commits`, `next`, `blocked-on`, `blocked on`, `return`) copied from an old template; it is read as its canonical key",
        fix: "write the canonical key: `last commit`, `next / blocked-on` or `artifacts`; the warning does not change the verdict",
    },
    CodeInfo {
        code: DocStateMissing = "doc-state-missing",
        severity: Severity::Refusal,
        gate: Gate::Doc,
        summary: "no `state` key, or it is empty",
        cause: "the `- state:` item is absent or empty, or its word was put on a continuation line",
        fix: "add `- state: <word>` with exactly one of `in-progress`, `blocked`, `stop-2-ready`, `close-ok`, `closed-without-merge` on the same line",
    },
    CodeInfo {
        code: DocStateDecorated = "doc-state-decorated",
        severity: Severity::Refusal,
        gate: Gate::Doc,
        summary: "the state carries more than the single word",
        cause: "the state word carries a suffix, a parenthetical, trailing prose or continuation lines, e.g. `close-ok (tests pending)`",
        fix: "leave the single word alone on its line and move every qualification into `note`; a qualified claim usually means `stop-2-ready` or `blocked`, not `close-ok`",
    },
    CodeInfo {
        code: DocStateLegacy = "doc-state-legacy",
        severity: Severity::Refusal,
        gate: Gate::Doc,
        summary: "the state uses an older spelling that is no longer writable (a warning with `--legacy`)",
        cause: "an older spelling (`in_progress`, `working`, `stuck`, `stop-2`, `ready`, `done`, `closed`, `abandoned`) copied from an old template or an archived record",
        fix: "write the canonical word the message names; pass `--legacy` only when reading archived records, where the spelling is read and reported as a warning",
    },
    CodeInfo {
        code: DocStateUnknown = "doc-state-unknown",
        severity: Severity::Refusal,
        gate: Gate::Doc,
        summary: "the state word is not in the vocabulary",
        cause: "a word outside the vocabulary, such as `complete`, `finished`, `wip`, or a typo",
        fix: "write one of `in-progress`, `blocked`, `stop-2-ready`, `close-ok`, `closed-without-merge`",
    },
    CodeInfo {
        code: DocAbstractMissing = "doc-abstract-missing",
        severity: Severity::Refusal,
        gate: Gate::Doc,
        summary: "a returned state with no `abstract`",
        cause: "the document declares a returned state (`stop-2-ready`, `close-ok`, `closed-without-merge`) without summarising the work",
        fix: "add `- abstract:` with one to five lines saying what was done and where it stands",
    },
    CodeInfo {
        code: DocAbstractOverflow = "doc-abstract-overflow",
        severity: Severity::Refusal,
        gate: Gate::Doc,
        summary: "`abstract` is longer than five lines",
        cause: "the abstract grew into a report: more than five lines, continuations included",
        fix: "cut `abstract` to at most five lines and move the detail into `done` (one claim per sub-bullet), `note` or `evidence`",
    },
    CodeInfo {
        code: DocProseKeyEmpty = "doc-prose-key-empty",
        severity: Severity::Refusal,
        gate: Gate::Doc,
        summary: "a prose key (`abstract`, `done`, `next / blocked-on`, `note`) is present with no text",
        cause: "a template item was left in place without text",
        fix: "fill in the item or delete it; for `next / blocked-on` with nothing pending write `none`",
    },
    CodeInfo {
        code: DocBlockedOnNone = "doc-blocked-on-none",
        severity: Severity::Refusal,
        gate: Gate::Doc,
        summary: "state `blocked` but `next / blocked-on` is `none` or missing",
        cause: "state `blocked` with `next / blocked-on` missing or `none`, so nobody can tell what would unblock the work",
        fix: "name the blocker in `- next / blocked-on:` (who or what, and what is needed), or write the state that is true if nothing blocks the work",
    },
    CodeInfo {
        code: DocLastCommitMalformed = "doc-last-commit-malformed",
        severity: Severity::Refusal,
        gate: Gate::Doc,
        summary: "`last commit` is not `<sha> — <subject>`",
        cause: "`last commit` holds only a sha or only a subject, uses a hyphen instead of the ` — ` em dash separator, or a sha that is not 7–64 hex digits",
        fix: "write `- last commit: <sha> — <subject>` with the commit's id and its summary line, as `git log -1 --format='%h — %s'` prints them",
    },
    CodeInfo {
        code: DocUpdatedMalformed = "doc-updated-malformed",
        severity: Severity::Warning,
        gate: Gate::Doc,
        summary: "`updated` is not an ISO 8601 date or date-time",
        cause: "`updated` holds a free-form date (`yesterday`, `12/03/2025`) or a time without a date",
        fix: "write an ISO 8601 date or date-time, e.g. `2025-03-12` or `2025-03-12T14:05:00Z`",
    },
    CodeInfo {
        code: DocReturnManifestMissing = "doc-return-manifest-missing",
        severity: Severity::Warning,
        gate: Gate::Doc,
        summary: "a returned state with neither `artifacts` nor `return`",
        cause: "a returned document with neither `artifacts` nor `return`, so the teardown cannot tell which outputs must survive",
        fix: "add `- artifacts:` with one path per sub-bullet, or a bare `- artifacts:` to declare that the work produced no artifact",
    },
    CodeInfo {
        code: DocArtifactPathInvalid = "doc-artifact-path-invalid",
        severity: Severity::Refusal,
        gate: Gate::Doc,
        summary: "an artifact entry is not a clean repository-relative path",
        cause: "an entry that is empty, absolute, has a `..` or `.` component, a backslash, a NUL or another control character, often the worktree's absolute path or a Windows path",
        fix: "list each artifact as a repository-relative path with forward slashes (e.g. `src/export.rs`; surrounding backticks are fine), one per sub-bullet",
    },
    CodeInfo {
        code: DocArtifactDuplicated = "doc-artifact-duplicated",
        severity: Severity::Warning,
        gate: Gate::Doc,
        summary: "the same artifact path is listed twice",
        cause: "the same path appears twice in the manifest, often after appending to the list instead of editing it",
        fix: "delete the repeated entry",
    },
    CodeInfo {
        code: DocClaimNoInstrument = "doc-claim-no-instrument",
        severity: Severity::Warning,
        gate: Gate::Doc,
        summary: "a `done` claim names no instrument",
        cause: "a `done` claim asserts an outcome without saying what shows it",
        fix: "end the claim with its instrument, e.g. `empty input exports a header row — proven by test export::empty`; the phrases read are `proven by`, `proved by`, `shown by`, `verified by`, `checked by`, `measured by`",
    },
    CodeInfo {
        code: DocSoftClaim = "doc-soft-claim",
        severity: Severity::Warning,
        gate: Gate::Doc,
        summary: "`abstract` or `done` uses soft language",
        cause: "hedged wording in `abstract` or `done` (`should work`, `i believe`, `looks good`, `seems to`, `probably`, `hopefully`, …), which usually marks something the agent did not check",
        fix: "check the claim and state the result with its instrument, or move the doubt into `note` and write the state that admits it (`stop-2-ready` or `blocked`)",
    },
    CodeInfo {
        code: DocCloseMissing = "doc-close-missing",
        severity: Severity::Refusal,
        gate: Gate::Doc,
        summary: "state `stop-2-ready` or `close-ok` and no close line",
        cause: "the state is `stop-2-ready` or `close-ok` but the document has no CLOSE-OK line, or the agent wrote it only in its final message",
        fix: "end the document with `CLOSE-OK · <slug> · commit <sha> · branch <branch> · worktree <path>` naming the branch tip; a coordinator holding the final message can pass it with `--message FILE`",
    },
    CodeInfo {
        code: DocCloseMalformed = "doc-close-malformed",
        severity: Severity::Refusal,
        gate: Gate::Doc,
        summary: "a line meant as a close line breaks the close-line grammar",
        cause: "a close line with a look-alike character (an en or em dash or U+2212 minus in the marker, a bullet or period instead of ` · `), missing or reordered labels, an uppercase or short sha, an invalid branch name or a relative worktree path",
        fix: "rewrite the line exactly as `CLOSE-OK · <slug> · commit <sha> · branch <branch> · worktree <absolute path>` with an ASCII `-` and ` · ` (U+00B7 with one space each side); the message names the fault and the code point",
    },
    CodeInfo {
        code: DocCloseDuplicated = "doc-close-duplicated",
        severity: Severity::Refusal,
        gate: Gate::Doc,
        summary: "more than one close line",
        cause: "an earlier close line was kept when the agent resumed work and closed again",
        fix: "delete every close line but one: the last non-blank line, naming the current tip",
    },
    CodeInfo {
        code: DocCloseNotLast = "doc-close-not-last",
        severity: Severity::Refusal,
        gate: Gate::Doc,
        summary: "non-blank text after the close line",
        cause: "text appended after the close line: a late note, a footer or another section",
        fix: "move that text into the header items above and make the close line the last non-blank line",
    },
    CodeInfo {
        code: DocCloseUnexpected = "doc-close-unexpected",
        severity: Severity::Refusal,
        gate: Gate::Doc,
        summary: "a close line while the state is `in-progress` or `blocked`",
        cause: "the agent wrote a close line but left the state `in-progress` or `blocked`, or set the state back without removing the old close line",
        fix: "set the state the close line claims (`stop-2-ready` or `close-ok`) or delete the close line",
    },
    CodeInfo {
        code: DocCloseSlugMismatch = "doc-close-slug-mismatch",
        severity: Severity::Refusal,
        gate: Gate::Doc,
        summary: "the close line's slug differs from the H1 slug",
        cause: "the close line was copied from another task, or the slug was renamed in only one place",
        fix: "make the close line's slug identical to the one in `# STATUS — <slug>`",
    },
    CodeInfo {
        code: StateNotReturned = "state-not-returned",
        severity: Severity::Gap,
        gate: Gate::State,
        summary: "the agent has not returned (state `in-progress` or `blocked`)",
        cause: "the agent stopped while its state says `in-progress` or `blocked`: it has not returned the work, so the close and manifest gates do not run",
        fix: "let the agent finish and write a returned state (`stop-2-ready`, `close-ok`, `closed-without-merge`), or resolve what `next / blocked-on` names and resume it",
    },
    CodeInfo {
        code: CloseCommitUnknown = "close-commit-unknown",
        severity: Severity::Refusal,
        gate: Gate::Close,
        summary: "no commit with the close line's id",
        cause: "the close line names a commit this repository does not have: a typo, an id from another clone, or a commit lost to an amend, rebase or reset",
        fix: "write the branch tip's id (`git rev-parse HEAD` in the worktree) into the close line",
    },
    CodeInfo {
        code: CloseCommitAmbiguous = "close-commit-ambiguous",
        severity: Severity::Refusal,
        gate: Gate::Close,
        summary: "the abbreviated commit id matches several objects",
        cause: "the abbreviated id is so short that it matches several objects",
        fix: "write more digits of the id, or the full id from `git rev-parse HEAD`",
    },
    CodeInfo {
        code: CloseBranchUnknown = "close-branch-unknown",
        severity: Severity::Refusal,
        gate: Gate::Close,
        summary: "no `refs/heads/<branch>` for the close line's branch",
        cause: "the branch is misspelled, written with `refs/heads/` or a remote prefix, or was renamed or deleted",
        fix: "write the short branch name exactly as `git branch --show-current` prints it in the worktree (e.g. `agent/x`)",
    },
    CodeInfo {
        code: CloseCommitNotOnBranch = "close-commit-not-on-branch",
        severity: Severity::Refusal,
        gate: Gate::Close,
        summary: "the commit is not reachable from the branch tip",
        cause: "the commit was made on another branch or on a detached HEAD, or the branch was rebased or reset after the close line was written",
        fix: "commit the work on the named branch and write its tip's id; after a rewrite of the branch, write the close line again",
    },
    CodeInfo {
        code: CloseCommitNotTip = "close-commit-not-tip",
        severity: Severity::Refusal,
        gate: Gate::Close,
        summary: "the branch has moved past the close commit",
        cause: "the agent committed after writing the close line, or the close line names a stale commit",
        fix: "re-run the close step and write the tip's id (`git rev-parse HEAD`); exactly one trailing commit that changes only the status document is accepted, anything more is not",
    },
    CodeInfo {
        code: CloseLastCommitMismatch = "close-last-commit-mismatch",
        severity: Severity::Refusal,
        gate: Gate::Close,
        summary: "`last commit` names another commit or another subject",
        cause: "`last commit` was not updated after a later commit, or its subject was paraphrased instead of copied",
        fix: "set `last commit` to the close commit's id and its exact summary line (`git log -1 --format='%h — %s' <sha>`)",
    },
    CodeInfo {
        code: CloseWorktreeUnknown = "close-worktree-unknown",
        severity: Severity::Refusal,
        gate: Gate::Close,
        summary: "the close line's path is not a worktree of this repository",
        cause: "the path is not a worktree of this repository: a typo, a worktree of another clone, a pruned worktree, or a path inside the worktree instead of its root",
        fix: "write the absolute path `git rev-parse --show-toplevel` prints in the agent's worktree",
    },
    CodeInfo {
        code: CloseWorktreeMismatch = "close-worktree-mismatch",
        severity: Severity::Refusal,
        gate: Gate::Close,
        summary: "the close line names another worktree than the one checked",
        cause: "the close line names a different worktree from the one being checked: a document copied between worktrees, or the check pointed at the wrong directory",
        fix: "check the worktree the close line names, or correct the close line to this worktree's absolute path",
    },
    CodeInfo {
        code: CloseWorktreeAbsent = "close-worktree-absent",
        severity: Severity::Gap,
        gate: Gate::Close,
        summary: "the worktree is registered but not on this machine or unreadable (a warning with `--no-worktree`)",
        cause: "the worktree's directory is on another machine, was moved or deleted without `git worktree` knowing, or cannot be read",
        fix: "run the check where the worktree lives, or restore it (`git worktree repair` after a move); on a CI runner pass `--no-worktree`, which makes this a warning",
    },
    CodeInfo {
        code: CloseWorktreeBranch = "close-worktree-branch",
        severity: Severity::Refusal,
        gate: Gate::Close,
        summary: "the worktree's HEAD is not the close line's branch",
        cause: "the worktree was switched to another branch or detached after the close line was written",
        fix: "check out the named branch in the worktree (`git switch <branch>`), or correct the close line",
    },
    CodeInfo {
        code: CloseWorktreeDirty = "close-worktree-dirty",
        severity: Severity::Refusal,
        gate: Gate::Close,
        summary: "tracked files in the worktree have staged or unstaged changes",
        cause: "tracked files were edited or changes staged after the last commit, so the commit does not hold what the worktree holds",
        fix: "commit the changes and write the new tip's id into the close line, or discard them (`git restore --staged --worktree <path>`); the status document itself is exempt",
    },
    CodeInfo {
        code: CloseWorktreeUntracked = "close-worktree-untracked",
        severity: Severity::Warning,
        gate: Gate::Close,
        summary: "untracked, not-ignored files in the worktree",
        cause: "files were created but neither committed nor ignored: scratch output, or new sources left out of the commit",
        fix: "commit what belongs to the work, add build output to `.gitignore` and delete the rest; `closegate teardown` refuses while they remain",
    },
    CodeInfo {
        code: ConfigNotFromWorktree = "config-not-from-worktree",
        severity: Severity::Warning,
        gate: Gate::Close,
        summary: "the checked worktree's `.closegate.toml` was edited there: it differs from its version at the worktree's merge base",
        cause: "the configuration is read from the base branch's tip (or `--config FILE`), never from a worktree; someone in this worktree (the agent or a person) edited `.closegate.toml`, committed on the branch or not, and the edit had no effect on the verdict (a base whose configuration moved on after the worktree was made is not reported)",
        fix: "commit the configuration change to the base branch (where it is reviewed like any protected change) and check again; or discard the edit in this worktree",
    },
    CodeInfo {
        code: CloseNoChange = "close-no-change",
        severity: Severity::Refusal,
        gate: Gate::Close,
        summary: "a returned state claims work whose commit adds nothing to its merge base with the base",
        cause: "the close line names a commit whose tree equals the tree of its merge base with the base: the agent never committed, or its commits cancel out; \"done\" with nothing done is not VERIFIED (work verified and then merged or landed is exempt: an authenticated passing record for this branch and commit, or a land record)",
        fix: "commit the work and run `closegate close` again; if nothing was to be done, write `closed-without-merge` instead",
    },
    CodeInfo {
        code: ArtifactMissing = "artifact-missing",
        severity: Severity::Refusal,
        gate: Gate::Manifest,
        summary: "a declared artifact is not in the commit's tree",
        cause: "a declared artifact was never committed, was committed on another branch, or is spelled differently from its tracked path; an entry ending in `/` must be a directory",
        fix: "commit the file at the listed path and close on the new tip, or correct the entry to the path that is in the commit",
    },
    CodeInfo {
        code: ArtifactUnchanged = "artifact-unchanged",
        severity: Severity::Warning,
        gate: Gate::Manifest,
        summary: "a declared artifact is identical to the merge base",
        cause: "the artifact exists but is identical to the merge base: the branch did not produce it (a file listed by name but never changed, or a change left uncommitted)",
        fix: "commit the change that produces the artifact, or drop the entry from `artifacts`",
    },
    CodeInfo {
        code: ProtectedSurface = "protected-surface",
        severity: Severity::Review,
        gate: Gate::Protected,
        summary: "the branch changed a path on a protected surface (a warning once the commit is approved)",
        cause: "the branch added, modified, deleted, renamed or retyped a path that grades the work: tests, evals, CI, agent instructions, a configured surface, or the closegate configuration",
        fix: "a human reviews the change and, on a terminal, runs `closegate approve --commit <sha>` (these findings become warnings for that commit only) or `closegate reject --note TEXT`; an agent never runs either on its own work: revert the protected change instead",
    },
    CodeInfo {
        code: ReviewRejected = "review-rejected",
        severity: Severity::Refusal,
        gate: Gate::Protected,
        summary: "a reviewer rejected this exact commit (`closegate reject`) and no later approval overrides it",
        cause: "a human ran `closegate reject --note TEXT` on this commit; the message names who and the note. The newer of an approval and a rejection of the same commit wins",
        fix: "read the reviewer's note, change the work and commit again (a new commit is judged afresh), or have the reviewer approve this commit with `closegate approve`",
    },
    CodeInfo {
        code: ValidateUnprotectedTests = "validate-unprotected-tests",
        severity: Severity::Warning,
        gate: Gate::Protected,
        summary: "`validate`: tracked files that look like tests match no configured protected surface",
        cause: "a `[protected] tests = [...]` list replaced the default surface and left out files a default `tests` pattern matches (or that the runner's own configuration names as tests): an agent could weaken them without review",
        fix: "add the paths to a surface, or extend the default instead of replacing it: `[protected] tests = { extend = [\"checks/**\"] }`",
    },
    CodeInfo {
        code: BaseUnknown = "base-unknown",
        severity: Severity::Gap,
        gate: Gate::Protected,
        summary: "the base branch could not be resolved",
        cause: "no base resolved: `--base` or the configuration's `base` names no branch (a tag, an object id or a revision expression never counts), or the repository has none of `main`, `master`, origin/HEAD's target (a shallow CI clone often lacks the base branch)",
        fix: "pass `--base <ref>` or set `base` in `.closegate.toml` on the base branch; in CI fetch the base branch too",
    },
    CodeInfo {
        code: BaseUnrelated = "base-unrelated",
        severity: Severity::Gap,
        gate: Gate::Protected,
        summary: "the commit has no merge base with the base branch in the available history",
        cause: "the branch shares no history with the base (an orphan branch made with `git checkout --orphan` or `git commit-tree`, unrelated histories), or the repository is shallow and its boundary hides the fork point (a `git clone --depth` CI checkout): the protected and contract gates cannot say what the branch changed, so they judge nothing",
        fix: "in a shallow clone run `git fetch --unshallow` (or fetch with a `--depth` large enough to reach the fork point); otherwise branch the work from the base and commit it there",
    },
    CodeInfo {
        code: ApprovalUnsigned = "approval-unsigned",
        severity: Severity::Review,
        gate: Gate::Protected,
        summary: "`require_signed_approvals = true` and the approval is not signed by an allowed signer",
        cause: "the base branch's configuration requires approvals signed with an SSH key named in its `allowed_signers` file, and the approval recorded for this commit is unsigned or signed by another key; an unsigned record can be written by anyone who can write the repository",
        fix: "an allowed signer (a human, with a key the agent cannot read) runs `closegate approve --sign [--key FILE]` on a terminal, or the reviewer's public key is added to the base branch's `allowed_signers`; an agent never approves its own work",
    },
    CodeInfo {
        code: CheckFailed = "check-failed",
        severity: Severity::Refusal,
        gate: Gate::Checks,
        summary: "a configured check exited non-zero",
        cause: "a configured check exited non-zero in a pristine checkout of the exact commit: a real failure, or work that passes only with uncommitted files or local state",
        fix: "read the kept output in the report, reproduce in a clean checkout of the commit (`git worktree add <dir> <sha>` and the check's command), commit the fix and close on the new tip",
    },
    CodeInfo {
        code: CheckTimeout = "check-timeout",
        severity: Severity::Refusal,
        gate: Gate::Checks,
        summary: "a configured check ran past its timeout and was killed",
        cause: "a check ran past its `timeout_s` (default 600) and was killed: a hang, a test waiting on input, or a slow first build in the fresh checkout",
        fix: "find what hangs, or raise that check's `timeout_s` in `.closegate.toml` on the base branch",
    },
    CodeInfo {
        code: CheckRedOnBase = "check-red-on-base",
        severity: Severity::Gap,
        gate: Gate::Checks,
        summary: "`validate --run`: a configured check fails on the base tip itself",
        cause: "the check fails before any agent touched the code (a command that does not work in a pristine sandboxed checkout, a missing install step, a cache that is not writable, or a base that is red): every agent's verdict would be FAIL for it",
        fix: "fix the check's `run` (install dependencies inside the checkout, list tool caches in `writable`) or the base, commit to the base branch, and run `closegate validate --run` again",
    },
    CodeInfo {
        code: ChecksRunning = "checks-running",
        severity: Severity::Gap,
        gate: Gate::Checks,
        summary: "the stop hook could not finish the checks within its time bound",
        cause: "the configured checks could not finish before the harness's hook timeout (`--time-limit`, written by `agent install`); the claim is held, never let through unjudged",
        fix: "run `closegate check` in the worktree (its result is recorded and reused), then stop again; or raise the hook timeout with `closegate agent install` after lowering the checks' `timeout_s`",
    },
    CodeInfo {
        code: ChecksNone = "checks-none",
        severity: Severity::Gap,
        gate: Gate::Checks,
        summary: "no checks are configured",
        cause: "the trusted configuration has no `[[checks]]`, so closegate ran nothing and cannot verify the work",
        fix: "add `[[checks]]` entries (`name`, `run`, `timeout_s`) to `.closegate.toml` on the base branch; the agent's branch cannot add them",
    },
    CodeInfo {
        code: ChecksSkipped = "checks-skipped",
        severity: Severity::Gap,
        gate: Gate::Checks,
        summary: "`--no-checks` was given, or `--fail-fast` stopped before the check ran",
        cause: "`--no-checks` was given, so no configured check ran on the commit; or `check --fail-fast` stopped at the first failing check, and the message names each check that did not run",
        fix: "run `closegate check` without `--no-checks` (or `--fail-fast`) to reach VERIFIED",
    },
    CodeInfo {
        code: ChecksUnsandboxed = "checks-unsandboxed",
        severity: Severity::Warning,
        gate: Gate::Checks,
        summary: "the checks could not be sandboxed (a warning under `sandbox = \"auto\"`, a gap under `\"required\"`)",
        cause: "no sandbox could be set up for the checks (bubblewrap not installed, no user namespaces, not Linux): under `sandbox = \"auto\"` they ran with every right of this user, and the message names the secret paths that stayed visible to them; under `\"required\"` none ran; a secret file with a second name (a hard link) lets none run either",
        fix: "install bubblewrap (`apt-get install bubblewrap`) and allow unprivileged user namespaces; the message names what failed",
    },
    CodeInfo {
        code: AttestationMissing = "attestation-missing",
        severity: Severity::Gap,
        gate: Gate::Checks,
        summary: "no valid signed check attestation for the commit",
        cause: "the gate runs where it does not run the checks itself (the server gate, or `check --require-attestation`) and no note under `refs/notes/closegate` attests a VERIFIED check run for this commit, tree, configuration blob and contract blob",
        fix: "run `closegate check --attest` in CI on the exact commit and push `refs/notes/closegate` with the branch",
    },
    CodeInfo {
        code: AttestationInvalid = "attestation-invalid",
        severity: Severity::Refusal,
        gate: Gate::Checks,
        summary: "an attestation whose signature does not verify against `allowed_signers`",
        cause: "the note under `refs/notes/closegate` for this commit carries a signature that `ssh-keygen -Y verify` rejects against the base branch's `allowed_signers`: a forged or altered statement, or a key that is not allowed",
        fix: "re-run `closegate check --attest` with a key listed in the base branch's `allowed_signers` and push the new note",
    },
    CodeInfo {
        code: TestsWeakened = "tests-weakened",
        severity: Severity::Review,
        gate: Gate::Checks,
        summary: "a check passes on the commit but fails with the base's own tests put back (the overlay)",
        cause: "the branch changed test paths and the commit's code passes only its own edited tests: on the overlay (the commit's tree with every test path as the merge base has it) the same check fails, as when assertions were deleted, expected values changed or cases skipped until a wrong change passed",
        fix: "read the overlay's output in the finding, fix the code so the base's tests pass (or restore the tests), and close on the new tip; a human who judges the test change right runs `closegate approve` on a terminal, which turns this into a warning for that commit (an agent never runs it)",
    },
    CodeInfo {
        code: TestsPassOnBase = "tests-pass-on-base",
        severity: Severity::Warning,
        gate: Gate::Checks,
        summary: "the branch's new or changed tests also pass on the base's code (the reverse overlay)",
        cause: "on the reverse overlay (the merge base's tree with the branch's test paths on it) every check that passed on the commit passed too: the new tests do not exercise the change",
        fix: "add a test that fails without the change and passes with it, so the tests prove what the branch claims",
    },
    CodeInfo {
        code: TeardownDirty = "teardown-dirty",
        severity: Severity::Refusal,
        gate: Gate::Teardown,
        summary: "tracked files in the worktree have changes",
        cause: "tracked files in the worktree have changes that are in no commit; removing the worktree would lose them",
        fix: "commit the changes, or discard them deliberately (`git restore`, `git stash`), then run the teardown again",
        next: "tracked files have uncommitted changes (commit or discard them)",
    },
    CodeInfo {
        code: TeardownUntracked = "teardown-untracked",
        severity: Severity::Refusal,
        gate: Gate::Teardown,
        summary: "untracked, not-ignored files would be lost",
        cause: "untracked, not-ignored files other than the status document (each file in an untracked folder counts) would be deleted with the worktree",
        fix: "commit what should be kept or move it out, add build output to `.gitignore`, delete the rest yourself, then run the teardown again",
        next: "untracked files would be lost (commit, move out or delete them, or ignore build output)",
    },
    CodeInfo {
        code: TeardownLocked = "teardown-locked",
        severity: Severity::Refusal,
        gate: Gate::Teardown,
        summary: "the worktree is locked",
        cause: "the worktree was locked with `git worktree lock`, usually because someone wants it kept or it lives on removable storage",
        fix: "ask whoever locked it (the reason shows in `git worktree list --porcelain`), then `git worktree unlock <path>` and run the teardown again",
        next: "the worktree is locked (`git worktree unlock <path>`)",
    },
    CodeInfo {
        code: TeardownMainWorktree = "teardown-main-worktree",
        severity: Severity::Refusal,
        gate: Gate::Teardown,
        summary: "the main worktree is never torn down",
        cause: "the teardown was pointed at the repository's main worktree, which closegate never removes",
        fix: "run the teardown on the agent's linked worktree (`git worktree list` shows them)",
        next: "this is the main worktree, which is never removed",
    },
    CodeInfo {
        code: TeardownUnmerged = "teardown-unmerged",
        severity: Severity::Refusal,
        gate: Gate::Teardown,
        summary: "`--delete-branch` and the branch is not merged into the base",
        cause: "`--delete-branch` was given but the branch's work is not in the base: the tip is not reachable from it and no squash or rebase merge holds the same changes",
        fix: "merge the branch first, or run the teardown without `--delete-branch` to keep the branch",
        next: "the branch is not merged into the base, so --delete-branch cannot delete it (run again without --delete-branch to keep the branch, or merge it first)",
    },
    CodeInfo {
        code: TeardownOperationInProgress = "teardown-operation-in-progress",
        severity: Severity::Refusal,
        gate: Gate::Teardown,
        summary: "a merge, rebase, cherry-pick, revert or bisect is in progress",
        cause: "a merge, rebase, cherry-pick, revert or bisect was left unfinished in the worktree",
        fix: "finish or abort it there (`git merge --abort`, `git rebase --continue`, `git bisect reset`, …), then run the teardown again",
        next: "an operation is unfinished in the worktree (finish or abort it)",
    },
    CodeInfo {
        code: TeardownHiddenChanges = "teardown-hidden-changes",
        severity: Severity::Refusal,
        gate: Gate::Teardown,
        summary: "skip-worktree or assume-unchanged files differ from the commit",
        cause: "files marked `skip-worktree` or `assume-unchanged` differ from the commit, so `git status` hides changes that removing the worktree would lose",
        fix: "list them with `git ls-files -v | grep '^[a-zS]'`, clear the flags (`git update-index --no-skip-worktree --no-assume-unchanged <path>`), then commit or discard the changes",
        next: "skip-worktree or assume-unchanged files differ from the commit (clear the flags, then commit or discard)",
    },
    CodeInfo {
        code: TeardownNestedRepo = "teardown-nested-repo",
        severity: Severity::Refusal,
        gate: Gate::Teardown,
        summary: "a nested repository or changed submodule lies inside the worktree",
        cause: "a nested repository (e.g. a cloned dependency) or a submodule with changes or commits of its own lies inside the worktree; removing the directory would delete them",
        fix: "push or move the nested repository out, or commit or discard the submodule's changes, then run the teardown again",
        next: "a repository inside the worktree would be lost (push or move it out)",
    },
    CodeInfo {
        code: TeardownMoved = "teardown-moved",
        severity: Severity::Refusal,
        gate: Gate::Teardown,
        summary: "the worktree's HEAD is no longer the verified commit",
        cause: "the worktree's HEAD changed after the gate verified it: someone committed, reset or switched branches in between",
        fix: "run `closegate check` on the new HEAD and tear down only after it passes",
        next: "HEAD moved after the verified commit (run `closegate check` on the new HEAD)",
    },
    CodeInfo {
        code: TeardownUnreachableCommits = "teardown-unreachable-commits",
        severity: Severity::Refusal,
        gate: Gate::Teardown,
        summary: "the worktree's HEAD or reflog holds commits no branch or tag reaches",
        cause: "commits were made on a detached HEAD (or left only in the worktree's HEAD reflog) and no branch, tag, other ref, other worktree's HEAD or branch reflog reaches them; the worktree's HEAD and reflog go with its administrative data, so removal would orphan them",
        fix: "keep them with `git branch <name> <commit>` (or a tag) for each commit named, or check out a branch that holds them, then run the teardown again",
        next: "commits only the worktree's HEAD reaches would be orphaned (`git branch <name> <commit>` keeps them, or --force escrows them)",
    },
    CodeInfo {
        code: LandNotVerified = "land-not-verified",
        severity: Severity::Refusal,
        gate: Gate::Land,
        summary: "the branch is not COMPLETED under the base tip's configuration",
        cause: "`closegate land` found no passing verdict recorded for the branch's tip under the configuration the base tip holds now (never checked, checked under another configuration, FAIL, UNVERIFIED, or PENDING_REVIEW without an approval), or the branch touches a protected path against the current base that its verdict did not cover",
        fix: "run `closegate check <worktree>` (and, when a human must look, the human runs `closegate approve` on a terminal), then land again",
    },
    CodeInfo {
        code: LandConflict = "land-conflict",
        severity: Severity::Refusal,
        gate: Gate::Land,
        summary: "the branch does not merge cleanly into the base tip",
        cause: "the branch and the base changed the same lines since the branch forked, or `--strategy ff` was asked and the base moved past the fork point or the branch changed the status document",
        fix: "have the agent merge or rebase onto the current base and check again, or land with another `--strategy`",
    },
    CodeInfo {
        code: LandCheckFailed = "land-check-failed",
        severity: Severity::Refusal,
        gate: Gate::Land,
        summary: "a check fails on the composed tree",
        cause: "the branch passes alone but breaks the base together with what landed since it forked (one branch renames a function, another still calls the old name)",
        fix: "read the check output in the finding, have the agent rebase onto the current base and fix the breakage, check again, then land",
    },
    CodeInfo {
        code: LandBaseBusy = "land-base-busy",
        severity: Severity::Gap,
        gate: Gate::Land,
        summary: "the base kept moving during `land`",
        cause: "someone else moved the base each time `land` composed and checked the branch, more often than its bounded retries allow",
        fix: "run `closegate land` again when the base is quieter; nothing was changed",
    },
    CodeInfo {
        code: LandBaseDirty = "land-base-dirty",
        severity: Severity::Refusal,
        gate: Gate::Land,
        summary: "the worktree that has the base checked out has changes the move would overwrite",
        cause: "the base branch is checked out in a worktree (usually the main one) whose files or index differ from the base tip in paths the landing changes",
        fix: "commit, stash or discard those changes in that worktree, then land again",
    },
    CodeInfo {
        code: AgentHookInactive = "agent-hook-inactive",
        severity: Severity::Warning,
        gate: Gate::Agent,
        summary: "the installed stop hook would not run as installed",
        cause: "the harness would skip or cut short the stop hook closegate installed: Codex has no trust entry for that exact hook (or one for an older version of it), the hooks file is not the one the harness reads for this worktree, the harness timeout is below the hook's `--time-limit`, or the `closegate` the hook names is not on the PATH the harness gives hooks",
        fix: "run `closegate agent install --target <harness>` again from the repository (it writes the file the harness reads, its trust entry and a timeout above the time limit), then `closegate agent doctor` to confirm",
    },
    CodeInfo {
        code: RestoreUnrecorded = "restore-unrecorded",
        severity: Severity::Refusal,
        gate: Gate::Restore,
        summary: "no teardown record names this escrow, and no PATH was given",
        cause: "`closegate restore` without PATH restores only an escrow that a teardown record (authenticated where a record key exists) names, at that record's worktree path; this escrow was written by something else, or its record is missing or forged, so the path in its message cannot be trusted",
        fix: "look at the escrow (`git show <ref>`), and if it is yours restore it to a path you choose: `closegate restore <ref> PATH`",
    },
    CodeInfo {
        code: TestsMissing = "tests-missing",
        severity: Severity::Review,
        gate: Gate::Checks,
        summary: "a test that passed on the base did not run or did not pass on the commit",
        cause: "the test census (the ids of the tests each check ran and passed, read from the runner's output) has tests that passed on the merge base but are absent or not passing on the commit: a deleted or renamed test, a test module no longer compiled in, a runner configuration that deselects tests, or a run that reports 0 tests where the base ran some",
        fix: "restore the missing tests (or their wiring); or a human looks at why they no longer run and, on a terminal, runs `closegate approve` (an agent never runs it)",
    },
    CodeInfo {
        code: TeardownBusy = "teardown-busy",
        severity: Severity::Refusal,
        gate: Gate::Teardown,
        summary: "a process is working inside the worktree",
        cause: "a process (a dev server, a watcher, a shell) has its current directory, its root, an open file or a memory-mapped file inside the worktree (read from /proc); removing the worktree would delete its files under it",
        fix: "end the process named (its pid and command are in the message), or pass --reap to have the teardown send it SIGTERM, then SIGKILL after 5 s (the record names what it ended)",
        next: "a process is working inside the worktree (end it, or pass --reap)",
    },
    CodeInfo {
        code: ClaimTokenMissing = "claim-token-missing",
        severity: Severity::Refusal,
        gate: Gate::Claim,
        summary: "the report does not begin with a verdict token",
        cause: "the agent's report starts with prose, markdown or a variant spelling (`Verified`, `**VERIFIED**`, `PASS`) instead of a verdict token",
        fix: "re-emit the report with its first line starting with `VERIFIED`, `UNVERIFIED`, `PENDING_REVIEW` or `FAIL`, followed by the end of the line, a space or `:`",
    },
    CodeInfo {
        code: ClaimGapUnnamed = "claim-gap-unnamed",
        severity: Severity::Refusal,
        gate: Gate::Claim,
        summary: "`UNVERIFIED` with no text naming the gap",
        cause: "the agent claimed `UNVERIFIED` without saying what could not be verified",
        fix: "name the gap after the token, e.g. `UNVERIFIED: no check covers the export; tested by hand only`",
    },
    CodeInfo {
        code: ClaimOverclaimed = "claim-overclaimed",
        severity: Severity::Refusal,
        gate: Gate::Claim,
        summary: "the agent claimed VERIFIED but the gate does not verify",
        cause: "the agent claimed VERIFIED but closegate's own verdict differs: a false green, recorded in the audit log",
        fix: "run `closegate check` on the worktree, fix what its findings name, and report the token closegate gives",
    },
    CodeInfo {
        code: ClaimUnderclaimed = "claim-underclaimed",
        severity: Severity::Warning,
        gate: Gate::Claim,
        summary: "the agent claimed FAIL but the gate verifies",
        cause: "the agent claimed FAIL while closegate verifies the work: an over-cautious report, or a claim written before the last fix",
        fix: "re-run `closegate check` and report the token it gives; nothing blocks the work",
    },
    CodeInfo {
        code: SignalMissing = "signal-missing",
        severity: Severity::Refusal,
        gate: Gate::Claim,
        summary: "the message does not end with an `@signal` line",
        cause: "the agent's final message does not end with an `@signal` line: it is missing, or text follows it",
        fix: "make the last non-blank line of the message `@signal done`, `@signal no_op` or `@signal blocked`",
    },
    CodeInfo {
        code: SignalUnknown = "signal-unknown",
        severity: Severity::Refusal,
        gate: Gate::Claim,
        summary: "the `@signal` word is not `done`, `no_op` or `blocked`",
        cause: "the `@signal` word is misspelled or invented, e.g. `@signal finished`, `@signal noop` or `@signal DONE`",
        fix: "write exactly `done`, `no_op` or `blocked` after `@signal`",
    },
    CodeInfo {
        code: SignalNoOpContradicted = "signal-no-op-contradicted",
        severity: Severity::Refusal,
        gate: Gate::Claim,
        summary: "`@signal no_op` but the branch or worktree holds changes",
        cause: "the agent signalled `no_op` but its branch has commits beyond the merge base or its worktree has changes",
        fix: "signal `done` with a returned status document for work that changed something, or revert the changes if nothing should have changed",
    },
    CodeInfo {
        code: SignalDoneContradicted = "signal-done-contradicted",
        severity: Severity::Refusal,
        gate: Gate::Claim,
        summary: "`@signal done` but the status is not returned or the gate refuses",
        cause: "the agent signalled `done` but the status document is not in a returned state, or the gate refuses the return",
        fix: "write a returned state and fix the refusals `closegate check` reports before signalling `done`, or signal `blocked`",
    },
    CodeInfo {
        code: SignalBlockedContradicted = "signal-blocked-contradicted",
        severity: Severity::Refusal,
        gate: Gate::Claim,
        summary: "`@signal blocked` but the status is not blocked with a named blocked-on",
        cause: "the agent signalled `blocked` but the document's state is not `blocked`, or `next / blocked-on` names nothing",
        fix: "write `- state: blocked` with the blocker named in `next / blocked-on`, or send the signal that matches the state",
    },
    CodeInfo {
        code: ContractOutOfScope = "contract-out-of-scope",
        severity: Severity::Refusal,
        gate: Gate::Contract,
        summary: "a changed path lies outside the contract's scope",
        cause: "the branch changed a path outside the task contract's `scope` (the status document is exempt): a drive-by edit, or a scope drawn too narrow",
        fix: "revert the out-of-scope change on the branch, or have the coordinator widen `scope` in `.closegate/contracts/<slug>.toml` on the base branch",
    },
    CodeInfo {
        code: ContractProhibited = "contract-prohibited",
        severity: Severity::Refusal,
        gate: Gate::Contract,
        summary: "a changed path matches the contract's prohibited globs",
        cause: "the branch changed a path matching the contract's `prohibited` globs, which win over `scope`",
        fix: "revert the change to the prohibited path; only the coordinator can change the contract, on the base branch",
    },
    CodeInfo {
        code: ContractArtifactMissing = "contract-artifact-missing",
        severity: Severity::Refusal,
        gate: Gate::Contract,
        summary: "a required artifact is not declared or not in the commit",
        cause: "a `required_artifacts` path is not declared under `artifacts` in the status document, or is not in the commit",
        fix: "commit the artifact at that path, list it under `artifacts`, and close on the new tip",
    },
    CodeInfo {
        code: ContractCheckMissing = "contract-check-missing",
        severity: Severity::Gap,
        gate: Gate::Contract,
        summary: "a required check is not configured or did not run",
        cause: "a check named in `required_checks` is not among the configuration's `[[checks]]`, or did not run (e.g. `--no-checks`)",
        fix: "add the check to `.closegate.toml` on the base branch and run without `--no-checks`, or have the coordinator drop it from `required_checks`",
    },
    CodeInfo {
        code: ContractBudgetExceeded = "contract-budget-exceeded",
        severity: Severity::Refusal,
        gate: Gate::Contract,
        summary: "more changed files or commits than the contract allows",
        cause: "the branch changes more files than `max_changed_files` or has more commits beyond the merge base than `max_commits`",
        fix: "drop unrelated changes, squash commits or split the task; only the coordinator can raise the budget in the contract",
    },
    CodeInfo {
        code: ContractApprovalRequired = "contract-approval-required",
        severity: Severity::Review,
        gate: Gate::Contract,
        summary: "the contract requires a human approval",
        cause: "the contract sets `approval = \"always\"`: every return of this task needs a human's approval",
        fix: "a human reviews the commit and, on a terminal, runs `closegate approve --commit <sha>` (bound to this commit and this contract) or `closegate reject --note TEXT`; an agent never runs either on its own work",
    },
    CodeInfo {
        code: ContractMalformed = "contract-malformed",
        severity: Severity::Refusal,
        gate: Gate::Contract,
        summary: "the contract file does not parse",
        cause: "the contract file is not valid TOML, or has an unknown key, a bad glob or a value of the wrong type",
        fix: "correct the key the message names in `.closegate/contracts/<slug>.toml` (or the `--contract` file) on the base branch",
    },
    CodeInfo {
        code: ContractSlugMismatch = "contract-slug-mismatch",
        severity: Severity::Refusal,
        gate: Gate::Contract,
        summary: "a contract bound to this branch is for another slug, or the slug's contract is bound to another branch",
        cause: "the contract says `branch = \"agent/…\"` and the document claims a slug other than the contract's file name (an agent renaming its slug, e.g. `inv-2` for `inv`, to escape its contract), or the document claims the slug of a contract bound to a different branch",
        fix: "write the slug of the contract bound to this branch in the H1 and the close line, or return from the branch the contract is bound to; a bound contract applies to its branch whatever the slug",
    },
    CodeInfo {
        code: ContractMissing = "contract-missing",
        severity: Severity::Gap,
        gate: Gate::Contract,
        summary: "`require_contract = true` and no contract applies to this return",
        cause: "the base branch's configuration requires a task contract for every return, and there is neither `.closegate/contracts/<slug>.toml` for the claimed slug nor a contract whose `branch` is the checked branch (nor a `--contract` file)",
        fix: "commit a contract for the task to the base branch (`.closegate/contracts/<slug>.toml`, ideally with `branch = \"<the agent's branch>\"`) before dispatch, or pass `--contract FILE`",
    },
    CodeInfo {
        code: TestsWeakenedEdit = "tests-weakened-edit",
        severity: Severity::Review,
        gate: Gate::Protected,
        summary: "an edit to a test removes, skips, loosens or drops what it checked, even though the overlay passes",
        cause: "read from the diff of the test file: the edit removes an assertion found nowhere else in the commit's tests, adds a skip, ignore, `only`, `xfail`, early return or exit, `|| true` or a catch-all around an assertion, loosens a comparison (exact to a bound or truthiness, a wider tolerance), or drops a test, case, parametrize or table row that does not reappear; a test neutered today lets the next agent's broken code through, whatever the overlay says now",
        fix: "restore what the test checked (or move it, unchanged, where the commit's tests still run it) and close on the new tip; a human who judges the weakening right runs `closegate approve` on a terminal (an agent never runs it)",
    },
    CodeInfo {
        code: TestsChangedAsExpected = "tests-changed-as-expected",
        severity: Severity::Warning,
        gate: Gate::Checks,
        summary: "a base test the contract's `expect_changed` names fails in the overlay and passes in its new form",
        cause: "the task contract names the base tests the task is expected to change (`expect_changed`); this one fails with the commit's code under the base's version of it (the overlay) and passes in the commit's own version: the behaviour changed as the task said it would",
        fix: "nothing to do when the change is the task's; if it is not, narrow `expect_changed` in the contract on the base branch",
    },
    CodeInfo {
        code: CheckFlaky = "check-flaky",
        severity: Severity::Gap,
        gate: Gate::Checks,
        summary: "a result rests on a test that both passed and failed on one tree",
        cause: "a run failed, and rerunning it (`flaky_retries`) or rerunning its failing tests on the same tree passed: a test that both passes and fails on one tree says nothing about the agent's code, so the verdict cannot rest on it",
        fix: "make the named tests deterministic (time, order, network, shared state) on the base branch, or raise `flaky_retries`; then run `closegate check` again",
    },
}

/// The catalog entry for `code`, if it exists.
pub fn lookup(code: &str) -> Option<&'static CodeInfo> {
    static INDEX: std::sync::OnceLock<std::collections::HashMap<&'static str, &'static CodeInfo>> =
        std::sync::OnceLock::new();
    let index = INDEX.get_or_init(|| CODES.iter().map(|c| (c.code.as_str(), c)).collect());
    index.get(code).copied()
}

/// The manual's code table (docs/codes.md): `| code | severity | gate | when |`, one row per code, in catalog order.
pub fn markdown_table() -> String {
    let mut out = String::from("| code | severity | gate | when |\n|---|---|---|---|\n");
    for info in CODES {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            info.code,
            info.severity.as_str(),
            info.gate.as_str(),
            info.summary.replace('|', "\\|"),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// Every code SPEC.md names, written out so a rename here fails loudly.
    const SPEC_CODES: &[&str] = &[
        "doc-not-utf8",
        "doc-h1-missing",
        "doc-stray-line",
        "doc-key-unknown",
        "doc-key-duplicated",
        "doc-key-alias",
        "doc-state-missing",
        "doc-state-decorated",
        "doc-state-legacy",
        "doc-state-unknown",
        "doc-abstract-missing",
        "doc-abstract-overflow",
        "doc-prose-key-empty",
        "doc-blocked-on-none",
        "doc-last-commit-malformed",
        "doc-updated-malformed",
        "doc-return-manifest-missing",
        "doc-artifact-path-invalid",
        "doc-artifact-duplicated",
        "doc-claim-no-instrument",
        "doc-soft-claim",
        "doc-close-missing",
        "doc-close-malformed",
        "doc-close-duplicated",
        "doc-close-not-last",
        "doc-close-unexpected",
        "doc-close-slug-mismatch",
        "state-not-returned",
        "close-commit-unknown",
        "close-commit-ambiguous",
        "close-branch-unknown",
        "close-commit-not-on-branch",
        "close-commit-not-tip",
        "close-last-commit-mismatch",
        "close-worktree-unknown",
        "close-worktree-mismatch",
        "close-worktree-absent",
        "close-worktree-branch",
        "close-worktree-dirty",
        "close-worktree-untracked",
        "config-not-from-worktree",
        "close-no-change",
        "validate-unprotected-tests",
        "check-red-on-base",
        "checks-running",
        "artifact-missing",
        "artifact-unchanged",
        "protected-surface",
        "base-unknown",
        "base-unrelated",
        "approval-unsigned",
        "review-rejected",
        "check-failed",
        "check-timeout",
        "checks-none",
        "checks-skipped",
        "checks-unsandboxed",
        "attestation-missing",
        "attestation-invalid",
        "tests-weakened",
        "tests-pass-on-base",
        "teardown-dirty",
        "teardown-untracked",
        "teardown-locked",
        "teardown-main-worktree",
        "teardown-unmerged",
        "teardown-operation-in-progress",
        "teardown-hidden-changes",
        "teardown-nested-repo",
        "teardown-moved",
        "teardown-unreachable-commits",
        "teardown-busy",
        "claim-token-missing",
        "claim-gap-unnamed",
        "claim-overclaimed",
        "claim-underclaimed",
        "signal-missing",
        "signal-unknown",
        "signal-no-op-contradicted",
        "signal-done-contradicted",
        "signal-blocked-contradicted",
        "contract-out-of-scope",
        "contract-prohibited",
        "contract-artifact-missing",
        "contract-check-missing",
        "contract-budget-exceeded",
        "contract-approval-required",
        "contract-malformed",
        "contract-slug-mismatch",
        "contract-missing",
        "land-not-verified",
        "land-conflict",
        "land-check-failed",
        "land-base-busy",
        "land-base-dirty",
        "agent-hook-inactive",
        "restore-unrecorded",
        "tests-missing",
        "tests-weakened-edit",
        "tests-changed-as-expected",
        "check-flaky",
    ];

    #[test]
    fn every_teardown_code_and_only_those_have_a_next_step() {
        for info in CODES {
            match (info.gate, info.next) {
                (Gate::Teardown, Some(next)) => {
                    assert!(!next.is_empty() && !next.ends_with('.'), "{}", info.code)
                }
                (Gate::Teardown, None) => panic!("{} has no next step", info.code),
                (_, next) => assert!(next.is_none(), "{} is named in no headline", info.code),
            }
        }
    }

    #[test]
    fn codes_are_unique() {
        let mut seen = HashSet::new();
        for info in CODES {
            assert!(
                seen.insert(info.code.as_str()),
                "duplicate code {}",
                info.code
            );
        }
    }

    /// `Code::info` indexes CODES by the variant's discriminant.
    #[test]
    fn every_code_finds_its_own_entry() {
        assert_eq!(Code::ALL.len(), CODES.len());
        for code in Code::ALL {
            assert_eq!(code.info().code, *code);
            assert_eq!(Code::parse(code.as_str()), Some(*code));
        }
        assert_eq!(Code::parse("close-commit-unknwn"), None);
    }

    /// Variant names are the kebab-case spelling in CamelCase, so string call sites convert
    /// mechanically (scripts/codes-to-enum.sh).
    #[test]
    fn variant_names_are_the_spelling_in_camel_case() {
        for code in Code::ALL {
            let camel: String = code
                .as_str()
                .split('-')
                .map(|part| {
                    let mut chars = part.chars();
                    let first = chars.next().map(|c| c.to_ascii_uppercase());
                    first.into_iter().chain(chars).collect::<String>()
                })
                .collect();
            assert_eq!(code.variant_name(), camel, "{code}");
        }
    }

    /// The spelling is what output uses: JSON, Display, and padding in aligned lists.
    #[test]
    fn code_serializes_and_displays_as_its_spelling() {
        let code = Code::CloseCommitNotTip;
        assert_eq!(
            serde_json::to_string(&code).unwrap(),
            "\"close-commit-not-tip\""
        );
        assert_eq!(format!("[{code:<22}]"), "[close-commit-not-tip  ]");
    }

    #[test]
    fn catalog_holds_exactly_the_spec_codes() {
        let catalog: HashSet<&str> = CODES.iter().map(|c| c.code.as_str()).collect();
        let spec: HashSet<&str> = SPEC_CODES.iter().copied().collect();
        assert_eq!(
            SPEC_CODES.len(),
            spec.len(),
            "SPEC_CODES lists a code twice"
        );
        let missing: Vec<_> = spec.difference(&catalog).collect();
        let extra: Vec<_> = catalog.difference(&spec).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "missing {missing:?}, extra {extra:?}"
        );
    }

    #[test]
    fn every_entry_is_explained() {
        for info in CODES {
            for (field, text) in [
                ("summary", info.summary),
                ("cause", info.cause),
                ("fix", info.fix),
            ] {
                assert!(
                    !text.trim().is_empty(),
                    "{} has an empty {field}",
                    info.code
                );
                assert!(
                    !text.ends_with('.'),
                    "{} {field} ends with a period",
                    info.code
                );
                let first = text.chars().next().unwrap();
                assert!(
                    !first.is_uppercase(),
                    "{} {field} starts uppercase",
                    info.code
                );
            }
        }
    }

    /// Gates follow the code's prefix, but for `tests-weakened-edit`, which SPEC §25's table puts
    /// on gate `protected` (it reads the edit, as the protected gate does, not a run).
    #[test]
    fn gates_follow_the_code_prefix() {
        for info in CODES {
            if info.code == Code::TestsWeakenedEdit {
                assert_eq!(info.gate, Gate::Protected);
                continue;
            }
            let expected = match info.code.as_str().split('-').next().unwrap() {
                "doc" => Gate::Doc,
                "state" => Gate::State,
                "close" | "config" => Gate::Close,
                "artifact" => Gate::Manifest,
                "protected" | "base" | "approval" | "review" | "validate" => Gate::Protected,
                "check" | "checks" | "attestation" | "tests" => Gate::Checks,
                "teardown" => Gate::Teardown,
                "claim" | "signal" => Gate::Claim,
                "contract" => Gate::Contract,
                "land" => Gate::Land,
                "agent" => Gate::Agent,
                "restore" => Gate::Restore,
                other => panic!("unexpected prefix {other}"),
            };
            assert_eq!(info.gate, expected, "{}", info.code);
        }
    }

    /// Severities stated in SPEC.md's tables, for the codes whose default is not a refusal.
    #[test]
    fn severities_match_spec() {
        let not_refusal = [
            ("doc-stray-line", Severity::Warning),
            ("doc-key-alias", Severity::Warning),
            ("doc-updated-malformed", Severity::Warning),
            ("doc-return-manifest-missing", Severity::Warning),
            ("doc-artifact-duplicated", Severity::Warning),
            ("doc-claim-no-instrument", Severity::Warning),
            ("doc-soft-claim", Severity::Warning),
            ("state-not-returned", Severity::Gap),
            ("close-worktree-absent", Severity::Gap),
            ("close-worktree-untracked", Severity::Warning),
            ("config-not-from-worktree", Severity::Warning),
            ("validate-unprotected-tests", Severity::Warning),
            ("check-red-on-base", Severity::Gap),
            ("checks-running", Severity::Gap),
            ("artifact-unchanged", Severity::Warning),
            ("protected-surface", Severity::Review),
            ("base-unknown", Severity::Gap),
            ("base-unrelated", Severity::Gap),
            ("approval-unsigned", Severity::Review),
            ("checks-none", Severity::Gap),
            ("checks-skipped", Severity::Gap),
            // SPEC: "warning / gap"; the catalog holds the default (`sandbox = "auto"`), and
            // `sandbox = "required"` raises it to a gap (tests/it/sandbox.rs).
            ("checks-unsandboxed", Severity::Warning),
            ("attestation-missing", Severity::Gap),
            ("tests-weakened", Severity::Review),
            ("tests-pass-on-base", Severity::Warning),
            ("claim-underclaimed", Severity::Warning),
            ("contract-check-missing", Severity::Gap),
            ("contract-approval-required", Severity::Review),
            ("contract-missing", Severity::Gap),
            ("land-base-busy", Severity::Gap),
            ("agent-hook-inactive", Severity::Warning),
            ("tests-missing", Severity::Review),
            ("tests-weakened-edit", Severity::Review),
            ("tests-changed-as-expected", Severity::Warning),
            ("check-flaky", Severity::Gap),
        ];
        for info in CODES {
            let expected = not_refusal
                .iter()
                .find(|(code, _)| *code == info.code.as_str())
                .map_or(Severity::Refusal, |(_, s)| *s);
            assert_eq!(info.severity, expected, "{}", info.code);
        }
    }

    /// Cross-check against SPEC.md itself when it sits beside the checkout (as in CI).
    #[test]
    fn spec_tables_name_only_catalog_codes() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/SPEC.md");
        if !path.exists() {
            return;
        }
        let spec = std::fs::read_to_string(path).unwrap();
        let mut rows = 0;
        for line in spec.lines().filter(|l| l.starts_with("| `")) {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let severity = cells.get(2).copied().unwrap_or("");
            let word = severity.split_whitespace().next().unwrap_or("");
            if !["refusal", "review", "gap", "warning"].contains(&word) {
                continue;
            }
            let code = cells[1].trim_matches('`');
            let info = lookup(code).unwrap_or_else(|| panic!("SPEC code {code} not in catalog"));
            assert_eq!(info.severity.as_str(), word, "{code}");
            rows += 1;
        }
        assert!(rows >= 50, "only {rows} code rows found in SPEC.md tables");
    }

    #[test]
    fn markdown_table_has_one_row_per_code() {
        let table = markdown_table();
        assert_eq!(table.lines().count(), CODES.len() + 2);
        assert!(table.contains("| `close-commit-not-tip` | refusal | close |"));
    }
}
