#!/usr/bin/env bash
# Run every cargo-fuzz target (fuzz/fuzz_targets/) for SECONDS each (default 60), one after the
# other, at the lowest CPU priority, on its committed corpus (fuzz/corpus/<target>/), and print
# libFuzzer's closing `#N DONE cov: … ft: … exec/s` line per target. A crash stops the script
# with libFuzzer's exit status and leaves the input under fuzz/artifacts/<target>/.
#
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
# Installs cargo-fuzz when it is missing. Runs on the stable toolchain (RUSTC_BOOTSTRAP=1 lets
# cargo-fuzz pass its -Z flags) without a sanitizer (`-s none`): the targets fuzz safe Rust
# parsers, where the assertions, not a sanitizer, are the oracle. New corpus entries are written
# to a scratch directory, not the committed corpus; minimise by hand with
# `RUSTC_BOOTSTRAP=1 cargo fuzz cmin -s none TARGET fuzz/corpus/TARGET`.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
shift || true
export RUSTC_BOOTSTRAP=1
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "installing cargo-fuzz..."
  nice -n 19 cargo install --locked cargo-fuzz
fi
cd "$here"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo fuzz list)
fi
echo "building ${#targets[@]} targets..."
nice -n 19 cargo fuzz build -s none
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for target in "${targets[@]}"; do
  mkdir -p "$scratch/$target" "fuzz/corpus/$target"
  log="$scratch/$target.log"
  status=0
  nice -n 19 cargo fuzz run -s none "$target" "$scratch/$target" "fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -print_final_stats=0 >"$log" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then
    tail -n 40 "$log"
    echo "$target: libFuzzer exited $status (input under fuzz/artifacts/$target/)"
    exit "$status"
  fi
  printf '%-12s %s\n' "$target" "$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1)"
done
