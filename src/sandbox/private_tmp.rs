//! The check's own `/tmp` (SPEC §4.6): an empty tmpfs over the host's shared temporary
//! directory, so a tool that writes straight into `/tmp` (flow's `daemon_param*.bin`, a test
//! runner's sockets) can, and no check sees what other users, other agents or the operator keep
//! there.
//!
//! What a check needs from under the host's `/tmp` is bound back read-only, each path alone:
//! the repository's common dir (the pristine checkout borrows its objects) and every absolute
//! path the check's own environment names (`HOME`, `PATH` entries, `CARGO_HOME`, …: values the
//! operator set, never the agent). The checkout, the check's `TMPDIR` and its `writable` paths are
//! bound after, writable, wherever they live. Nothing the agent can write (the worktree list, the
//! hooks directory, an alternates file) decides what is shown.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// The host's shared temporary directory every sandboxed check gets a private, empty copy of.
pub const SHARED_TMP: &str = "/tmp";

/// A private `/tmp` and the host paths under it bound back, read-only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrivateTmp {
    /// Where the empty tmpfs goes (`/tmp`, resolved through links).
    pub dir: PathBuf,
    /// `(source on the host, place in the sandbox)`, both strictly under `dir` or under `/tmp`
    /// as written; a source is canonical and exists.
    pub visible: Vec<(PathBuf, PathBuf)>,
}

impl PrivateTmp {
    /// The private `/tmp` of a check whose environment is `env` and which needs `needed` (the
    /// common dir); `None` where the host has no `/tmp` directory.
    pub fn new(env: &[(OsString, OsString)], needed: &[PathBuf]) -> Option<PrivateTmp> {
        let dir = std::fs::canonicalize(SHARED_TMP).ok()?;
        if !dir.is_dir() || dir == Path::new("/") {
            return None;
        }
        let mut tmp = PrivateTmp {
            dir,
            visible: Vec::new(),
        };
        let named = env
            .iter()
            .flat_map(|(_, value)| std::env::split_paths(value).collect::<Vec<_>>());
        for path in needed.iter().cloned().chain(named) {
            tmp.show(&path);
        }
        Some(tmp)
    }

    /// Bind `path` back when it lies under the private `/tmp`, as written or once resolved: at
    /// the written place (a `HOME` under `/tmp` must be found where the variable says) and at
    /// the resolved one (a link elsewhere that points into `/tmp`). `/tmp` itself, a relative
    /// path, and one with `..` in it are never shown.
    fn show(&mut self, path: &Path) {
        let plain = path.is_absolute()
            && path
                .components()
                .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
        if !plain {
            return;
        }
        let Ok(source) = std::fs::canonicalize(path) else {
            return;
        };
        for place in [path.to_path_buf(), source.clone()] {
            let under = [self.dir.as_path(), Path::new(SHARED_TMP)]
                .iter()
                .any(|tmp| place.starts_with(tmp) && place != *tmp);
            if !under || source == self.dir {
                continue;
            }
            let pair = (source.clone(), place);
            if !self.visible.contains(&pair) {
                self.visible.push(pair);
            }
        }
    }

    /// The bwrap arguments: the tmpfs, then every visible path, read-only.
    pub fn args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["--tmpfs".into(), self.dir.clone().into()];
        for (source, place) in &self.visible {
            args.extend(["--ro-bind".into(), source.into(), place.into()]);
        }
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp_with(env: &[(&str, &Path)], needed: &[PathBuf]) -> PrivateTmp {
        let env: Vec<(OsString, OsString)> = env
            .iter()
            .map(|(k, v)| (OsString::from(k), v.as_os_str().to_os_string()))
            .collect();
        PrivateTmp::new(&env, needed).expect("a /tmp directory")
    }

    #[test]
    fn only_named_paths_under_tmp_are_shown() {
        let base = tempfile::tempdir_in(SHARED_TMP).unwrap();
        let home = base.path().join("home");
        std::fs::create_dir(&home).unwrap();
        let tmp = tmp_with(
            &[
                ("HOME", &home),
                ("SHELL", Path::new("/bin/sh")),
                ("X", Path::new(SHARED_TMP)),
            ],
            &[],
        );
        let home = std::fs::canonicalize(&home).unwrap();
        assert_eq!(tmp.visible, vec![(home.clone(), home)]);
    }

    #[test]
    fn dot_dot_missing_and_relative_paths_are_never_shown() {
        let base = tempfile::tempdir_in(SHARED_TMP).unwrap();
        let up = base.path().join("..");
        let missing = base.path().join("missing");
        let tmp = tmp_with(
            &[
                ("A", &up),
                ("B", &missing),
                ("C", Path::new("tmp/x")),
                ("D", Path::new("/tmp/")),
            ],
            &[],
        );
        assert!(tmp.visible.is_empty(), "{:?}", tmp.visible);
    }

    #[test]
    fn a_path_list_shows_each_entry_under_tmp() {
        let base = tempfile::tempdir_in(SHARED_TMP).unwrap();
        let bin = base.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let list = std::env::join_paths([Path::new("/usr/bin"), &bin]).unwrap();
        let tmp = tmp_with(&[("PATH", Path::new(&list))], &[]);
        let bin = std::fs::canonicalize(&bin).unwrap();
        assert_eq!(tmp.visible, vec![(bin.clone(), bin)]);
    }
}
