//! Which worktree a stop is judged in (SPEC §18, §26.3): the one the session started in. When
//! that folder no longer exists, the worktree that contains it — its nearest existing ancestor
//! inside a worktree — never "malformed input"; when the worktree itself is gone, there is none.

use std::path::{Path, PathBuf};

use crate::repo::Repo;

/// Where the stop is judged.
pub enum Place {
    /// The worktree's root, and the repository opened there (boxed: a `Repo` is large).
    Here { repo: Box<Repo>, root: PathBuf },
    /// The session's worktree no longer exists: `start` lay in it.
    Gone { start: PathBuf },
}

/// Locate the worktree of the folder `start`. `Err` is a one-line reason the input is unusable
/// (a start folder that exists outside any worktree, or in a bare repository).
pub fn locate(start: &Path) -> Result<Place, String> {
    if std::fs::symlink_metadata(start).is_ok() {
        let repo = Repo::discover(start).map_err(|e| format!("cwd {}: {e:#}", start.display()))?;
        let Some(root) = repo.workdir() else {
            return Err(format!("cwd {} is in a bare repository", start.display()));
        };
        return Ok(Place::Here {
            repo: Box::new(repo),
            root,
        });
    }
    let gone = || Place::Gone {
        start: start.to_path_buf(),
    };
    let Some(ancestor) = start.ancestors().skip(1).find(|a| a.is_dir()) else {
        return Ok(gone());
    };
    let Ok(repo) = Repo::discover(ancestor) else {
        return Ok(gone());
    };
    let Some(root) = repo.workdir() else {
        return Ok(gone());
    };
    // A registered worktree inside the one found that held `start` and is gone (worktrees kept
    // inside the main checkout): the session's own worktree was removed.
    let lost = repo
        .worktrees()
        .into_iter()
        .any(|w| !w.exists && w.path != root && start.starts_with(&w.path));
    Ok(if lost {
        gone()
    } else {
        Place::Here {
            repo: Box::new(repo),
            root,
        }
    })
}

/// A repository to count blocks and record in when the session's worktree is gone: the one
/// around the input's `cwd`, else around the nearest existing ancestor of `start`.
pub fn any_repo(cwd: &Path, start: &Path) -> Option<Repo> {
    let near = |p: &Path| p.ancestors().find(|a| a.is_dir()).map(Path::to_path_buf);
    [near(cwd), near(start)]
        .into_iter()
        .flatten()
        .find_map(|p| Repo::discover(&p).ok())
}
