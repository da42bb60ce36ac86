//! Raw flags to resolved inputs: open the repository, resolve the base, read the trusted
//! configuration from the base tip (SPEC §5) and the status document (SPEC §4).

use std::path::{Path, PathBuf};
use std::rc::Rc;

use anyhow::{Context, Result, bail};
use git2::Oid;

use crate::catalog::Code;
use crate::config::{self, Config};
use crate::contract::{Lookup, Source};
use crate::finding::Finding;
use crate::gates::Inputs;
use crate::repo::Repo;
use crate::report::{ConfigSource, Provenance};

/// The flags every command that runs the gate shares.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct GateArgs {
    /// Read the status document from FILE (`-` for stdin) instead of `<WORKTREE>/<status_file>`
    #[arg(long, value_name = "FILE", conflicts_with = "rev")]
    pub status: Option<PathBuf>,
    /// Read the status document from `<REV>:<status_file>` (a trailing status commit)
    #[arg(long, value_name = "REV")]
    pub rev: Option<String>,
    /// The base branch: where the configuration is read and what the branch is diffed against
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,
    /// Read the configuration from FILE instead of the base tip's `.closegate.toml`
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The task contract: FILE instead of `.closegate/contracts/<slug>.toml` on the base tip
    #[arg(long, value_name = "FILE")]
    pub contract: Option<PathBuf>,
    /// The agent's final message: its close line is used when the document has none
    #[arg(long, value_name = "FILE")]
    pub message: Option<PathBuf>,
    /// Do not run the configured checks (the verdict is then at best UNVERIFIED)
    #[arg(long)]
    pub no_checks: bool,
    /// Run every check again even when a recorded result has the same key (SPEC §19)
    #[arg(long, conflicts_with = "no_checks")]
    pub rerun: bool,
    /// The agent's worktree cannot exist here (CI): skip the worktree checks
    #[arg(long)]
    pub no_worktree: bool,
    /// Read the eight older state spellings with a warning (archived records)
    #[arg(long)]
    pub legacy: bool,
}

/// The trusted configuration and the base it was resolved with.
#[derive(Debug, Clone)]
pub struct Trusted {
    pub config: Config,
    /// The diff base as named and resolved.
    pub base: Option<(String, Oid)>,
    /// `base-unknown` when no base resolved.
    pub findings: Vec<Finding>,
    /// The tip the configuration was read from (task contracts are read there too).
    pub tip: Option<(String, Oid)>,
    /// The configuration's blob id (`git hash-object` of `--config FILE`); `None` for defaults.
    pub config_blob: Option<String>,
    /// How the configuration and the base were chosen (SPEC §6).
    pub provenance: Provenance,
    /// Where the configuration came from (`main:.closegate.toml`, a file); `None` for defaults.
    pub config_origin: Option<String>,
}

