//! `[protected.policy] SURFACE = "integrity"` (SPEC §27.1): a change on such a surface needs no
//! human — its `protected-surface` findings become warnings — when all of these hold:
//!
//! - (a) PASS_TO_PASS: the base's tests pass on the commit's code (the overlay passed every
//!   check that passed on the commit, and every base test id of its census, those a contract's
//!   `expect_changed` names aside), and no check is red on the base; with the reverse overlay
//!   asked for (`fail_to_pass`), a new test also fails on the base;
//! - (b) no weakening edit: the test-diff reader read the file and found no edit of it that
//!   removes, skips, loosens or drops what a test checked (`edits.rs`);
//! - (c) nothing that decides what runs changed: not runner wiring (an added or modified
//!   `conftest.py`, a Go `_test.go` that now declares `TestMain`), not code that tests whether it
//!   runs under test, not a source file whose test modules could not be put back, and the path
//!   on no surface but those under policy `integrity` (never `ci`).
//!
//! A test file deleted, or a fixture deleted, is judged by (a)–(c) like any other edit: its
//! tests are dropped for (b) unless they reappear.

use anyhow::Result;

use super::Ctx;
use super::changed::{Changed, How};
use super::edits::Edits;
use crate::catalog::Code;
use crate::config::SurfacePolicy;
use crate::finding::Severity;
use crate::gates::protected::wiring::{self, Wiring};
use crate::repo::ChangeKind;
use crate::report::Report;

/// A regular file's modes (a symlink, a submodule or a folder is never let through).
const REGULAR: [i32; 2] = [0o100644, 0o100755];

/// Apply the policy to the report's `protected-surface` findings of `changed` paths.
pub fn apply(
    ctx: &Ctx<'_>,
    changed: &[Changed],
    red: bool,
    edits: &Edits,
    report: &mut Report,
) -> Result<()> {
    let i = &report.integrity;
    let reverse_ok = !ctx.fail_to_pass() || i.new_tests_on_base == Some("fail");
    let held = if red {
        Some("a check fails on the merge base too, so the overlay proves nothing")
    } else if i.base_tests != Some("pass") {
        Some("the base's own tests do not pass on this code (see `tests-weakened`)")
    } else if !reverse_ok {
        Some("no new test fails on the base's code, and `fail_to_pass` asks for one")
    } else {
        None
    };
    if let Some(why) = held {
        hold(ctx, report, |_| Some(why.to_string()));
        return Ok(());
    }
    let verdicts = verdicts(ctx, changed, edits)?;
    hold(ctx, report, |path| {
        let found = verdicts.iter().find(|(t, _)| *t == path);
        found.map_or(Some(String::new()), |(_, why)| why.clone())
    });
    let_through(ctx, changed, &verdicts, report);
    Ok(())
}

/// Why each changed path is held (`None`: rules (b) and (c) let it through); two paths that
/// print alike (`\xff` written out, and the byte) pass only together.
fn verdicts<'c>(
    ctx: &Ctx<'_>,
    changed: &'c [Changed],
    edits: &Edits,
) -> Result<Vec<(&'c str, Option<String>)>> {
    let wiring = Wiring::read(ctx.repo, ctx.merge_base, ctx.claimed.commit)?;
    let mut verdicts: Vec<(&str, Option<String>)> = Vec::new();
    for c in changed {
        let why = match edits.unreadable_why(&c.bytes) {
            Some(why) => Some(format!("the test-diff reader could not read it: {why}")),
            None if !edits.clean(&c.bytes) => {
                Some("an edit weakens a test (see `tests-weakened-edit`)".to_string())
            }
            None if !lets_through(ctx, &wiring, c)? => Some(
                "it is runner wiring, a mode or type change, or code that tests whether it runs \
                 under test"
                    .to_string(),
            ),
            None => None,
        };
        match verdicts.iter_mut().find(|(t, _)| *t == c.text) {
            Some((_, held)) => *held = held.take().or(why),
            None => verdicts.push((&c.text, why)),
        }
    }
    Ok(verdicts)
}

/// Turn the `protected-surface` findings of the paths let through into warnings, on surfaces
/// under policy `integrity` only (a graded input, on `ci`, never is).
fn let_through(
    ctx: &Ctx<'_>,
    changed: &[Changed],
    verdicts: &[(&str, Option<String>)],
    report: &mut Report,
) {
    let mut passed_paths = Vec::new();
    for finding in &mut report.findings {
        let Some(path) = finding.path.as_deref() else {
            continue;
        };
        if finding.code != Code::ProtectedSurface || finding.severity != Severity::Review {
            continue;
        }
        if !matches!(verdicts.iter().find(|(t, _)| *t == path), Some((_, None))) {
            continue;
        }
        // The change as the protected gate reported it, on surfaces under policy `integrity`
        // only (a graded input, on `ci`, never is).
        let hits: Vec<_> = report.protected.iter().filter(|h| h.path == path).collect();
        let integrity = Some(SurfacePolicy::Integrity);
        let surfaces = hits
            .iter()
            .all(|h| ctx.config.policy_of(&h.surface) == integrity);
        let whole = changed
            .iter()
            .any(|c| c.text == path && matches!(c.how, How::Whole));
        let on_surfaces = !whole || ctx.config.integrity_may_pass(path_bytes(changed, path));
        if hits.is_empty() || !surfaces || !on_surfaces {
            continue;
        }
        finding.severity = Severity::Warning;
        finding.message = format!(
            "{} (policy `integrity`: the base's tests pass on this commit's code and no edit \
             weakens a test)",
            finding.message
        );
        passed_paths.push(path.to_string());
    }
    report.protected.retain(|p| !passed_paths.contains(&p.path));
}

