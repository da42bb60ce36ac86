//! Standard output as the command line promises it (SPEC §11, §21).
//!
//! Every subcommand writes through [`stdout`] (what a script parses) or [`human`] (prose for a
//! person). A reader that closes the pipe early (`closegate log | head -1`) is not an error: the
//! first `EPIPE` closes the writer, later writes are dropped, and the command ends with the exit
//! code its verdict gives. Under `-q/--quiet`, [`human`] is a sink.

pub mod escape;
pub(crate) mod progress;

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);

/// Set by `-q/--quiet` before any subcommand runs.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether `-q/--quiet` was given.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Standard output that ends quietly when its reader goes away.
pub struct Out {
    inner: io::StdoutLock<'static>,
    /// The reader closed the pipe, or (quiet) this output is for a person: drop every byte.
    closed: bool,
}

/// What a script parses: JSON, workflow commands, SARIF, completion scripts, the man page.
pub fn stdout() -> Out {
    Out {
        inner: io::stdout().lock(),
        closed: false,
    }
}

/// Prose for a person: nothing under `-q/--quiet`.
pub fn human() -> Out {
    Out {
        inner: io::stdout().lock(),
        closed: quiet(),
    }
}

/// Whether standard output is a terminal a person is at (colour's `auto`, SPEC §21).
pub fn stdout_attended() -> bool {
    console::Term::stdout().features().is_attended()
}

impl Out {
    fn closed_by(&mut self, err: io::Error) -> io::Result<()> {
        if err.kind() == io::ErrorKind::BrokenPipe {
            self.closed = true;
            Ok(())
        } else {
            Err(err)
        }
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        match self.inner.write(buf) {
            Ok(n) => Ok(n),
            Err(err) => self.closed_by(err).map(|()| buf.len()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        match self.inner.flush() {
            Ok(()) => Ok(()),
            Err(err) => self.closed_by(err),
        }
    }
}

/// Whether `err` comes from writing to a closed pipe (anywhere in its chain).
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}
