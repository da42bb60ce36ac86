//! closegate: the host side of the "done means done" protocol for coding agents.
//!
//! Parse arguments, apply the global flags, run one subcommand, map the outcome to an exit code
//! (SPEC §1.3). An error means no verdict was reached: exit 2, never 1 (which means FAIL).

#![forbid(unsafe_code)]

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // The mount helper a check with `keep` starts through (SPEC §27.2): no command line of its
    // own, never a user's command.
    if args
        .get(1)
        .is_some_and(|a| a == closegate::sandbox::mount::HELPER)
    {
        std::process::exit(closegate::sandbox::mount::helper_main(&args[2..]));
    }
    let cli = closegate::cli::parse(args);
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
