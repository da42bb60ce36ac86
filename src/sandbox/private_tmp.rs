//! The check's own `/tmp` and `/var/tmp` (SPEC §4.6): an empty tmpfs over each of the host's
//! shared temporary directories, so a tool that writes straight into `/tmp` (flow's
//! `daemon_param*.bin`, a test runner's sockets) can, and no check sees what other users, other
//! agents or the operator keep there, nor leaves anything there for the next check.
//!
//! What a check needs from under them is bound back read-only, each path alone:
//! the repository's common dir (the pristine checkout borrows its objects) and every absolute
//! path the check's own environment names (`HOME`, `PATH` entries, `CARGO_HOME`, …: values the
//! operator set, never the agent). The checkout, the check's `TMPDIR` and its `writable` paths are
//! bound after, writable, wherever they live. Nothing the agent can write (the worktree list, the
//! hooks directory, an alternates file) decides what is shown.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// The host's shared temporary directories every sandboxed check gets a private, empty copy of.
pub const SHARED_TMPS: [&str; 2] = ["/tmp", "/var/tmp"];

/// A private copy of one shared temporary directory and the host paths under it bound back,
/// read-only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrivateTmp {
    /// The directory as named (`/tmp`, `/var/tmp`).
    pub shared: PathBuf,
    /// Where the empty tmpfs goes (`shared`, resolved through links).
    pub dir: PathBuf,
    /// `(source on the host, place in the sandbox)`, both strictly under `dir` or under
    /// `shared` as written; a source is canonical and exists.
    pub visible: Vec<(PathBuf, PathBuf)>,
}

/// The private temporary directories of a check whose environment is `env` and which needs
/// `needed` (the common dir): one per [`SHARED_TMPS`] entry the host has as a directory, none
/// for one that resolves to, into or around an earlier one (`/var/tmp` a link to `/tmp`): its
/// tmpfs would hide what the earlier one binds back.
pub fn all(env: &[(OsString, OsString)], needed: &[PathBuf]) -> Vec<PrivateTmp> {
    let mut out: Vec<PrivateTmp> = Vec::new();
    for shared in SHARED_TMPS {
        let Some(tmp) = PrivateTmp::at(Path::new(shared), env, needed) else {
            continue;
        };
        let overlaps = out
            .iter()
            .any(|t| t.dir.starts_with(&tmp.dir) || tmp.dir.starts_with(&t.dir));
        if !overlaps {
            out.push(tmp);
        }
    }
    out
}

impl PrivateTmp {
    /// The private copy of `shared` for a check whose environment is `env` and which needs
    /// `needed`; `None` where the host has no such directory.
    pub fn at(
        shared: &Path,
        env: &[(OsString, OsString)],
        needed: &[PathBuf],
    ) -> Option<PrivateTmp> {
        let dir = std::fs::canonicalize(shared).ok()?;
        if !dir.is_dir() || dir == Path::new("/") {
            return None;
        }
        let mut tmp = PrivateTmp {
            shared: shared.to_path_buf(),
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

    /// Bind `path` back when it lies under the private directory, as written or once resolved:
    /// at the written place (a `HOME` under `/tmp` must be found where the variable says) and at
    /// the resolved one (a link elsewhere that points into `/tmp`). The directory itself, a
    /// relative path, and one with `..` in it are never shown.
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
            let under = [self.dir.as_path(), self.shared.as_path()]
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

    const SHARED_TMP: &str = SHARED_TMPS[0];

    fn tmp_with(env: &[(&str, &Path)], needed: &[PathBuf]) -> PrivateTmp {
        let env: Vec<(OsString, OsString)> = env
            .iter()
            .map(|(k, v)| (OsString::from(k), v.as_os_str().to_os_string()))
            .collect();
        PrivateTmp::at(Path::new(SHARED_TMP), &env, needed).expect("a /tmp directory")
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

    #[test]
    fn var_tmp_gets_its_own_copy_unless_it_is_tmp() {
        let env: Vec<(OsString, OsString)> = Vec::new();
        let tmps = all(&env, &[]);
        let dirs: Vec<&Path> = tmps.iter().map(|t| t.dir.as_path()).collect();
        let tmp = std::fs::canonicalize("/tmp").unwrap();
        assert_eq!(dirs.first(), Some(&tmp.as_path()), "{tmps:?}");
        match std::fs::canonicalize("/var/tmp") {
            Ok(var) if var.is_dir() && !var.starts_with(&tmp) && !tmp.starts_with(&var) => {
                assert_eq!(dirs, [tmp.as_path(), var.as_path()]);
                assert_eq!(tmps[1].shared, Path::new("/var/tmp"));
            }
            _ => assert_eq!(dirs.len(), 1, "{tmps:?}"),
        }
    }

    #[test]
    fn a_needed_path_under_var_tmp_is_shown() {
        let Ok(base) = tempfile::tempdir_in("/var/tmp") else {
            return;
        };
        let repo = std::fs::canonicalize(base.path()).unwrap().join("repo.git");
        std::fs::create_dir(&repo).unwrap();
        let tmp = PrivateTmp::at(Path::new("/var/tmp"), &[], std::slice::from_ref(&repo))
            .expect("a /var/tmp directory");
        assert_eq!(tmp.visible, vec![(repo.clone(), repo)]);
    }
}
