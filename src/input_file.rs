//! Reading the files an agent writes (SPEC §11): the status document, its final message, the
//! input of `guard` and `signal`, and the contract and configuration files named by flags.
//!
//! Every command reads them through [`read`], which takes regular files only and at most
//! [`LIMIT`] bytes. A FIFO, a device or a directory is refused without blocking: the file is
//! opened with `O_NONBLOCK` (so opening a FIFO with no writer returns at once) and the opened
//! handle is `fstat`ed, so a path swapped between a check and the open cannot slip a FIFO or
//! `/dev/zero` through. Standard input (`-`) is read as it comes, up to the same cap.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use anyhow::{Context, Result, bail};

/// The largest input file read: 16 MiB.
pub const LIMIT: u64 = 16 * 1024 * 1024;

/// The bytes of the input file at `path` (`-`: standard input). An error names the file and why:
/// not a regular file, larger than [`LIMIT`] (with its size), or unreadable.
pub fn read(path: &Path) -> Result<Vec<u8>> {
    if path == Path::new("-") {
        return read_capped(std::io::stdin().lock(), "standard input", 0);
    }
    let shown = path.display();
    let (file, len) = open_regular(path)?;
    if len > LIMIT {
        bail!("{shown} is {}, larger than the 16 MiB limit", size(len));
    }
    // Sized from the stat, so a status document is one read and the end-of-file one.
    let expected = usize::try_from(len).unwrap_or(0).saturating_add(1);
    read_capped(file, &shown.to_string(), expected)
}

/// [`read`] for a file that may well be absent (a settings file a client may have): `Ok(None)`
/// when nothing is at `path`, decided from its `lstat`/`stat` before any error value is made (an
/// error captures a backtrace when `RUST_BACKTRACE` is set, and the stop hook asks for a dozen
/// absent files on every stop).
pub fn read_if_present(path: &Path) -> Result<Option<Vec<u8>>> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        _ => read(path).map(Some),
    }
}

/// Open the regular file at `path` for reading, never blocking, and give its length: a FIFO, a
/// device or a directory is refused (named in the error) before and after the open. What reads
/// only part of a file an agent can write (the head or tail of a transcript) opens it here.
pub fn open_regular(path: &Path) -> Result<(std::fs::File, u64)> {
    let shown = path.display();
    // Judged before the open too: opening some devices acts on them (a tape rewinds). The
    // `fstat` of the opened handle below is what counts, should the path change in between.
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.file_type().is_file()
    {
        bail!(
            "{shown} is {}, not a regular file",
            kind_name(meta.file_type())
        );
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .with_context(|| format!("cannot open {shown}"))?;
    let meta = file
        .metadata()
        .with_context(|| format!("cannot stat {shown}"))?;
    let kind = meta.file_type();
    if !kind.is_file() {
        bail!("{shown} is {}, not a regular file", kind_name(kind));
    }
    Ok((file, meta.len()))
}

/// Read all of `from`, failing once it passes [`LIMIT`] (a file may grow while it is read);
/// `expected` bytes of room are made first.
fn read_capped(from: impl Read, name: &str, expected: usize) -> Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(expected);
    from.take(LIMIT + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {name}"))?;
    if bytes.len() as u64 > LIMIT {
        bail!("{name} is larger than the 16 MiB limit");
    }
    Ok(bytes)
}

fn kind_name(kind: std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

/// `17825792 bytes (17.0 MiB)`.
fn size(bytes: u64) -> String {
    format!(
        "{bytes} bytes ({:.1} MiB)",
        bytes as f64 / (1024.0 * 1024.0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;

    #[test]
    fn reads_a_regular_file_and_refuses_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("doc.md");
        std::fs::write(&file, "# t\n").unwrap();
        assert_eq!(read(&file).unwrap(), b"# t\n");
        let err = format!("{:#}", read(dir.path()).unwrap_err());
        assert!(err.contains("a directory, not a regular file"), "{err}");
        let err = format!("{:#}", read(Path::new("/dev/zero")).unwrap_err());
        assert!(err.contains("/dev/zero is a character device"), "{err}");
        let big = dir.path().join("big");
        let f = File::create(&big).unwrap();
        f.set_len(LIMIT + 1).unwrap();
        let err = format!("{:#}", read(&big).unwrap_err());
        assert!(
            err.contains("16777217 bytes (16.0 MiB), larger than"),
            "{err}"
        );
        f.set_len(LIMIT).unwrap();
        assert_eq!(read(&big).unwrap().len() as u64, LIMIT);
    }
}
