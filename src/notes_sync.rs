//! `closegate notes push|fetch [REMOTE]` (SPEC §20): exchange `refs/notes/closegate` with a
//! remote, merging concurrent notes with git's `cat_sort_uniq` rule (every attestation and signed
//! approval is one line of a note, so a merge keeps every one) and retrying a rejected push until
//! it lands, so CI jobs attesting at once lose no attestation.
//!
//! The transport is the `git` command through the one git runner (`repo::git_cli`: the user's
//! remotes, credentials and protocols, no hook or program the repository's configuration names);
//! the merge is done here with libgit2 (`Repo::merge_notes`).

use std::time::Duration;

use anyhow::{Result, bail};
use git2::Oid;

use crate::attest::NOTES_REF;
use crate::repo::Repo;
use crate::repo::git_cli::Git;

/// How many times a rejected push is fetched, merged and pushed again.
pub const ATTEMPTS: u32 = 20;

/// What a push or fetch did.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The local notes (after merging the remote's) are on the remote; `attempts` pushes.
    Pushed { attempts: u32 },
    /// Fetched and merged into the local notes (`None`: the remote has none).
    Fetched(Option<Oid>),
    /// Every attempt was rejected: others kept pushing in between.
    Rejected { attempts: u32 },
}

/// Fetch the remote's notes and merge them into the local ref.
pub fn fetch(repo: &Repo, remote: &str) -> Result<Outcome> {
    let Some(theirs) = fetch_remote(repo, remote)? else {
        return Ok(Outcome::Fetched(None));
    };
    Ok(Outcome::Fetched(Some(merge_into_local(repo, theirs)?)))
}

/// Fetch, merge, push; a rejected push (someone pushed meanwhile) is retried with backoff.
pub fn push(repo: &Repo, remote: &str) -> Result<Outcome> {
    for attempt in 1..=ATTEMPTS {
        if let Some(theirs) = fetch_remote(repo, remote)? {
            merge_into_local(repo, theirs)?;
        }
        if repo.ref_target(NOTES_REF).is_none() {
            bail!("there are no notes to push ({NOTES_REF} does not exist)");
        }
        let refspec = format!("{NOTES_REF}:{NOTES_REF}");
        let out = Git::repo(&repo.common_dir()).run(&["push", "--quiet", remote, &refspec])?;
        if out.status.success() {
            return Ok(Outcome::Pushed { attempts: attempt });
        }
        let err = String::from_utf8_lossy(&out.stderr);
        if !rejected(&err) {
            bail!("`git push {remote} {refspec}` failed: {}", err.trim());
        }
        std::thread::sleep(backoff(attempt));
    }
    Ok(Outcome::Rejected { attempts: ATTEMPTS })
}

/// Whether git refused the push because the remote moved (not an error of transport or access).
fn rejected(stderr: &str) -> bool {
    [
        "rejected",
        "fetch first",
        "non-fast-forward",
        "cannot lock ref",
        "failed to update ref",
    ]
    .iter()
    .any(|w| stderr.contains(w))
}

/// 20 ms to about a second, growing with the attempt, jittered so racing jobs spread out.
fn backoff(attempt: u32) -> Duration {
    let mut byte = [0u8; 2];
    let _ = getrandom::fill(&mut byte);
    let jitter = u64::from(u16::from_le_bytes(byte)) % 100;
    Duration::from_millis(20 * u64::from(attempt.min(10)) + jitter * u64::from(attempt.min(5)))
}

/// The remote's notes commit, fetched into a scratch ref of this process; `None` when the remote
/// has no notes.
fn fetch_remote(repo: &Repo, remote: &str) -> Result<Option<Oid>> {
    let scratch = format!("refs/closegate/notes-fetch/{}", std::process::id());
    let refspec = format!("+{NOTES_REF}:{scratch}");
    let out = Git::repo(&repo.common_dir()).run(&[
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
        remote,
        &refspec,
    ])?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("couldn't find remote ref") {
            return Ok(None);
        }
        bail!("`git fetch {remote} {refspec}` failed: {}", err.trim());
    }
    let theirs = repo.ref_target(&scratch);
    repo.drop_ref(&scratch);
    Ok(theirs)
}

/// Merge `theirs` into the local notes ref, compare-and-swap (another local writer retries it).
fn merge_into_local(repo: &Repo, theirs: Oid) -> Result<Oid> {
    for _ in 0..ATTEMPTS {
        let mine = repo.ref_target(NOTES_REF);
        let merged = match mine {
            Some(mine) => repo.merge_notes(mine, theirs)?,
            None => theirs,
        };
        if Some(merged) == mine || repo.set_ref_if(NOTES_REF, mine, merged, "closegate notes")? {
            return Ok(merged);
        }
    }
    bail!("{NOTES_REF} kept moving under this merge; run it again")
}
