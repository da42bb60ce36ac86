//! closegate: the host side of the "done means done" protocol for coding agents.
//!
//! Parse arguments, apply the global flags, run one subcommand, map the outcome to an exit code
//! (SPEC §1.3). An error means no verdict was reached: exit 2, never 1 (which means FAIL).

use clap::{CommandFactory, FromArgMatches};

fn main() {
    // `Cli::parse()`, except that clap's tree of every subcommand and flag is never freed: the
    // process ends right after, and freeing it was 0.11M of the 4.9M instructions of the
    // git-object part of a check (scripts/bench.sh, callgrind).
    let mut command = closegate::cli::Cli::command();
    let mut matches = command
        .try_get_matches_from_mut(std::env::args_os())
        .unwrap_or_else(|e| e.exit());
    let cli = closegate::cli::Cli::from_arg_matches_mut(&mut matches)
        .unwrap_or_else(|e| e.format(&mut command).exit());
    std::mem::forget(matches);
    std::mem::forget(command);
    let code = match closegate::run(cli) {
        Ok(code) => code,
        // Every write to stdout goes through `term`, which ends quietly at a closed pipe; one that
        // did not (a library writing on its own) still ends without a message (SPEC §11).
        Err(err) if closegate::term::is_broken_pipe(&err) => 0,
        Err(err) => {
            // Errors quote their inputs raw; escaped here, line by line, where they reach the
            // terminal.
            let text = format!("{err:#}");
            let lines: Vec<String> = text.lines().map(closegate::render::escape).collect();
            eprintln!("closegate: {}", lines.join("\n"));
            2
        }
    };
    std::process::exit(code);
}
