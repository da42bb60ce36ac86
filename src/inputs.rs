//! What a gate run is asked ([`GateOptions`]) and the pieces it is resolved from: open the
//! repository, resolve the base, read the trusted configuration from the base tip (SPEC §5) and
//! the status document (SPEC §4). `gates::Session` puts them together, once.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use git2::Oid;

use crate::catalog::Code;
use crate::config::{self, Config};
use crate::contract::{Lookup, Source};
use crate::finding::Finding;
use crate::repo::Repo;
use crate::report::{ConfigSource, Provenance};

/// What a command asks of one gate run: plain values (no clap here; `cmd` maps its flags onto
/// them), resolved once into a [`crate::gates::Session`] that nobody patches afterwards.
#[derive(Debug, Clone, Default)]
pub struct GateOptions {
    /// `--status FILE` (`-` for stdin) instead of `<WORKTREE>/<status_file>`.
    pub status: Option<PathBuf>,
    /// `--rev REV`: the status document is read from `<REV>:<status_file>`.
    pub rev: Option<String>,
    /// `--base REF`: where the configuration is read and what the branch is diffed against.
    pub base: Option<String>,
    /// `--config FILE` instead of the base tip's `.closegate.toml`.
    pub config: Option<PathBuf>,
    /// `--contract FILE` instead of `.closegate/contracts/<slug>.toml` on the base tip.
    pub contract: Option<PathBuf>,
    /// `--message FILE`: the agent's final message, its close line used when the document has none.
    pub message: Option<PathBuf>,
    /// Do not run the configured checks (the verdict is then at best UNVERIFIED).
    pub no_checks: bool,
    /// Run every check again even when a recorded result has the same key (SPEC §19).
    pub rerun: bool,
    /// The agent's worktree cannot exist here (CI): skip the worktree checks.
    pub no_worktree: bool,
    /// Read the eight older state spellings with a warning.
    pub legacy: bool,
    /// `check --require-attestation`: a signed attestation stands for the checks (SPEC §20).
    pub require_attestation: bool,
    /// `check --fail-fast`: stop at the first failing check; the rest are reported as not run.
    pub fail_fast: bool,
    /// Name the worktree's branch before each check's name in the terminal's progress line
    /// (`board --check`: two agents' checks run at once).
    pub label_branch: bool,
    /// What this command signs, and with which key: the key is hidden from every check the
    /// session runs (SPEC §4.6).
    pub signing: Option<Signing>,
    /// Teardown (SPEC §7 step 1): the worktree whose tip is admitted on a passing record under
    /// this configuration, so that record's checks stand and nothing runs again.
    pub admit: Option<PathBuf>,
    /// The server gate (SPEC §20): branch tips a push brings, standing for refs not yet moved.
    pub pushed: Vec<(String, Oid)>,
    /// The server gate: the notes commits attestations and approvals are read from (default:
    /// this repository's `refs/notes/closegate`).
    pub notes: Option<Vec<Oid>>,
}

/// A signature the command makes once the gate has run (SPEC §20).
#[derive(Debug, Clone)]
pub struct Signing {
    /// `--key FILE`; else git's `user.signingKey` (with `gpg.format = ssh`).
    pub key: Option<PathBuf>,
    pub signs: Signs,
}

/// What is signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signs {
    /// `check --attest`: the checks' results. A recorded result stands for a run only when no
    /// one else could have written it, so without a record key every check runs again.
    Attestation,
    /// `approve --sign`: the approval.
    Approval,
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

