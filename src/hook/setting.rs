//! What the reference-transaction hook reads before it decides (SPEC §9): the ref updates of
//! its input, which of them touch an agent branch, and the setting it decides under (the
//! trusted configuration and the branches guarded as the base). `run` judges with them and
//! `refresh` keeps the installed script's list of guarded refs from them.

use anyhow::{Context, Result};
use git2::Oid;

use crate::config::Config;
use crate::inputs;
use crate::repo::{Repo, path_text};
use crate::verdict::Under;

/// One line of the hook's input: `<old-value> SP <new-value> SP <ref-name>`.
///
/// Git allows ref names that are not UTF-8: `name` keeps the exact bytes (for looking the ref
/// up), `refname` is the text reports show, each byte of an invalid sequence as `\xNN`
/// (`refs/heads/feat/\xff`), which no valid ref name spells (a ref name holds no `\`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    pub old: String,
    pub new: String,
    pub refname: String,
    pub name: Vec<u8>,
}

impl Update {
    /// The branch name after `refs/heads/`, as bytes.
    fn short_bytes(&self) -> Option<&[u8]> {
        self.name.strip_prefix(b"refs/heads/")
    }

    /// Whether this updates an agent branch (`agent_branches`; see [`is_agent`]).
    pub(super) fn is_agent(&self, config: &Config) -> bool {
        self.short_bytes()
            .is_some_and(|short| is_agent(config, short))
    }

    /// The ref's value before this transaction: the old value git gives, else (git gives zeros
    /// when the command named none, as `git branch -D` does) the ref as it is, looked up by its
    /// exact bytes.
    pub(super) fn old_value(&self, repo: &Repo) -> Result<Option<Oid>> {
        match value(&self.old, &self.refname)? {
            Some(id) => Ok(Some(id)),
            None => repo.ref_target_bytes(&self.name),
        }
    }
}

/// Whether the branch `short` (the bytes after `refs/heads/`) is an agent branch. A name that is
/// not UTF-8 is matched both as reports spell it (`agent/\xff`) and as its lossy reading
/// (`agent/\u{fffd}`): either match makes it an agent branch, so such a name never takes an
/// agent branch past the gate; a name neither matches (`feat/\xff`) passes like any other.
pub(super) fn is_agent(config: &Config, short: &[u8]) -> bool {
    match std::str::from_utf8(short) {
        Ok(short) => config.is_agent_branch(short),
        Err(_) => {
            config.is_agent_branch(&path_text(short))
                || config.is_agent_branch(&String::from_utf8_lossy(short))
        }
    }
}

/// What the hook decides with: the trusted configuration, or the fallback when it cannot be read.
pub(super) struct Setting {
    /// The local branches guarded as the base (the diff base and the branch the configuration
    /// is read from; usually one).
    pub(super) bases: Vec<String>,
    /// The base's name for messages and records.
    pub(super) base: Option<String>,
    /// The commit the configuration is read from (SPEC §5), before this transaction.
    pub(super) tip: Option<Oid>,
    source: Source,
}

/// The configuration the hook decides with, and where it came from.
enum Source {
    /// The whole trusted read, kept for judging a commit without reading it again.
    Trusted(inputs::Trusted),
    /// The configuration at the base tip could not be read: the default `agent_branches`, and
    /// the file and the error (SPEC §9).
    Broken { config: Config, error: String },
}