/// Open the repository around `worktree` (default: the current directory).
pub fn open(worktree: Option<&Path>) -> Result<(Repo, PathBuf)> {
    let dir = match worktree {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    if !dir.is_dir() {
        bail!("{} is not a directory", dir.display());
    }
    let repo = Repo::discover(&dir)?;
    let Some(root) = repo.workdir() else {
        bail!("{} is a bare repository; pass a worktree", dir.display());
    };
    Ok((repo, root))
}

/// Resolve everything the gates need from the shared flags.
pub fn resolve(worktree: Option<&Path>, args: &GateArgs) -> Result<Inputs> {
    let (repo, root) = open(worktree)?;
    resolve_in(repo, root, args)
}

/// [`resolve`] with the repository already opened (by [`open`]) at the worktree `root`.
pub fn resolve_in(repo: impl Into<Rc<Repo>>, root: PathBuf, args: &GateArgs) -> Result<Inputs> {
    let repo = repo.into();
    let trusted = trusted_config(&repo, args.base.as_deref(), args.config.as_deref())?;
    resolve_trusted(repo, root, args, trusted)
}

/// [`resolve_in`] with the trusted configuration already read: `trusted_config(&repo,
/// args.base, args.config)` of this very repository (the server gate reads it once per push).
pub fn resolve_trusted(
    repo: impl Into<Rc<Repo>>,
    root: PathBuf,
    args: &GateArgs,
    trusted: Trusted,
) -> Result<Inputs> {
    let repo = repo.into();
    let rev = match &args.rev {
        Some(rev) => Some(
            repo.resolve_rev(rev)
                .with_context(|| format!("--rev {rev} does not name a commit"))?,
        ),
        None => None,
    };
    let status = read_status(&repo, &root, args, rev, &trusted.config.status_file)?;
    let mut trusted = trusted;
    if let Some(inside) = args.status.as_deref().and_then(|p| within(&root, p)) {
        // `--status FILE` inside the worktree is the status document of this run (SPEC §4: it
        // stands for `<WORKTREE>/<status_file>`): findings are located in it, and it is exempt
        // where the status document is (untracked, dirty, the trailing status-only commit).
        trusted.config.status_file = inside;
    }
    let message = match &args.message {
        Some(path) => Some(
            read_text(path)
                .with_context(|| format!("cannot read the message {}", path.display()))?,
        ),
        None => None,
    };
    let trust = crate::attest::Trust::new(&repo, trusted.tip.clone());
    let contract = contract_lookup(args.contract.as_deref(), trusted.tip)?;
    let mut findings = trusted.findings;
    if !args.no_worktree {
        findings.extend(config_drift(&root, trusted.config_blob.as_deref()));
    }
    Ok(Inputs {
        repo,
        worktree: root,
        status,
        message,
        config: trusted.config,
        base: trusted.base,
        findings,
        rev,
        legacy: args.legacy,
        no_checks: args.no_checks,
        rerun: args.rerun,
        no_worktree: args.no_worktree,
        contract,
        config_blob: trusted.config_blob,
        config_origin: trusted.config_origin,
        provenance: trusted.provenance,
        require_attestation: false,
        fail_fast: false,
        progress_label: None,
        trust,
        pushed: Vec::new(),
        keys: Vec::new(),
        admitted_base: None,
    })
}

/// `path` relative to the worktree `root` ('/'-separated), when it lies inside it and is valid
/// UTF-8 (a status file name is text).
fn within(root: &Path, path: &Path) -> Option<String> {
    let full = crate::repo::canonical(&std::env::current_dir().ok()?.join(path));
    let rel = full.strip_prefix(root).ok()?.to_str()?.to_string();
    (!rel.is_empty()).then_some(rel)
}

/// SPEC §5: `config-not-from-worktree` when the checked worktree holds a `.closegate.toml` whose
/// bytes differ from the configuration read (`read`: its blob id, `None` for the built-in
/// defaults). Only a regular file counts; one that cannot be read is named as such, since the
/// warning is about what has no effect, not something to judge.
fn config_drift(root: &Path, read: Option<&str>) -> Option<Finding> {
    let path = root.join(config::FILE_NAME);
    if !std::fs::symlink_metadata(&path).ok()?.is_file() {
        return None;
    }
    let bytes = crate::input_file::read(&path).ok()?;
    let here = Repo::hash_blob(&bytes)?.to_string();
    if read == Some(here.as_str()) {
        return None;
    }
    let used = match read {
        Some(blob) => format!(
            "the configuration read (blob {})",
            &blob[..blob.len().min(7)]
        ),
        None => "the built-in defaults (the base has no configuration)".to_string(),
    };
    let msg = format!(
        "this worktree's {} (blob {}) differs from {used}: edits there have no effect until \
         committed to the base branch",
        config::FILE_NAME,
        &here[..7]
    );
    Some(Finding::new(Code::ConfigNotFromWorktree, msg).at_path(config::FILE_NAME))
}

/// SPEC §12: `--contract FILE` (an operator's choice), else the trusted tip's contract directory.
fn contract_lookup(flag: Option<&Path>, tip: Option<(String, Oid)>) -> Result<Lookup> {
    if let Some(path) = flag {
        let bytes = read_bytes(path)
            .with_context(|| format!("cannot read the contract {}", path.display()))?;
        let origin = path.display().to_string();
        return Ok(Lookup::File(Source { origin, bytes }));
    }
    Ok(tip.map_or(Lookup::Nothing, |(name, id)| Lookup::Tip(name, id)))
}

/// The configuration and its blob id: `--config FILE`, else the base tip's `.closegate.toml`,
/// else the built-in defaults (no blob).
fn read_config(
    repo: &Repo,
    config_flag: Option<&Path>,
    tip: Option<&(String, Oid)>,
    tip_blob: Option<Oid>,
) -> Result<(Config, Option<String>)> {
    Ok(match (config_flag, tip) {
        (Some(path), _) => {
            let bytes = read_bytes(path)
                .with_context(|| format!("cannot read the configuration {}", path.display()))?;
            let origin = path.display().to_string();
            let text = String::from_utf8(bytes.clone()).map_err(|_| {
                anyhow::anyhow!("cannot read the configuration {origin}: not valid UTF-8")
            })?;
            let blob = Repo::hash_blob(&bytes).map(|id| id.to_string());
            (Config::parse(&text, &origin)?, blob)
        }
        (None, Some((name, id))) => match base_config(repo, name, *id)? {
            Some(config) => (config, tip_blob.map(|id| id.to_string())),
            None => (Config::default(), None),
        },
        (None, None) => (Config::default(), None),
    })
}

/// SPEC §5: the configuration comes from the base tip (or `--config`), never from the branch.
pub fn trusted_config(
    repo: &Repo,
    base_flag: Option<&str>,
    config_flag: Option<&Path>,
) -> Result<Trusted> {
    let tip = config_tip(repo, base_flag);
    let tip_blob = tip
        .as_ref()
        .and_then(|(_, id)| repo.blob_id(*id, config::FILE_NAME));
    let (mut config, config_blob) = read_config(repo, config_flag, tip.as_ref(), tip_blob)?;
    let config_origin = match (config_flag, &tip) {
        (Some(path), _) => Some(path.display().to_string()),
        (None, Some((name, _))) if config_blob.is_some() => {
            Some(format!("{name}:{}", config::FILE_NAME))
        }
        _ => None,
    };
    if repo.ignore_case() {
        config.fold_case();
    }
    let base = match (base_flag, &config.base) {
        // The configured base is usually the tip the configuration came from: resolved already.
        (None, Some(name)) => match &tip {
            Some((tip_name, id)) if tip_name == name => Some((name.clone(), *id)),
            _ => repo.resolve_branch(name).map(|(_, id)| (name.clone(), id)),
        },
        _ => tip.clone(),
    };
    if let Some((_, id)) = &base {
        let named = run_paths(repo, *id, &config.checks)?;
        config.protect_always(&named);
    }
    let findings = match &base {
        Some(_) => Vec::new(),
        None => vec![Finding::new(
            Code::BaseUnknown,
            base_unknown_message(base_flag, config.base.as_deref()),
        )],
    };
    let provenance = Provenance {
        config_source: match config_flag {
            Some(_) => ConfigSource::File,
            None => ConfigSource::Base,
        },
        base_configured: base_flag.is_none()
            || base_flag.is_some_and(|flag| same_as_configured(repo, flag, tip_blob)),
    };
    Ok(Trusted {
        config,
        base,
        findings,
        tip,
        config_blob,
        provenance,
        config_origin,
    })
}

/// Whether `--base FLAG` named the configured (or default) base itself — the same branch, not
/// another one at the same commit (SPEC §6: a record made with another `--base` is never
/// trusted) — and so read the same configuration: then its records count.
fn same_as_configured(repo: &Repo, flag: &str, tip_blob: Option<Oid>) -> bool {
    let Ok(default) = trusted_config(repo, None, None) else {
        return false;
    };
    let default_blob = default
        .tip
        .as_ref()
        .and_then(|(_, id)| repo.blob_id(*id, config::FILE_NAME));
    let refname = |name: &str| repo.resolve_branch(name).map(|(full, _)| full);
    let configured = default.base.and_then(|(name, _)| refname(&name));
    configured.is_some() && refname(flag) == configured && default_blob == tip_blob
}

/// The repository paths named as words of the checks' `run` strings that exist in the base tip
/// `id` (SPEC §4.5: `sh scripts/check.sh` puts `scripts/check.sh` on surface `ci`, `pytest tests`
/// everything under `tests/`). `.`, `..` and paths leaving the repository name no path here.
fn run_paths(repo: &Repo, id: Oid, checks: &[config::CheckSpec]) -> Result<Vec<String>> {
    let mut found = Vec::new();
    for check in checks {
        for word in run_words(&check.run) {
            if found.contains(&word) {
                continue;
            }
            if repo.try_tree_entry(id, &word)?.is_some() {
                found.push(word);
            }
        }
    }
    Ok(found)
}

/// The words of a shell command that could name a repository path: split at blanks and shell
/// operators, quotes dropped, `./` stripped, and for `--flag=value` the value as well.
fn run_words(run: &str) -> Vec<String> {
    let is_break = |c: char| c.is_whitespace() || ";&|()<>`".contains(c);
    let mut words = Vec::new();
    for raw in run.split(is_break) {
        let word: String = raw.chars().filter(|c| !"'\"".contains(*c)).collect();
        let value = word.rsplit_once('=').map(|(_, v)| v.to_string());
        for candidate in std::iter::once(word).chain(value) {
            let mut path = candidate.as_str();
            while let Some(rest) = path.strip_prefix("./") {
                path = rest;
            }
            let path = path.trim_end_matches('/');
            let inside = !path.is_empty()
                && !path.starts_with('/')
                && !path.starts_with('-')
                && !path
                    .split('/')
                    .any(|c| c.is_empty() || c == "." || c == "..");
            if inside && !words.iter().any(|w| w == path) {
                words.push(path.to_string());
            }
        }
    }
    words
}

/// The configuration committed at `id` (the base tip called `name`): `None` when the file is
/// absent; an error naming the file when it cannot be read or does not parse.
pub fn base_config(repo: &Repo, name: &str, id: Oid) -> Result<Option<Config>> {
    let origin = format!("{name}:{}", config::FILE_NAME);
    let Some(bytes) = repo
        .read_config_file(id, config::FILE_NAME)
        .with_context(|| format!("cannot read {origin}"))?
    else {
        return Ok(None);
    };
    let text =
        String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("{origin}: not valid UTF-8"))?;
    Config::parse(&text, &origin).map(Some)
}

