//! `closegate init`: a starter `.closegate.toml`, or a task contract (SPEC §17). What is written
//! is `setup::starter`; the words `render::init`.

use std::io::Write;

use anyhow::{Result, bail};

use crate::config::{self, Config};
use crate::gates::Session;
use crate::gates::runner::Target;
use crate::render::init as shown;
use crate::setup::starter;
use crate::{guess, inputs};

/// Write a starter .closegate.toml (or, with --contract SLUG, a task contract)
///
/// The configuration names the current branch as the base, lists the default protected surfaces
/// as comments and guesses one check from the project that works in a pristine sandboxed checkout,
/// then runs it on the base tip as `check` would (--no-try skips). Commit it to the base branch:
/// closegate reads it from there. Exit 0 written, 1 refused (the file exists; --force
/// overwrites) or the guessed check failed on the base tip, 2 error.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Overwrite an existing file
    #[arg(long)]
    pub force: bool,
    /// Write `.closegate/contracts/SLUG.toml` with every key of a contract commented
    #[arg(long, value_name = "SLUG")]
    pub contract: Option<String>,
    /// Do not try the guessed check on the base tip
    #[arg(long)]
    pub no_try: bool,
}

pub fn run(args: Args) -> Result<i32> {
    let (repo, root) = inputs::open(None)?;
    let branch = repo.head_branch();
    let head = repo.worktree_head(&root);
    let tracked = |path: &str| head.is_some_and(|h| repo.blob_id(h, path).is_some());
    let project = guess::Project {
        root: &root,
        tracked: &tracked,
        cache: guess::cache_dir(&repo.common_dir()),
        files: guess::layout::walk(&root),
        release: &guess::registry_release,
        tip_time: head.and_then(|h| repo.commit_time(h)),
    };
    let guessed = guess::guess(&project);
    let census = reads_census(&root, guessed.as_ref());
    let (rel, text) = match &args.contract {
        Some(slug) => {
            if let Some(fault) = starter::slug_fault(slug) {
                bail!("--contract {slug}: {fault}");
            }
            (
                format!(".closegate/contracts/{slug}.toml"),
                starter::contract(slug),
            )
        }
        None => (
            config::FILE_NAME.to_string(),
            starter::starter(guessed.as_ref(), census, branch.as_deref()),
        ),
    };
    let path = root.join(&rel);
    if path.symlink_metadata().is_ok() && !args.force {
        eprintln!(
            "closegate: init: {} exists; nothing was written (--force overwrites it)",
            path.display()
        );
        return Ok(1);
    }
    crate::fsutil::write_atomic(&path, text.as_bytes())?;
    let mut out = crate::term::human();
    writeln!(out, "wrote {}", path.display())?;
    let mut code = 0;
    if args.contract.is_none()
        && let Some(guessed) = &guessed
    {
        show_guess(guessed, &project.files, &root, &mut out)?;
        if !args.no_try {
            // The try runs the project's code: its shield comes from a session on the
            // configuration just written, as every command's does.
            let given = inputs::Trusted::given(Config::parse(&text, &rel)?, None);
            let session = Session::on_base(repo, root, given)?;
            code = try_check(&session, head, branch.as_deref(), &mut out)?;
        }
    }
    if args.contract.is_none() {
        shown::offer_signed_approvals(&mut out)?;
    }
    shown::commit_hint(branch.as_deref(), &rel, args.contract.is_some(), &mut out)?;
    Ok(code)
}

/// Run the guessed check on the base tip (HEAD) exactly as `check` would: sandboxed, in a pristine
/// checkout (or the warm workspace). Exit 1 with its last 20 lines when it fails: every agent
/// would otherwise FAIL on it.
fn try_check(
    session: &Session,
    head: Option<git2::Oid>,
    branch: Option<&str>,
    out: &mut impl Write,
) -> Result<i32> {
    let spec = &session.config().checks[..1];
    let Some(head) = head else {
        writeln!(out, "try: skipped, the branch has no commit yet")?;
        return Ok(0);
    };
    let short = &head.to_string()[..12];
    shown::trying(&spec[0].name, short, out)?;
    // The base tip's own run, as `validate --run` makes it; fresh: the configuration is not
    // committed yet, so the try says what the check does now.
    let target = Target::BaseTip {
        tip: head,
        base: branch.unwrap_or_default(),
    };
    let checked = session.runner().run(&target, spec, true)?;
    let built = guess::compiled_python(&|path| session.repo().read_blob(head, path));
    let base = branch.unwrap_or("the base");
    shown::tried(&spec[0], &checked, (short, base), built, out)
}

/// The guessed check, its `prepare`, and each module or workspace package it leaves out (SPEC
/// §27.4).
fn show_guess(
    guessed: &guess::Guess,
    files: &[String],
    root: &std::path::Path,
    out: &mut impl Write,
) -> Result<()> {
    writeln!(out, "check `{}`: {}", guessed.name, guessed.run)?;
    if let Some(prepare) = &guessed.prepare {
        writeln!(out, "prepare (with network, before `run`): {prepare}")?;
    }
    let runs = [Some(guessed.run.as_str()), guessed.prepare.as_deref()];
    let runs: Vec<&str> = runs.into_iter().flatten().collect();
    for line in guess::layout::left_out(files, &|p| project_file(root, p), &runs) {
        writeln!(out, "note: {line}")?;
    }
    Ok(())
}

/// A file of the project being guessed, by its root-relative path.
fn project_file(root: &std::path::Path, rel: &str) -> Option<Vec<u8>> {
    crate::input_file::read(&root.join(rel)).ok()
}

/// Whether the guessed check runs a runner the census reads, following the root
/// `package.json`'s scripts.
fn reads_census(root: &std::path::Path, guessed: Option<&crate::guess::Guess>) -> bool {
    let Some(guessed) = guessed else {
        return false;
    };
    let package_json = std::fs::read(root.join("package.json"))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    crate::runners::reads_census(&guessed.run, package_json.as_ref())
}
