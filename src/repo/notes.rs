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

impl Repo {
    /// Every note in the notes commit `notes`: the annotated object's hex id and the note's bytes.
    /// Git's fan-out layouts are read; entries that name no object id are skipped.
    pub fn all_notes(&self, notes: Oid) -> Result<std::collections::BTreeMap<String, Oid>> {
        let tree = self
            .git
            .find_commit(notes)
            .and_then(|c| c.tree())
            .with_context(|| format!("cannot read the notes commit {notes}"))?;
        let mut out = std::collections::BTreeMap::new();
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() != Some(git2::ObjectType::Blob) {
                return git2::TreeWalkResult::Ok;
            }
            let name = format!("{}{}", dir.replace('/', ""), entry.name().unwrap_or(""));
            if name.len() == 40 && name.bytes().all(|b| b.is_ascii_hexdigit()) {
                out.insert(name.to_ascii_lowercase(), entry.id());
            }
            git2::TreeWalkResult::Ok
        })
        .context("cannot walk the notes tree")?;
        Ok(out)
    }

    /// Merge two notes commits as `git notes merge -s cat_sort_uniq` does: a note on one side
    /// only is kept as it is; notes on both sides that differ become the sorted set of their
    /// lines. Returns the commit to store (one of the two when one already holds the other).
    pub fn merge_notes(&self, local: Oid, remote: Oid) -> Result<Oid> {
        if local == remote || self.is_ancestor(remote, local) {
            return Ok(local);
        }
        if self.is_ancestor(local, remote) {
            return Ok(remote);
        }
        let mut merged = self.all_notes(local)?;
        for (target, blob) in self.all_notes(remote)? {
            let joined = match merged.get(&target) {
                Some(mine) if *mine != blob => self.union_lines(*mine, blob)?,
                _ => blob,
            };
            merged.insert(target, joined);
        }
        let mut builder = self.git.treebuilder(None)?;
        for (target, blob) in &merged {
            builder.insert(target, *blob, 0o100644)?;
        }
        let tree = self.git.find_tree(builder.write()?)?;
        let sig = self
            .git
            .signature()
            .or_else(|_| Signature::now("closegate", "closegate@localhost"))
            .context("cannot make a signature for the notes merge")?;
        let parents = [self.git.find_commit(local)?, self.git.find_commit(remote)?];
        let refs: Vec<&git2::Commit> = parents.iter().collect();
        let message = "Notes merged by 'closegate notes' (cat_sort_uniq)";
        Ok(self.git.commit(None, &sig, &sig, message, &tree, &refs)?)
    }

    /// The blob holding the sorted, distinct lines of two blobs.
    fn union_lines(&self, one: Oid, two: Oid) -> Result<Oid> {
        let mut lines = std::collections::BTreeSet::new();
        for id in [one, two] {
            let blob = self.git.find_blob(id)?;
            for line in blob.content().split(|b| *b == b'\n') {
                if !line.is_empty() {
                    lines.insert(line.to_vec());
                }
            }
        }
        let mut text = Vec::new();
        for line in lines {
            text.extend_from_slice(&line);
            text.push(b'\n');
        }
        Ok(self.git.blob(&text)?)
    }

    /// Move `name` from `old` (`None`: it must not exist) to `new`; `false` when it moved
    /// meanwhile.
    pub fn set_ref_if(&self, name: &str, old: Option<Oid>, new: Oid, why: &str) -> Result<bool> {
        let result = match old {
            Some(old) => self.git.reference_matching(name, new, true, old, why),
            None => self.git.reference(name, new, false, why),
        };
        match result {
            Ok(_) => Ok(true),
            Err(e)
                if matches!(
                    e.code(),
                    git2::ErrorCode::Modified | git2::ErrorCode::Exists
                ) =>
            {
                Ok(false)
            }
            Err(e) => Err(e).with_context(|| format!("cannot update {name}")),
        }
    }

    /// Delete `name` whatever it points at (a scratch ref of this process).
    pub fn drop_ref(&self, name: &str) {
        if let Ok(mut r) = self.git.find_reference(name) {
            let _ = r.delete();
        }
    }
}
