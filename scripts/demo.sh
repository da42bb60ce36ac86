#!/usr/bin/env bash
# The protocol on a scratch repository: builds closegate, then runs `closegate demo`, the
# walkthrough the binary carries (src/cmd/demo/walkthrough.sh): four agents and the four
# verdicts, teardown, a task contract and the board, the hook refusing a merge that never
# passed, and `closegate close` behind a stop hook. No network. Everything it creates lives in
# one temporary directory, removed at the end unless KEEP=1. CLOSEGATE=/path/to/closegate skips
# the build.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

if [ -n "${CLOSEGATE:-}" ]; then
  closegate=$CLOSEGATE
else
  echo "building closegate (cargo build --release; a first build compiles every dependency and"
  echo "takes a few minutes, cargo's progress follows)..."
  cargo build --release --manifest-path "$here/Cargo.toml"
  closegate="${CARGO_TARGET_DIR:-$here/target}/release/closegate"
fi

if [ "${KEEP:-}" = 1 ]; then
  exec "$closegate" demo --keep
fi
exec "$closegate" demo
