//! SPEC §19: while checks run on a terminal, one status line per running check (its name and
//! the time it has run) on stderr; nothing at all when stderr is not a terminal. `indicatif`
//! draws and clears the lines, so they never end up in a log or a pipe.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    multi: Option<MultiProgress>,
}

/// One check's status line; dropping it removes the line.
pub struct Line(Option<ProgressBar>);

impl Progress {
    pub fn new() -> Progress {
        let on = std::io::stderr().is_terminal();
        let multi = on.then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()));
        Progress { multi }
    }

    pub fn start(&self, name: &str) -> Line {
        let Some(multi) = &self.multi else {
            return Line(None);
        };
        let style = ProgressStyle::with_template("{spinner} check {msg} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        let bar = multi.add(ProgressBar::new_spinner().with_style(style));
        bar.set_message(name.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
        Line(Some(bar))
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        if let Some(bar) = self.0.take() {
            bar.finish_and_clear();
        }
    }
}
