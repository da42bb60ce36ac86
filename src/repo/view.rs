//! What `serve`'s page reads from git besides the board (SPEC §25): the patch of one protected
//! path (a commit's time is `Repo::commit_time`, beside the composing code).

use git2::{Oid, Patch};

use super::Repo;

impl Repo {
    /// The unified diff of `path` between the trees of `from` (none: the path did not exist)
    /// and `to`, cut after `max` bytes (then ending in a line saying so); `None` when it cannot
    /// be read (the commits are gone, the path is no file in either).
    pub fn path_patch(&self, from: Option<Oid>, to: Oid, path: &str, max: usize) -> Option<String> {
        let blob = |commit: Option<Oid>| {
            let id = self.blob_id(commit?, path)?;
            self.git.find_blob(id).ok()
        };
        let (old, new) = (blob(from), blob(Some(to)));
        if old.is_none() && new.is_none() {
            return None;
        }
        let name = std::path::Path::new(path);
        let old_bytes = old.as_ref().map_or(&[][..], |b| b.content());
        let new_bytes = new.as_ref().map_or(&[][..], |b| b.content());
        let mut patch =
            Patch::from_buffers(old_bytes, Some(name), new_bytes, Some(name), None).ok()?;
        let buf = patch.to_buf().ok()?;
        let text = String::from_utf8_lossy(&buf);
        if text.len() <= max {
            return Some(text.into_owned());
        }
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        Some(format!("{}\n… (cut at {max} bytes)\n", &text[..end]))
    }
}
