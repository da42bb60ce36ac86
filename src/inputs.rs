//! Raw flags to resolved inputs: open the repository, resolve the base, read the trusted
//! configuration from the base tip (SPEC §5) and the status document (SPEC §4).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use git2::Oid;

use crate::config::{self, Config};
use crate::contract::{Lookup, Source};
use crate::finding::Finding;
use crate::gates::Inputs;
use crate::repo::Repo;

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
    /// The agent's worktree cannot exist here (CI): skip the worktree checks
    #[arg(long)]
    pub no_worktree: bool,
    /// Read the eight older state spellings with a warning (archived records)
    #[arg(long)]
    pub legacy: bool,
}

/// The trusted configuration and the base it was resolved with.
pub struct Trusted {
    pub config: Config,
    /// The diff base as named and resolved.
    pub base: Option<(String, Oid)>,
    /// `base-unknown` when no base resolved.
    pub findings: Vec<Finding>,
    /// The tip the configuration was read from (task contracts are read there too).
    pub tip: Option<(String, Oid)>,
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
pub fn resolve_in(repo: Repo, root: PathBuf, args: &GateArgs) -> Result<Inputs> {
    let trusted = trusted_config(&repo, args.base.as_deref(), args.config.as_deref())?;
    let rev = match &args.rev {
        Some(rev) => Some(
            repo.resolve_rev(rev)
                .with_context(|| format!("--rev {rev} does not name a commit"))?,
        ),
        None => None,
    };
    let status = read_status(&repo, &root, args, rev, &trusted.config.status_file)?;
    let message = match &args.message {
        Some(path) => Some(
            read_text(path)
                .with_context(|| format!("cannot read the message {}", path.display()))?,
        ),
        None => None,
    };
    let contract = contract_lookup(args.contract.as_deref(), trusted.tip)?;
    Ok(Inputs {
        repo,
        worktree: root,
        status,
        message,
        config: trusted.config,
        base: trusted.base,
        findings: trusted.findings,
        rev,
        legacy: args.legacy,
        no_checks: args.no_checks,
        no_worktree: args.no_worktree,
        contract,
    })
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

/// SPEC §5: the configuration comes from the base tip (or `--config`), never from the branch.
pub fn trusted_config(
    repo: &Repo,
    base_flag: Option<&str>,
    config_flag: Option<&Path>,
) -> Result<Trusted> {
    let tip = config_tip(repo, base_flag);
    let config = match (config_flag, &tip) {
        (Some(path), _) => {
            let text = read_text(path)
                .with_context(|| format!("cannot read the configuration {}", path.display()))?;
            Config::parse(&text, &path.display().to_string())?
        }
        (None, Some((name, id))) => match repo.read_blob(*id, config::FILE_NAME) {
            Some(bytes) => {
                let origin = format!("{name}:{}", config::FILE_NAME);
                let text = String::from_utf8(bytes)
                    .map_err(|_| anyhow::anyhow!("{origin}: not valid UTF-8"))?;
                Config::parse(&text, &origin)?
            }
            None => Config::default(),
        },
        (None, None) => Config::default(),
    };
    let base = match (base_flag, &config.base) {
        // The configured base is usually the tip the configuration came from: resolved already.
        (None, Some(name)) => match &tip {
            Some((tip_name, id)) if tip_name == name => Some((name.clone(), *id)),
            _ => repo.resolve_rev(name).map(|id| (name.clone(), id)),
        },
        _ => tip.clone(),
    };
    let findings = match &base {
        Some(_) => Vec::new(),
        None => vec![Finding::new(
            "base-unknown",
            base_unknown_message(base_flag, config.base.as_deref()),
        )],
    };
    Ok(Trusted {
        config,
        base,
        findings,
        tip,
    })
}

/// The tip the configuration is read from: `--base`, else origin/HEAD's target, `main`, `master`.
fn config_tip(repo: &Repo, base_flag: Option<&str>) -> Option<(String, Oid)> {
    if let Some(name) = base_flag {
        return repo.resolve_rev(name).map(|id| (name.to_string(), id));
    }
    let candidates = repo
        .origin_head_branch()
        .into_iter()
        .chain(["main".to_string(), "master".to_string()]);
    candidates
        .into_iter()
        .find_map(|name| repo.resolve_rev(&name).map(|id| (name, id)))
}

fn base_unknown_message(base_flag: Option<&str>, configured: Option<&str>) -> String {
    match (base_flag, configured) {
        (Some(name), _) => {
            format!("--base {name} does not resolve to a commit; the protected gate did not run")
        }
        (None, Some(name)) => {
            format!("the configured base `{name}` does not resolve; the protected gate did not run")
        }
        (None, None) => {
            "no base branch: none of origin/HEAD, main, master exists; pass --base".into()
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
    read_bytes(&path).with_context(|| format!("cannot read the status document {}", path.display()))
}

/// Read an input file's bytes; `-` is standard input. Regular files only, at most 16 MiB
/// (SPEC §11): see [`crate::input_file`].
pub fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    crate::input_file::read(path)
}

/// Read a file as UTF-8 text; `-` is standard input.
pub fn read_text(path: &Path) -> Result<String> {
    String::from_utf8(read_bytes(path)?).map_err(|_| anyhow::anyhow!("not valid UTF-8"))
}
