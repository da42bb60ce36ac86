//! The stop hook's count of consecutive blocks for one worktree (SPEC §18, §26.3), kept in the
//! common dir so that an agent can never loop forever. The agent can write that directory: a
//! counter that is not a regular file holding a number (a FIFO, a directory, a file of anything
//! else, a `stop-hook` folder replaced by a file) is never opened with a blocking open and never
//! read as 0 — the count is then "unavailable", and the hook falls back on the input's
//! `stop_hook_active`.

use std::path::{Path, PathBuf};

/// The counter of one worktree: `<common>/closegate/stop-hook/<hash of the worktree path>`.
pub struct Counter {
    path: PathBuf,
}

impl Counter {
    pub fn new(common: &Path, root: &Path) -> Counter {
        // git's object hash of the path, not SHA-256: the sha2 crate asks the CPU which SHA
        // instructions it has on its first use, and in a virtual machine that question (CPUID)
        // cost about 30 µs of every stop (docs/agents.md "What a stop costs"); libgit2 hashes in
        // software. Hashing fails only when libgit2 cannot start, and then no repository was
        // opened to keep a counter in: the fallback name is never reached in practice.
        let path = root.as_os_str().as_encoded_bytes();
        let name = crate::repo::Repo::hash_blob(path).map_or_else(
            || "unhashed".to_string(),
            |id| id.to_string()[..24].to_string(),
        );
        let path = crate::record::dir(common).join("stop-hook").join(name);
        Counter { path }
    }

    #[cfg(test)]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The consecutive blocks so far; `Err` says why the count cannot be kept.
    pub fn count(&self) -> Result<u32, String> {
        let shown = self.path.display();
        use std::io::ErrorKind::{NotADirectory, NotFound};
        match std::fs::symlink_metadata(&self.path) {
            Err(e) if matches!(e.kind(), NotFound | NotADirectory) => {
                return self.dir_usable().map(|()| 0);
            }
            Err(e) => return Err(format!("cannot read {shown}: {e}")),
            Ok(_) => {}
        }
        let bytes = crate::input_file::read(&self.path).map_err(|e| format!("{e:#}"))?;
        let text = String::from_utf8_lossy(&bytes);
        text.trim()
            .parse()
            .map_err(|_| format!("{shown} does not hold a count"))
    }

    /// Count one more block.
    pub fn increment(&self, now: u32) -> Result<(), String> {
        let text = format!("{}\n", now.saturating_add(1));
        crate::fsutil::write_atomic(&self.path, text.as_bytes()).map_err(|e| format!("{e:#}"))
    }

    /// Start again (an accepted stop, or a give-up).
    pub fn reset(&self) -> Result<(), String> {
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(format!("cannot remove {}: {e}", self.path.display()))
            }
            _ => Ok(()),
        }
    }

    /// The counter's folder is a folder (or can be made one).
    fn dir_usable(&self) -> Result<(), String> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))
    }
}

/// What the loop guard decides about a refused stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Block it; the count is kept (or, unavailable, this is the first block in a row).
    Block,
    /// Let it through and record the give-up; `Some` says the counter could not be kept, so the
    /// harness's `stop_hook_active` decided.
    GiveUp(Option<String>),
}

/// Decide a refused stop: after `max_blocks` consecutive blocks it is let through. When the count
/// cannot be kept, a stop the harness marks `stop_hook_active` (it follows a block) is the last.
pub fn decide(counter: &Counter, max_blocks: u32, stop_hook_active: bool) -> Verdict {
    match counter.count() {
        Ok(n) if n >= max_blocks => {
            let _ = counter.reset();
            Verdict::GiveUp(None)
        }
        Ok(n) => match counter.increment(n) {
            Ok(()) => Verdict::Block,
            Err(why) => fallback(why, stop_hook_active),
        },
        Err(why) => fallback(why, stop_hook_active),
    }
}

fn fallback(why: String, stop_hook_active: bool) -> Verdict {
    if stop_hook_active {
        Verdict::GiveUp(Some(why))
    } else {
        Verdict::Block
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_up_to_the_limit_then_gives_up_and_starts_again() {
        let dir = tempfile::tempdir().unwrap();
        let c = Counter::new(dir.path(), Path::new("/wt/x"));
        assert_eq!(c.count(), Ok(0));
        for _ in 0..2 {
            assert_eq!(decide(&c, 2, true), Verdict::Block);
        }
        assert_eq!(decide(&c, 2, true), Verdict::GiveUp(None));
        assert_eq!(c.count(), Ok(0));
    }

    /// Attack: the counter replaced by a FIFO, a directory, or a file of anything else; the
    /// `stop-hook` folder replaced by a file. None blocks forever and none hangs.
    #[test]
    fn a_counter_that_cannot_be_kept_falls_back_on_stop_hook_active() {
        let dir = tempfile::tempdir().unwrap();
        let c = Counter::new(dir.path(), Path::new("/wt/x"));
        std::fs::create_dir_all(c.path().parent().unwrap()).unwrap();
        let made = std::process::Command::new("mkfifo").arg(c.path()).status();
        assert!(made.unwrap().success());
        let why = c.count().unwrap_err();
        assert!(why.contains("a FIFO"), "{why}");
        assert_eq!(decide(&c, 3, false), Verdict::Block);
        assert!(matches!(decide(&c, 3, true), Verdict::GiveUp(Some(w)) if w.contains("FIFO")));
        std::fs::remove_file(c.path()).unwrap();
        std::fs::create_dir(c.path()).unwrap();
        assert!(matches!(decide(&c, 3, true), Verdict::GiveUp(Some(_))));
        std::fs::remove_dir(c.path()).unwrap();
        std::fs::write(c.path(), "zero\n").unwrap();
        assert!(c.count().unwrap_err().contains("does not hold a count"));
        assert!(matches!(decide(&c, 3, true), Verdict::GiveUp(Some(_))));
        let parent = c.path().parent().unwrap();
        std::fs::remove_dir_all(parent).unwrap();
        std::fs::write(parent, "not a folder").unwrap();
        assert!(c.count().is_err());
        assert_eq!(decide(&c, 3, false), Verdict::Block);
        assert!(matches!(decide(&c, 3, true), Verdict::GiveUp(Some(_))));
    }
}
