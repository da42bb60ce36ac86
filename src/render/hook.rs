//! The hooks' answers in words (SPEC §9, §20): what the reference-transaction hook and the server
//! gate refused, why, and the exact command to run next, on standard error where git relays it.
//!
//! The hooks decide and return data (`hook::run::Answer`, `hook::server::Answer`); branch names,
//! reasons and paths in them are agent text, escaped here once. Also what `hook install` and
//! `hook uninstall` did.

use std::io::Write;

use super::{Format, escape};
use crate::finding::Verdict;
use crate::hook::install::{Installed, Uninstalled};
use crate::hook::run::{self, Action, Answer, Decision, Refusal};
use crate::hook::server;

/// The reference-transaction hook's answer: one reason per refused decision, each with what to
/// run next; nothing when every update may go ahead.
pub fn transaction(answer: &Answer, out: &mut dyn Write) -> std::io::Result<()> {
    match answer {
        Answer::Accepted => Ok(()),
        Answer::Undecided { error, .. } => writeln!(
            out,
            "closegate hook: refusing the ref update because the hook could not decide: {}\n\
             closegate hook: to bypass it deliberately, run {}",
            lines(error),
            run::BYPASS
        ),
        Answer::Refused(refused) => {
            for r in refused {
                writeln!(out, "closegate hook: {}", refusal(r))?;
            }
            if refused.iter().any(|r| r.decision.action == Action::Merge) {
                writeln!(
                    out,
                    "closegate hook: if git has already updated your index and files (a refused \
                     `git merge` or `git pull`), run `git reset --merge` to put them back"
                )?;
            }
            Ok(())
        }
    }
}

/// Error text as it reaches the terminal: each line escaped (an error quotes its inputs raw).
fn lines(text: &str) -> String {
    let lines: Vec<String> = text.lines().map(escape).collect();
    lines.join("\n")
}

/// The message for one refused decision: what was refused, why, and the exact command to run next.
fn refusal(r: &Refusal) -> String {
    let d = &r.decision;
    let branch = escape(&d.branch);
    let base = d.base.as_deref().map(escape);
    let base = base.as_deref().unwrap_or("the base");
    let full = d.commit.to_string();
    let short = &full[..12.min(full.len())];
    if let Some(reason) = &d.reason {
        return unreadable(d, &branch, base, short, &escape(reason));
    }
    // Both are there for a refusal without a reason (`hook::run::answer`).
    let (check, approve) = match &r.next {
        Some((check, approve)) => (escape(check), escape(approve)),
        None => Default::default(),
    };
    match d.action {
        Action::Delete => format!(
            "refusing to delete agent branch `{branch}` at {short}: it is not merged into `{base}` \
             and its tip has no passing record\n\
             closegate hook: next: run `{check}` until it is VERIFIED, or have a human run `{approve}`"
        ),
        Action::Merge if d.squash => format!(
            "refusing to move `{base}`: it would hold the changes of agent branch `{branch}` \
             (a squash merge, a cherry-pick or a copy of its work), whose tip {short} has no \
             passing record — a squash is a merge too\n\
             closegate hook: next: run `{check}` until it is VERIFIED (or have a human run \
             `{approve}`), or retire the branch with a `closed-without-merge` teardown; then \
             commit again"
        ),
        _ => format!(
            "refusing to move `{base}` onto agent branch `{branch}` at {short}: the newest agent \
             commit it brings in ({short}) has no passing record\n\
             closegate hook: next: run `{check}` until it is VERIFIED (or have a human run \
             `{approve}`), then merge the commit that passed"
        ),
    }
}

/// A refusal with a reason beyond "no passing record": the base deleted, the configuration at
/// the base tip unreadable, or the new tip's configuration or a contract broken.
fn unreadable(d: &Decision, branch: &str, base: &str, short: &str, reason: &str) -> String {
    if d.deletes_base {
        return format!(
            "refusing to delete `{branch}` at {short}: {reason} (the next branch created as the \
             base would be judged against nothing)\n\
             closegate hook: next: keep the base; to delete or rename it deliberately, run {}",
            run::BYPASS
        );
    }
    let what = match d.action {
        Action::Config => format!("refusing to move `{branch}` to {short}: its {reason}"),
        Action::Delete => format!(
            "refusing to delete agent branch `{branch}`: the base's configuration cannot be read ({reason})"
        ),
        Action::Merge => format!(
            "refusing to move `{base}` onto agent branch `{branch}` at {short}: the base's \
             configuration cannot be read ({reason})"
        ),
    };
    let fix = match d.action {
        Action::Config => {
            "fix the file and commit again (a refused `git commit` leaves your changes staged; after a refused `git merge`, run `git reset --merge` first)"
        }
        _ => {
            "commit a configuration that parses to the base branch first (only agent branches are held meanwhile)"
        }
    };
    format!("{what}\nclosegate hook: next: {fix}")
}

