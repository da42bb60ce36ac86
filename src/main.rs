//! closegate: the host side of the "done means done" protocol for coding agents.
//!
//! Parse arguments, decide colour, run one subcommand, map the outcome to an exit code
//! (SPEC §1.3). An error means no verdict was reached: exit 2, never 1 (which means FAIL).

use clap::Parser;

fn main() {
    let cli = closegate::cli::Cli::parse();
    let color = closegate::cli::color_wanted();
    let code = match closegate::run(cli, color) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("closegate: {err:#}");
            2
        }
    };
    std::process::exit(code);
}
