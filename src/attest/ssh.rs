//! Signing and verifying through `ssh-keygen -Y` (SPEC §20): the machinery git uses for SSH
//! commit signing, with git's allowed-signers format, so a key that signs commits signs
//! attestations and `allowed_signers` means what it means to git (namespaces, validity dates,
//! certificate authorities, keys held by ssh-agent or a hardware token). [`verify`] first asks
//! the in-process fast path ([`super::sshsig`]), which accepts only a plain ed25519 signature in
//! the narrow case it understands exactly as ssh-keygen does; everything else, and every
//! rejection, is ssh-keygen's to decide, with its reason.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::repo::Repo;

/// The signing key: `--key FILE`, else git's `user.signingKey` when `gpg.format = ssh`; neither
/// is an error (exit 2) naming both.
pub fn signing_key(repo: &Repo, flag: Option<&Path>) -> Result<PathBuf> {
    if let Some(path) = flag {
        if !path.is_file() {
            bail!("--key {}: no such file", path.display());
        }
        return Ok(path.to_path_buf());
    }
    let ssh = repo
        .config_string("gpg.format")
        .is_some_and(|f| f.eq_ignore_ascii_case("ssh"));
    let key = repo.config_string("user.signingKey").filter(|_| ssh);
    let Some(key) = key else {
        bail!(
            "signing needs an SSH key: pass --key FILE, or set git's user.signingKey with gpg.format = ssh"
        );
    };
    if key.starts_with("key::") || key.starts_with("ssh-") {
        bail!(
            "user.signingKey holds a literal key; closegate needs a key file: pass --key FILE or set user.signingKey to a path"
        );
    }
    let path = match key.strip_prefix("~/") {
        Some(rest) => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(rest),
        None => PathBuf::from(&key),
    };
    if !path.is_file() {
        bail!("user.signingKey {}: no such file", path.display());
    }
    Ok(path)
}

/// Sign `message` with `key` in `namespace`: the armored SSH signature.
pub fn sign(key: &Path, namespace: &str, message: &[u8]) -> Result<String> {
    let mut child = Command::new("ssh-keygen")
        .args(["-q", "-Y", "sign", "-n", namespace, "-f"])
        .arg(key)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run ssh-keygen (OpenSSH's; install openssh-client)")?;
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(message)
        .context("cannot hand the statement to ssh-keygen")?;
    let out = child.wait_with_output().context("ssh-keygen -Y sign")?;
    if !out.status.success() {
        bail!(
            "ssh-keygen -Y sign with {} failed: {}",
            key.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    String::from_utf8(out.stdout).context("ssh-keygen wrote a signature that is not text")
}

/// Verify `signature` over `message` in `namespace` against the allowed-signers file `allowed`:
/// `Ok(principal)` when an allowed signer made it, `Err(reason)` when not. The outer error
/// means ssh-keygen could not be run at all. `hint` (the principal the signer expected to be,
/// stored beside the signature) is tried first, in process and then with ssh-keygen, and saves
/// the `find-principals` step; it is not trusted: both check that this principal's key in
/// `allowed` made the signature.
pub fn verify(
    allowed: &[u8],
    namespace: &str,
    message: &[u8],
    signature: &str,
    hint: Option<&str>,
) -> Result<std::result::Result<String, String>> {
    let plain = |p: &&str| !p.is_empty() && !p.starts_with('-') && !p.contains(char::is_whitespace);
    // The common case, decided without a process; everything else is ssh-keygen's to decide.
    if let Some(hint) = hint.filter(plain)
        && super::sshsig::accepts(allowed, namespace, message, signature, hint)
    {
        return Ok(Ok(hint.to_string()));
    }
    let files = Files::new(allowed, signature)?;
    let (signers, sig) = (&files.signers, &files.sig);
    if let Some(hint) = hint.filter(plain)
        && verify_as(signers, sig, namespace, message, hint)?
    {
        return Ok(Ok(hint.to_string()));
    }
    let principals = find_principals(signers, sig)?;
    if principals.is_empty() {
        return Ok(Err(
            "the signing key is not in allowed_signers (or the signature is malformed)".into(),
        ));
    }
    for principal in &principals {
        if verify_as(signers, sig, namespace, message, principal)? {
            return Ok(Ok(principal.clone()));
        }
    }
    Ok(Err(format!(
        "the signature does not verify in namespace {namespace} for the allowed signer(s) {}",
        principals.join(", ")
    )))
}

/// The principals of `allowed` whose key made `signature` (`ssh-keygen -Y find-principals`):
/// the hint [`verify`] takes, computed once where the signature is made.
pub fn principals_for(allowed: &[u8], signature: &str) -> Result<Vec<String>> {
    let files = Files::new(allowed, signature)?;
    find_principals(&files.signers, &files.sig)
}

/// The allowed signers and the signature as the files ssh-keygen reads, in a private temporary
/// directory removed when this is dropped.
struct Files {
    _dir: tempfile::TempDir,
    signers: std::path::PathBuf,
    sig: std::path::PathBuf,
}

impl Files {
    fn new(allowed: &[u8], signature: &str) -> Result<Files> {
        let dir = tempfile::Builder::new()
            .prefix("closegate-verify.")
            .tempdir()
            .context("cannot create a temporary directory for ssh-keygen")?;
        let signers = dir.path().join("allowed_signers");
        let sig = dir.path().join("statement.sig");
        std::fs::write(&signers, allowed).context("cannot write the allowed signers")?;
        std::fs::write(&sig, signature).context("cannot write the signature")?;
        Ok(Files {
            _dir: dir,
            signers,
            sig,
        })
    }
}

fn find_principals(signers: &Path, sig: &Path) -> Result<Vec<String>> {
    let found = Command::new("ssh-keygen")
        .args(["-Y", "find-principals", "-s"])
        .arg(sig)
        .arg("-f")
        .arg(signers)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .context("cannot run ssh-keygen (OpenSSH's; install openssh-client)")?;
    if !found.status.success() {
        return Ok(Vec::new());
    }
    let text = String::from_utf8_lossy(&found.stdout);
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect())
}

/// Whether `principal`'s key in `signers` made `sig` over `message` in `namespace`.
fn verify_as(
    signers: &Path,
    sig: &Path,
    namespace: &str,
    message: &[u8],
    principal: &str,
) -> Result<bool> {
    let mut child = Command::new("ssh-keygen")
        .args(["-Y", "verify", "-n", namespace, "-I", principal, "-s"])
        .arg(sig)
        .arg("-f")
        .arg(signers)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot run ssh-keygen")?;
    // A verifier that exits early closes the pipe; its exit status decides.
    let _ = child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(message);
    Ok(child.wait().context("ssh-keygen -Y verify")?.success())
}