/// The server gate's answer to the pusher: the report of every judged commit that was refused,
/// one line per decision, and what to do next when anything was refused.
pub fn push(answer: &server::Answer, out: &mut dyn Write) -> std::io::Result<()> {
    match answer {
        server::Answer::NoBranches => Ok(()),
        server::Answer::Undecided { error, .. } => writeln!(
            out,
            "closegate: refusing the push because the server gate could not decide: {}\n\
             closegate: an administrator can bypass it deliberately by moving hooks/pre-receive aside",
            lines(error)
        ),
        server::Answer::ChainedRefused { backup, how } => writeln!(
            out,
            "closegate hook: the chained hook {} failed with {how}",
            escape(&backup.display().to_string())
        ),
        server::Answer::Judged(judged) => judged_push(judged, out),
    }
}

fn judged_push(judged: &server::Judged, out: &mut dyn Write) -> std::io::Result<()> {
    for report in &judged.reports {
        if report.verdict != Verdict::Verified {
            super::render(report, Format::Human, false, &mut *out)?;
        }
    }
    let base = judged.base.as_deref().map(escape);
    let base = base.as_deref().unwrap_or("the base");
    for d in &judged.decisions {
        let branch = escape(&d.branch);
        let short = &d.commit.to_string()[..12];
        let what = match d.action {
            Action::Delete => format!("delete agent branch `{branch}` at {short}"),
            Action::Merge => format!("move `{base}` onto agent branch `{branch}` at {short}"),
            Action::Config if d.deletes_base => {
                format!("delete `{branch}` at {short}")
            }
            Action::Config => format!("move `{branch}` to {short}"),
        };
        if d.accepted {
            writeln!(out, "closegate: accepted: {what}")?;
            continue;
        }
        let why = match (&d.reason, d.action) {
            (Some(reason), _) => escape(reason),
            (None, Action::Delete) => "it is not merged and its tip is not VERIFIED".into(),
            (None, _) => "the newest agent commit it brings in is not VERIFIED".into(),
        };
        writeln!(out, "closegate: refusing to {what}: {why}")?;
    }
    if judged.refused() {
        writeln!(
            out,
            "closegate: next: run `closegate check --attest` on the commit in CI and push \
             refs/notes/closegate with it (or have an allowed signer run `closegate approve --sign`)"
        )?;
    }
    Ok(())
}

/// What `hook install` did to the `name` hook (for a person: a failed write is ignored); the exit
/// code, 1 when it refused (said on stderr).
pub fn installed(done: &Installed, name: &str, out: &mut dyn Write) -> i32 {
    let _ = match done {
        Installed::Written { hook, backup: None } => {
            writeln!(
                out,
                "installed closegate's {name} hook at {}",
                hook.display()
            )
        }
        Installed::Written {
            hook,
            backup: Some(backup),
        } => writeln!(
            out,
            "installed closegate's {name} hook at {}; the previous hook was kept as {} and runs first",
            hook.display(),
            backup.display()
        ),
        Installed::Unchanged { hook } => writeln!(
            out,
            "closegate's {name} hook is already installed at {}",
            hook.display()
        ),
        Installed::Refused { reason } => {
            eprintln!("closegate: refusing to install the hook: {reason}");
            return 1;
        }
    };
    0
}