impl Trusted {
    /// A configuration the command holds itself rather than reads as the gate does: the starter
    /// `init` writes, the file `validate` judges. No base; its records never count (source `file`).
    pub fn given(config: Config, config_blob: Option<String>) -> Trusted {
        Trusted {
            config,
            base: None,
            findings: Vec::new(),
            tip: None,
            config_blob,
            provenance: Provenance {
                config_source: ConfigSource::File,
                base_configured: false,
            },
            config_origin: None,
        }
    }
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

/// `--rev REV` resolved to a commit (an error naming it when it names none).
pub(crate) fn rev_flag(repo: &Repo, args: &GateOptions) -> Result<Option<Oid>> {
    let Some(rev) = &args.rev else {
        return Ok(None);
    };
    let id = repo
        .resolve_rev(rev)
        .with_context(|| format!("--rev {rev} does not name a commit"))?;
    Ok(Some(id))
}

/// `--message FILE`, read (an error naming it when it cannot be).
pub(crate) fn message_flag(args: &GateOptions) -> Result<Option<String>> {
    let Some(path) = &args.message else {
        return Ok(None);
    };
    let text =
        read_text(path).with_context(|| format!("cannot read the message {}", path.display()))?;
    Ok(Some(text))
}

/// `path` relative to the worktree `root` ('/'-separated), when it lies inside it and is valid
/// UTF-8 (a status file name is text).
pub(crate) fn within(root: &Path, path: &Path) -> Option<String> {
    let full = crate::repo::canonical(&std::env::current_dir().ok()?.join(path));
    let rel = full.strip_prefix(root).ok()?.to_str()?.to_string();
    (!rel.is_empty()).then_some(rel)
}

/// The configuration's blob id at the merge base of the worktree's HEAD and the base: `Some(None)`
/// when the merge base has no configuration, `None` when there is no merge base to compare with.
pub(crate) fn fork_config(repo: &Repo, root: &Path, base: Option<Oid>) -> Option<Option<String>> {
    let head = repo.worktree_head(root)?;
    let fork = repo.merge_base(base?, head)?;
    Some(
        repo.blob_id(fork, config::FILE_NAME)
            .map(|id| id.to_string()),
    )
}

/// SPEC §5, §17: `config-not-from-worktree` when the checked worktree holds a `.closegate.toml`
/// that was edited there: its bytes differ from the version at the worktree's merge base with the
/// base (`at_fork`; a base whose configuration moved on since the worktree was made is no edit),
/// and from the configuration read (`read`: its blob id, `None` for the built-in defaults). With
/// no merge base, any difference from the configuration read counts. Only a regular file counts.
pub(crate) fn config_drift(
    root: &Path,
    read: Option<&str>,
    at_fork: Option<Option<String>>,
) -> Option<Finding> {
    let path = root.join(config::FILE_NAME);
    if !std::fs::symlink_metadata(&path).ok()?.is_file() {
        return None;
    }
    let bytes = crate::input_file::read(&path).ok()?;
    let here = Repo::hash_blob(&bytes)?.to_string();
    if read == Some(here.as_str()) {
        return None;
    }
    if let Some(fork) = at_fork
        && fork.as_deref() == Some(here.as_str())
    {
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
pub(crate) fn contract_lookup(flag: Option<&Path>, tip: Option<(String, Oid)>) -> Result<Lookup> {
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
    let configured = base_flag.is_none()
        || base_flag.is_some_and(|flag| same_as_configured(repo, flag, tip.clone()));
    trusted_from(repo, base_flag, config_flag, tip, configured)
}

/// The trusted configuration as a command that moves the base `name` reads it once the base's
/// tip is `onto` (SPEC §26.2: `land` reads it after taking the lock, from the tip it composes on,
/// the remote's with `--push`): when the configuration is read from that base (the usual case),
/// from `onto`; otherwise from where [`trusted_config`] reads it, read now.
pub fn trusted_config_on(
    repo: &Repo,
    base_flag: Option<&str>,
    name: &str,
    onto: Oid,
) -> Result<Trusted> {
    let now = trusted_config(repo, base_flag, None)?;
    let from_base = now.tip.as_ref().is_none_or(|(tip, _)| tip == name);
    if !from_base {
        return Ok(now);
    }
    let configured = now.provenance.base_configured;
    trusted_from(
        repo,
        base_flag,
        None,
        Some((name.to_string(), onto)),
        configured,
    )
}

/// [`trusted_config`] from the tip `tip`, with whether the base is the configured one.
fn trusted_from(
    repo: &Repo,
    base_flag: Option<&str>,
    config_flag: Option<&Path>,
    tip: Option<(String, Oid)>,
    base_configured: bool,
) -> Result<Trusted> {
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
        protect_run_words(repo, *id, &mut config)?;
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
        base_configured,
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
fn same_as_configured(repo: &Repo, flag: &str, tip: Option<(String, Oid)>) -> bool {
    let tip_blob = tip
        .as_ref()
        .and_then(|(_, id)| repo.blob_id(*id, config::FILE_NAME));
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

/// The repository paths named as words of the checks' `run` (and `prepare`) strings that exist
/// in the base tip `id` (SPEC §4.5: `sh scripts/check.sh` puts `scripts/check.sh` on surface
/// `ci`, `pytest tests` everything under `tests/`). `.`, `..` and paths leaving the repository
/// name no path here. Each comes with the check whose command names it first, so a finding can
/// say why.
fn run_paths(repo: &Repo, id: Oid, checks: &[config::CheckSpec]) -> Result<Vec<(String, String)>> {
    let mut found: Vec<(String, String)> = Vec::new();
    for check in checks {
        let words = [Some(&check.run), check.prepare.as_ref()]
            .into_iter()
            .flatten();
        for word in words.flat_map(|command| crate::runners::run_words(command)) {
            if found.iter().any(|(w, _)| *w == word) {
                continue;
            }
            if repo.try_tree_entry(id, &word)?.is_some() {
                found.push((word, check.name.clone()));
            }
        }
    }
    Ok(found)
}

/// What the checks' `run` strings name, on the base tip `id`: the paths they run on `ci`, and
/// what tape, ava or nyc is given to run on `tests`, not `ci` (SPEC §4.5, §26.4).
fn protect_run_words(repo: &Repo, id: Oid, config: &mut Config) -> Result<()> {
    let tests = runner_test_globs(repo, id, &config.checks)?;
    let mut named = run_paths(repo, id, &config.checks)?;
    named.retain(|(path, _)| !tests.contains(path));
    config.protect_always(&named);
    config.add_test_globs(&tests);
    Ok(())
}

/// The test globs the checks hand tape, ava or nyc (SPEC §26.4), in their `run` strings and in
/// the npm scripts they run from the base tip `id`'s root `package.json`.
fn runner_test_globs(repo: &Repo, id: Oid, checks: &[config::CheckSpec]) -> Result<Vec<String>> {
    let invoked = crate::runners::Invoked::of(checks.iter().map(|c| c.run.as_str()));
    if invoked.js()
        && let Some(bytes) = repo.read_file(id, "package.json")?
        && let Ok(json) = serde_json::from_slice(&bytes)
    {
        return Ok(invoked.with_scripts(&json).test_globs);
    }
    Ok(invoked.test_globs)
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

/// The status document's bytes: `--status FILE`, else `<REV>:<status_file>`, else the file in
/// the worktree ([`StatusAbsent`] when nothing is there).
pub(crate) fn read_status(
    repo: &Repo,
    root: &Path,
    args: &GateOptions,
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
