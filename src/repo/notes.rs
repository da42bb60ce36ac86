//! Git notes under one notes ref (SPEC §20): read a note from any notes commit (the ref's, or a
//! pushed value still in quarantine) and append to the note of a commit.

use anyhow::{Context, Result};
use git2::{Oid, Signature};

use super::Repo;

impl Repo {
    /// The note on `target` in the notes commit `notes` (a notes ref's value): its bytes, `None`
    /// when there is none. Git's fan-out layouts (`ab/cdef…`, `ab/cd/ef…`) are read too.
    pub fn note_in(&self, notes: Oid, target: Oid) -> Result<Option<Vec<u8>>> {
        let hex = target.to_string();
        let paths = [
            hex.clone(),
            format!("{}/{}", &hex[..2], &hex[2..]),
            format!("{}/{}/{}", &hex[..2], &hex[2..4], &hex[4..]),
        ];
        for path in paths {
            if let Some(bytes) = self.read_file(notes, &path)? {
                return Ok(Some(bytes));
            }
        }
        Ok(None)
    }

    /// Append `line` to the note on `target` under `notes_ref` (creating the ref or the note),
    /// as `git notes append` would, but without the blank separator line.
    pub fn append_note(&self, notes_ref: &str, target: Oid, line: &str) -> Result<()> {
        let current = match self.ref_target(notes_ref) {
            Some(notes) => self.note_in(notes, target)?,
            None => None,
        };
        let mut text = current
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(line);
        text.push('\n');
        let sig = self
            .git
            .signature()
            .or_else(|_| Signature::now("closegate", "closegate@localhost"))
            .context("cannot make a signature for the notes commit")?;
        self.git
            .note(&sig, &sig, Some(notes_ref), target, &text, true)
            .with_context(|| format!("cannot write the note on {target} under {notes_ref}"))?;
        Ok(())
    }

    /// A git configuration value as a string (`user.signingKey`), `None` when unset.
    pub fn config_string(&self, name: &str) -> Option<String> {
        self.git.config().ok()?.get_string(name).ok()
    }

    /// The repository's git directory (a bare repository's own directory).
    pub fn git_dir(&self) -> std::path::PathBuf {
        self.git.path().to_path_buf()
    }
}
