//! `closegate hook`: install, uninstall or run the reference-transaction hook (SPEC §9).

use std::path::PathBuf;

use anyhow::Result;

use crate::hook::install::{self, Which};
use crate::hook::run;
use crate::render;
use crate::repo::Repo;

/// Install, uninstall or run the git hook that guards agent branches
///
/// The reference-transaction hook refuses to delete or merge an agent branch that has not passed
/// the gate.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: HookCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum HookCommand {
    /// Write the reference-transaction hook into the hooks directory git uses (core.hooksPath
    /// respected); a hook closegate did not write is kept only with --force
    Install {
        /// Keep a foreign hook as reference-transaction.closegate-backup and run it first
        #[arg(long)]
        force: bool,
        /// The repository or worktree to install into (default: the current directory)
        #[arg(long, value_name = "DIR")]
        repo: Option<PathBuf>,
        /// Install the server gate instead: a pre-receive hook for the bare repository agents
        /// push to
        #[arg(long)]
        server: bool,
    },
    /// Remove closegate's hook (and put back the hook --force kept); never a foreign one
    Uninstall {
        /// The repository or worktree to uninstall from (default: the current directory)
        #[arg(long, value_name = "DIR")]
        repo: Option<PathBuf>,
        /// Remove the server gate's pre-receive hook instead
        #[arg(long)]
        server: bool,
    },
    /// Run as git's hook: `closegate hook run reference-transaction <state>` or `closegate hook
    /// run pre-receive [<hook file>]`, with the ref updates on standard input (what the
    /// installed hook calls)
    Run {
        /// The hook git runs (reference-transaction, pre-receive)
        hook: String,
        /// reference-transaction: the transaction state (prepared, committed or aborted);
        /// pre-receive: the hook file git ran, whose kept backup then runs first
        state: Option<std::ffi::OsString>,
        /// reference-transaction: the hook file git ran (the installed script passes its own
        /// path; closegate keeps its guarded bases in step with the configuration)
        #[arg(hide = true)]
        file: Option<std::ffi::OsString>,
        /// Further arguments git may pass (ignored)
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        rest: Vec<String>,
    },
}

pub fn run(args: Args) -> Result<i32> {
    match args.command {
        HookCommand::Install {
            force,
            repo,
            server,
        } => install(repo, force, server),
        HookCommand::Uninstall { repo, server } => uninstall(repo, server),
        HookCommand::Run {
            hook, state, file, ..
        } => {
            let mut stdin = std::io::stdin().lock();
            // git relays a hook's standard error to the person who ran the command (or pushed);
            // a write that fails there changes nothing about the answer.
            let mut stderr = std::io::stderr().lock();
            if hook == "pre-receive" {
                let hook_file = state.as_deref().map(std::path::Path::new);
                let answer = crate::hook::server::main(&mut stdin, hook_file);
                let _ = render::hook::push(&answer, &mut stderr);
                return Ok(answer.code());
            }
            let state = state.as_deref().map(|s| s.to_string_lossy());
            let file = file.as_deref().map(std::path::Path::new);
            let answer = run::main(&hook, state.as_deref(), file, &mut stdin);
            let _ = render::hook::transaction(&answer, &mut stderr);
            Ok(answer.code())
        }
    }
}

fn hooks_dir(repo: Option<PathBuf>) -> Result<PathBuf> {
    Repo::discover(&repo_dir(repo)?)?.hooks_dir()
}

fn repo_dir(repo: Option<PathBuf>) -> Result<PathBuf> {
    Ok(match repo {
        Some(dir) => dir,
        None => std::env::current_dir()?,
    })
}

fn install(repo: Option<PathBuf>, force: bool, server: bool) -> Result<i32> {
    let dir = hooks_dir(repo.clone())?;
    let bases = crate::hook::run::guarded_bases(&Repo::discover(&repo_dir(repo)?)?);
    // The script calls this very executable; without one it falls back to PATH.
    let exe = std::env::current_exe().ok();
    let (which, name) = match server {
        true => (Which::Server, "pre-receive"),
        false => (Which::Transaction(&bases), "reference-transaction"),
    };
    let done = install::install_which(&dir, exe.as_deref(), force, which)?;
    Ok(render::hook::installed(
        &done,
        name,
        &mut crate::term::human(),
    ))
}

fn uninstall(repo: Option<PathBuf>, server: bool) -> Result<i32> {
    let dir = hooks_dir(repo)?;
    let (which, name) = match server {
        true => (Which::Server, "pre-receive"),
        false => (Which::Transaction(&[]), "reference-transaction"),
    };
    let done = install::uninstall_which(&dir, which)?;
    Ok(render::hook::uninstalled(
        &done,
        name,
        &mut crate::term::human(),
    ))
}
