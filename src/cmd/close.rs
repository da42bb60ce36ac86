//! `closegate close`: write the worktree's status document for the agent, from git (SPEC §17).
//!
//! `close` decides nothing: it writes what `check` will verify — the H1, `state`, `last commit`
//! exactly as the close gate compares it, `updated`, the artifacts and, for a returned state, the
//! CLOSE-OK line — keeping the agent's prose keys. The result is linted before anything is
//! written and is never written with a `doc-*` refusal.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use git2::Oid;

use crate::doc::items::{self, Part, RawItem};
use crate::doc::{self, ParseOptions, State};
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

/// The keys `close` always writes itself; an existing item with one of them is replaced.
const WRITTEN: [&str; 3] = ["state", "last commit", "updated"];

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
    let (head, branch) = head_and_branch(&repo, &root, state)?;
    if state.is_returned() && uncommitted(&repo, &root, &status_file)? {
        closed.refused = Some("tracked files have uncommitted changes: commit first".into());
        return Ok(1);
    }
    // A trailing commit that changes only the status document is the record of an earlier
    // `close --commit`: the work commit is its parent.
    let (work, restack) = match crate::verdict::stands_for(&repo, head, &status_file) {
        Some(parent) => (parent, true),
        None => (head, false),
    };
    let path = root.join(&status_file);
    let existing = existing_text(&repo, &trusted, head, &path, &status_file)?;
    let written = Written {
        state,
        work,
        subject: repo.summary(work).unwrap_or_default(),
        branch: branch.clone().unwrap_or_default(),
        worktree: crate::repo::canonical(&root),
        updated: crate::record::now_rfc3339(),
    };
    let slug = slug_for(args, existing.as_deref(), branch.as_deref());
    let text = compose(args, &slug, &written, existing.as_deref());
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
        commit_status(&root, &status_file, &slug, state, restack)?;
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

/// HEAD's commit and branch; a returned state needs both.
fn head_and_branch(
    repo: &crate::repo::Repo,
    root: &std::path::Path,
    state: State,
) -> Result<(git2::Oid, Option<String>)> {
    let Some(head) = repo.worktree_head(root) else {
        bail!(
            "HEAD of {} names no commit: commit your work first",
            root.display()
        );
    };
    let branch = repo.head_branch();
    if state.is_returned() && branch.is_none() {
        bail!(
            "HEAD of {} is detached: a returned state needs the branch the work is on",
            root.display()
        );
    }
    Ok((head, branch))
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
        .or_else(|| existing.and_then(existing_slug))
        .or_else(|| branch.map(|b| b.rsplit('/').next().unwrap_or(b).to_string()))
        .unwrap_or_default()
}

