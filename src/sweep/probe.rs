//! Why sweep cannot judge a worktree (SPEC §26.5): what the board's row does not already say —
//! a directory that is there but cannot be read, administrative data git cannot open or that
//! names another repository, a HEAD that names no commit, and administrative folders the
//! worktree listing leaves out. Each is a reason to keep that worktree, never to stop the sweep.

use std::path::{Path, PathBuf};

use crate::board::Row;
use crate::repo::{self, Repo};

/// Why the row's worktree directory, absent from the board, is not simply "not on this machine":
/// it is there, but cannot be read.
pub fn hidden(row: &Row) -> Option<String> {
    let dir = Path::new(&row.path);
    let looked = std::fs::symlink_metadata(dir.join(".git"));
    match looked {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match dir.symlink_metadata() {
            Ok(m) if m.is_dir() => Some(format!(
                "{} has no `.git` entry: its link to the repository is gone",
                dir.display()
            )),
            _ => None,
        },
        Err(e) => Some(format!("cannot read {}: {e}", dir.display())),
        Ok(_) => None,
    }
}

/// Why the administrative data of the worktree at `dir` cannot be trusted to say what it holds:
/// git cannot open it, it names another repository or another worktree, or its HEAD names no
/// commit (and no branch yet to be born).
pub fn admin_fault(repo: &Repo, row: &Row, dir: &Path) -> Option<String> {
    let opened = match Repo::discover(dir) {
        Ok(opened) => opened,
        Err(e) => return Some(format!("git cannot open it: {e:#}")),
    };
    let common = repo::canonical(&repo.common_dir());
    if repo::canonical(&opened.common_dir()) != common {
        return Some(format!(
            "its administrative data names the repository {}, not {}",
            opened.common_dir().display(),
            common.display()
        ));
    }
    if opened.workdir().as_deref() != Some(dir) {
        return Some(format!(
            "its `.git` file leads to the worktree {}, not to itself",
            opened.workdir().unwrap_or_default().display()
        ));
    }
    if row.head.is_none() && !unborn(repo, dir) {
        return Some("its HEAD names no commit (and no branch yet to be born)".into());
    }
    None
}

/// Whether the worktree's HEAD names a branch that does not exist yet (a fresh worktree).
fn unborn(repo: &Repo, dir: &Path) -> bool {
    let Some(info) = repo.worktree_at(dir) else {
        return false;
    };
    info.head_ref()
        .and_then(|r| r.strip_prefix("refs/heads/").map(str::to_string))
        .is_some_and(|branch| repo.branch_tip(&branch).is_none())
}

/// The administrative folders under `<common>/worktrees/` that the worktree listing leaves out
/// (git could not read them): each with the worktree path its `gitdir` names, when it names one.
pub fn unlisted(repo: &Repo) -> Vec<(PathBuf, Option<PathBuf>)> {
    let admin = repo.common_dir().join("worktrees");
    let Ok(entries) = std::fs::read_dir(&admin) else {
        return Vec::new();
    };
    let listed: Vec<PathBuf> = repo.worktrees().into_iter().map(|w| w.admin_dir).collect();
    let mut out: Vec<(PathBuf, Option<PathBuf>)> = entries
        .flatten()
        .map(|e| repo::canonical(&admin).join(e.file_name()))
        .filter(|dir| dir.is_dir() && !listed.contains(dir))
        .map(|dir| {
            let named = std::fs::read_to_string(dir.join("gitdir")).ok();
            let path = named
                .map(|t| PathBuf::from(t.trim_end()))
                .map(|p| p.parent().map(Path::to_path_buf).unwrap_or(p));
            (dir, path)
        })
        .collect();
    out.sort();
    out
}
