//! What each edit to a test did (SPEC §27.1 (b)): the changed test paths read by the test-diff
//! reader (`runners::testdiff`), all at once so a moved assertion or test is seen where it went.
//! A weakening edit is `tests-weakened-edit` (review, gate `protected`) even when the overlay
//! passes; a file the reader cannot read keeps its change for a human, and says why. A data file
//! on a test surface (a fixture, a snapshot) is a `fixture` edit: the overlay judges it.

use anyhow::Result;

use super::Ctx;
use super::changed::Changed;
use crate::catalog::Code;
use crate::finding::{Finding, Gate};
use crate::gates::census::{Moved, names};
use crate::report::{Report, TestEdit};
use crate::runners::testdiff::{self, Edit, FileDiff, Kind};

/// The edits of a commit's changed test paths.
#[derive(Debug, Default)]
pub struct Edits {
    pub edits: Vec<Edit>,
    /// Files that could not be read, each with why.
    pub unreadable: Vec<(Vec<u8>, String)>,
    /// The base test ids the contract expects changed, that the overlay showed changed: an edit
    /// of one of those tests is the task's, not a weakening.
    pub expected: Vec<String>,
    /// Census ids gone from the commit's own run while the overlay ran them (SPEC §27.1).
    pub census_dropped: Vec<String>,
}

/// A path with its bytes at the merge base and at the commit.
type Sides = (Vec<u8>, Option<Vec<u8>>, Option<Vec<u8>>);

/// Extensions of source code the reader does not read: such a test file is unreadable (a
/// human reads it), never taken for a fixture.
const CODE: [&str; 14] = [
    ".rb", ".java", ".kt", ".cs", ".php", ".swift", ".scala", ".ex", ".exs", ".sh", ".lua",
    ".dart", ".m", ".hs",
];

impl Edits {
    /// Read the changed paths' two sides (the merge base's and the commit's).
    pub fn read(ctx: &Ctx<'_>, changed: &[Changed]) -> Result<Edits> {
        let mut sides: Vec<Sides> = Vec::new();
        let mut out = Edits::default();
        for c in changed {
            if sides.iter().any(|(p, _, _)| *p == c.bytes) {
                continue;
            }
            let old = ctx.repo.read_file(ctx.merge_base, &c.bytes)?;
            let new = ctx.repo.read_file(ctx.claimed.commit, &c.bytes)?;
            if std::str::from_utf8(&c.bytes).is_err() {
                let why = "its name is not UTF-8".to_string();
                out.unreadable.push((c.bytes.clone(), why));
            } else if testdiff::reader_for(&c.bytes).is_some() {
                sides.push((c.bytes.clone(), old, new));
            } else if old.is_none() {
                out.edits.push(Edit {
                    path: c.bytes.clone(),
                    test: c.text.clone(),
                    kind: Kind::Added,
                    detail: "a new file".to_string(),
                    to: None,
                });
            } else if CODE.iter().any(|e| c.bytes.ends_with(e.as_bytes())) {
                let why = "the test-diff reader does not read this language".to_string();
                out.unreadable.push((c.bytes.clone(), why));
            } else {
                out.edits.push(Edit {
                    path: c.bytes.clone(),
                    test: c.text.clone(),
                    kind: Kind::Fixture,
                    detail: format!("{} (data the tests read)", c.kind.as_str()),
                    to: None,
                });
            }
        }
        let files: Vec<FileDiff<'_>> = sides
            .iter()
            .map(|(path, old, new)| FileDiff {
                path,
                old: old.as_deref(),
                new: new.as_deref(),
            })
            .collect();
        for result in testdiff::read(&files) {
            match result.outcome {
                Ok(edits) => out.edits.extend(edits),
                Err(why) => out.unreadable.push((result.path, why)),
            }
        }
        Ok(out)
    }

    /// Whether the change to `path` is one (b) lets through: readable, and no edit of it weakens.
    pub fn clean(&self, path: &[u8]) -> bool {
        !self.unreadable.iter().any(|(p, _)| p == path)
            && !self.edits.iter().any(|e| e.path == path && self.holds(e))
    }

    /// Whether `edit` weakens a test the contract does not expect changed.
    fn holds(&self, edit: &Edit) -> bool {
        edit.kind.weakens() && !self.expected.iter().any(|id| names(id, &edit.test))
    }

    /// Why `path` could not be read, if it could not.
    pub fn unreadable_why(&self, path: &[u8]) -> Option<&str> {
        let found = self.unreadable.iter().find(|(p, _)| p == path);
        found.map(|(_, why)| why.as_str())
    }

    /// The tests the diff shows moved or renamed with their body, and where each went (a
    /// census id of one of them that ran where it went is the same test, SPEC §27.1).
    pub fn moved(&self) -> impl Iterator<Item = Moved> + '_ {
        let text = |p: &[u8]| String::from_utf8_lossy(p).into_owned();
        self.edits
            .iter()
            .filter(|e| e.kind == Kind::Moved)
            .map(move |e| {
                let (to_path, to) =
                    e.to.clone()
                        .unwrap_or_else(|| (e.path.clone(), e.test.clone()));
                Moved {
                    from_path: text(&e.path),
                    from: e.test.clone(),
                    to_path: text(&to_path),
                    to,
                }
            })
    }

    /// Add a test the census shows gone from the commit's own run while the overlay ran every
    /// base test: a dropped test for (b), reported by the census's own `tests-weakened-edit`.
    pub fn drop_census_id(&mut self, id: &str) {
        self.census_dropped.push(id.to_string());
    }

    /// The report's `integrity.edits` and one `tests-weakened-edit` per weakening edit of a path
    /// on a surface under policy `integrity` (`judged`): under `all` and `modify` every such edit
    /// already needs a human, and the edits are listed for them.
    pub fn report(&self, report: &mut Report, judged: impl Fn(&[u8]) -> bool) {
        let mut findings = Vec::new();
        for edit in &self.edits {
            let path = String::from_utf8_lossy(&edit.path).into_owned();
            report.integrity.edits.push(TestEdit {
                path: path.clone(),
                test: edit.test.clone(),
                kind: edit.kind.as_str().to_string(),
                detail: edit.detail.clone(),
            });
            if self.holds(edit) && judged(&edit.path) {
                let at = if path.is_empty() {
                    "the census"
                } else {
                    path.as_str()
                };
                let msg = format!(
                    "test `{}` in {at} is {}: {} (a test neutered today lets the next agent's \
                     broken code through, whatever the overlay says now)",
                    edit.test,
                    edit.kind.as_str(),
                    edit.detail
                );
                findings.push(Finding::new(Code::TestsWeakenedEdit, msg).at_path(&path));
            }
        }
        for id in &self.census_dropped {
            report.integrity.edits.push(TestEdit {
                path: String::new(),
                test: id.clone(),
                kind: Kind::Dropped.as_str().to_string(),
                detail: "it passed on the base and no longer runs on the commit".to_string(),
            });
        }
        report.add_gate(Gate::Protected, findings);
    }
}
