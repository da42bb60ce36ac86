//! `closegate signal`: the lifecycle signal that ends an agent's message (`@signal done`,
//! `@signal no_op`, `@signal blocked`), stripped from the message and checked against the
//! repository (SPEC §10).
//!
//! Without `--worktree`, the worktree around the current directory is judged when there is one;
//! outside any repository only the shape of the signal is checked. Parsing the signal and the
//! rules judging it are `claim::signal`; this reads the arguments, records and prints
//! (`render::claim`).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;

use crate::claim::signal::{Signal, judge, parse};
use crate::claim::token;
use crate::claim::{read_message, record_decision};
use crate::cmd::gate::MessageArgs;
use crate::finding::Gate;
use crate::inputs;
use crate::ledger::{Event, SignalFields};
use crate::render::{self, Format};
use crate::repo::Repo;
use crate::report::Report;

/// Strip and check the `@signal` line that ends an agent's message
///
/// The message without that line goes to stdout; `done`, `no_op` and `blocked` are judged
/// against the repository. Exit 0 accepted, 1 refused, 2 error.
#[derive(Debug, clap::Args)]
#[command(
    mut_arg("file", |a| a.help("The agent's message; `-` (the default) reads standard input")),
    mut_arg("worktree", |a| a.help(
        "The agent's worktree (default: the current directory, when it lies in a repository)"
    )),
    mut_arg("format", |a| a.help(
        "Output format: human prints the message without the signal line, the others the report"
    )),
)]
pub struct Args {
    /// guard's arguments, with signal's own help texts (`mut_arg` above).
    #[command(flatten)]
    pub message: MessageArgs,
}

pub fn run(args: Args, color: bool) -> Result<i32> {
    let args = args.message;
    let text = read_message(&args.file)?;
    let parsed = parse(&text);
    let worktree = match &args.worktree {
        Some(dir) => Some(dir.clone()),
        None => cwd_worktree(),
    };
    let mut report = Report::default();
    let mut common = None;
    let mut gate_ran = false;
    if let Some(dir) = &worktree {
        let (repo, root) = inputs::open(Some(dir))?;
        common = Some(repo.common_dir());
        report.worktree = Some(root.display().to_string());
        if let Some(signal) = parsed.signal {
            let judged = judge(signal, repo, &root, &args.gate.options())?;
            gate_ran = judged.gate_ran;
            report = judged.report;
            report.add_gate(Gate::Claim, judged.finding);
        }
    }
    report.add_gate(Gate::Claim, parsed.finding.clone());
    report.finish();
    let accepted = token::accepted(&report);
    let claimed = parsed.signal.map(Signal::as_str);
    let verdict = gate_ran.then(|| token::gate_verdict(&report));
    let fields = SignalFields {
        accepted: Some(accepted),
        ..SignalFields::default()
    };
    record_decision(
        common.as_deref(),
        Event::Signal(fields),
        &report,
        claimed,
        verdict,
    )?;
    // The relayed body is the data a script reads: kept under `-q`.
    let mut out = crate::term::stdout();
    if args.format == Format::Human {
        render::claim::body(&parsed.body, &mut out)?;
        if !accepted {
            let mut err = std::io::stderr().lock();
            writeln!(err, "closegate signal: refused")?;
            render::claim::findings(&report, &mut err)?;
        }
    } else {
        render::render(&report, args.format, color, &mut out)?;
    }
    Ok(if accepted { 0 } else { 1 })
}

/// The worktree around the current directory, when there is one.
fn cwd_worktree() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    Repo::discover(&cwd).ok()?.workdir()
}
