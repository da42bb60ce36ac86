//! `closegate agent install` and `uninstall` as data (SPEC §18, §26.3): the file each harness
//! reads for this worktree, the time limit from the configuration being installed, and for Codex
//! the trust entries it requires before it runs a hook. Installed means it runs.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::clients::{Home, Root, Trust};
use super::session::Mode;
use super::{Target, codex, codex_app, settings};
use crate::config::Config;
use crate::repo::Repo;

/// Where `install` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Project,
    Local,
    User,
}

impl Scope {
    /// The word `--scope` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::Local => "local",
            Scope::User => "user",
        }
    }

    /// Where the scope writes, as `--help` shows it.
    pub fn help(self) -> &'static str {
        match self {
            Scope::Project => {
                "The project's shared settings (`.claude/settings.json`; Codex: the main checkout's `.codex/hooks.json`, which Codex reads for every worktree)"
            }
            Scope::Local => {
                "The project's uncommitted settings (`.claude/settings.local.json`; Claude Code only)"
            }
            Scope::User => {
                "The user's settings (`~/.claude/settings.json`, `$CODEX_HOME/hooks.json`)"
            }
        }
    }
}

/// The hook's time limit when the configuration names no checks (SPEC §18).
pub const DEFAULT_TIME_LIMIT: u64 = 600;
/// How far above the hook's own time limit the harness's timeout is (SPEC §26.3): the hook answers
/// before the harness gives up on it, so a claim is never let through on the harness's timeout.
pub const HARNESS_MARGIN: u64 = 30;

/// The harness timeout written for a hook whose time limit is `limit`.
pub fn harness_timeout(limit: u64) -> u64 {
    limit + HARNESS_MARGIN
}

/// The hook's time limit for the configuration being installed: the longest chain of the
/// configured checks (timeouts summed, divided among `jobs`, never below the longest) plus 60 s,
/// at least 600 s; the larger of the working copy's `.closegate.toml` (what `init` just wrote,
/// what will be committed) and the base tip's, so neither a stale tip nor an uncommitted edit
/// writes a timeout below what the checks need.
pub fn time_limit(cwd: &Path) -> u64 {
    let Ok(repo) = Repo::discover(cwd) else {
        return DEFAULT_TIME_LIMIT;
    };
    let base = crate::inputs::trusted_config(&repo, None, None)
        .ok()
        .map(|t| t.config);
    let here = repo.workdir().and_then(|root| {
        let path = root.join(crate::config::FILE_NAME);
        let bytes = crate::input_file::read(&path).ok()?;
        Config::parse(&String::from_utf8(bytes).ok()?, &path.display().to_string()).ok()
    });
    [base, here]
        .iter()
        .flatten()
        .map(limit_for)
        .max()
        .unwrap_or(DEFAULT_TIME_LIMIT)
}

fn limit_for(config: &Config) -> u64 {
    let total: u64 = config.checks.iter().map(|c| c.timeout_s).sum();
    let longest = config.checks.iter().map(|c| c.timeout_s).max().unwrap_or(0);
    let chain = (total / config.jobs.max(1) as u64).max(longest);
    (chain + 60).max(DEFAULT_TIME_LIMIT)
}

/// The repository's main checkout (where Codex reads project hooks for every worktree); an error
/// when the repository has none (bare).
pub fn main_checkout(repo: &Repo) -> Result<PathBuf> {
    match repo.main_worktree_path() {
        Some(path) => Ok(path),
        None => bail!(
            "the repository at {} has no main checkout, and Codex reads a worktree's hooks from \
             the main checkout's .codex/hooks.json: use --scope user",
            repo.common_dir().display()
        ),
    }
}

/// The settings file a harness reads at a scope, for the worktree around `cwd` (the client's row
/// says which file, under which folder).
pub fn settings_path(target: Target, scope: Scope, cwd: &Path) -> Result<PathBuf> {
    settings_path_in(target, scope, cwd, Repo::discover(cwd).ok().as_ref())
}

