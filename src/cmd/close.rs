//! `closegate close`: write the worktree's status document for the agent, from git (SPEC §17).
//!
//! `close` decides nothing: it writes what `check` will verify — the H1, `state`, `last commit`
//! exactly as the close gate compares it, `updated`, the artifacts and, for a returned state, the
//! CLOSE-OK line — keeping the agent's prose keys. The result is linted before anything is
//! written and is never written with a `doc-*` refusal. What it reads and the lint rules are
//! `claim::close`; the words `render::close`.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use git2::Oid;

use crate::claim::close;
use crate::doc::State;
use crate::doc::compose::{Draft, compose};
use crate::inputs;
use crate::render::close::{self as shown, Closed};
use crate::repo::Repo;

/// Write the status document (and, for a returned state, the CLOSE-OK line) from git
///
/// Keys already in the document and not named on the command line (abstract, done,
/// next / blocked-on, note, evidence, artifacts / return) are kept as written. Exit 0 written
/// (or printed with --dry-run), 1 refused (the document would not lint, or tracked files have
/// uncommitted changes), 2 error.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent's worktree (default: the current directory)
    pub worktree: Option<PathBuf>,
    /// The slug of the H1 (default: the existing document's, else the branch after its last `/`)
    #[arg(long)]
    pub slug: Option<String>,
    /// The state word: in-progress, blocked, stop-2-ready, close-ok, closed-without-merge
    #[arg(long, default_value = "close-ok")]
    pub state: String,
    /// An artifact path (repeatable); replaces the document's artifacts
    #[arg(long = "artifact", value_name = "PATH")]
    pub artifacts: Vec<String>,
    /// The abstract (at most five lines); replaces the document's
    #[arg(long = "abstract", value_name = "TEXT")]
    pub abstract_text: Option<String>,
    /// One `done` claim (repeatable); replaces the document's
    #[arg(long, value_name = "TEXT")]
    pub done: Vec<String>,
    /// The `next / blocked-on` text (what a `blocked` state waits on); replaces the document's
    #[arg(long, value_name = "TEXT")]
    pub blocked_on: Option<String>,
    /// Commit the document alone as the single trailing status-only commit
    #[arg(long)]
    pub commit: bool,
    /// Print the document instead of writing it
    #[arg(long)]
    pub dry_run: bool,
    /// Print one JSON object (what was written, or why not) instead of the human lines
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args, color: bool) -> Result<i32> {
    if !args.json {
        return write(&args, color, &mut Closed::default());
    }
    // The human lines are not printed; what they say is in the object.
    crate::term::set_quiet(true);
    let mut closed = Closed {
        schema: crate::report::SCHEMA,
        dry_run: args.dry_run,
        ..Closed::default()
    };
    let code = write(&args, color, &mut closed)?;
    if code != 0 && closed.refused.is_none() {
        closed.refused = Some("the document was not written".into());
    }
    crate::render::write_json(&closed, &mut crate::term::stdout())?;
    Ok(code)
}

fn write(args: &Args, color: bool, closed: &mut Closed) -> Result<i32> {
    let Some(state) = State::parse(&args.state) else {
        closed.refused = Some(format!("--state {}: not a writable state word", args.state));
        let Some(report) = close::state_refusal(&args.state) else {
            bail!("--state {:?}: not a state word", args.state);
        };
        shown::state_refused(&args.state, &report, color)?;
        return Ok(1);
    };
    let (repo, root) = inputs::open(args.worktree.as_deref())?;
    let trusted = inputs::trusted_config(&repo, None, None)?;
    let status_file = trusted.config.status_file.clone();
    let (head, branch) = close::head_and_branch(&repo, &root, state)?;
    let dirty = (state.is_returned())
        .then(|| repo.status_of(&root, &status_file))
        .transpose()?
        .map(|status| status.dirty)
        .unwrap_or_default();
    if !dirty.is_empty() {
        shown::uncommitted(&dirty)?;
        closed.refused = Some("tracked files have uncommitted changes: commit first".into());
        return Ok(1);
    }
    let (work, restack) = close::work_commit(&repo, head, &status_file);
    let path = root.join(&status_file);
    let existing = close::existing_text(&repo, &trusted, head, &path, &status_file)?;
    let slug = close::slug(args.slug.as_deref(), existing.as_deref(), branch.as_deref());
    let draft = draft(args, &slug, state, work, &repo, &root, branch.as_deref());
    let text = compose(&draft, existing.as_deref());
    closed.names(&path, &slug, state, work);
    if let Some(code) = not_written(args, &text, &status_file, color, closed)? {
        return Ok(code);
    }
    let mut out = crate::term::human();
    crate::fsutil::write_atomic(&path, text.as_bytes())?;
    closed.written = true;
    shown::written(&path, state, work, &mut out)?;
    if args.commit {
        close::commit_status(&root, &status_file, &slug, state, restack)?;
        closed.committed = true;
        writeln!(
            out,
            "committed {status_file} alone as the trailing status commit"
        )?;
    }
    if state.is_returned() {
        writeln!(out, "now run: closegate check")?;
    }
    Ok(0)
}

/// What the document says: from git, and the items the command line gives.
fn draft<'a>(
    args: &'a Args,
    slug: &'a str,
    state: State,
    work: Oid,
    repo: &Repo,
    root: &Path,
    branch: Option<&str>,
) -> Draft<'a> {
    Draft {
        slug,
        state,
        work: work.to_string(),
        subject: repo.summary(work).unwrap_or_default(),
        branch: branch.unwrap_or_default().to_string(),
        worktree: crate::repo::canonical(root),
        updated: crate::record::now_rfc3339(),
        abstract_text: args.abstract_text.as_deref(),
        done: &args.done,
        blocked_on: args.blocked_on.as_deref(),
        artifacts: &args.artifacts,
    }
}

/// When the document is not to be written: it would not lint (exit 1), or `--dry-run` (the
/// document printed, or kept for `--json`; exit 0).
fn not_written(
    args: &Args,
    text: &str,
    status_file: &str,
    color: bool,
    closed: &mut Closed,
) -> Result<Option<i32>> {
    let (report, codes) = close::lint(text, status_file);
    if !codes.is_empty() {
        shown::lint_refused(&report, color)?;
        closed.refused = Some("the document would not lint; nothing was written".into());
        closed.codes = codes;
        return Ok(Some(1));
    }
    if !args.dry_run {
        return Ok(None);
    }
    if args.json {
        closed.document = Some(text.to_string());
    } else {
        // The document itself is what a script reads: printed under -q too.
        crate::term::stdout().write_all(text.as_bytes())?;
    }
    Ok(Some(0))
}