/// The tip the configuration is read from (SPEC §5): `--base`, else the first branch that exists
/// of `main`, `master` and origin/HEAD's target. Every name is resolved as a branch, so a tag
/// `main` or an `origin/HEAD` aimed outside `refs/remotes/origin/` never chooses it.
pub fn config_tip(repo: &Repo, base_flag: Option<&str>) -> Option<(String, Oid)> {
    if let Some(name) = base_flag {
        return repo
            .resolve_branch(name)
            .map(|(_, id)| (name.to_string(), id));
    }
    let local = ["main", "master"]
        .into_iter()
        .find_map(|name| repo.branch_tip(name).map(|id| (name.to_string(), id)));
    local.or_else(|| {
        let target = repo.origin_head_target()?;
        let (_, id) = repo.resolve_branch(&target)?;
        let short = target.strip_prefix("refs/remotes/").unwrap_or(&target);
        Some((short.to_string(), id))
    })
}

fn base_unknown_message(base_flag: Option<&str>, configured: Option<&str>) -> String {
    match (base_flag, configured) {
        (Some(name), _) => format!(
            "--base {name} is not a branch (refs/heads/ or refs/remotes/); the protected gate did not run"
        ),
        (None, Some(name)) => format!(
            "the configured base `{name}` is not a branch (refs/heads/ or refs/remotes/); the protected gate did not run"
        ),
        (None, None) => {
            "no base branch: none of main, master, origin/HEAD exists; pass --base".into()
        }
    }
}

