//! Gate `protected` (SPEC §4.5): edits to what grades the work go to a human.
//!
//! Every changed path from the merge base to the commit (both sides of a rename) is matched
//! against the protected surfaces of the trusted configuration. A surface whose
//! `[protected.policy]` is `modify` lets additions of new paths through (reported as a warning):
//! every change to a path already there — modified, deleted, renamed, type-changed — still
//! needs review, and so does an added file that rewires how the existing tests run
//! ([`Config::addition_needs_review`], [`wiring`]). Tests inside source files are [`inline`]'s.

pub mod inline;
pub mod macros;
pub mod rust_items;
mod rust_lex;
pub mod wiring;

use crate::catalog::Code;
use crate::config::Config;
use crate::finding::{Finding, Severity};
use crate::repo::{Change, ChangeKind};
use crate::report::ProtectedChange;

/// One `protected-surface` finding per changed path on a surface.
pub fn run(config: &Config, changes: &[Change]) -> (Vec<ProtectedChange>, Vec<Finding>) {
    run_with(config, changes, &|_| false)
}

/// [`run`], with `rewires` saying which added paths the trees show to be runner wiring
/// ([`wiring::Wiring`], SPEC §26.4).
pub fn run_with(
    config: &Config,
    changes: &[Change],
    rewires: &dyn Fn(&[u8]) -> bool,
) -> (Vec<ProtectedChange>, Vec<Finding>) {
    let mut hits = Vec::new();
    let mut findings = Vec::new();
    for change in changes {
        // Matched by the bytes git stores, printed escaped (SPEC §26.4).
        for (bytes, path) in change.touched() {
            let surfaces = config.surfaces_for(bytes);
            let Some(first) = surfaces.first() else {
                continue;
            };
            let kind = change.kind.as_str();
            let mut on = format!(
                "{kind} `{path}` on protected surface `{}`",
                surfaces.join("`, `")
            );
            // SPEC §4.5: a path the checks' commands name is on `ci` whatever `[protected]`
            // says; the finding names the check and the word that made it so.
            if surfaces.iter().any(|s| s == "ci")
                && let Some(why) = config.why_ci(path)
            {
                on.push_str(&format!(" ({why})"));
            }
            let added = change.kind == ChangeKind::Added;
            // What the trees say is read only for an addition the names alone would pass.
            if added && !(config.addition_needs_review(bytes) || rewires(bytes)) {
                let msg = format!("{on} (policy `modify`: an addition needs no review)");
                let finding = Finding::new(Code::ProtectedSurface, msg).at_path(path);
                findings.push(finding.with_severity(Severity::Warning));
                continue;
            }
            findings.push(Finding::new(Code::ProtectedSurface, on).at_path(path));
            hits.push(ProtectedChange {
                path: path.to_string(),
                surface: first.clone(),
                change: kind,
            });
        }
    }
    (hits, findings)
}
