//! The lifecycle signal that ends an agent's message (`@signal done`, `@signal no_op`,
//! `@signal blocked`), and the rules that check it against the repository (SPEC §10):
//! `closegate signal` is the command around them (`cmd/signal.rs`).
//!
//! `no_op` allows no change at all: the status document counts as a change like any other file,
//! because an agent that did nothing writes nothing.

use std::io::ErrorKind;
use std::path::Path;

use anyhow::Result;

use crate::catalog::Code;
use crate::doc::{ParseOptions, State};
use crate::finding::{Finding, Severity};
use crate::gates::{self, Session};
use crate::inputs::{self, GateOptions};
use crate::repo::{self, Repo};
use crate::report::Report;

/// The three lifecycle signals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Done,
    NoOp,
    Blocked,
}

impl Signal {
    pub fn as_str(self) -> &'static str {
        match self {
            Signal::Done => "done",
            Signal::NoOp => "no_op",
            Signal::Blocked => "blocked",
        }
    }
}

/// A message split into its body and its signal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    pub signal: Option<Signal>,
    /// The message without the `@signal` line (and without blank lines after it).
    pub body: String,
    /// `signal-missing` or `signal-unknown`.
    pub finding: Option<Finding>,
}

/// Find the signal on the last non-blank line. A last line starting with `@signal` is the signal
/// line (stripped even when its word is unknown); anything else there means the signal is missing.
pub fn parse(text: &str) -> Parsed {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let Some(last) = lines.iter().rposition(|l| !l.trim().is_empty()) else {
        return missing(text, "the message is empty");
    };
    let line = lines[last].trim();
    let Some(rest) = line.strip_prefix("@signal") else {
        let found: String = line.chars().take(40).collect();
        return missing(text, &format!("found `{found}`"));
    };
    let body = lines[..last].concat();
    let word = rest.trim();
    let signal = match word {
        "done" => Some(Signal::Done),
        "no_op" => Some(Signal::NoOp),
        "blocked" => Some(Signal::Blocked),
        _ => None,
    };
    let separated = rest.starts_with(char::is_whitespace);
    match signal.filter(|_| separated) {
        Some(signal) => Parsed {
            signal: Some(signal),
            body,
            finding: None,
        },
        None => Parsed {
            signal: None,
            body,
            finding: Some(Finding::new(
                Code::SignalUnknown,
                format!(
                    "expected `@signal done`, `@signal no_op` or `@signal blocked`, found `{line}`",
                ),
            )),
        },
    }
}

fn missing(text: &str, found: &str) -> Parsed {
    Parsed {
        signal: None,
        body: text.to_string(),
        finding: Some(Finding::new(
            Code::SignalMissing,
            format!(
                "expected the last non-blank line to be `@signal done`, `@signal no_op` or \
                 `@signal blocked`; {found}"
            ),
        )),
    }
}

/// What judging a signal found.
pub struct Judged {
    pub report: Report,
    pub finding: Option<Finding>,
    pub gate_ran: bool,
}

pub fn judge(signal: Signal, repo: Repo, root: &Path, args: &GateOptions) -> Result<Judged> {
    let mut report = Report {
        worktree: Some(root.display().to_string()),
        ..Report::default()
    };
    match signal {
        Signal::NoOp => {
            let finding = no_op_contradiction(&repo, root, args)?;
            Ok(Judged {
                report,
                finding,
                gate_ran: false,
            })
        }
        Signal::Done => {
            let Some(session) = session_with_status(repo, root, args)? else {
                let finding = Finding::new(
                    Code::SignalDoneContradicted,
                    "`@signal done` but the worktree has no status document",
                );
                return Ok(Judged {
                    report,
                    finding: Some(finding),
                    gate_ran: false,
                });
            };
            let outcome = gates::evaluate(&session)?;
            let finding = done_contradiction(&outcome.report);
            Ok(Judged {
                report: outcome.report,
                finding,
                gate_ran: true,
            })
        }
        Signal::Blocked => {
            let finding = match session_with_status(repo, root, args)? {
                None => Some(Finding::new(
                    Code::SignalBlockedContradicted,
                    "`@signal blocked` but the worktree has no status document",
                )),
                Some(session) => {
                    let opts = ParseOptions {
                        legacy: session.legacy(),
                    };
                    let parsed = gates::doc::run(session.status().unwrap_or_default(), opts, None);
                    if let Some(doc) = &parsed.doc {
                        report.slug = Some(doc.slug.clone());
                        report.state = doc.state;
                    }
                    blocked_contradiction(&parsed)
                }
            };
            Ok(Judged {
                report,
                finding,
                gate_ran: false,
            })
        }
    }
}

/// The gate's session, or `None` when nothing is at the path of the status document the inputs
/// would read. Anything else there (a FIFO, a directory, a file that cannot be read) is read as
/// the gate reads it: an exit-2 error naming it (SPEC §11), never "no status document".
fn session_with_status(repo: Repo, root: &Path, args: &GateOptions) -> Result<Option<Session>> {
    if args.status.is_none() && args.rev.is_none() {
        let trusted = inputs::trusted_config(&repo, args.base.as_deref(), args.config.as_deref())?;
        let path = root.join(&trusted.config.status_file);
        if std::fs::symlink_metadata(&path).is_err_and(|e| e.kind() == ErrorKind::NotFound) {
            return Ok(None);
        }
    }
    drop(repo);
    Session::open(Some(root), args).map(Some)
}

