#!/usr/bin/env bash
# The layer fence (tests/it/layers.rs, issue 40): prints the layer table and the crates only some
# modules may name, every import between top-level modules (with their layers and how many
# places make it) and between the modules of each folder, where each restricted crate is named,
# and the violations (none when `cargo test layers::` passes).
#   scripts/layers.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --locked --quiet --test it layers::print_the_fence -- --ignored --exact --nocapture 2>/dev/null |
  grep -v -e '^running ' -e '^test result: ' -e '^$' -e '^\.$'
