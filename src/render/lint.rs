//! What `closegate lint --fix` prints besides the report (SPEC §2): one line per change made,
//! agent text escaped.

use std::io::Write;

use super::escape;
use crate::doc;

/// One line per change `--fix` made.
pub fn fixes(
    file: &std::path::Path,
    fixes: &[doc::fix::Fix],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    if fixes.is_empty() {
        return writeln!(out, "fixed nothing in {}", file.display());
    }
    for f in fixes {
        writeln!(
            out,
            "fixed {}:{} ({}): `{}` -> `{}`",
            file.display(),
            f.line,
            f.codes
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            escape(&f.before),
            escape(&f.after)
        )?;
    }
    Ok(())
}
