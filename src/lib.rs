//! closegate as a library: the gates, the record and the subcommands that drive them.
//!
//! ## Layers
//!
//! Bottom-up, from `sys` (the only `unsafe`, the terminal) through `repo`, the core types, the
//! engines, the verbs and rendering to the front (`cmd`, `cli`, `serve`). A module names
//! (`crate::…`, `super::…`, an alias) only modules of its own layer or a lower one; no import
//! cycle joins two top-level modules, nor two modules of one folder; clap is named only in `cli`
//! and `cmd`, indicatif and console only in `term` and `render`. The table is written once, in
//! `tests/it/layers.rs` (`LAYERS`, `CRATES`: a new module is placed there), which reads every
//! path in `src/` with `syn` and holds it to the table; docs/architecture.md carries a copy
//! that the same test keeps equal.
//!
//! ## API
//!
//! The modules declared `pub` below, with [`run`], are the library's API: what the binary, the
//! integration tests and the fuzz targets name. Every other module is `pub(crate)`, so code
//! nothing calls is a compiler warning, not a silent export. The list is written once, in
//! `tests/it/layers.rs` (`API`, copied into docs/architecture.md by the same test), which fails
//! when lib.rs declares another module `pub` or a listed one is not.
//!
//! `unsafe` lives in `sys` only: denied crate-wide (Cargo.toml), forbidden on every other module
//! below, so no inner `allow` can lift it (`sys` tests that each declaration carries the forbid).

#![deny(unsafe_code)]

#[forbid(unsafe_code)]
pub(crate) mod agent;
#[forbid(unsafe_code)]
pub mod attest;
#[forbid(unsafe_code)]
pub(crate) mod board;
#[forbid(unsafe_code)]
pub mod catalog;
#[forbid(unsafe_code)]
pub(crate) mod claim;
#[forbid(unsafe_code)]
pub mod cli;
#[forbid(unsafe_code)]
pub(crate) mod cmd;
#[forbid(unsafe_code)]
pub mod config;
#[forbid(unsafe_code)]
pub mod contract;
#[forbid(unsafe_code)]
pub(crate) mod date;
#[forbid(unsafe_code)]
pub mod doc;
#[forbid(unsafe_code)]
pub mod finding;
#[forbid(unsafe_code)]
pub(crate) mod fsutil;
#[forbid(unsafe_code)]
pub mod gates;
#[forbid(unsafe_code)]
pub mod globs;
#[forbid(unsafe_code)]
pub(crate) mod guess;
#[forbid(unsafe_code)]
pub(crate) mod hook;
#[forbid(unsafe_code)]
pub(crate) mod inherited;
#[forbid(unsafe_code)]
pub(crate) mod input_file;
#[forbid(unsafe_code)]
pub(crate) mod inputs;
#[forbid(unsafe_code)]
pub(crate) mod land;
#[forbid(unsafe_code)]
pub mod ledger;
#[forbid(unsafe_code)]
pub(crate) mod notes_sync;
#[forbid(unsafe_code)]
pub(crate) mod readiness;
#[forbid(unsafe_code)]
pub mod record;
#[forbid(unsafe_code)]
pub mod render;
#[forbid(unsafe_code)]
pub mod repo;
#[forbid(unsafe_code)]
pub mod report;
#[forbid(unsafe_code)]
pub(crate) mod restore;
#[forbid(unsafe_code)]
pub(crate) mod review;
#[forbid(unsafe_code)]
pub mod runners;
#[forbid(unsafe_code)]
pub mod sandbox;
#[forbid(unsafe_code)]
pub(crate) mod serve;
#[forbid(unsafe_code)]
pub(crate) mod setup;
#[forbid(unsafe_code)]
pub(crate) mod shell;
#[forbid(unsafe_code)]
pub(crate) mod stats;
#[forbid(unsafe_code)]
pub(crate) mod sweep;
pub(crate) mod sys;
#[forbid(unsafe_code)]
pub(crate) mod teardown;
#[forbid(unsafe_code)]
pub mod term;
#[forbid(unsafe_code)]
pub(crate) mod toml_read;
#[forbid(unsafe_code)]
pub mod verdict;

/// Run one parsed command line; `Ok` carries the exit code, `Err` means exit 2.
///
/// The global flags first (SPEC §21): `-C DIR` moves into each DIR in turn, as git does, so every
/// relative path given to another flag is relative to the last DIR; `-q` silences human output;
/// `--color` decides colour.
pub fn run(cli: cli::Cli) -> anyhow::Result<i32> {
    use anyhow::Context;
    use clap::CommandFactory;
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
        Command::Completions(args) => cmd::manual::completions(args, cli::Cli::command()),
        Command::Man(args) => cmd::manual::man(args, cli::Cli::command()),
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
