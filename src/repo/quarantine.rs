//! The quarantine object directory (SPEC §26.4): the objects of trees closegate only checks —
//! overlays and reverse overlays (§23), composed trees (§22, the board's CONFLICT), stand-in
//! commits — are written to a directory of their own, never into the repository's shared object
//! store, and dropped after the run. A tree that was only checked leaves nothing behind that an
//! agent or a later reader could take for history (and nothing that fills the store).
//!
//! The directory is `<common dir>/closegate/quarantine/q-XXXXXX/`, a bare repository of its own
//! whose `objects/info/alternates` names the repository's object directories (and git's own
//! incoming quarantine in a pre-receive hook): it writes only into itself and reads everything.
//! The repository handle that made it reads it as an alternate, and so does every checkout a
//! check runs in (its alternates file names it), so the checks see the stand-in commits. It
//! lives inside the common dir so the sandbox shows it read-only to checks as it shows the
//! object store, and git's own tools never read it (it is no object directory of theirs).
//!
//! Lifetime: removed when the handle that made it is dropped, on success and on error alike. A
//! closegate killed outright cannot remove it: each quarantine holds an advisory lock (`flock`)
//! on its `lock` file for its whole life, and every new quarantine first removes the others
//! whose lock it can take (their owner is gone). The agent can write the common dir: a symbolic
//! link in place of `quarantine/` is removed, not followed, and objects are verified against
//! their ids whenever they are read (SPEC §11), so a planted object changes nothing.
//!
//! `land` alone moves objects out of the quarantine: [`super::Repo::promote`] copies the commit it
//! moves the base to, and what that commit needs, into the object store, once the commit passed
//! and right before the move.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use git2::{Repository, RepositoryInitOptions};

/// Where every quarantine of a repository lives, below its common dir.
fn base(common_dir: &Path) -> PathBuf {
    common_dir.join("closegate").join("quarantine")
}

/// The prefix of every quarantine's directory name.
const PREFIX: &str = "q-";

/// One quarantine: its directory, a repository writing into it, and (when this process made
/// it) the lock that says it is in use.
pub(super) struct Quarantine {
    dir: PathBuf,
    pub(super) git: Repository,
    /// `Some` for the quarantine this process made (removed on drop); `None` for one borrowed
    /// from another handle of the same run.
    lock: Option<File>,
}

impl Quarantine {
    /// A new quarantine for the repository at `common_dir`, reading `alternates` (the object
    /// directories it must see). Stale quarantines are removed first.
    pub(super) fn create(common_dir: &Path, alternates: &[PathBuf]) -> Result<Quarantine> {
        let base = base(common_dir);
        let fail = || {
            format!(
                "creating a quarantine object directory in {}",
                base.display()
            )
        };
        std::fs::create_dir_all(base.parent().unwrap_or(&base)).with_context(fail)?;
        real_dir(&base).with_context(fail)?;
        sweep_stale(&base);
        let made = tempfile::Builder::new()
            .prefix(PREFIX)
            .tempdir_in(&base)
            .with_context(fail)?;
        let lock = lock_file(&made.path().join("lock")).with_context(fail)?;
        // From here the directory is ours alone to remove (drop), even if the rest fails.
        let dir = made.keep();
        let quarantine = (|| -> Result<Quarantine> {
            let mut init = RepositoryInitOptions::new();
            init.bare(true).external_template(false).no_reinit(true);
            Repository::init_opts(dir.join("repo"), &init)?;
            write_alternates(&dir.join("repo"), alternates)?;
            let git = Repository::open_bare(dir.join("repo"))?;
            Ok(Quarantine {
                dir: dir.clone(),
                git,
                lock: Some(lock),
            })
        })();
        if quarantine.is_err() {
            let _ = remove(&dir);
        }
        quarantine.with_context(fail)
    }

    /// The quarantine at `objects` (another handle's [`Quarantine::objects`]), borrowed: this
    /// handle writes into it too but never removes it.
    pub(super) fn borrow(objects: &Path) -> Result<Quarantine> {
        let repo = objects.parent().unwrap_or(objects);
        let git = Repository::open_bare(repo)
            .with_context(|| format!("opening the quarantine {}", repo.display()))?;
        Ok(Quarantine {
            dir: repo.parent().unwrap_or(repo).to_path_buf(),
            git,
            lock: None,
        })
    }

