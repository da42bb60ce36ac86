//! What `closegate notes` prints (SPEC §20): what was pushed or fetched, or that every push was
//! rejected.

use std::io::Write;

use anyhow::Result;

use crate::attest::NOTES_REF;
use crate::notes_sync::Outcome;

/// The outcome of `notes push|fetch` with `remote`; the exit code, 1 when every push was
/// rejected.
pub fn outcome(outcome: &Outcome, remote: &str, out: &mut dyn Write) -> Result<i32> {
    match outcome {
        Outcome::Pushed { attempts } => {
            writeln!(
                out,
                "pushed {NOTES_REF} to {remote} ({attempts} attempt(s))"
            )?;
            Ok(0)
        }
        Outcome::Fetched(None) => {
            writeln!(out, "{remote} has no {NOTES_REF}: nothing fetched")?;
            Ok(0)
        }
        Outcome::Fetched(Some(id)) => {
            writeln!(
                out,
                "fetched {NOTES_REF} from {remote}; local notes now at {id}"
            )?;
            Ok(0)
        }
        Outcome::Rejected { attempts } => {
            writeln!(
                out,
                "not pushed: {remote} rejected all {attempts} attempts (others kept pushing); \
                 run `closegate notes push {remote}` again"
            )?;
            Ok(1)
        }
    }
}
