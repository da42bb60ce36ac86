//! closegate as a library: the gates, the record and the subcommands that drive them.

pub mod agent;
pub mod attest;
pub mod board;
pub mod catalog;
pub mod claim;
pub mod cli;
pub mod cmd;
pub mod config;
pub mod contract;
pub mod covered;
pub mod doc;
pub mod finding;
pub mod fsutil;
pub mod gates;
pub mod globs;
pub mod guess;
pub mod hook;
pub mod inherited;
pub mod input_file;
pub mod inputs;
pub mod land;
pub mod ledger;
pub mod notes_sync;
pub mod readiness;
pub mod record;
pub mod render;
pub mod repo;
pub mod report;
pub mod restore;
pub mod sandbox;
pub mod serve;
pub mod shell;
pub mod stats;
pub mod sweep;
pub mod teardown;
pub mod term;
pub mod toml_read;

/// A test switch from the environment (`CLOSEGATE_TEST_NO_SANDBOX`, `CLOSEGATE_TEST_FAILPOINT`,
/// `CLOSEGATE_TEST_FAILPOINT_DIR`, `CLOSEGATE_TRACE_CODES`, `CLOSEGATE_TEST_LAND_BEFORE_MOVE`). Only builds with debug assertions
/// read one (`cargo test` builds the binary that way); a release build never does, so no
/// environment a hook or a check inherits can take the sandbox away, stop a teardown midway or
/// have closegate append to a file it names.
pub fn test_switch(name: &str) -> Option<std::ffi::OsString> {
    if cfg!(debug_assertions) {
        std::env::var_os(name)
    } else {
        None
    }
}

/// Run one parsed command line; `Ok` carries the exit code, `Err` means exit 2.
///
/// The global flags first (SPEC §21): `-C DIR` moves into each DIR in turn, as git does, so every
/// relative path given to another flag is relative to the last DIR; `-q` silences human output;
/// `--color` decides colour.
pub fn run(cli: cli::Cli) -> anyhow::Result<i32> {
    use anyhow::Context;
    use cli::Command;
    for dir in &cli.global.dir {
        std::env::set_current_dir(dir)
            .with_context(|| format!("-C {}: cannot change to that directory", dir.display()))?;
    }
    term::set_quiet(cli.global.quiet);
    let color = cli::color_wanted(cli.global.color);
    match cli.command {
        Command::Lint(args) => cmd::lint::run(args, color),
        Command::Explain(args) => cmd::explain::run(args),
        Command::Check(args) => cmd::check::run(args, color),
        Command::Log(args) => cmd::log::run(args),
        Command::Teardown(args) => cmd::teardown::run(args, color),
        Command::Approve(args) => cmd::approve::run(args, color),
        Command::Reject(args) => cmd::reject::run(args),
        Command::Hook(args) => cmd::hook::run(args),
        Command::Guard(args) => cmd::guard::run(args, color),
        Command::Signal(args) => cmd::signal::run(args, color),
        Command::Board(args) => cmd::board::run(args, color),
        Command::Key(args) => cmd::key::run(args),
        Command::Close(args) => cmd::close::run(args, color),
        Command::Init(args) => cmd::init::run(args),
        Command::Agent(args) => cmd::agent::run(args, color),
        Command::Gc(args) => cmd::gc::run(args),
        Command::Completions(args) => cmd::manual::completions(args),
        Command::Man(args) => cmd::manual::man(args),
        Command::Version(args) => cmd::manual::version(args),
        Command::Validate(args) => cmd::validate::run(args),
        Command::Land(args) => cmd::land::run(args),
        Command::Sweep(args) => cmd::sweep::run(args),
        Command::Demo(args) => cmd::demo::run(args),
        Command::Restore(args) => cmd::restore::run(args),
        Command::Notes(args) => cmd::notes::run(args),
        Command::Serve(args) => cmd::serve::run(args),
    }
}