impl Setting {
    pub(super) fn read(repo: &Repo) -> Setting {
        match inputs::trusted_config(repo, None, None) {
            Ok(trusted) => {
                // The configured base counts before it exists: creating it is judged.
                let base = trusted.base.as_ref().map(|(name, _)| name);
                let base = base.or(trusted.config.base.as_ref()).cloned();
                let tip = trusted.tip.as_ref().map(|(name, _)| name);
                let mut bases: Vec<String> = Vec::new();
                for branch in base.iter().chain(tip).flat_map(|n| base_branches(repo, n)) {
                    if !bases.contains(&branch) {
                        bases.push(branch);
                    }
                }
                Setting {
                    base,
                    tip: trusted.tip.as_ref().map(|(_, id)| *id),
                    bases,
                    source: Source::Trusted(trusted),
                }
            }
            Err(err) => {
                let tip = inputs::config_tip(repo, None);
                Setting {
                    bases: tip
                        .iter()
                        .flat_map(|(n, _)| base_branches(repo, n))
                        .collect(),
                    base: tip.as_ref().map(|(name, _)| name.clone()),
                    tip: tip.map(|(_, id)| id),
                    source: Source::Broken {
                        config: Config::default(),
                        error: format!("{err:#}"),
                    },
                }
            }
        }
    }

    pub(super) fn config(&self) -> &Config {
        match &self.source {
            Source::Trusted(trusted) => &trusted.config,
            Source::Broken { config, .. } => config,
        }
    }

    /// Why the configuration at the base tip could not be read, when it could not.
    pub(super) fn broken(&self) -> Option<&String> {
        match &self.source {
            Source::Trusted(_) => None,
            Source::Broken { error, .. } => Some(error),
        }
    }

    /// The trusted read, when it succeeded.
    pub(super) fn trusted(&self) -> Option<&inputs::Trusted> {
        match &self.source {
            Source::Trusted(trusted) => Some(trusted),
            Source::Broken { .. } => None,
        }
    }

    /// What a decision must have been made under to count (SPEC §9, §26.1): the configuration
    /// blob at the base tip before the transaction, and the tip contracts are read from.
    pub(super) fn under(&self) -> Under {
        // No base tip at all (a base being created): nothing to be stale against.
        let trusted = self.trusted();
        let config = trusted
            .filter(|t| t.tip.is_some())
            .map(|t| t.config_blob.clone());
        Under::new(config, trusted.and_then(|t| t.tip.clone()))
    }

    /// The blob id of the trusted configuration, which parsed: the same bytes at a pushed tip
    /// need no second parse.
    pub(super) fn parsed_blob(&self) -> Option<&str> {
        self.trusted()?.config_blob.as_deref()
    }
}

/// The local branches the hook guards as the base for a configured or discovered base name: the
/// branch itself, or the branch part of a remote-tracking base (`origin/main` → `main`). A name
/// that is no branch yet is guarded as the local branch it names once created (`trunk`; for
/// `<remote>/<branch>` of a configured remote, `<branch>` too), so creating the base is judged.
pub(super) fn base_branches(repo: &Repo, name: &str) -> Vec<String> {
    if let Some(short) = name.strip_prefix("refs/heads/") {
        return vec![short.to_string()];
    }
    if repo.branch_tip(name).is_some() {
        return vec![name.to_string()];
    }
    let remote = name.strip_prefix("refs/remotes/");
    let split = remote.unwrap_or(name).split_once('/');
    let branch = split.map(|(_, branch)| branch.to_string());
    if remote.is_some() || repo.resolve_branch(name).is_some() {
        return branch.into_iter().collect();
    }
    if name.starts_with("refs/") || name.is_empty() {
        return Vec::new();
    }
    let is_remote = split.is_some_and(|(r, _)| repo.is_remote(r));
    std::iter::once(name.to_string())
        .chain(branch.filter(|_| is_remote))
        .collect()
}

/// A ref value from the input: `None` for the all-zero id (absent), an error for anything that is
/// not an object id (a symbolic value under `refs/heads/` is refused rather than guessed at).
pub(super) fn value(raw: &str, refname: &str) -> Result<Option<Oid>> {
    let id = Oid::from_str(raw)
        .ok()
        .filter(|_| matches!(raw.len(), 40 | 64) && raw.bytes().all(|b| b.is_ascii_hexdigit()))
        .with_context(|| format!("`{raw}` for {refname} is not an object id"))?;
    Ok((!id.is_zero()).then_some(id))
}
