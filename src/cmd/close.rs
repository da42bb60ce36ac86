//! `closegate close`: write the worktree's status document for the agent, from git (SPEC §17).
//!
//! `close` decides nothing: it writes what `check` will verify — the H1, `state`, `last commit`
//! exactly as the close gate compares it, `updated`, the artifacts and, for a returned state, the
//! CLOSE-OK line — keeping the agent's prose keys. The result is linted before anything is
//! written and is never written with a `doc-*` refusal.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use git2::Oid;

use crate::claim::close;
use crate::doc::compose::{self, Draft, compose};
use crate::doc::{ParseOptions, State};
use crate::finding::Severity;
use crate::inputs;
use crate::render::{self, Format};
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

/// The `--json` object: what was (or, refused, was not) written.
#[derive(Debug, Default, serde::Serialize)]
struct Closed {
    schema: u32,
    /// Whether the status document was written.
    written: bool,
    /// Whether it was committed as the trailing status commit (`--commit`).
    committed: bool,
    dry_run: bool,
    path: Option<String>,
    slug: Option<String>,
    state: Option<String>,
    /// The work commit the close line names.
    commit: Option<String>,
    /// Why nothing was written; null when it was (or, with `--dry-run`, would be).
    refused: Option<String>,
    /// The codes of the `doc-*` refusals of a document that would not lint.
    codes: Vec<String>,
    /// With `--dry-run`: the document that would be written.
    document: Option<String>,
}

impl Closed {
    /// What the document would say: where, which slug, state and work commit.
    fn names(&mut self, path: &Path, slug: &str, state: State, work: Oid) {
        self.path = Some(path.display().to_string());
        self.slug = Some(slug.to_string());
        self.state = Some(state.as_str().to_string());
        self.commit = Some(work.to_string());
    }
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
        return refuse_state(&args.state, color);
    };
    let (repo, root) = inputs::open(args.worktree.as_deref())?;
    let trusted = inputs::trusted_config(&repo, None, None)?;
    let status_file = trusted.config.status_file.clone();
    let (head, branch) = close::head_and_branch(&repo, &root, state)?;
    if state.is_returned() && uncommitted(&repo, &root, &status_file)? {
        closed.refused = Some("tracked files have uncommitted changes: commit first".into());
        return Ok(1);
    }
    let (work, restack) = close::work_commit(&repo, head, &status_file);
    let path = root.join(&status_file);
    let existing = close::existing_text(&repo, &trusted, head, &path, &status_file)?;
    let slug = slug_for(args, existing.as_deref(), branch.as_deref());
    let draft = draft(args, &slug, state, work, &repo, &root, branch.as_deref());
    let text = compose(&draft, existing.as_deref());
    closed.names(&path, &slug, state, work);
    if let Some(code) = not_written(args, &text, &status_file, color, closed)? {
        return Ok(code);
    }
    let mut out = crate::term::human();
    crate::fsutil::write_atomic(&path, text.as_bytes())?;
    closed.written = true;
    writeln!(
        out,
        "wrote {} (state {}, commit {})",
        path.display(),
        state.as_str(),
        &work.to_string()[..12]
    )?;
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
    if let Some(codes) = lints(text, status_file, color)? {
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

/// Whether tracked files have uncommitted changes, said on stderr: a returned state's close
/// line must name committed work.
fn uncommitted(
    repo: &crate::repo::Repo,
    root: &std::path::Path,
    status_file: &str,
) -> Result<bool> {
    let status = repo.status_of(root, status_file)?;
    if status.dirty.is_empty() {
        return Ok(false);
    }
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "closegate: close: commit your work first: the close line must name committed work, \
         and these tracked files have uncommitted changes: {}",
        render::escape(&status.dirty.join(", "))
    )?;
    Ok(true)
}

/// `--slug`, else the existing document's, else the branch's last component.
fn slug_for(args: &Args, existing: Option<&str>, branch: Option<&str>) -> String {
    args.slug
        .clone()
        .or_else(|| existing.and_then(compose::existing_slug))
        .or_else(|| branch.map(|b| b.rsplit('/').next().unwrap_or(b).to_string()))
        .unwrap_or_default()
}

/// `None` when the composed document lints without a refusal; else the codes of its `doc-*`
/// refusals, and the report is printed.
fn lints(text: &str, status_file: &str, color: bool) -> Result<Option<Vec<String>>> {
    let report = crate::report::lint(
        text.as_bytes(),
        status_file.to_string(),
        ParseOptions::default(),
    );
    let codes: Vec<String> = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Refusal && f.code.as_str().starts_with("doc-"))
        .map(|f| f.code.to_string())
        .collect();
    let refused = !codes.is_empty();
    if refused {
        let mut err = std::io::stderr().lock();
        writeln!(
            err,
            "closegate: close: the document would not lint; nothing was written"
        )?;
        let mut out = crate::term::human();
        render::render(&report, Format::Human, color, &mut out)?;
    }
    Ok(refused.then_some(codes))
}

/// SPEC §17: the result is linted before anything is written and never written with a `doc-*`
/// refusal (exit 1, findings shown). A `--state` word that is no writable state is that refusal:
/// the finding the status document's parser gives the line `- state: WORD` (`doc-state-legacy`
/// for an older spelling, `doc-state-unknown` …), before anything else is read.
fn refuse_state(word: &str, color: bool) -> Result<i32> {
    let text = format!("# STATUS \u{2014} x\n\n- state: {word}\n");
    let mut report = crate::report::lint(text.as_bytes(), "--state".into(), Default::default());
    report
        .findings
        .retain(|f| f.code.as_str().starts_with("doc-state"));
    if report.findings.is_empty() {
        bail!("--state {word:?}: not a state word");
    }
    for finding in &mut report.findings {
        finding.line = None;
    }
    report.slug = None;
    report.state = None;
    eprintln!("closegate: close: --state {word} would not lint; nothing was written");
    render::render(&report, Format::Human, color, &mut crate::term::human())?;
    Ok(1)
}
