//! `closegate init`: a starter `.closegate.toml`, or a task contract (SPEC §17).

use std::io::Write;

use anyhow::{Result, bail};

use crate::config::{self, Config};
use crate::gates::{Session, checks};
use crate::{guess, inputs, readiness};

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
    };
    let guessed = guess::guess(&project);
    let (rel, text) = match &args.contract {
        Some(slug) => {
            if let Some(fault) = slug_fault(slug) {
                bail!("--contract {slug}: {fault}");
            }
            (format!(".closegate/contracts/{slug}.toml"), contract(slug))
        }
        None => (
            config::FILE_NAME.to_string(),
            starter(guessed.as_ref(), branch.as_deref()),
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
        writeln!(out, "check `{}`: {}", guessed.name, guessed.run)?;
        if !args.no_try {
            // The try runs the project's code: its shield comes from a session on the
            // configuration just written, as every command's does.
            let given = inputs::Trusted::given(Config::parse(&text, &rel)?, None);
            let session = Session::on_base(repo, root, given)?;
            code = try_check(&session, head, branch.as_deref(), &mut out)?;
        }
    }
    let base = branch.as_deref().unwrap_or("the base branch");
    writeln!(
        out,
        "commit it to {base}: closegate reads it from the base tip, never from an agent's branch\n  \
         git add {rel} && git commit -m \"closegate: {}\"",
        if args.contract.is_some() {
            "task contract"
        } else {
            "configuration"
        }
    )?;
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
    let env = checks::CheckEnv {
        commit: head.to_string(),
        branch: branch.unwrap_or_default().to_string(),
        slug: String::new(),
        base: branch.unwrap_or_default().to_string(),
    };
    let short = &head.to_string()[..12];
    writeln!(
        out,
        "try: running `{}` on {short} in the sandbox …",
        spec[0].name
    )?;
    out.flush()?;
    let checked = run_once(session, head, spec, &env)?;
    for finding in &checked.findings {
        if finding.severity == crate::finding::Severity::Warning {
            writeln!(out, "  warning {}: {}", finding.code, finding.message)?;
        }
    }
    let Some(ran) = checked.runs.first() else {
        writeln!(out, "try: the check did not run")?;
        return Ok(1);
    };
    let secs = ran.duration_ms as f64 / 1000.0;
    if ran.exit_code == Some(0) && !ran.timed_out {
        writeln!(
            out,
            "try: `{}` passed on {short} in {secs:.1} s",
            spec[0].name
        )?;
        // SPEC §26.4: a pass that skipped the tests of a compiled part tests less than it says.
        let built = guess::compiled_python(&|path| session.repo().read_blob(head, path));
        let base = branch.unwrap_or("the base");
        if let Some(line) = built.and_then(|b| readiness::skipped_compiled(ran, base, short, &b)) {
            writeln!(out, "  {}", crate::render::escape(&line))?;
        }
        return Ok(0);
    }
    failed(&spec[0], ran, short, secs, out)?;
    Ok(1)
}

/// The checks `specs` on `commit`, run once (nothing recorded is reused), behind the session's
/// shield.
fn run_once(
    session: &Session,
    commit: git2::Oid,
    specs: &[crate::config::CheckSpec],
    env: &checks::CheckEnv,
) -> Result<checks::Checked> {
    let mode = Default::default();
    checks::run_once(session.repo(), commit, specs, env, mode, session.shield())
}

/// Say how the try failed, its last lines and what to change.
fn failed(
    spec: &crate::config::CheckSpec,
    ran: &crate::report::CheckRun,
    short: &str,
    secs: f64,
    out: &mut impl Write,
) -> Result<()> {
    let how = match (ran.timed_out, ran.exit_code) {
        (true, _) => format!("ran past its timeout of {} s", spec.timeout_s),
        (false, Some(code)) => format!("exited {code}"),
        (false, None) => "was killed".to_string(),
    };
    writeln!(
        out,
        "try: `{}` {how} on {short} after {secs:.1} s; its last lines:",
        spec.name
    )?;
    let tail = ran.output.len().saturating_sub(TRY_TAIL);
    for line in &ran.output[tail..] {
        writeln!(out, "  | {}", crate::render::escape(line))?;
    }
    writeln!(
        out,
        "every agent's check would FAIL on this: edit `run` in {} (install what the tests need \
         inside the checkout, keep tool caches in the check's workspace) or fix the base, then \
         commit it and run `closegate validate --run`; --no-try skips this try",
        config::FILE_NAME
    )?;
    Ok(())
}

