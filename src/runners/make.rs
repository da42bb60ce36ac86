//! `make` (and GNU make as `gmake`): it runs the project's own test target, so the census reads
//! every runner's output, and the makefiles are graded input.

use super::{Graded, Hit, Invocation, Language, RUNNER_CONFIG, Row, Runner};

pub(super) const ROW: Row = Row {
    runner: Runner::Make,
    name: "make",
    language: Language::None,
    recognise,
    graded: &GRADED,
    keys: &[],
    wiring: &[],
    configs: &[],
    census: None,
    under_test: &[],
    only: None,
};

const GRADED: [Graded; 4] = [
    ("**/Makefile", RUNNER_CONFIG),
    ("**/GNUmakefile", RUNNER_CONFIG),
    ("**/makefile", RUNNER_CONFIG),
    ("**/*.mk", RUNNER_CONFIG),
];

fn recognise(invocation: &Invocation) -> Option<Hit> {
    matches!(invocation.program(), "make" | "gmake")
        .then(Hit::wrapper)
        .flatten()
}
