//! `closegate explain`: what a finding code means, what causes it and how to fix it (SPEC §14).
//! The lookup is `catalog::lookup`; the words `render::explain`.

use std::io::Write;

use crate::catalog::lookup::{closest, find};
use crate::render::escape;
use crate::render::explain::{describe, list};

/// Explain a finding code: its severity, gate, what usually causes it and how to fix it.
///
/// Exit 0 when the code is known; 2 (with the closest codes) when it is not.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The finding code, e.g. `close-commit-not-tip` (ASCII case is ignored).
    #[arg(required_unless_present = "list", conflicts_with = "list")]
    pub code: Option<String>,

    /// Print every code, one per line: code, severity and gate in aligned columns.
    #[arg(long)]
    pub list: bool,
}

/// How many near codes an unknown code's error names.
const SUGGESTIONS: usize = 3;

pub fn run(args: Args) -> anyhow::Result<i32> {
    if args.list {
        write!(crate::term::human(), "{}", list())?;
        return Ok(0);
    }
    let code = args.code.unwrap_or_default();
    match find(&code) {
        Some(info) => {
            write!(crate::term::human(), "{}", describe(info))?;
            Ok(0)
        }
        None => anyhow::bail!(
            "unknown finding code '{}'; closest: {} (`closegate explain --list` shows all)",
            escape(&code),
            closest(&code, SUGGESTIONS).join(", ")
        ),
    }
}
