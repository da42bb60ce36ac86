#!/usr/bin/env bash
# Issue 15 — a real Rust project with a warm workspace (SPEC §19). Builds closegate (release),
# clones this repository into a scratch directory, configures on its base one check
#
#   [[checks]] name = "build", run = "cargo build --locked --offline", keep = ["target/"]
#
# and gives an agent a worktree of it. Then, in this order:
#
#   cold check:   the first `closegate check` of the agent's first commit: the workspace is empty,
#                 so this is a cold build from a pristine checkout (quoted, not a target)
#   cold agent:   the same cargo command, cold, in the agent's own worktree (setup, quoted)
#   one-file change, committed: `src/term.rs` gains a line, a status document is written
#   incremental:  the same cargo command run again in the agent's own worktree
#   check:        `closegate check` of that commit (the check runs in its warm workspace)
#   ratio:        check / incremental (target <= 1.3x); rounds alternate which goes first
#
# Each round makes a fresh one-file change. cargo and rustup are found through the caller's
# CARGO_HOME / RUSTUP_HOME (default ~/.cargo, ~/.rustup): the check reads the registry offline,
# read-only, from inside the sandbox. Slow: two cold debug builds of this repository.
# Usage: scripts/bench-cargo.sh [rounds]   (default 2). Run it niced on a shared machine.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-2}
export CARGO_HOME=${CARGO_HOME:-$HOME/.cargo} RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}

. "$here/scripts/bench-env.sh"
bench_setup release
# The built closegate is found; the benchmark's own builds use each checkout's target/.
unset CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR
build="cargo build --locked --offline"

git clone -q --no-hardlinks "$here" "$dir/repo"
cd "$dir/repo"
git checkout -q -B main
printf '[[checks]]\nname = "build"\nrun = "%s"\ntimeout_s = 3600\nkeep = ["target/"]\n' "$build" \
  > .closegate.toml
git add .closegate.toml && git commit -q -m "configure closegate: a cargo build, kept warm"
git worktree add -q -b agent/bench "$dir/agent" main
agent="$dir/agent"

secs() { python3 -c 'import sys,time; print(time.perf_counter())'; }
# timed <label> <cmd…>: run, append "label seconds" to $dir/times; fail loudly on a bad exit.
timed() {
  local label=$1 t0 t1 rc=0
  shift
  t0=$(secs)
  "$@" > "$dir/out.$label" 2>&1 || rc=$?
  t1=$(secs)
  if [ "$rc" -ne 0 ]; then
    echo "bench-cargo: $label exited $rc:" >&2
    tail -30 "$dir/out.$label" >&2
    exit 1
  fi
  echo "$label $(python3 -c "print($t1 - $t0)")" >> "$dir/times"
}

# change <n>: a one-file change in the agent's worktree, committed, with its status document.
change() {
  echo "// bench-cargo change $1" >> "$agent/src/term.rs"
  git -C "$agent" commit -q -am "bench: change src/term.rs ($1)"
  "$closegate" close --artifact src/term.rs --abstract "changes one file for the benchmark" \
    --done "the change is in, proven by the check build" "$agent" > /dev/null
}

cd "$agent"
change 0
timed cold-check "$closegate" check "$agent"
timed cold-agent $build
for n in $(seq 1 "$rounds"); do
  change "$n"
  if [ $((n % 2)) = 1 ]; then
    timed incremental $build
    timed check "$closegate" check "$agent"
  else
    timed check "$closegate" check "$agent"
    timed incremental $build
  fi
done

python3 - "$dir/times" "$rounds" <<'PY'
import statistics, sys
times = {}
for line in open(sys.argv[1]):
    name, secs = line.split()
    times.setdefault(name, []).append(float(secs))
rounds = int(sys.argv[2])
s = {name: statistics.median(t) for name, t in times.items()}
ratio = s["check"] / s["incremental"]
print(f"cargo build --locked --offline of this repository, median of {rounds} one-file changes")
print(f"check with keep = [\"target/\"]: {s['check']:.1f} s vs the same cargo command incremental in "
      f"the agent's worktree {s['incremental']:.1f} s = {ratio:.2f}x (target <= 1.3x) "
      f"{'ok' if ratio <= 1.3 else 'MISSED'}")
print(f"cold, for comparison: first check (pristine checkout, empty workspace) {s['cold-check']:.1f} s; "
      f"cold cargo build in the agent's worktree {s['cold-agent']:.1f} s")
print("per round (s): check " + " ".join(f"{t:.1f}" for t in times["check"])
      + "; incremental " + " ".join(f"{t:.1f}" for t in times["incremental"]))
PY
