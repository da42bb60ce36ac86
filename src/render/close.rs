//! What `closegate close` prints (SPEC §17): what was written, why nothing was (a document that
//! would not lint, a refused state word, uncommitted work), and its `--json` object.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use git2::Oid;

use super::{Format, escape, render};
use crate::doc::State;
use crate::report::Report;

/// The `--json` object: what was (or, refused, was not) written.
#[derive(Debug, Default, serde::Serialize)]
pub struct Closed {
    pub schema: u32,
    /// Whether the status document was written.
    pub written: bool,
    /// Whether it was committed as the trailing status commit (`--commit`).
    pub committed: bool,
    pub dry_run: bool,
    pub path: Option<String>,
    pub slug: Option<String>,
    pub state: Option<String>,
    /// The work commit the close line names.
    pub commit: Option<String>,
    /// Why nothing was written; null when it was (or, with `--dry-run`, would be).
    pub refused: Option<String>,
    /// The codes of the `doc-*` refusals of a document that would not lint.
    pub codes: Vec<String>,
    /// With `--dry-run`: the document that would be written.
    pub document: Option<String>,
}

impl Closed {
    /// What the document would say: where, which slug, state and work commit.
    pub fn names(&mut self, path: &Path, slug: &str, state: State, work: Oid) {
        self.path = Some(path.display().to_string());
        self.slug = Some(slug.to_string());
        self.state = Some(state.as_str().to_string());
        self.commit = Some(work.to_string());
    }
}

/// The composed document would not lint: said on stderr, its report on the human output.
pub fn lint_refused(report: &Report, color: bool) -> Result<()> {
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "closegate: close: the document would not lint; nothing was written"
    )?;
    render(report, Format::Human, color, &mut crate::term::human())?;
    Ok(())
}

/// A `--state` word that would not lint: said on stderr, the finding on the human output.
pub fn state_refused(word: &str, report: &Report, color: bool) -> Result<()> {
    eprintln!("closegate: close: --state {word} would not lint; nothing was written");
    render(report, Format::Human, color, &mut crate::term::human())?;
    Ok(())
}

/// Tracked files with uncommitted changes, said on stderr: a returned state's close line must
/// name committed work.
pub fn uncommitted(dirty: &[String]) -> Result<()> {
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "closegate: close: commit your work first: the close line must name committed work, \
         and these tracked files have uncommitted changes: {}",
        escape(&dirty.join(", "))
    )?;
    Ok(())
}

/// The line saying what was written.
pub fn written(path: &Path, state: State, work: Oid, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "wrote {} (state {}, commit {})",
        path.display(),
        state.as_str(),
        &work.to_string()[..12]
    )?;
    Ok(())
}
