#!/usr/bin/env bash
# SPEC §19 — the warm-workspace reset. Makes a scratch repository whose base configures one check
# with `keep = ["target/"]` (`run = "true"`; `sandbox = "off"`, so only the reset differs), two
# agent worktrees whose commits hold 20,000 files and differ in one, and measures in the same
# run, for this closegate and a reference closegate:
#
#   `closegate check --rev agent/a|b --no-worktree --rerun --no-record` alternating between the
#   two branches (the worktree scan left out), so each run
#   resets the shared warm workspace from one commit to the other (one file changed), median of
#   interleaved rounds; the ratio this / reference (target <= 1.2x).
#
# The reference is REF_CLOSEGATE when set, else main's closegate built from `git archive
# ${REF_REV:-main}` into ${REF_TARGET:-a temporary target directory} (the first build is cold).
# Usage: scripts/bench-reset.sh [rounds]   (default 15). BENCH_PROFILE=debug compares debug
# builds (both sides the same profile). Needs python3. No network.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-15}
profile=${BENCH_PROFILE:-release}

. "$here/scripts/bench-env.sh"
bench_setup "$profile"

ref=${REF_CLOSEGATE:-}
if [ -z "$ref" ]; then
  src="$dir/ref-src"
  target=${REF_TARGET:-$dir/ref-target}
  mkdir -p "$src"
  git -C "$here" archive "${REF_REV:-main}" | tar -x -C "$src"
  echo "building the reference closegate (${REF_REV:-main}, $profile)..."
  flag=""; [ "$profile" = release ] && flag="--release"
  CARGO_TARGET_DIR="$target" cargo build $flag --quiet --bin closegate --manifest-path "$src/Cargo.toml"
  ref="$target/$profile/closegate"
fi

status() { # worktree slug sha
  {
    printf '# STATUS — %s\n\n- state: close-ok\n' "$2"
    printf -- '- abstract: changes one file of 20000, proven by the check\n'
    printf -- '- last commit: %s — change\n' "${3:0:12}"
    printf -- '- done: it is in, proven by the check\n- next / blocked-on: none\n'
    printf -- '- artifacts:\n  - f/00000.txt\n'
    printf '\nCLOSE-OK · %s · commit %s · branch agent/%s · worktree %s\n' "$2" "${3:0:12}" "$2" "$1"
  } > "$1/_EXEC_STATUS.md"
}

setup() { # repo-dir
  git init -q -b main "$1"
  (
    cd "$1"
    printf 'sandbox = "off"\n[[checks]]\nname = "warm"\nrun = "true"\ntimeout_s = 120\nkeep = ["target/"]\n' > .closegate.toml
    python3 - <<'PY'
import os
for d in range(100):
    os.makedirs(f"f/{d:02d}", exist_ok=True)
    for i in range(200):
        with open(f"f/{d:02d}/{i:05d}.txt", "w") as fh:
            fh.write(f"file {d} {i}\n" * 8)
os.makedirs("f", exist_ok=True)
with open("f/00000.txt", "w") as fh:
    fh.write("base\n")
PY
    git add -A && git commit -q -m "20000 files"
    for s in a b; do
      git worktree add -q -b "agent/$s" "$1-$s" main
      echo "$s" > "$1-$s/f/00000.txt"
      git -C "$1-$s" commit -q -am "change one file"
      status "$1-$s" "$s" "$(git -C "$1-$s" rev-parse HEAD)"
      git -C "$1-$s" add _EXEC_STATUS.md && git -C "$1-$s" commit -q -m status
    done
  )
}

echo "making two 20,000-file repositories..."
setup "$dir/new"
setup "$dir/ref"

python3 - "$closegate" "$ref" "$dir" "$rounds" <<'PY'
import random, statistics, subprocess, sys, time
new, ref, d, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sides = {"this": (new, f"{d}/new"), "reference": (ref, f"{d}/ref")}
flip = {"this": 0, "reference": 0}
def run(name):
    exe, repo = sides[name]
    rev = f"agent/{'ab'[flip[name] % 2]}"
    flip[name] += 1
    t = time.perf_counter()
    # --no-worktree: the worktree scan is not what is measured; the check's reset is.
    p = subprocess.run([exe, "check", "--rev", rev, "--no-worktree", "--rerun", "--no-record"],
                       cwd=repo,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t
    if p.returncode not in (0, 1):
        sys.exit(f"bench-reset: {name} check failed (exit {p.returncode}): {p.stderr.decode()}")
    return dt
times = {n: [] for n in sides}
for n in sides:  # first run of each side: the cold checkout of 20,000 files
    run(n)
order = list(sides)
shuffle = random.Random(20261201).shuffle
for _ in range(rounds):
    shuffle(order)
    for n in order:
        times[n].append(run(n))
ms = {n: statistics.median(t) * 1000 for n, t in times.items()}
print(f"median of {rounds} interleaved rounds, shuffled; each run resets a 20,000-file warm "
      f"workspace to the other commit (one file changed), then runs `true`")
print(f"warm reset + check: this {ms['this']:.1f} ms vs reference {ms['reference']:.1f} ms = "
      f"{ms['this'] / ms['reference']:.2f}x (target <= 1.2x)")
PY
