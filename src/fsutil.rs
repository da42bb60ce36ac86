//! Files replaced whole or not at all: the one writer that goes through a temporary file beside
//! the target, flushed to disk and renamed into place, so a crash or a full disk never leaves a
//! half-written status document, configuration or hook.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use anyhow::{Context, Result};

/// Write `bytes` to `path` through a temporary file in the same directory and a rename. A file
/// that exists keeps its permissions; a new one gets 0644 (tempfile's own files are 0600).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let permissions = match std::fs::metadata(path) {
        Ok(meta) => meta.permissions(),
        Err(_) => std::fs::Permissions::from_mode(0o644),
    };
    replace(path, bytes, permissions)
}

/// [`write_atomic`] with the file's mode given (a hook: 0755, whatever was there before).
pub fn write_atomic_mode(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    replace(path, bytes, std::fs::Permissions::from_mode(mode))
}

/// The temporary file is named `.<name>.XXXXXX` beside `path` (hidden, and no hook name git
/// would run); its permissions are set through the open file, never by path.
fn replace(path: &Path, bytes: &[u8], permissions: std::fs::Permissions) -> Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().set_permissions(permissions))
        .and_then(|()| tmp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    tmp.persist(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_is_0644_and_an_old_one_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/doc.md");
        write_atomic(&path, b"one\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"one\n");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o644);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&path, b"two\n").unwrap();
        assert_eq!(
            (std::fs::read(&path).unwrap(), mode(&path)),
            (b"two\n".to_vec(), 0o600)
        );
        write_atomic_mode(&path, b"#!/bin/sh\n", 0o755).unwrap();
        assert_eq!(mode(&path), 0o755);
        // nothing but the file is left beside it
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sub")).unwrap().collect();
        assert_eq!(names.len(), 1);
    }
}
