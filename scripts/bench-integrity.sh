#!/usr/bin/env bash
# Issue 27 — what test integrity (SPEC §23) costs a check, on corpus projects, warm.
#
# For each project (idna: stdlib unittest; termtree: cargo test, target dir kept warm; is-number:
# mocha through npm test, node_modules installed once and linked in), an agent's worktree gets
#
#   T  a test-editing commit: a code change plus a new test that exercises it (honest), and
#   N  a commit touching no test path (a code change only),
#
# and each is checked with `--rerun --no-record` (so nothing is reused) under two operator
# configurations (`--config`) that differ only in the `tests` surface:
#
#   with:     the project's test paths are on `tests`: the overlays run (T: overlay and reverse
#             overlay; N: nothing extra, by SPEC)
#   without:  `tests = ["no-such-path/**"]`: no path is a test path, no overlay runs
#
# ratio T = with / without (target <= 2.3x); ratio N = with / without (target <= 1.05x). Rounds
# alternate which configuration goes first; the figure is the median over rounds.
# The corpus is found at ../shared/corpus or ../../shared/corpus (or $CORPUS).
# Usage: scripts/bench-integrity.sh [rounds]   (default 3). Run it niced on a shared machine.
# JOBS=2 sets `jobs = 2` in both configurations (the overlays then run side by side).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
corpus=${CORPUS:-}
for c in "$here/../shared/corpus" "$here/../../shared/corpus"; do
  [ -z "$corpus" ] && [ -x "$c/unpack.sh" ] && corpus=$(cd "$c" && pwd)
done
[ -n "$corpus" ] || { echo "bench-integrity: no shared/corpus found; set CORPUS" >&2; exit 2; }
export CARGO_HOME=${CARGO_HOME:-$HOME/.cargo} RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}
npm_cache=${npm_config_cache:-$HOME/.npm}
for tool in cargo python3 node npm; do
  command -v "$tool" > /dev/null || { echo "bench-integrity: $tool is not installed" >&2; exit 2; }
done

. "$here/scripts/bench-env.sh"
# The suites dominate the figure; BENCH_PROFILE=debug skips the slow release build.
bench_setup "${BENCH_PROFILE:-release}"
unset CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR
# Readable inside the sandbox (which replaces /tmp): warm caches live beside the build.
warm="$here/target/bench-integrity"
mkdir -p "$warm"

secs() { python3 -c 'import time; print(time.perf_counter())'; }
# timed <label> <cmd…>: run, append "label seconds" to $dir/times. `check` exits 0 or 3 here.
timed() {
  local label=$1 t0 t1 rc=0
  shift
  t0=$(secs)
  "$@" > "$dir/out.$label" 2>&1 || rc=$?
  t1=$(secs)
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
    echo "bench-integrity: $label exited $rc:" >&2
    tail -30 "$dir/out.$label" >&2
    exit 1
  fi
  echo "$label $(python3 -c "print($t1 - $t0)")" >> "$dir/times"
}

# project <name> <tests globs> <check table> <agent edit for T> <agent edit for N>
project() {
  local name=$1 tests=$2 check=$3 edit_t=$4 edit_n=$5 repo="$dir/$1"
  "$corpus/unpack.sh" "$name" "$repo" > /dev/null
  printf 'jobs = %s\n[protected]\ntests = %s\n\n%s' "${JOBS:-1}" "$tests" "$check" \
    > "$dir/$name.with.toml"
  printf 'jobs = %s\n[protected]\ntests = ["no-such-path/**"]\n\n%s' "${JOBS:-1}" "$check" \
    > "$dir/$name.without.toml"
  for kind in T N; do
    local wt="$dir/$name-$kind"
    git -C "$repo" worktree add -q -b "agent/$kind" "$wt" main
    (cd "$wt" && if [ "$kind" = T ]; then eval "$edit_t"; else eval "$edit_n"; fi)
    git -C "$wt" add -A && git -C "$wt" commit -q -m "bench $kind"
    "$closegate" close --abstract "bench $kind" --done "the change, proven by the check" \
      "$wt" > /dev/null
    # Warm-up: the first run fills tool caches and the kept workspace.
    "$closegate" check --config "$dir/$name.with.toml" --rerun --no-record "$wt" > /dev/null || true
    for n in $(seq 1 "$rounds"); do
      if [ $((n % 2)) = 1 ]; then order="with without"; else order="without with"; fi
      for cfg in $order; do
        timed "$name.$kind.$cfg" "$closegate" check --config "$dir/$name.$cfg.toml" --rerun \
          --no-record "$wt"
      done
    done
  done
}