    /// Its object directory, which readers name as an alternate.
    pub(super) fn objects(&self) -> PathBuf {
        self.dir.join("repo").join("objects")
    }
}

impl Quarantine {
    /// Remove the directory (once; a borrowed quarantine is left to its owner).
    fn close(&self) {
        if self.lock.is_some() && self.dir.exists() {
            let _ = remove(&self.dir);
        }
    }
}

impl Drop for Quarantine {
    fn drop(&mut self) {
        self.close();
    }
}

/// `objects/info/alternates` of the bare repository at `repo`, naming `alternates`.
pub(super) fn write_alternates(repo: &Path, alternates: &[PathBuf]) -> std::io::Result<()> {
    let mut text = String::new();
    for dir in alternates {
        text.push_str(&format!("{}\n", dir.display()));
    }
    let info = repo.join("objects").join("info");
    std::fs::create_dir_all(&info)?;
    std::fs::write(info.join("alternates"), text)
}

/// Make `path` a real directory: a symbolic link or other non-directory there is removed, not
/// followed (the agent can write the common dir).
fn real_dir(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => std::fs::remove_file(path)?,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(err),
    }
    match std::fs::create_dir(path) {
        Err(err) if err.kind() != std::io::ErrorKind::AlreadyExists => Err(err),
        _ => Ok(()),
    }
}

/// Open (creating) and lock the file at `path`, not following a link.
fn lock_file(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive)?;
    Ok(file)
}

/// Remove every quarantine under `base` whose lock can be taken (its owner is gone). A
/// directory without a lock file yet is one being made: left alone. Failures are skipped.
fn sweep_stale(base: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(base) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        let ours = entry.file_name().to_string_lossy().starts_with(PREFIX);
        let dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if !ours || !dir {
            continue;
        }
        // A lock taken here is released when the file closes, right after the removal.
        if lock_file(&path.join("lock")).is_ok() && remove(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Remove a quarantine directory (links inside are removed, never followed).
fn remove(dir: &Path) -> std::io::Result<()> {
    std::fs::remove_dir_all(dir)
}

/// Every quarantine directory under the repository's common dir, for tests and `gc`.
pub fn list(common_dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(base(common_dir)) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    found.sort();
    found
}

impl super::Repo {
    /// The repository that writes the objects of trees that are only checked: this run's
    /// quarantine, made on first use and read by this handle from then on.
    pub(super) fn writer(&self) -> Result<&Repository> {
        if let Some(q) = self.quarantine.get() {
            return Ok(&q.git);
        }
        let q = Quarantine::create(&self.common_dir(), &self.store_dirs())?;
        self.read_quarantine(&q)?;
        let q = self.quarantine.get_or_init(|| q);
        Ok(&q.git)
    }

    /// Read `q`'s objects as this handle's own (an alternate of its object database).
    fn read_quarantine(&self, q: &Quarantine) -> Result<()> {
        let objects = q.objects();
        let fail = || format!("reading the quarantine {}", objects.display());
        let text = objects.to_str().with_context(fail)?;
        self.git
            .odb()
            .with_context(fail)?
            .add_disk_alternate(text)
            .with_context(fail)
    }

    /// The object directories whose objects this repository holds: its object store, and in a
    /// pre-receive hook git's own incoming quarantine (SPEC §20).
    fn store_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = vec![super::canonical(&self.common_dir().join("objects"))];
        if let Some(incoming) = std::env::var_os("GIT_QUARANTINE_PATH") {
            dirs.push(super::canonical(Path::new(&incoming)));
        }
        dirs
    }

    /// The object directories a checkout of this repository borrows (its alternates): the
    /// store's ([`Repo::store_dirs`]) and this run's quarantine once made.
    pub(super) fn alternates(&self) -> Vec<PathBuf> {
        let mut dirs = self.store_dirs();
        dirs.extend(
            self.quarantine
                .get()
                .map(|q| super::canonical(&q.objects())),
        );
        dirs
    }

    /// What another handle of this run (a thread's) opens to see this handle's quarantine.
    pub fn share(&self) -> Shared {
        Shared {
            common: self.common_dir(),
            quarantine: self.quarantine.get().map(Quarantine::objects),
        }
    }

    /// Copy `tip` and every object it needs that the object store lacks (trees, blobs a merge
    /// wrote, the commits between it and the store's history) out of the quarantine into the
    /// store: `land`'s composed commit, once it passed and right before the base moves to it.
    /// Children are written before the objects that name them, so the store never holds a
    /// commit whose tree it lacks.
    pub fn promote(&self, tip: git2::Oid) -> Result<()> {
        if self.quarantine.get().is_none() {
            return Ok(());
        }
        let fail = || format!("writing commit {tip} into the object store");
        let store = Repository::open_bare(self.common_dir()).with_context(fail)?;
        let store = store.odb().with_context(fail)?;
        let mut seen = std::collections::HashSet::new();
        let (mut todo, mut order) = (vec![tip], Vec::new());
        while let Some(id) = todo.pop() {
            if !seen.insert(id) || store.exists(id) {
                continue;
            }
            order.push(id);
            todo.extend(self.children(id).with_context(fail)?);
        }
        let odb = self.git.odb().with_context(fail)?;
        for id in order.into_iter().rev() {
            let object = odb.read(id).with_context(fail)?;
            store
                .write(object.kind(), object.data())
                .with_context(fail)?;
        }
        Ok(())
    }

    /// The objects `id` names: a commit's tree and parents, a tree's blobs and trees.
    fn children(&self, id: git2::Oid) -> Result<Vec<git2::Oid>> {
        let object = self.git.find_object(id, None)?;
        Ok(match object.kind() {
            Some(git2::ObjectType::Commit) => {
                let commit = object.peel_to_commit()?;
                let mut out = vec![commit.tree_id()];
                out.extend(commit.parent_ids());
                out
            }
            Some(git2::ObjectType::Tree) => {
                let tree = object.peel_to_tree()?;
                tree.iter()
                    .filter(|e| {
                        matches!(
                            e.kind(),
                            Some(git2::ObjectType::Blob | git2::ObjectType::Tree)
                        )
                    })
                    .map(|e| e.id())
                    .collect()
            }
            _ => Vec::new(),
        })
    }
}

/// What a second handle of one run needs to see the first one's quarantine (`Send`, unlike a
/// [`super::Repo`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shared {
    common: PathBuf,
    quarantine: Option<PathBuf>,
}