/// [`settings_path`] with the repository around `cwd` already opened (`None`: there is none):
/// the stop hook asks for several files and opens the repository once.
pub fn settings_path_in(
    target: Target,
    scope: Scope,
    cwd: &Path,
    repo: Option<&Repo>,
) -> Result<PathBuf> {
    let files = &target.row().files;
    let worktree = || repo.and_then(Repo::workdir).unwrap_or(cwd.to_path_buf());
    Ok(match scope {
        Scope::Project => match (files.project_root, repo) {
            (Root::Worktree, _) => worktree().join(files.project),
            (Root::MainCheckout, Some(repo)) => main_checkout(repo)?.join(files.project),
            (Root::MainCheckout, None) => cwd.join(files.project),
        },
        Scope::Local => match files.local {
            Some(local) => worktree().join(local),
            None => bail!(
                "--scope local: {} has no local settings file; use project or user",
                target.row().display
            ),
        },
        Scope::User => match files.user_root {
            Home::Home => home()?.join(files.user),
            Home::CodexHome => codex::home()?.join(files.user),
        },
    })
}

/// `$HOME`, or an error saying the user's settings cannot be found.
fn home() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .context("HOME is not set: cannot find the user's settings")
}

/// What `install` or `uninstall` did.
#[derive(Debug)]
pub struct Outcome {
    /// The hooks file written (or left).
    pub file: PathBuf,
    pub changed: bool,
    pub limit: u64,
    /// Codex: the configuration file that holds its trust, and what was done there.
    pub trust: Option<(PathBuf, codex::Done)>,
    /// The folder made in the worktree the install ran in, for a client that reads the main
    /// checkout's hooks only for a worktree that has that folder (Codex's `.codex/`).
    pub made: Option<PathBuf>,
}

/// Install (`mode` given) or uninstall (`None`) closegate's entries for `target` at `scope`, seen
/// from the worktree around `cwd`.
pub fn run(target: Target, scope: Scope, mode: Option<Mode>, cwd: &Path) -> Result<Outcome> {
    // Decided before anything is written: a file standing where the folder goes refuses all.
    let folder = match (mode, scope) {
        (Some(_), Scope::Project) => worktree_folder(target, cwd)?,
        _ => None,
    };
    let limit = time_limit(cwd);
    let path = resolved(settings_path(target, scope, cwd)?)?;
    let existing = read_text(&path)?;
    let name = path.display().to_string();
    let before = existing.clone().unwrap_or_default();
    let written = match (mode, &existing) {
        (Some(mode), text) => {
            let command = target.command_with(mode, limit);
            let text = text.as_deref().unwrap_or("");
            let shape = &target.row().shape;
            settings::install(text, &name, shape, &command, harness_timeout(limit))?
        }
        (None, Some(text)) => settings::uninstall(text, &name, &target.row().shape)?,
        (None, None) => None,
    };
    if let Some(text) = &written {
        crate::fsutil::write_atomic(&path, text.as_bytes())?;
    }
    let trust = match target.row().trust {
        Trust::Codex => {
            let after = written.as_deref().unwrap_or(&before);
            let project = (scope == Scope::Project && mode.is_some())
                .then(|| path.parent().and_then(Path::parent).map(Path::to_path_buf))
                .flatten();
            Some(trust_codex(&path, &before, after, project, cwd)?)
        }
        Trust::None => None,
    };
    let made = match folder {
        Some(dir) => match std::fs::create_dir(&dir) {
            Ok(()) => Some(dir),
            // Made meanwhile (Codex's home can be that very folder, as in a scene whose HOME is
            // the worktree): the folder is there, and this install did not make it.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => None,
            Err(e) => return Err(e).with_context(|| format!("cannot make {}", dir.display())),
        },
        None => None,
    };
    Ok(Outcome {
        file: path,
        changed: written.is_some(),
        limit,
        trust,
        made,
    })
}

/// For a client that reads the main checkout's hooks file only for a worktree that has the
/// file's folder (SPEC §27.3: Codex's `.codex/`), the folder to make in the linked worktree
/// around `cwd`, or `None` (the main checkout, a folder already there). Something else standing
/// at that name is an error naming it.
fn worktree_folder(target: Target, cwd: &Path) -> Result<Option<PathBuf>> {
    let files = &target.row().files;
    if files.project_root != Root::MainCheckout {
        return Ok(None);
    }
    let Ok(repo) = Repo::discover(cwd) else {
        return Ok(None);
    };
    let (Some(root), Ok(main)) = (repo.workdir(), main_checkout(&repo)) else {
        return Ok(None);
    };
    let Some((folder, _)) = files.project.split_once('/') else {
        return Ok(None);
    };
    if root == main {
        return Ok(None);
    }
    let dir = root.join(folder);
    match std::fs::symlink_metadata(&dir) {
        Ok(meta) if meta.is_dir() => Ok(None),
        Ok(_) => bail!(
            "{} is not a folder, and {} loads the project's hooks in this worktree only when it \
             is one: remove it and run the install again",
            dir.display(),
            target.row().display
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Some(dir)),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", dir.display())),
    }
}

