//! Gate `manifest` (SPEC §4.4): every declared artifact against the commit's tree.
//!
//! `evidence` is never read; only `artifacts` (or its older spelling `return`).

use git2::Oid;

use crate::catalog::Code;
use crate::doc::Entry;
use crate::finding::Finding;
use crate::repo::Repo;
use crate::report::ArtifactStatus;

/// Check each artifact: present in `commit` (a trailing `/` must be a directory), and changed
/// since `merge_base` when one is known.
pub fn run(
    repo: &Repo,
    commit: Oid,
    merge_base: Option<Oid>,
    artifacts: &[Entry],
) -> (Vec<ArtifactStatus>, Vec<Finding>) {
    let mut statuses = Vec::with_capacity(artifacts.len());
    let mut findings = Vec::new();
    for artifact in artifacts {
        let path = artifact.text.as_str();
        let wants_dir = path.ends_with('/');
        let entry = repo.tree_entry(commit, path);
        let present = matches!(entry, Some((_, is_dir)) if is_dir || !wants_dir);
        statuses.push(ArtifactStatus {
            path: path.to_string(),
            present,
        });
        if !present {
            findings.push(missing(path, wants_dir, entry.is_some(), commit).at_line(artifact.line));
            continue;
        }
        // Unchanged means the same object with the same mode (SPEC §15: a mode-only change or a
        // file turned symlink is a change).
        let before = merge_base.and_then(|base| repo.tree_entry_mode(base, path));
        if before.is_some() && before == repo.tree_entry_mode(commit, path) {
            let msg =
                format!("`{path}` is identical at the merge base: the branch did not produce it");
            findings.push(
                Finding::new(Code::ArtifactUnchanged, msg)
                    .at_line(artifact.line)
                    .at_path(path),
            );
        }
    }
    (statuses, findings)
}

fn missing(path: &str, wants_dir: bool, exists_as_file: bool, commit: Oid) -> Finding {
    let short = &commit.to_string()[..12];
    let msg = if wants_dir && exists_as_file {
        format!("`{path}` must be a directory in commit {short}, found a file")
    } else {
        format!("`{path}` is not in the tree of commit {short}")
    };
    Finding::new(Code::ArtifactMissing, msg).at_path(path.trim_end_matches('/'))
}
