//! `[protected.policy] SURFACE = "integrity"` (SPEC §23, §26.4): with the base's tests passing on
//! the commit and the new tests failing on the base (and no red base), the `protected-surface`
//! findings of such a surface become warnings for exactly two kinds of change:
//!
//! - (a) an added test file (a regular file) that is not runner wiring;
//! - (b) a modification that only adds lines to the base's version (same mode, every base line
//!   kept in order), and for a source file's test modules, lines only added to them.
//!
//! Everything else — a removed or changed line, a deleted, renamed or retyped test file, an
//! added wiring file, a Go `_test.go` that now declares `TestMain`, code that tests whether it
//! runs under test, a source file whose test modules could not be put back — needs a human,
//! whatever the overlays say.

use anyhow::Result;

use super::Ctx;
use super::changed::{Changed, How};
use crate::catalog::Code;
use crate::config::SurfacePolicy;
use crate::finding::Severity;
use crate::gates::protected::wiring::{self, Wiring};
use crate::repo::ChangeKind;
use crate::report::Report;

/// A regular file's modes (a symlink, a submodule or a folder is never let through).
const REGULAR: [i32; 2] = [0o100644, 0o100755];

/// Apply the policy to the report's `protected-surface` findings of `changed` paths.
pub fn apply(ctx: &Ctx<'_>, changed: &[Changed], red: bool, report: &mut Report) -> Result<()> {
    let i = &report.integrity;
    if red || i.base_tests != Some("pass") || i.new_tests_on_base != Some("fail") {
        return Ok(());
    }
    let wiring = Wiring::read(ctx.repo, ctx.merge_base, ctx.commit)?;
    // Two paths that print alike (`\xff` written out, and the byte) pass only together.
    let mut verdicts: Vec<(&str, bool)> = Vec::new();
    for c in changed {
        let ok = lets_through(ctx, &wiring, c)?;
        match verdicts.iter_mut().find(|(t, _)| *t == c.text) {
            Some((_, all)) => *all &= ok,
            None => verdicts.push((&c.text, ok)),
        }
    }
    let mut passed_paths = Vec::new();
    for finding in &mut report.findings {
        let Some(path) = finding.path.as_deref() else {
            continue;
        };
        if finding.code != Code::ProtectedSurface || finding.severity != Severity::Review {
            continue;
        }
        if !verdicts.iter().any(|(t, ok)| *t == path && *ok) {
            continue;
        }
        // The change as the protected gate reported it (a rename is neither side's addition),
        // on surfaces under policy `integrity` only (a graded input, on `ci`, never is).
        let hits: Vec<_> = report.protected.iter().filter(|h| h.path == path).collect();
        let kinds = hits
            .iter()
            .all(|h| h.change == "added" || h.change == "modified");
        let integrity = Some(SurfacePolicy::Integrity);
        let surfaces = hits
            .iter()
            .all(|h| ctx.config.policy_of(&h.surface) == integrity);
        let whole = changed
            .iter()
            .any(|c| c.text == path && matches!(c.how, How::Whole));
        let on_surfaces = !whole || ctx.config.integrity_may_pass(path_bytes(changed, path));
        if hits.is_empty() || !kinds || !surfaces || !on_surfaces {
            continue;
        }
        finding.severity = Severity::Warning;
        finding.message = format!(
            "{} (policy `integrity`: the base's tests pass on this commit and the new tests fail \
             on the base)",
            finding.message
        );
        passed_paths.push(path.to_string());
    }
    report.protected.retain(|p| !passed_paths.contains(&p.path));
    Ok(())
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

/// Whether the policy may let this change through once the overlays vouch for it: (a) or (b).
fn lets_through(ctx: &Ctx<'_>, wiring: &Wiring, c: &Changed) -> Result<bool> {
    match &c.how {
        How::Unspliced => Ok(false),
        How::Spliced { inline, .. } => Ok(inline.only_adds_tests()),
        How::Whole => {
            let old = ctx.repo.tree_entry_mode(ctx.merge_base, &c.bytes);
            let new = ctx.repo.tree_entry_mode(ctx.commit, &c.bytes);
            let regular =
                |e: Option<(git2::Oid, i32)>| e.is_some_and(|(_, m)| REGULAR.contains(&m));
            match c.kind {
                ChangeKind::Added if regular(new) => {
                    let content = ctx.repo.read_file(ctx.commit, &c.bytes)?;
                    Ok(!wiring.rewires(ctx.config, &c.bytes, content.as_deref()))
                }
                ChangeKind::Modified if regular(old) && regular(new) => {
                    let same_mode = old.map(|e| e.1) == new.map(|e| e.1);
                    let before = ctx
                        .repo
                        .read_file(ctx.merge_base, &c.bytes)?
                        .unwrap_or_default();
                    let after = ctx
                        .repo
                        .read_file(ctx.commit, &c.bytes)?
                        .unwrap_or_default();
                    let test_main = c.bytes.ends_with(b"_test.go")
                        && !wiring::declares_test_main(&before)
                        && wiring::declares_test_main(&after);
                    Ok(same_mode && !test_main && only_adds_lines(&before, &after))
                }
                _ => Ok(false),
            }
        }
    }
}

/// Whether `new` only adds lines to `old` (SPEC §26.4 (b)): every line of `old` is in `new`, in
/// order, unchanged; a last line without its newline counts as the same line with one.
pub fn only_adds_lines(old: &[u8], new: &[u8]) -> bool {
    let lines = |b: &[u8]| -> Vec<Vec<u8>> {
        b.split_inclusive(|&c| c == b'\n')
            .map(|l| l.strip_suffix(b"\n").unwrap_or(l).to_vec())
            .collect()
    };
    let (old, new) = (lines(old), lines(new));
    let mut want = old.iter().peekable();
    for line in &new {
        if want.peek().is_some_and(|w| *w == line) {
            want.next();
        }
    }
    want.peek().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

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
