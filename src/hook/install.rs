//! `hook install` and `hook uninstall`: write or remove closegate's hook, never anyone else's.
//!
//! Every write goes to a temporary file in the hooks directory and is renamed into place, so git
//! never runs a half-written hook.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::script::{self, BACKUP_NAME, HOOK_NAME, SERVER_BACKUP_NAME, SERVER_HOOK_NAME};

/// Which hook: the local reference-transaction hook (with the bases it hands to closegate), or
/// the server's pre-receive hook (SPEC §20).
#[derive(Debug, Clone, Copy)]
pub enum Which<'a> {
    Transaction(&'a [String]),
    Server,
}

impl Which<'_> {
    fn name(self) -> &'static str {
        match self {
            Which::Transaction(_) => HOOK_NAME,
            Which::Server => SERVER_HOOK_NAME,
        }
    }

    fn backup(self) -> &'static str {
        match self {
            Which::Transaction(_) => BACKUP_NAME,
            Which::Server => SERVER_BACKUP_NAME,
        }
    }

    fn text(self, exe: Option<&Path>, chained: bool) -> Vec<u8> {
        match self {
            Which::Transaction(bases) => script::script(exe, chained, bases),
            // The server hook's backup is chained by `hook run pre-receive` itself.
            Which::Server => script::server_script(exe),
        }
    }

    fn is_ours(self, bytes: &[u8]) -> bool {
        match self {
            Which::Transaction(_) => script::is_ours(bytes),
            Which::Server => script::is_ours_server(bytes),
        }
    }
}

/// What `install` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installed {
    /// The hook was written (`backup`: where a foreign hook was kept and chained).
    Written {
        hook: PathBuf,
        backup: Option<PathBuf>,
    },
    /// closegate's hook was already there, byte for byte.
    Unchanged { hook: PathBuf },
    /// A foreign hook is in the way (and `--force` was not given, or a backup already exists).
    Refused { reason: String },
}

/// What `uninstall` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Uninstalled {
    Removed { hook: PathBuf, restored: bool },
    Absent { hook: PathBuf },
    Refused { reason: String },
}

/// Install closegate's hook `which` into `dir`, calling `exe` (or `closegate` on PATH when
/// `None`); for the reference-transaction hook, its bases are the branch names the script hands
/// to closegate when they move (see `script`).
pub fn install_which(
    dir: &Path,
    exe: Option<&Path>,
    force: bool,
    which: Which<'_>,
) -> Result<Installed> {
    if dir.exists() && !dir.is_dir() {
        return Ok(Installed::Refused {
            reason: format!(
                "the hooks path {} is not a directory (core.hooksPath disables hooks)",
                dir.display()
            ),
        });
    }
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let hook = dir.join(which.name());
    let backup = dir.join(which.backup());
    let existing = read_if_present(&hook)?;
    let ours = existing.as_deref().is_none_or(|b| which.is_ours(b));
    if ours {
        let text = which.text(exe, exists(&backup));
        if existing.as_deref() == Some(text.as_slice()) && is_executable(&hook) {
            return Ok(Installed::Unchanged { hook });
        }
        write_hook(&hook, &text)?;
        return Ok(Installed::Written { hook, backup: None });
    }
    if !force {
        return Ok(Installed::Refused {
            reason: format!(
                "{} is a hook closegate did not write; pass --force to keep it as {} and chain it",
                hook.display(),
                which.backup()
            ),
        });
    }
    if exists(&backup) {
        return Ok(Installed::Refused {
            reason: format!(
                "{} exists already; move it or the foreign hook {} away first",
                backup.display(),
                hook.display()
            ),
        });
    }
    fs::rename(&hook, &backup)
        .with_context(|| format!("cannot move {} to {}", hook.display(), backup.display()))?;
    write_hook(&hook, &which.text(exe, true))?;
    Ok(Installed::Written {
        hook,
        backup: Some(backup),
    })
}

/// Remove closegate's hook `which` from `dir` and put back the hook `--force` kept, if any.
pub fn uninstall_which(dir: &Path, which: Which<'_>) -> Result<Uninstalled> {
    let hook = dir.join(which.name());
    let backup = dir.join(which.backup());
    let Some(existing) = read_if_present(&hook)? else {
        return Ok(Uninstalled::Absent { hook });
    };
    if !which.is_ours(&existing) {
        return Ok(Uninstalled::Refused {
            reason: format!(
                "{} is a hook closegate did not write; it was left alone",
                hook.display()
            ),
        });
    }
    if exists(&backup) {
        fs::rename(&backup, &hook).with_context(|| {
            format!("cannot restore {} to {}", backup.display(), hook.display())
        })?;
        return Ok(Uninstalled::Removed {
            hook,
            restored: true,
        });
    }
    fs::remove_file(&hook).with_context(|| format!("cannot remove {}", hook.display()))?;
    Ok(Uninstalled::Removed {
        hook,
        restored: false,
    })
}

/// The file's bytes, `None` when there is no file (a dangling symlink reads as present).
fn read_if_present(path: &Path) -> Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !exists(path) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Some(Vec::new())),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Whether anything (a file, a symlink, even a dangling one) is at `path`.
fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

fn is_executable(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 == 0o111)
}

/// Write `text` over `hook` whole (`fsutil`: a temporary file beside it, renamed into place),
/// executable.
pub(super) fn write_hook(hook: &Path, text: &[u8]) -> Result<()> {
    crate::fsutil::write_atomic_mode(hook, text, 0o755)
}