# idna: Python, the standard library's unittest.
project idna '["tests/**"]' \
  $'[[checks]]\nname = "unittest"\nrun = "python3 -m unittest discover -q"\nnetwork = false\n' \
  $'printf "\\n\\ndef bench_label(s):\\n    return s.lower()\\n" >> idna/core.py; printf "import unittest\\nfrom idna.core import bench_label\\n\\nclass T(unittest.TestCase):\\n    def test_it(self):\\n        self.assertEqual(bench_label(\\"A\\"), \\"a\\")\\n" > tests/test_bench.py' \
  $'printf "\\n# bench\\n" >> idna/core.py'

# termtree: Rust, cargo test with the target directory kept between runs.
(cd "$dir" && "$corpus/unpack.sh" termtree fetch > /dev/null && cd fetch && cargo fetch --locked -q)
project termtree '["src/tests.rs"]' \
  "$(printf '[[checks]]\nname = "cargo-test"\nrun = "cargo test --locked --offline --quiet"\nnetwork = false\ntimeout_s = 900\nkeep = ["target/"]\n')" \
  $'printf "\\npub fn bench_depth() -> usize { 1 }\\n" >> src/lib.rs; printf "\\n#[test]\\nfn bench_depth_is_one() { assert_eq!(bench_depth(), 1); }\\n" >> src/tests.rs' \
  $'printf "\\n// bench\\n" >> src/lib.rs'

# is-number: Node, mocha through npm test; node_modules installed once and linked in.
if [ ! -x "$warm/is-number/node_modules/.bin/mocha" ]; then
  rm -rf "$warm/is-number" && "$corpus/unpack.sh" is-number "$warm/is-number" > /dev/null
  (cd "$warm/is-number" && npm_config_cache="$npm_cache" npm install --no-audit --no-fund --loglevel=error > /dev/null)
fi
project is-number '["test.js"]' \
  "$(printf '[[checks]]\nname = "npm-test"\nrun = "ln -s %s/is-number/node_modules node_modules \&\& npm test"\nnetwork = false\n' "$warm")" \
  $'sed -i "s/^module.exports = function(num) {/module.exports = function isNumber(num) {\\n  if (num === \\"bench\\") return false;/" index.js; printf "\\ndescribe(\\"bench\\", function() { it(\\"bench is not a number\\", function() { assert(!isNumber(\\"bench\\")); }); });\\n" >> test.js' \
  $'printf "\\n// bench\\n" >> index.js'

python3 - "$dir/times" "$rounds" <<'PY'
import statistics, sys
times = {}
for line in open(sys.argv[1]):
    name, secs = line.split()
    times.setdefault(name, []).append(float(secs))
rounds = int(sys.argv[2])
med = {k: statistics.median(v) for k, v in times.items()}
print(f"closegate check --rerun --no-record, warm, median of {rounds} rounds (seconds)")
print(f"{'project':<10} {'commit':<22} {'with':>7} {'without':>8} {'ratio':>6}  target")
worst = {"T": 0.0, "N": 0.0}
for name in ["idna", "termtree", "is-number"]:
    for kind, label, target in [("T", "test-editing", 2.3), ("N", "no test path", 1.05)]:
        w, wo = med[f"{name}.{kind}.with"], med[f"{name}.{kind}.without"]
        ratio = w / wo
        worst[kind] = max(worst[kind], ratio)
        ok = "ok" if ratio <= target else "MISSED"
        print(f"{name:<10} {label:<22} {w:7.2f} {wo:8.2f} {ratio:5.2f}x  <= {target}x {ok}")
print(f"worst: test-editing {worst['T']:.2f}x (target <= 2.3x), "
      f"no test path {worst['N']:.2f}x (target <= 1.05x)")
PY
