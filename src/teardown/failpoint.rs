//! Test-only failpoints of the teardown (README: "Teardown under test"). Every step that changes
//! something — the archive, the record, the rename aside, each removal, the administrative data —
//! and every folder the removal opens is numbered from 1 and named (`remove target/a.o`).
//! `CLOSEGATE_TEST_FAILPOINT` stops the process there:
//!
//! - `kill:N` or `kill:<step name>` — SIGKILL itself just before that step (the
//!   interrupted-teardown tests);
//! - `pause:N` or `pause:<step name>` — create `$CLOSEGATE_TEST_FAILPOINT_DIR/paused` (holding the
//!   step's name), then wait until `$CLOSEGATE_TEST_FAILPOINT_DIR/go` exists (at most two
//!   minutes; the race tests swap a folder for a link at a known point).
//!
//! Unset, a step costs one counter increment and one environment lookup.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

static STEP: AtomicUsize = AtomicUsize::new(0);

/// Mark the next step; stop here when the failpoint names it.
pub fn step(name: &str) {
    let n = STEP.fetch_add(1, Ordering::SeqCst) + 1;
    let Some(spec) = crate::sys::test_switch("CLOSEGATE_TEST_FAILPOINT") else {
        return;
    };
    let spec = spec.to_string_lossy();
    if let Some(at) = spec.strip_prefix("kill:") {
        if at.parse() == Ok(n) || at == name {
            crate::sys::process::kill_self();
        }
    } else if let Some(at) = spec.strip_prefix("pause:")
        && (at.parse() == Ok(n) || at == name)
    {
        pause(name);
    }
}

fn pause(name: &str) {
    let Some(dir) = crate::sys::test_switch("CLOSEGATE_TEST_FAILPOINT_DIR").map(PathBuf::from)
    else {
        return;
    };
    let _ = std::fs::write(dir.join("paused"), name);
    let go = dir.join("go");
    // A test that died without saying `go` must not leave this process waiting forever.
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while go.symlink_metadata().is_err() && std::time::Instant::now() < give_up {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}