/// A settings file that is a symlink (dotfiles) is edited where it points.
fn resolved(path: PathBuf) -> Result<PathBuf> {
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.file_type().is_symlink() => std::fs::canonicalize(&path)
            .with_context(|| format!("{} is a dangling symlink", path.display())),
        _ => Ok(path),
    }
}

/// The text of a settings file; `None` when there is none.
fn read_text(path: &Path) -> Result<Option<String>> {
    match std::fs::symlink_metadata(path) {
        Ok(_) => {
            let bytes = crate::input_file::read(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let text = String::from_utf8(bytes)
                .map_err(|_| anyhow::anyhow!("{} is not UTF-8", path.display()))?;
            Ok(Some(text))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Bring Codex's trust in line with the hooks file at `file`: trust each of our hooks as it now
/// stands (`after`), drop the trust of our hooks as they stood before (`before`) that are gone or
/// changed, and trust `project` when the configuration says nothing about it. The hooks are
/// trusted by Codex itself when a `codex` binary is on the PATH (SPEC §27.3), by closegate's
/// computed hash only when none is.
fn trust_codex(
    file: &Path,
    before: &str,
    after: &str,
    project: Option<PathBuf>,
    cwd: &Path,
) -> Result<(PathBuf, codex::Done)> {
    let config = codex::home()?.join("config.toml");
    let config = resolved(config)?;
    let now = codex::entries(file, after);
    let old = codex::entries(file, before);
    let binary = codex_app::binary();
    let computed = now.iter().map(|e| (e.key.clone(), e.hash.clone()));
    let edit = codex::Edit {
        trust: if binary.is_some() {
            Vec::new()
        } else {
            computed.collect()
        },
        untrust: old
            .iter()
            .filter(|o| !now.iter().any(|n| n.key == o.key && n.hash == o.hash))
            .map(|o| (o.key.clone(), o.hash.clone()))
            .collect(),
        project: project.clone(),
    };
    let text = codex::read_config(&config)?;
    let (edited, mut done) = codex::apply(&text, &config, &edit)?;
    if done.changed {
        crate::fsutil::write_atomic(&config, edited.as_bytes())?;
    }
    if let (Some(bin), false) = (binary, now.is_empty()) {
        let from = project.unwrap_or_else(|| cwd.to_path_buf());
        trust_by_codex(&bin, file, &from, &now, &mut done)?;
    }
    Ok((config, done))
}

/// Trust closegate's hooks `now` in `file` through Codex's app-server, as Codex lists them for
/// a session in `from`, then list again and refuse unless every one is trusted.
fn trust_by_codex(
    bin: &Path,
    file: &Path,
    from: &Path,
    now: &[codex::Entry],
    done: &mut codex::Done,
) -> Result<()> {
    let mut session = codex_app::Session::start(bin)?;
    let listed = session.list(from)?;
    let ours = codex_app::ours(&listed, file);
    if ours.len() != now.len() {
        bail!(
            "{} lists {} of closegate's {} hooks in {} for a session in {}: Codex would not run \
             the others (run `closegate agent doctor --target codex`)",
            session.name,
            ours.len(),
            now.len(),
            file.display(),
            from.display()
        );
    }
    let wanted: Vec<(String, String)> = (ours.iter())
        .filter(|h| h.trust_status != "trusted" && h.trust_status != "managed")
        .map(|h| (h.key.clone(), h.current_hash.clone()))
        .collect();
    if !wanted.is_empty() {
        session.trust(&wanted)?;
        done.changed = true;
    }
    let again = session.list(from)?;
    for hook in codex_app::ours(&again, file) {
        if hook.trust_status != "trusted" && hook.trust_status != "managed" {
            bail!(
                "{} still lists {} as {} after trusting it",
                session.name,
                hook.key,
                hook.trust_status
            );
        }
        if let Some(entry) = now.iter().find(|e| e.key == hook.key)
            && entry.hash != hook.current_hash
        {
            done.formula_differs.push(entry.event);
        }
    }
    done.by_codex = Some(session.name.clone());
    Ok(())
}