/// `None` when the composed document lints without a refusal; else the codes of its `doc-*`
/// refusals, and the report is printed.
fn lints(text: &str, status_file: &str, color: bool) -> Result<Option<Vec<String>>> {
    let report = crate::cmd::lint::lint(
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

/// What `close` writes from git.
struct Written {
    state: State,
    work: Oid,
    subject: String,
    branch: String,
    worktree: PathBuf,
    updated: String,
}

/// SPEC §17: the result is linted before anything is written and never written with a `doc-*`
/// refusal (exit 1, findings shown). A `--state` word that is no writable state is that refusal:
/// the finding the status document's parser gives the line `- state: WORD` (`doc-state-legacy`
/// for an older spelling, `doc-state-unknown` …), before anything else is read.
fn refuse_state(word: &str, color: bool) -> Result<i32> {
    let text = format!("# STATUS \u{2014} x\n\n- state: {word}\n");
    let mut report = crate::cmd::lint::lint(text.as_bytes(), "--state".into(), Default::default());
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

/// The existing document's text, or `None` when there is none or it is inherited from the base
/// (SPEC §17: then it is not this agent's claim and is overwritten).
fn existing_text(
    repo: &Repo,
    trusted: &inputs::Trusted,
    head: Oid,
    path: &Path,
    status_file: &str,
) -> Result<Option<String>> {
    let bytes = match crate::input_file::read(path) {
        Ok(bytes) => bytes,
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::NotFound) =>
        {
            return Ok(None);
        }
        Err(e) => {
            return Err(e).with_context(|| format!("cannot read {}", path.display()));
        }
    };
    let base = trusted.base.as_ref().map(|(_, id)| *id);
    let attested = || {
        let root = repo.workdir();
        let owner = crate::verdict::Owner::of(repo.head_branch().as_deref(), root.as_deref());
        owner.is_some_and(|owner| {
            let claim = crate::verdict::Claim::new(owner, head);
            crate::verdict::attested(repo, &claim, status_file)
        })
    };
    if crate::inherited::is_inherited(repo, base, Some(head), status_file, &bytes, attested) {
        return Ok(None);
    }
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    match String::from_utf8(body.to_vec()) {
        Ok(text) => Ok(Some(text)),
        Err(_) => bail!(
            "{} is not UTF-8: fix or remove it (close never overwrites bytes it cannot read)",
            path.display()
        ),
    }
}

/// The slug of the existing document's H1, when it has a valid one.
fn existing_slug(text: &str) -> Option<String> {
    doc::parse(text.as_bytes(), ParseOptions::default())
        .doc
        .map(|d| d.slug)
}

/// The document: H1, state, abstract, last commit, done, next / blocked-on, artifacts, evidence,
/// note, updated, any other item kept as written, then the close line for a returned state.
fn compose(args: &Args, slug: &str, w: &Written, existing: Option<&str>) -> String {
    let (kept, others) = kept_items(existing);
    let find = |key: &str| -> Vec<String> {
        kept.iter()
            .filter(|(k, _)| *k == key)
            .map(|(_, item)| item.render(&written_key(&item.key)))
            .collect()
    };
    let mut out = format!("# STATUS — {slug}\n\n- state: {}\n", w.state.as_str());
    match &args.abstract_text {
        Some(text) => out.push_str(&prose("abstract", text)),
        None => find("abstract").iter().for_each(|s| out.push_str(s)),
    }
    let sha = w.work.to_string();
    out.push_str(&format!("- last commit: {sha} — {}\n", w.subject));
    if args.done.is_empty() {
        find("done").iter().for_each(|s| out.push_str(s));
    } else {
        out.push_str("- done:\n");
        for claim in &args.done {
            out.push_str(&format!("  - {}\n", one_line(claim)));
        }
    }
    match &args.blocked_on {
        Some(text) => out.push_str(&prose("next / blocked-on", text)),
        None => find("next / blocked-on")
            .iter()
            .for_each(|s| out.push_str(s)),
    }
    let artifacts = find("artifacts");
    if !args.artifacts.is_empty() {
        out.push_str("- artifacts:\n");
        for path in &args.artifacts {
            out.push_str(&format!("  - {}\n", one_line(path)));
        }
    } else if !artifacts.is_empty() {
        artifacts.iter().for_each(|s| out.push_str(s));
    } else {
        out.push_str("- artifacts:\n");
    }
    for key in ["evidence", "note"] {
        find(key).iter().for_each(|s| out.push_str(s));
    }
    out.push_str(&format!("- updated: {}\n", w.updated));
    for line in others {
        out.push_str(&line);
        out.push('\n');
    }
    if w.state.is_returned() {
        out.push_str(&format!(
            "\nCLOSE-OK · {slug} · commit {sha} · branch {} · worktree {}\n",
            w.branch,
            w.worktree.display()
        ));
    }
    out
}

/// The existing document's items by canonical key (the keys `close` writes itself left out),
/// and every other item or non-blank line kept as written (close lines left out).
fn kept_items(existing: Option<&str>) -> (Vec<(&'static str, RawItem)>, Vec<String>) {
    let mut kept = Vec::new();
    let mut others = Vec::new();
    let Some(text) = existing else {
        return (kept, others);
    };
    let (_, parts) = items::split(text);
    for part in parts {
        match part {
            Part::Item(item) => match items::canonical_key(&item.key) {
                Some(key) if WRITTEN.contains(&key) => {}
                Some(key) => kept.push((key, item)),
                None => others.push(item.render(&item.key).trim_end().to_string()),
            },
            Part::Other(line) => {
                if !line.trim().is_empty() && !items::is_close_like(&line) {
                    others.push(line);
                }
            }
        }
    }
    (kept, others)
}

/// The key an item is written with: as written when that is a valid spelling (the canonical key
/// or an older one the parser reads), else the canonical key (`- Note:` becomes `- note:`).
fn written_key(key: &str) -> String {
    const VALID: [&str; 10] = [
        "abstract",
        "done",
        "next / blocked-on",
        "next",
        "blocked-on",
        "blocked on",
        "artifacts",
        "return",
        "evidence",
        "note",
    ];
    if VALID.contains(&key) {
        key.to_string()
    } else {
        items::canonical_key(key).unwrap_or(key).to_string()
    }
}

/// A prose item: the first line after the key, every further line indented as a continuation.
fn prose(key: &str, text: &str) -> String {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next().unwrap_or("").trim();
    let mut out = if first.is_empty() {
        format!("- {key}:\n")
    } else {
        format!("- {key}: {first}\n")
    };
    for line in lines {
        out.push_str(&format!("  {}\n", line.trim()));
    }
    out
}

/// Text for one sub-bullet: line breaks folded into spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Commit the status document alone on top of the work commit (`restack`: HEAD is already a
/// status-only commit, which is replaced so there stays exactly one).
fn commit_status(
    root: &Path,
    status_file: &str,
    slug: &str,
    state: State,
    restack: bool,
) -> Result<()> {
    let git = |args: &[&str]| -> Result<()> {
        let out = crate::repo::git_cli::Git::worktree(root).run(args)?;
        if !out.status.success() {
            bail!(
                "git {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(())
    };
    git(&["add", "-f", "--", status_file])?;
    let message = format!("status: {slug} {}", state.as_str());
    let mut args = vec!["commit", "-q", "-m", &message];
    if restack {
        args.push("--amend");
    }
    args.extend(["--only", "--", status_file]);
    git(&args)
}
