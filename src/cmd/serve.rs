//! `closegate serve`: the board in a browser (SPEC §25).

use std::io::Write;

use anyhow::{Context, Result};

use crate::repo::Repo;
use crate::serve::Server;

/// Show the board live in a browser, on 127.0.0.1 only, read-only
///
/// Prints the page's URL, which carries a random token: a request without it is refused (403),
/// so other users of this machine cannot read the board. The page shows one row per worktree
/// (stage, verdict, slug, branch, age, the last check's findings, protected changes with their
/// diff, checks with their output tail, a timeline of its records) and charts of the
/// false-green rate and of check durations, and stays live within a second of a new record or
/// commit. It runs no check and changes nothing. `/api/board` and `/api/log` answer what `board
/// --json` and `log --json` print. Runs until stopped (Ctrl-C)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Listen on port N of 127.0.0.1 (default: a free port)
    #[arg(long, value_name = "N")]
    pub port: Option<u16>,
    /// Open the page in the default browser (`xdg-open`; `open` on macOS)
    #[arg(long)]
    pub open: bool,
}

/// Exit 2 when the repository cannot be read or the port cannot be bound; otherwise serves
/// until the process is stopped.
pub fn run(args: Args) -> Result<i32> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let repo = Repo::discover(&cwd)?;
    let server = Server::bind(&repo, args.port)?;
    drop(repo);
    let url = server.url();
    {
        // The URL is what a script reads: on stdout even under -q.
        let mut out = crate::term::stdout();
        writeln!(out, "{url}")?;
        out.flush()?;
    }
    eprintln!(
        "closegate serve: read-only; the token in the URL is the key to the page (share it with no one); Ctrl-C stops"
    );
    if args.open {
        open_browser(&url);
    }
    server.run()
}

/// Start the desktop's browser on `url`; a failure is said, not fatal.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let started = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = started {
        eprintln!("closegate serve: cannot start {opener} ({e}); open the URL yourself");
    }
}
