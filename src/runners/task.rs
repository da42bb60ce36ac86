//! Task runners that run a project's own test task without naming the runner (`just test`,
//! `task test`, `rake`, `hatch run test`, `bun test`): the census reads every runner's output.
//! What they run is decided by files closegate does not read as configuration; the paths a
//! check's `run` names are on `ci` all the same (SPEC §4.5).

use super::{Hit, Invocation, Language, Row, Runner};

pub(super) const ROW: Row = Row {
    runner: Runner::Task,
    name: "task",
    language: Language::None,
    recognise,
    graded: &[],
    keys: &[],
    wiring: &[],
    configs: &[],
    census: None,
    under_test: &[],
    only: None,
};

/// The programs: their own test task, run through them.
const PROGRAMS: [&str; 8] = [
    "just", "task", "rake", "hatch", "pdm", "uv", "poetry", "bun",
];

fn recognise(invocation: &Invocation) -> Option<Hit> {
    PROGRAMS
        .contains(&invocation.program())
        .then(Hit::wrapper)
        .flatten()
}
