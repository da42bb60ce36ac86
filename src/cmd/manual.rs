//! `closegate completions`, `closegate man` and `closegate version` (SPEC §21): what a user's
//! shell, `man` and bug reports need, all generated from the one clap definition in `cli.rs`,
//! which the caller hands in (`cli` assembles every command's `Args`, so it sits above `cmd`).

use std::io::Write;

use anyhow::Result;

use crate::term;

/// Print a shell completion script for closegate
///
/// For example `closegate completions bash > ~/.local/share/bash-completion/completions/closegate`
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete in
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Print the man page (roff)
///
/// For example `closegate man > ~/.local/share/man/man1/closegate.1`
#[derive(Debug, clap::Args)]
pub struct ManArgs {}

/// Print the version; with --verbose also the commit it was built from, libgit2's version and
/// the enabled features
#[derive(Debug, clap::Args)]
pub struct VersionArgs {
    /// Add the build commit, libgit2's version and the enabled features
    #[arg(short, long)]
    pub verbose: bool,
}

/// Print the completion script of `cli` (the whole command line, `cli::Cli::command()`).
pub fn completions(args: CompletionsArgs, mut cli: clap::Command) -> Result<i32> {
    let mut out = term::stdout();
    clap_complete::generate(args.shell, &mut cli, "closegate", &mut out);
    out.flush()?;
    Ok(0)
}

/// Print the man page of `cli` (the whole command line, `cli::Cli::command()`).
pub fn man(_args: ManArgs, cli: clap::Command) -> Result<i32> {
    let mut out = term::stdout();
    clap_mangen::Man::new(cli).render(&mut out)?;
    out.flush()?;
    Ok(0)
}

/// The commit this binary was built from (`build.rs`), or `unknown`.
pub const COMMIT: &str = env!("CLOSEGATE_COMMIT");

/// Cargo features of the closegate crate and of git2 that this build enables.
const FEATURES: &[&str] = &["git2/vendored-libgit2", "libz-sys/static"];

pub fn version(args: VersionArgs) -> Result<i32> {
    let mut out = term::stdout();
    writeln!(out, "closegate {}", env!("CARGO_PKG_VERSION"))?;
    if args.verbose {
        let git = git2::Version::get();
        let (major, minor, patch) = git.libgit2_version();
        let yes = |b: bool| if b { "yes" } else { "no" };
        writeln!(out, "commit: {COMMIT}")?;
        writeln!(
            out,
            "libgit2: {major}.{minor}.{patch} ({}; threads: {}, https: {}, ssh: {})",
            if git.vendored() { "vendored" } else { "system" },
            yes(git.threads()),
            yes(git.https()),
            yes(git.ssh())
        )?;
        writeln!(out, "features: {}", FEATURES.join(", "))?;
    }
    out.flush()?;
    Ok(0)
}