/// What `hook uninstall` did to the `name` hook; the exit code, 1 when it refused.
pub fn uninstalled(done: &Uninstalled, name: &str, out: &mut dyn Write) -> i32 {
    let _ = match done {
        Uninstalled::Removed {
            hook,
            restored: false,
        } => writeln!(out, "removed closegate's {name} hook {}", hook.display()),
        Uninstalled::Removed {
            hook,
            restored: true,
        } => writeln!(
            out,
            "removed closegate's {name} hook and restored the previous hook at {}",
            hook.display()
        ),
        Uninstalled::Absent { hook } => writeln!(
            out,
            "no {name} hook at {}; nothing to remove",
            hook.display()
        ),
        Uninstalled::Refused { reason } => {
            eprintln!("closegate: refusing to uninstall: {reason}");
            return 1;
        }
    };
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use git2::Oid;

    fn refused(branch: &str, reason: Option<&str>, next: Option<(&str, &str)>) -> Answer {
        let commit = Oid::from_str(&"ab".repeat(20)).unwrap();
        let decision = Decision {
            reason: reason.map(str::to_string),
            ..Decision::new(Action::Delete, branch, commit, Some("main".to_string()))
        };
        let next = next.map(|(c, a)| (c.to_string(), a.to_string()));
        Answer::Refused(vec![Refusal { decision, next }])
    }

    fn text(answer: &Answer) -> String {
        let mut out = Vec::new();
        transaction(answer, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_refusal_names_the_branch_and_the_commands_to_run() {
        let shown = text(&refused(
            "agent/a",
            None,
            Some(("closegate check /w", "closegate approve /w --commit x")),
        ));
        assert_eq!(
            shown,
            "closegate hook: refusing to delete agent branch `agent/a` at abababababab: it is not \
             merged into `main` and its tip has no passing record\n\
             closegate hook: next: run `closegate check /w` until it is VERIFIED, or have a human \
             run `closegate approve /w --commit x`\n"
        );
        assert_eq!(refused("a", None, None).code(), 1);
    }

    /// Attack: an agent names its branch, its worktree or a file so that the text drives the
    /// terminal of whoever runs git (escape sequences, bidi overrides); the hook passes the
    /// text raw and every piece is escaped here.
    #[test]
    fn agent_text_in_an_answer_is_escaped() {
        let shown = text(&refused(
            "agent/\u{1b}[2J",
            None,
            Some(("closegate check '/w\u{202e}'", "closegate approve x")),
        ));
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{202e}'),
            "{shown}"
        );
        assert!(shown.contains("agent/\\u{1b}[2J") && shown.contains("/w\\u{202e}"));
        let shown = text(&refused("agent/a", Some("bad \u{9b}file"), None));
        assert!(shown.contains("bad \\u{9b}file"), "{shown}");
        let undecided = Answer::Undecided {
            error: "unknown hook `x\u{7}`\nsecond \u{1b}line".to_string(),
            code: 1,
        };
        let shown = text(&undecided);
        assert!(
            shown.contains("unknown hook `x\\u{7}`\nsecond \\u{1b}line"),
            "{shown}"
        );
        assert!(
            shown.ends_with(&format!("run {}\n", run::BYPASS)),
            "{shown}"
        );
    }

    /// Attack on the server gate's wording: a base commit whose configuration error names a
    /// key `deleted` is a refused move of the base, not a deletion of it; only the deletion
    /// itself (a typed flag, never the reason's text) reads as one.
    #[test]
    fn only_a_deletion_of_the_base_reads_as_one() {
        let main = |reason: &str, deletes_base: bool| Decision {
            reason: Some(reason.to_string()),
            deletes_base,
            ..Decision::new(
                Action::Config,
                "main",
                Oid::from_str(&"cd".repeat(20)).unwrap(),
                Some("main".to_string()),
            )
        };
        let judged = server::Judged {
            base: Some("main".to_string()),
            decisions: vec![
                main(
                    "configuration .closegate.toml: unknown key `deleted`",
                    false,
                ),
                main(
                    "the base branch cannot be deleted through the server gate",
                    true,
                ),
            ],
            reports: Vec::new(),
        };
        let mut out = Vec::new();
        push(&server::Answer::Judged(judged), &mut out).unwrap();
        let shown = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = shown.lines().collect();
        assert!(
            lines[0].starts_with("closegate: refusing to move `main` to cdcdcdcdcdcd:"),
            "{shown}"
        );
        assert!(
            lines[1].starts_with("closegate: refusing to delete `main` at cdcdcdcdcdcd:"),
            "{shown}"
        );
    }
}
