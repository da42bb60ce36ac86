//! The command line: one subcommand per module under `cmd/`.

use std::path::PathBuf;

use std::ffi::OsString;

use clap::{Args as _, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::cmd;

/// Check a coding agent's "done" against the repository itself.
///
/// Exit codes: 0 VERIFIED (or accepted), 1 FAIL (refused), 2 error, 3 PENDING_REVIEW, 4 UNVERIFIED.
#[derive(Debug, Parser)]
#[command(name = "closegate", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// The flags every subcommand takes.
#[derive(Debug, clap::Args)]
pub struct Global {
    /// Run as if closegate was started in DIR (as git's -C; repeatable, each relative to the last)
    #[arg(short = 'C', value_name = "DIR", global = true, action = clap::ArgAction::Append)]
    pub dir: Vec<PathBuf>,
    /// When to colour the output (auto: on a terminal and NO_COLOR unset)
    #[arg(long, value_name = "WHEN", value_enum, global = true, default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
    /// Nothing on stdout but what a script parses (JSON, SARIF, workflow commands); the exit code
    /// still carries the verdict
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

/// `--color auto|always|never` (SPEC §21).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Lint(cmd::lint::Args),
    Explain(cmd::explain::Args),
    Check(cmd::check::Args),
    Log(cmd::log::Args),
    Teardown(cmd::teardown::Args),
    Approve(cmd::approve::Args),
    Reject(cmd::reject::Args),
    Hook(cmd::hook::Args),
    Guard(cmd::guard::Args),
    Signal(cmd::signal::Args),
    Board(cmd::board::Args),
    Key(cmd::key::Args),
    Close(cmd::close::Args),
    Init(cmd::init::Args),
    Agent(cmd::agent::Args),
    Gc(cmd::gc::Args),
    Completions(cmd::manual::CompletionsArgs),
    Man(cmd::manual::ManArgs),
    Version(cmd::manual::VersionArgs),
    Validate(cmd::validate::Args),
    Land(cmd::land::Args),
    Sweep(cmd::sweep::Args),
    Demo(cmd::demo::Args),
    Restore(cmd::restore::Args),
    Notes(cmd::notes::Args),
    Serve(cmd::serve::Args),
}

/// Every subcommand by name, with what builds its arguments: the fast path of [`parse`] builds
/// only the one a command line names. `cli::every_subcommand_is_in_the_fast_table` holds this
/// list to [`Command`].
type Build = fn(clap::Command) -> clap::Command;
const SUBCOMMANDS: [(&str, Build); 26] = [
    ("lint", cmd::lint::Args::augment_args),
    ("explain", cmd::explain::Args::augment_args),
    ("check", cmd::check::Args::augment_args),
    ("log", cmd::log::Args::augment_args),
    ("teardown", cmd::teardown::Args::augment_args),
    ("approve", cmd::approve::Args::augment_args),
    ("reject", cmd::reject::Args::augment_args),
    ("hook", cmd::hook::Args::augment_args),
    ("guard", cmd::guard::Args::augment_args),
    ("signal", cmd::signal::Args::augment_args),
    ("board", cmd::board::Args::augment_args),
    ("key", cmd::key::Args::augment_args),
    ("close", cmd::close::Args::augment_args),
    ("init", cmd::init::Args::augment_args),
    ("agent", cmd::agent::Args::augment_args),
    ("gc", cmd::gc::Args::augment_args),
    ("completions", cmd::manual::CompletionsArgs::augment_args),
    ("man", cmd::manual::ManArgs::augment_args),
    ("version", cmd::manual::VersionArgs::augment_args),
    ("validate", cmd::validate::Args::augment_args),
    ("land", cmd::land::Args::augment_args),
    ("sweep", cmd::sweep::Args::augment_args),
    ("demo", cmd::demo::Args::augment_args),
    ("restore", cmd::restore::Args::augment_args),
    ("notes", cmd::notes::Args::augment_args),
    ("serve", cmd::serve::Args::augment_args),
];

/// Parse the command line as `Cli::parse()` does (exiting on `--help`, `--version` and errors).
///
/// clap builds its tree of every subcommand and flag before it reads a word, and for a check
/// that was a tenth of the work of the git-object part (scripts/bench.sh, callgrind). So the
/// subcommand named is parsed first against a tree holding only it and the global flags; that
/// parse is used only when it succeeds. Everything else — help, a version flag, any error, a
/// command line this does not recognise — goes through the whole tree, so what a user sees
/// is clap's own answer, word for word.
pub fn parse(mut args: Vec<OsString>) -> Cli {
    split_shebang(&mut args);
    if let Some(cli) = parse_fast(&args) {
        return cli;
    }
    let mut command = Cli::command();
    let mut matches = command
        .try_get_matches_from_mut(args)
        .unwrap_or_else(|e| e.exit());
    Cli::from_arg_matches_mut(&mut matches).unwrap_or_else(|e| e.format(&mut command).exit())
}

/// The fast path of [`parse`]: `None` unless the words before the subcommand are only global
/// flags, the subcommand is one of [`SUBCOMMANDS`] and the reduced tree parses the line.
pub fn parse_fast(args: &[OsString]) -> Option<Cli> {
    let mut command = reduced(subcommand_named(args)?)?;
    let mut matches = command.try_get_matches_from_mut(args).ok()?;
    Cli::from_arg_matches_mut(&mut matches).ok()
}

/// The direct server hook's `#!<closegate> hook run pre-receive` line (`hook::script`): Linux
/// passes what follows the interpreter as one argument, so `hook run pre-receive` arrives as a
/// single word before the hook file's path. That exact word is split back into three; no
/// command line a person types has it.
fn split_shebang(args: &mut Vec<OsString>) {
    if args
        .get(1)
        .is_some_and(|a| a == crate::hook::script::SERVER_SHEBANG_ARGS)
    {
        let words = crate::hook::script::SERVER_SHEBANG_ARGS
            .split(' ')
            .map(OsString::from);
        args.splice(1..2, words);
    }
}

/// The tree of [`parse`]'s fast path: the global flags and the one subcommand `name`.
pub fn reduced(name: &str) -> Option<clap::Command> {
    let (name, build) = SUBCOMMANDS.iter().find(|(n, _)| *n == name)?;
    let command = Global::augment_args(clap::Command::new("closegate"))
        .subcommand(build(clap::Command::new(*name)))
        .subcommand_required(true);
    Some(command)
}

/// The subcommand word, when everything before it is a global flag this recognises
/// (`-C DIR`, `-CDIR`, `--color WHEN`, `--color=WHEN`, `-q`, `--quiet`).
fn subcommand_named(args: &[OsString]) -> Option<&str> {
    let mut words = args.iter().skip(1).map(|a| a.to_str());
    while let Some(word) = words.next() {
        let word = word?;
        match word {
            "-C" | "--color" => {
                words.next()?;
            }
            "-q" | "--quiet" => {}
            _ if word.starts_with("--color=") || (word.starts_with("-C") && word.len() > 2) => {}
            _ if word.starts_with('-') => return None,
            _ => return Some(word),
        }
    }
    None
}

/// `--color`: `always` and `never` as said; `auto` colours only on a terminal, and never when
/// `NO_COLOR` is set to a non-empty value.
pub fn color_wanted(when: ColorWhen) -> bool {
    match when {
        ColorWhen::Always => return true,
        ColorWhen::Never => return false,
        ColorWhen::Auto => {}
    }
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && crate::term::stdout_attended()
}