impl Shared {
    /// The repository again, reading (and writing into) the first handle's quarantine, which it
    /// never removes.
    pub fn open(&self) -> Result<super::Repo> {
        let repo = super::Repo::discover(&self.common)?;
        if let Some(objects) = &self.quarantine {
            let q = Quarantine::borrow(objects)?;
            repo.read_quarantine(&q)?;
            let _ = repo.quarantine.set(q);
        }
        Ok(repo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quarantine_is_removed_when_dropped_and_a_stale_one_by_the_next() {
        let tmp = tempfile::tempdir().unwrap();
        let common = tmp.path();
        let q = Quarantine::create(common, &[]).unwrap();
        let dir = q.dir.clone();
        assert!(dir.join("repo/objects").is_dir());
        let borrowed = Quarantine::borrow(&q.objects()).unwrap();
        drop(borrowed);
        assert!(dir.is_dir(), "a borrowed quarantine is not removed");
        drop(q);
        assert!(!dir.exists());
        // A quarantine whose owner died (no lock held) goes when the next one is made; one in use
        // (its lock held) stays.
        let stale = base(common).join("q-stale");
        std::fs::create_dir_all(&stale).unwrap();
        std::fs::write(stale.join("lock"), b"").unwrap();
        let live = Quarantine::create(common, &[]).unwrap();
        let next = Quarantine::create(common, &[]).unwrap();
        assert!(!stale.exists());
        assert!(live.dir.is_dir() && next.dir.is_dir());
    }

    #[test]
    fn a_link_in_place_of_the_quarantine_folder_is_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let common = tmp.path().join("common");
        std::fs::create_dir_all(common.join("closegate")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, base(&common)).unwrap();
        let q = Quarantine::create(&common, &[]).unwrap();
        assert!(q.dir.starts_with(base(&common)));
        assert!(std::fs::symlink_metadata(base(&common)).unwrap().is_dir());
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    }
}
