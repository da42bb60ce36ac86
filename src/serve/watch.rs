//! Noticing that the board changed (SPEC §25: within 1 s of a new record or a new commit in
//! any worktree): a poll of the stat of the files that change when it does, every 100 ms.
//!
//! Watched: the audit log, `packed-refs`, the `worktrees` folder (a worktree added or removed),
//! every worktree's `HEAD` and the loose ref it points at, and its status document. Only `stat`
//! and the read of a few small files — no git library, no lock: the gate never waits on the
//! server. A poll rather than inotify: the same code on every system, and 50 worktrees cost
//! about 150 `stat` calls a poll.

use std::fs;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How often the files are looked at.
pub const POLL: Duration = Duration::from_millis(100);

/// A counter that moves each time the board changed, and a way to wait for it to move.
#[derive(Default)]
pub struct Changes {
    generation: Mutex<u64>,
    moved: Condvar,
}

impl Changes {
    /// The current generation.
    pub fn now(&self) -> u64 {
        *self.generation.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wait until the generation is past `seen`, or `timeout` passed; the generation then.
    pub fn wait_past(&self, seen: u64, timeout: Duration) -> u64 {
        let guard = self.generation.lock().unwrap_or_else(|e| e.into_inner());
        let (guard, _) = self
            .moved
            .wait_timeout_while(guard, timeout, |g| *g <= seen)
            .unwrap_or_else(|e| e.into_inner());
        *guard
    }

    fn bump(&self) {
        let mut guard = self.generation.lock().unwrap_or_else(|e| e.into_inner());
        *guard += 1;
        self.moved.notify_all();
    }
}

/// Poll the repository whose common dir is `common` for ever (on its own thread), bumping
/// `changes` whenever what it watches changed. `status_file` is the status document's name.
pub fn spawn(common: PathBuf, status_file: String, changes: Arc<Changes>) {
    std::thread::spawn(move || {
        let mut last = fingerprint(&common, &status_file);
        loop {
            std::thread::sleep(POLL);
            let now = fingerprint(&common, &status_file);
            if now != last {
                last = now;
                changes.bump();
            }
        }
    });
}

/// A hash of the stat of everything watched; a missing file hashes as missing.
pub fn fingerprint(common: &Path, status_file: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    let mut stat = |path: &Path| {
        path.hash(&mut hasher);
        match fs::metadata(path) {
            Ok(m) => {
                (m.len(), m.mtime(), m.mtime_nsec(), m.ino(), m.ctime_nsec()).hash(&mut hasher)
            }
            Err(_) => 0u8.hash(&mut hasher),
        }
    };
    stat(&common.join("closegate").join("audit.jsonl"));
    stat(&common.join("packed-refs"));
    stat(&common.join("worktrees"));
    for (admin, workdir) in admin_dirs(common) {
        let head = admin.join("HEAD");
        stat(&head);
        if let Some(target) = fs::read_to_string(&head)
            .ok()
            .and_then(|h| h.strip_prefix("ref: ").map(|r| r.trim().to_string()))
            && !target.contains("..")
        {
            stat(&common.join(target));
        }
        if let Some(dir) = workdir {
            stat(&dir.join(status_file));
        }
    }
    hasher.finish()
}

/// Each worktree's administrative folder and working directory: the main one (`common` and
/// its parent, when `common` is a `.git` folder) and every `worktrees/<name>` (its `gitdir`
/// file names the `.git` file inside the working directory).
fn admin_dirs(common: &Path) -> Vec<(PathBuf, Option<PathBuf>)> {
    let main_dir = (common.file_name().is_some_and(|n| n == ".git"))
        .then(|| common.parent().map(Path::to_path_buf))
        .flatten();
    let mut all = vec![(common.to_path_buf(), main_dir)];
    let Ok(entries) = fs::read_dir(common.join("worktrees")) else {
        return all;
    };
    let mut linked: Vec<_> = entries
        .flatten()
        .map(|entry| {
            let admin = entry.path();
            let workdir = fs::read_to_string(admin.join("gitdir"))
                .ok()
                .and_then(|g| Path::new(g.trim()).parent().map(Path::to_path_buf));
            (admin, workdir)
        })
        .collect();
    linked.sort();
    all.extend(linked);
    all
}
