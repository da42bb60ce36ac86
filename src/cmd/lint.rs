//! `closegate lint`: run the status-document gate alone (SPEC §2), no repository needed. The
//! rules are `doc` (and `doc::fix`); the words `render` (`render::lint` for `--fix`).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;

use crate::doc::{self, ParseOptions};
use crate::render::{self, Format};

/// The status file read when no FILE is given.
const DEFAULT_FILE: &str = "_EXEC_STATUS.md";

/// Check a status document against the grammar alone (no repository needed).
///
/// Prints VERIFIED when the document has no refusal, else FAIL. Exit codes: 0 accepted,
/// 1 refused, 2 the file could not be read.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The status document; `-` reads standard input.
    #[arg(default_value = DEFAULT_FILE)]
    pub file: PathBuf,
    /// Read the eight older state spellings (archived records) with a warning instead of refusing them.
    #[arg(long)]
    pub legacy: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Rewrite mechanical faults in place (dashes, separators, key spellings, older state words,
    /// upper-case hex in the close line, a missing `T` in `updated`) and print each change
    #[arg(long)]
    pub fix: bool,
}

/// Lint one document and print the report; `Ok` carries the exit code (0 or 1).
pub fn run(args: Args, color: bool) -> anyhow::Result<i32> {
    let (source, mut bytes) = read(&args.file)?;
    let mut fixes = Vec::new();
    if args.fix {
        if args.file.as_os_str() == "-" {
            anyhow::bail!("--fix rewrites a file in place: name the FILE, not `-`");
        }
        let text = std::str::from_utf8(&bytes).ok().map(doc::fix::fix);
        if let Some((fixed, changes)) = text
            && !changes.is_empty()
        {
            crate::fsutil::write_atomic(&args.file, fixed.as_bytes())?;
            bytes = fixed.into_bytes();
            fixes = changes;
        }
    }
    let report = crate::report::lint(
        &bytes,
        source,
        ParseOptions {
            legacy: args.legacy,
        },
    );
    let mut out = std::io::BufWriter::new(crate::render::out(args.format));
    render::render(&report, args.format, color, &mut out).context("cannot write the report")?;
    if args.fix {
        // Human output keeps the verdict first; the other formats keep stdout parseable.
        let mut err = std::io::stderr().lock();
        let sink: &mut dyn Write = if args.format == Format::Human {
            &mut out
        } else {
            &mut err
        };
        render::lint::fixes(&args.file, &fixes, sink).context("cannot write the report")?;
    }
    out.flush().context("cannot write the report")?;
    Ok(report.verdict.exit_code())
}

/// The bytes of FILE (or of standard input for `-`) and the name the report shows.
fn read(file: &std::path::Path) -> anyhow::Result<(String, Vec<u8>)> {
    let bytes = crate::input_file::read(file)
        .with_context(|| format!("cannot read the status document {}", file.display()))?;
    Ok((file.display().to_string(), bytes))
}