/// `no_op` holds when the branch has no commit beyond its merge base with the base and the
/// worktree has no change and no untracked file (the status document included).
fn no_op_contradiction(repo: &Repo, root: &Path, args: &GateOptions) -> Result<Option<Finding>> {
    let trusted = inputs::trusted_config(repo, args.base.as_deref(), args.config.as_deref())?;
    let contradicted = |what: String| {
        Some(Finding::new(
            Code::SignalNoOpContradicted,
            format!("`@signal no_op` but {what}"),
        ))
    };
    let Some((base_name, base)) = trusted.base else {
        return Ok(contradicted(
            "no base branch resolves, so closegate cannot show the branch added nothing; pass --base"
                .to_string(),
        ));
    };
    if let Some(head) = repo.worktree_head(root) {
        let merge_base = repo.merge_base(base, head);
        let ahead = repo.count_commits(merge_base, head)?;
        if ahead > 0 {
            return Ok(contradicted(format!(
                "the branch has {ahead} commit(s) beyond its merge base with `{base_name}`",
            )));
        }
    }
    let status = repo::status_of(root, "")?;
    let mut changed: Vec<&str> = status.dirty.iter().map(String::as_str).collect();
    changed.extend(status.untracked.iter().map(String::as_str));
    if changed.is_empty() {
        return Ok(None);
    }
    let shown: Vec<&str> = changed.iter().take(10).copied().collect();
    Ok(contradicted(format!(
        "the worktree has {} changed or untracked file(s): {}",
        changed.len(),
        shown.join(", ")
    )))
}

/// `done` holds when the document is in a returned state and the gate finds no refusal.
fn done_contradiction(report: &Report) -> Option<Finding> {
    let state = report.state;
    if !state.is_some_and(State::is_returned) {
        let found = state.map_or("no readable state".to_string(), |s| {
            format!("state `{}`", s.as_str())
        });
        return Some(Finding::new(
            Code::SignalDoneContradicted,
            format!("`@signal done` but the status document is not returned: {found}"),
        ));
    }
    let refusals: Vec<&str> = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Refusal)
        .map(|f| f.code.as_str())
        .collect();
    (!refusals.is_empty()).then(|| {
        Finding::new(
            Code::SignalDoneContradicted,
            format!(
                "`@signal done` but the gate refuses the return: {}",
                refusals.join(", ")
            ),
        )
    })
}

/// `blocked` holds when the state is `blocked` and `next / blocked-on` names the blocker.
fn blocked_contradiction(parsed: &crate::doc::Parsed) -> Option<Finding> {
    let contradicted = |what: &str| {
        Some(Finding::new(
            Code::SignalBlockedContradicted,
            format!("`@signal blocked` but {what}"),
        ))
    };
    let Some(doc) = &parsed.doc else {
        return contradicted("the status document has no valid H1, so no state was read");
    };
    if doc.state != Some(State::Blocked) {
        let found = doc.state.map_or("none", State::as_str);
        return contradicted(&format!("the state is `{found}`, not `blocked`"));
    }
    let named = doc.next.as_deref().is_some_and(|t| !t.trim().is_empty())
        && !parsed
            .findings
            .iter()
            .any(|f| f.code == Code::DocBlockedOnNone);
    if named {
        None
    } else {
        contradicted("`next / blocked-on` does not name what the work waits on")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(p: &Parsed) -> Option<Code> {
        p.finding.as_ref().map(|f| f.code)
    }

    #[test]
    fn the_signal_is_the_last_non_blank_line() {
        let p = parse("edited the file\n\n@signal done\n\n");
        assert_eq!((p.signal, code(&p)), (Some(Signal::Done), None));
        assert_eq!(p.body, "edited the file\n\n");
        assert_eq!(parse("@signal no_op").signal, Some(Signal::NoOp));
        assert_eq!(
            parse("x\r\n  @signal blocked  \r\n").signal,
            Some(Signal::Blocked)
        );
    }

    #[test]
    fn missing_and_unknown_signals() {
        assert_eq!(code(&parse("")), Some(Code::SignalMissing));
        assert_eq!(code(&parse("done.\n")), Some(Code::SignalMissing));
        let after = parse("@signal done\nand one more thing\n");
        assert_eq!(code(&after), Some(Code::SignalMissing));
        assert_eq!(after.body, "@signal done\nand one more thing\n");
        for bad in [
            "@signal finished",
            "@signal noop",
            "@signal DONE",
            "@signal",
            "@signaldone",
            "@signal done now",
        ] {
            let p = parse(&format!("text\n{bad}\n"));
            assert_eq!(
                (p.signal, code(&p)),
                (None, Some(Code::SignalUnknown)),
                "{bad}"
            );
            assert_eq!(p.body, "text\n");
        }
    }
}