fn read_status(
    repo: &Repo,
    root: &Path,
    args: &GateArgs,
    rev: Option<Oid>,
    status_file: &str,
) -> Result<Vec<u8>> {
    if let Some(path) = &args.status {
        return read_bytes(path)
            .with_context(|| format!("cannot read the status document {}", path.display()));
    }
    if let Some(rev) = rev {
        let name = args.rev.as_deref().unwrap_or_default();
        return repo
            .read_blob(rev, status_file)
            .with_context(|| format!("{name}:{status_file} does not exist"));
    }
    let path = root.join(status_file);
    if let Err(e) = std::fs::symlink_metadata(&path)
        && e.kind() == std::io::ErrorKind::NotFound
    {
        return Err(anyhow::Error::new(StatusAbsent(path)));
    }
    read_bytes(&path).with_context(|| format!("cannot read the status document {}", path.display()))
}

/// The worktree has no status document at all: the agent wrote none (for `guard`, an overclaim
/// to record rather than an error).
#[derive(Debug)]
pub struct StatusAbsent(pub PathBuf);

impl std::fmt::Display for StatusAbsent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot read the status document {}: no such file",
            self.0.display()
        )
    }
}

impl std::error::Error for StatusAbsent {}

/// Read an input file's bytes; `-` is standard input. Regular files only, at most 16 MiB
/// (SPEC §11): see [`crate::input_file`].
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    crate::input_file::read(path)
}

/// Read a file as UTF-8 text; `-` is standard input.
pub fn read_text(path: &Path) -> Result<String> {
    String::from_utf8(read_bytes(path)?).map_err(|_| anyhow::anyhow!("not valid UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::run_words;

    #[test]
    fn run_words_are_the_paths_a_shell_command_could_name() {
        let words =
            run_words("sh ./scripts/check.sh && pytest 'tests' --rootdir=src/ ; cat<in.txt|x");
        for word in [
            "sh",
            "scripts/check.sh",
            "pytest",
            "tests",
            "src",
            "in.txt",
            "x",
        ] {
            assert!(words.contains(&word.to_string()), "{word} in {words:?}");
        }
        assert!(
            !words.iter().any(|w| w.starts_with('-') || w.contains('\'')),
            "{words:?}"
        );
        for run in ["pytest .", "cat ../x /etc/passwd a//b", "./", "x/../y"] {
            let words = run_words(run);
            assert!(
                words
                    .iter()
                    .all(|w| !w.is_empty() && w != "." && !w.contains("..") && !w.starts_with('/')),
                "{run}: {words:?}"
            );
        }
    }
}
