//! The record key (SPEC §6): where it lives, how `closegate key init` makes it, and the MAC it
//! puts on every audit line.
//!
//! The key is 32 bytes from the operating system's random source, kept outside every repository
//! (`$CLOSEGATE_RECORD_KEY_FILE`, else `$XDG_CONFIG_HOME/closegate/record.key`, else
//! `~/.config/closegate/record.key`) so an agent that cannot read it cannot write a record that
//! counts. A line's MAC is HMAC-SHA256 over the line's JSON without its `mac` member; it is
//! compared in constant time (`Mac::verify_slice`).

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The environment variable that names the key file, before the XDG and home locations.
pub const ENV: &str = "CLOSEGATE_RECORD_KEY_FILE";
/// A record key is exactly this many bytes.
pub const LEN: usize = 32;

type HmacSha256 = Hmac<Sha256>;

/// Where the record key is looked for, and how that place was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub path: PathBuf,
    /// Named by `$CLOSEGATE_RECORD_KEY_FILE`: its absence is an error, not "no key".
    pub explicit: bool,
}

/// The key file's location from the environment; `None` when neither the variable, nor
/// `XDG_CONFIG_HOME`, nor `HOME` gives one.
pub fn location() -> Option<Location> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(path) = var(ENV) {
        return Some(Location {
            path,
            explicit: true,
        });
    }
    // XDG Base Directory: a relative XDG_CONFIG_HOME is invalid and ignored.
    let config = var("XDG_CONFIG_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| var("HOME").map(|home| home.join(".config")))?;
    Some(Location {
        path: config.join("closegate").join("record.key"),
        explicit: false,
    })
}

/// A loaded record key.
#[derive(Clone)]
pub struct Key([u8; LEN]);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(..)")
    }
}

impl Key {
    /// A key from its bytes.
    pub fn from_bytes(bytes: [u8; LEN]) -> Key {
        Key(bytes)
    }

    fn hmac(&self, message: &[u8]) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("HMAC takes a key of any length");
        mac.update(message);
        mac
    }

    /// `hex(HMAC-SHA256(key, message))`, lowercase.
    pub fn mac_hex(&self, message: &[u8]) -> String {
        hex(&self.hmac(message).finalize().into_bytes())
    }

    /// Whether `mac_hex` is the MAC of `message`, compared in constant time. Anything that is
    /// not 64 lowercase hex digits is not a MAC.
    pub fn verifies(&self, message: &[u8], mac_hex: &str) -> bool {
        unhex(mac_hex).is_some_and(|tag| self.hmac(message).verify_slice(&tag).is_ok())
    }
}

/// The record key, when one exists. No key file at the XDG or home location means no key
/// (records stay plain); a file that cannot be read, is not a regular file or does not hold
/// exactly 32 bytes is an error naming it, and so is a missing `$CLOSEGATE_RECORD_KEY_FILE`:
/// a key that was configured and is gone must not turn authenticated records into plain ones.
pub fn load() -> Result<Option<Key>> {
    let Some(loc) = location() else {
        return Ok(None);
    };
    let meta = match std::fs::metadata(&loc.path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !loc.explicit => return Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "the record key {} named by {ENV} does not exist; create it with `closegate key init`",
            loc.path.display()
        ),
        Err(e) => {
            return Err(e)
                .with_context(|| format!("cannot read the record key {}", loc.path.display()));
        }
    };
    if !meta.is_file() {
        bail!(
            "the record key {} is not a regular file",
            loc.path.display()
        );
    }
    let mut bytes = Vec::with_capacity(LEN + 1);
    std::fs::File::open(&loc.path)
        .and_then(|f| f.take(LEN as u64 + 1).read_to_end(&mut bytes))
        .with_context(|| format!("cannot read the record key {}", loc.path.display()))?;
    let Ok(bytes) = <[u8; LEN]>::try_from(bytes.as_slice()) else {
        bail!(
            "the record key {} holds {} bytes, expected exactly {LEN}{}",
            loc.path.display(),
            meta.len(),
            " (written by `closegate key init`)"
        );
    };
    Ok(Some(Key(bytes)))
}

/// Create a new key at `path`: 32 bytes from the OS random source, mode 0600, never replacing a
/// file that exists. The bytes go to a temporary file in the same directory first and are then
/// hard-linked into place (which fails when the name exists), so a crash never leaves a short key.
pub fn create(path: &Path) -> Result<()> {
    if path.symlink_metadata().is_ok() {
        bail!(
            "{} already exists; a record key is never overwritten",
            path.display()
        );
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let mut bytes = [0u8; LEN];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("the OS random source failed: {e}"))?;
    let tmp = dir.join(format!(".record.key.{}.tmp", std::process::id()));
    let written = write_new(&tmp, &bytes);
    let linked = written.and_then(|()| {
        std::fs::hard_link(&tmp, path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                anyhow::anyhow!(
                    "{} already exists; a record key is never overwritten",
                    path.display()
                )
            } else {
                anyhow::Error::new(e).context(format!("cannot create {}", path.display()))
            }
        })
    });
    let _ = std::fs::remove_file(&tmp);
    linked?;
    if let Ok(d) = std::fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Write `bytes` to a new file at `path` with mode 0600 and flush it to disk.
fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

/// 64 lowercase hex digits to 32 bytes.
fn unhex(text: &str) -> Option<[u8; LEN]> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let raw = text.as_bytes();
    if raw.len() != LEN * 2 {
        return None;
    }
    let mut out = [0u8; LEN];
    for (i, pair) in raw.chunks_exact(2).enumerate() {
        out[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha256_matches_rfc_4231_case_2() {
        // RFC 4231 test case 2 uses a 4-byte key; the MAC itself takes any key length.
        let mac = HmacSha256::new_from_slice(b"Jefe")
            .unwrap()
            .chain_update(b"what do ya want for nothing?")
            .finalize()
            .into_bytes();
        assert_eq!(
            hex(&mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn verifies_only_its_own_mac() {
        let key = Key::from_bytes([7; LEN]);
        let mac = key.mac_hex(b"line");
        assert_eq!(mac.len(), 64);
        assert!(key.verifies(b"line", &mac));
        assert!(!key.verifies(b"line!", &mac));
        assert!(!key.verifies(b"line", &mac.to_uppercase()));
        assert!(!key.verifies(b"line", &mac[..62]));
        assert!(!key.verifies(b"line", ""));
        assert!(!Key::from_bytes([8; LEN]).verifies(b"line", &mac));
    }
}