/// Say on each `protected-surface` review finding under policy `integrity` why the policy holds
/// it (`why(path)`: `None` when it does not, an empty reason when the path is not one the
/// overlays judged), so the human sees the real reason and what to look at.
fn hold(ctx: &Ctx<'_>, report: &mut Report, why: impl Fn(&str) -> Option<String>) {
    for finding in &mut report.findings {
        let Some(path) = finding.path.clone() else {
            continue;
        };
        if finding.code != Code::ProtectedSurface || finding.severity != Severity::Review {
            continue;
        }
        let integrity = Some(SurfacePolicy::Integrity);
        let under = (report.protected.iter())
            .filter(|h| h.path == path)
            .any(|h| ctx.config.policy_of(&h.surface) == integrity);
        match why(&path) {
            Some(why) if under && !why.is_empty() => {
                finding.message =
                    format!("{} (policy `integrity` holds it: {why})", finding.message);
            }
            _ => {}
        }
    }
}

/// An inconclusive overlay vouches for nothing: every `protected-surface` warning on a changed
/// path (an addition under policy `modify`) goes back to a human.
pub fn keep_for_a_human(changed: &[Changed], report: &mut Report) {
    for finding in &mut report.findings {
        let on = finding
            .path
            .as_deref()
            .is_some_and(|p| changed.iter().any(|c| c.text == p));
        if finding.code != Code::ProtectedSurface || finding.severity != Severity::Warning || !on {
            continue;
        }
        finding.severity = Severity::Review;
        finding.message = format!(
            "{} (the overlay was inconclusive: a human reviews it)",
            finding.message
        );
        let path = finding.path.clone().unwrap_or_default();
        if !report.protected.iter().any(|p| p.path == path) {
            report.protected.push(crate::report::ProtectedChange {
                path,
                surface: "tests".to_string(),
                change: "added",
            });
        }
    }
}

/// The bytes of the changed path printed as `text` (the surfaces match bytes).
fn path_bytes<'c>(changed: &'c [Changed], text: &str) -> &'c [u8] {
    changed
        .iter()
        .find(|c| c.text == text)
        .map_or(&[][..], |c| c.bytes.as_slice())
}

/// Whether rule (c) lets this change through: a regular file, not runner wiring (added or
/// modified), no Go `TestMain` declared anew; a spliced source file whose test modules changed
/// without code that tests whether it runs under test.
fn lets_through(ctx: &Ctx<'_>, wiring: &Wiring, c: &Changed) -> Result<bool> {
    match &c.how {
        How::Unspliced => Ok(false),
        How::Spliced { inline, .. } => Ok(inline.markers.is_empty()),
        How::Whole => {
            let old = ctx.repo.tree_entry_mode(ctx.merge_base, &c.bytes);
            let new = ctx.repo.tree_entry_mode(ctx.claimed.commit, &c.bytes);
            let regular =
                |e: Option<(git2::Oid, i32)>| e.is_some_and(|(_, m)| REGULAR.contains(&m));
            let content = ctx.repo.read_file(ctx.claimed.commit, &c.bytes)?;
            let rewires = wiring.rewires(ctx.config, &c.bytes, content.as_deref());
            match c.kind {
                ChangeKind::Added => Ok(regular(new) && !rewires),
                ChangeKind::Deleted => {
                    Ok(regular(old) && !wiring.rewires(ctx.config, &c.bytes, None))
                }
                ChangeKind::Modified if regular(old) && regular(new) => {
                    let same_mode = old.map(|e| e.1) == new.map(|e| e.1);
                    let before = ctx
                        .repo
                        .read_file(ctx.merge_base, &c.bytes)?
                        .unwrap_or_default();
                    let test_main = c.bytes.ends_with(b"_test.go")
                        && !wiring::declares_test_main(&before)
                        && content.as_deref().is_some_and(wiring::declares_test_main);
                    Ok(same_mode && !test_main && !rewires)
                }
                _ => Ok(false),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::gates::protected::inline::only_adds_lines;

    #[test]
    fn only_added_lines_keep_every_base_line_in_order() {
        let base = b"a\nb\nc";
        assert!(only_adds_lines(base, b"a\nb\nc\n"));
        assert!(only_adds_lines(base, b"x\na\ny\nb\nc\nd\n"));
        assert!(only_adds_lines(b"", b"anything\n"));
        assert!(!only_adds_lines(base, b"a\nc\n"), "a line removed");
        assert!(!only_adds_lines(base, b"a\nB\nc\n"), "a line changed");
        assert!(!only_adds_lines(base, b"b\na\nc\n"), "lines reordered");
        assert!(!only_adds_lines(b"a\r\n", b"a\n"), "a line ending changed");
        assert!(!only_adds_lines(b"a\n", b""), "emptied");
    }
}
