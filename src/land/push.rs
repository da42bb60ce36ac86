//! `land --push REMOTE` (SPEC §22): compose on the remote's base and push the composed commit with
//! a lease on the tip read — never a force: the composed commit descends from that tip, and the
//! lease makes git refuse the push when the remote base is anywhere else — then the notes
//! (`refs/notes/closegate`, SPEC §20). The server gate judges the push like any other.

use anyhow::{Result, bail};
use git2::Oid;

use super::base::{self, Moved};
use crate::repo::Repo;
use crate::repo::git_cli::Git;

/// Fetch `REMOTE`'s base into `refs/remotes/<REMOTE>/<base>` and return its tip.
pub fn fetch(repo: &Repo, remote: &str, base: &str) -> Result<Oid> {
    let common = repo.common_dir();
    let tracking = format!("refs/remotes/{remote}/{base}");
    let spec = format!("+refs/heads/{base}:{tracking}");
    let out = Git::repo(&common).run(&["fetch", "-q", remote, &spec])?;
    if !out.status.success() {
        bail!(
            "cannot fetch {base} from {remote}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    match base::current(&common, &tracking)? {
        Some(tip) => Ok(tip),
        None => bail!("{remote} has no branch {base}"),
    }
}

/// Push `new` to `REMOTE`'s base with a lease on `old`.
pub fn push(repo: &Repo, remote: &str, base: &str, old: Oid, new: Oid) -> Result<Moved> {
    // git pushes from the object store: the composed commit leaves the quarantine now that it
    // passed (SPEC §26.4).
    repo.promote(new)?;
    let common = repo.common_dir();
    let lease = format!("--force-with-lease=refs/heads/{base}:{old}");
    let refspec = format!("{new}:refs/heads/{base}");
    let out = Git::repo(&common).run(&["push", "-q", "--atomic", &lease, remote, &refspec])?;
    if out.status.success() {
        let _ = fetch(repo, remote, base);
        return Ok(Moved::Done(None));
    }
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    if fetch(repo, remote, base)? != old {
        return Ok(Moved::Raced);
    }
    Ok(Moved::Refused(stderr))
}

/// Push the notes after a landing; `Some(why)` when that failed (the landing stands).
pub fn push_notes(repo: &Repo, remote: &str) -> Option<String> {
    let common = repo.common_dir();
    repo.ref_target(crate::attest::NOTES_REF)?;
    let out = match Git::repo(&common).run(&["push", "-q", remote, crate::attest::NOTES_REF]) {
        Ok(out) => out,
        Err(e) => return Some(format!("{e:#}")),
    };
    (!out.status.success()).then(|| String::from_utf8_lossy(&out.stderr).trim().to_string())
}
