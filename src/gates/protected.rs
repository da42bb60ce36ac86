//! Gate `protected` (SPEC §4.5): edits to what grades the work go to a human.
//!
//! Every changed path from the merge base to the commit (both sides of a rename) is matched
//! against the protected surfaces of the trusted configuration.

use crate::catalog::Code;
use crate::config::Config;
use crate::finding::Finding;
use crate::repo::Change;
use crate::report::ProtectedChange;

/// One `protected-surface` finding per changed path on a surface.
pub fn run(config: &Config, changes: &[Change]) -> (Vec<ProtectedChange>, Vec<Finding>) {
    let mut hits = Vec::new();
    let mut findings = Vec::new();
    for change in changes {
        for path in change.paths() {
            let surfaces = config.surfaces_for(path);
            let Some(first) = surfaces.first() else {
                continue;
            };
            let kind = change.kind.as_str();
            let msg = format!(
                "{kind} `{path}` on protected surface `{}`",
                surfaces.join("`, `")
            );
            findings.push(Finding::new(Code::ProtectedSurface, msg).at_path(path));
            hits.push(ProtectedChange {
                path: path.to_string(),
                surface: first.clone(),
                change: kind,
            });
        }
    }
    (hits, findings)
}