/// Lines of a failing try's output shown.
const TRY_TAIL: usize = 20;

/// The starter configuration.
pub fn starter(guessed: Option<&guess::Guess>, branch: Option<&str>) -> String {
    let mut out = String::from(
        "# closegate configuration. closegate reads it from the tip of the base branch,\n\
         # never from an agent's branch: commit it there.\n\n",
    );
    match branch {
        Some(b) => out.push_str(&format!("base = {}\n", toml_string(b))),
        None => out.push_str("# base = \"main\"\n"),
    }
    out.push_str(
        "# status_file = \"_EXEC_STATUS.md\"\n# agent_branches = [\"agent/*\"]\n\
         # require_contract = false\n\n\
         # Protected surfaces: a change there needs a human's approval (PENDING_REVIEW).\n\
         # These are the defaults; a surface listed under [protected] replaces the default of\n\
         # that name (`tests = { extend = [\"checks/**\"] }` adds to it instead), a new name adds\n\
         # a surface.\n# [protected]\n",
    );
    for surface in Config::default().surfaces {
        let globs: Vec<String> = surface.globs.iter().map(|g| toml_string(g)).collect();
        out.push_str(&format!("# {} = [{}]\n", surface.name, globs.join(", ")));
    }
    out.push_str(
        "\n# An agent that adds a new test needs no review; changing, deleting or renaming an\n\
         # existing one (or adding a conftest.py, __init__.py, runner set-up) still does.\n\
         [protected.policy]\ntests = \"modify\"\n",
    );
    out.push_str(
        "\n# The checks closegate runs itself, sandboxed, in a checkout of the agent's exact\n\
         # commit. `keep`: the installed tree and the tool caches (.closegate-cache/), kept in\n\
         # this check's workspace between runs so the second check is incremental (kept outputs\n\
         # come from earlier commits). `writable`: a cache shared by every agent's checks, only\n\
         # for what the tool verifies on every use (npm's, with a committed package-lock.json).\n",
    );
    match guessed {
        Some(g) => {
            let list = |items: &[String]| -> String {
                let items: Vec<String> = items.iter().map(|i| toml_string(i)).collect();
                format!("[{}]", items.join(", "))
            };
            out.push_str(&format!(
                "[[checks]]\nname = {}\nrun = {}\ntimeout_s = 900\n",
                toml_string(g.name),
                toml_string(&g.run)
            ));
            if !g.writable.is_empty() {
                out.push_str(&format!("writable = {}\n", list(&g.writable)));
            }
            if !g.keep.is_empty() {
                out.push_str(&format!("keep = {}\n", list(&g.keep)));
            }
        }
        None => out.push_str(
            "# No project type recognised: write the command that tests this project.\n\
             # [[checks]]\n# name = \"test\"\n# run = \"make test\"\n# timeout_s = 600\n",
        ),
    }
    out
}

/// A task contract with every key of SPEC §12 commented.
pub fn contract(slug: &str) -> String {
    format!(
        "# Task contract for `{slug}`, read from the base tip: commit it there.\n\
         # Uncomment what this task needs.\n\n\
         # goal = \"what done means for this task\"\n\
         # branch = \"agent/{slug}\"           # applies to this branch whatever slug the document claims\n\
         # scope = [\"src/**\"]                 # the only paths the branch may change\n\
         # prohibited = [\"db/**\"]             # never to be changed; wins over scope\n\
         # required_artifacts = [\"src/new.rs\"] # must be in the commit and changed by the branch\n\
         # required_checks = [\"test\"]         # names from [[checks]] that must run and pass\n\
         # approval = \"protected\"             # \"always\" | \"protected\" (default) | \"never\"\n\
         # max_changed_files = 40\n\
         # max_commits = 20\n"
    )
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// Why `slug` is not a slug (1–100 of `[A-Za-z0-9._-]`, starting with a letter or digit).
fn slug_fault(slug: &str) -> Option<&'static str> {
    let first_ok = slug
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    let chars_ok = slug
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if slug.is_empty() || slug.len() > 100 {
        Some("a slug is 1–100 characters")
    } else if !first_ok || !chars_ok {
        Some("a slug is letters, digits, `.`, `_` and `-`, starting with a letter or digit")
    } else {
        None
    }
}
