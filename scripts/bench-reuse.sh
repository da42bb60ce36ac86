#!/usr/bin/env bash
# SPEC §19 — checks that are fast the second time. Builds closegate, makes a scratch repository
# whose base configures one slow check (`sleep 2`, counting its runs in a file), and measures in
# the same run:
#
#   reuse:      the second `closegate check` of an unchanged commit (the check's result recorded
#               by the first is reused), median of interleaved rounds
#   no-checks:  `closegate check --no-checks` of the same commit
#   ratio:      reuse / no-checks (target <= 1.2x)
#   teardown after a VERIFIED check, approve + teardown after a PENDING_REVIEW one: how many
#               times the check ran (target 0)
#
# Usage: scripts/bench-reuse.sh [rounds]   (default 31). BENCH_PROFILE=debug uses the debug
# build (both sides of the ratio use the same binary). Needs python3. No network.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-31}
profile=${BENCH_PROFILE:-release}

. "$here/scripts/bench-env.sh"
bench_setup "$profile"
mkdir -p "$dir/count"

status() { # worktree slug state sha subject
  {
    printf '# STATUS — %s\n\n- state: %s\n' "$2" "$3"
    printf -- '- abstract: adds %s, proven by the check\n' "$2"
    printf -- '- last commit: %s — %s\n' "${4:0:12}" "$5"
    printf -- '- done: it is in, proven by the check\n- next / blocked-on: none\n'
    printf -- '- artifacts:\n  - %s.txt\n' "$2"
    printf '\nCLOSE-OK · %s · commit %s · branch agent/%s · worktree %s\n' "$2" "${4:0:12}" "$2" "$1"
  } > "$1/_EXEC_STATUS.md"
}

git init -q -b main "$dir/repo"
cd "$dir/repo"
printf '[[checks]]\nname = "slow"\nrun = "echo run >> %s/count/runs; sleep 2"\ntimeout_s = 60\nwritable = ["%s/count"]\n' \
  "$dir" "$dir" > .closegate.toml
mkdir -p tests && echo 'assert!(true);' > tests/smoke.rs
git add . && git commit -q -m "configure closegate"

# x: a VERIFIED return. y: a return that weakens a test (PENDING_REVIEW until approved).
git worktree add -q -b agent/x "$dir/x" main
echo x > "$dir/x/x.txt" && git -C "$dir/x" add x.txt && git -C "$dir/x" commit -q -m "add x"
status "$dir/x" x close-ok "$(git -C "$dir/x" rev-parse HEAD)" "add x"
git worktree add -q -b agent/y "$dir/y" main
echo y > "$dir/y/y.txt" && echo '// weakened' > "$dir/y/tests/smoke.rs"
git -C "$dir/y" add . && git -C "$dir/y" commit -q -m "add y"
status "$dir/y" y close-ok "$(git -C "$dir/y" rev-parse HEAD)" "add y"

runs() { wc -l < "$dir/count/runs" 2>/dev/null | tr -d ' ' || echo 0; }

cd "$dir/x"
"$closegate" check > /dev/null || { "$closegate" check; echo "bench-reuse: x is not VERIFIED" >&2; exit 1; }
[ "$(runs)" = 1 ] || { echo "bench-reuse: the first check did not run once" >&2; exit 1; }

python3 - "$closegate" "$dir/x" "$rounds" <<'PY'
import random, statistics, subprocess, sys, time
closegate, wt, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
cmds = {
    "reuse": [closegate, "check", "--no-record"],
    "no-checks": [closegate, "check", "--no-record", "--no-checks"],
}
times = {name: [] for name in cmds}
def run(argv):
    t = time.perf_counter()
    subprocess.run(argv, cwd=wt, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t
for argv in cmds.values():
    run(argv)
order = list(cmds.items())
shuffle = random.Random(20261130).shuffle
for _ in range(rounds):
    shuffle(order)
    for name, argv in order:
        times[name].append(run(argv))
ms = {name: statistics.median(t) * 1000 for name, t in times.items()}
print(f"median of {rounds} interleaved rounds, shuffled")
print(f"second check of an unchanged commit (check `sleep 2` reused): {ms['reuse']:.1f} ms vs "
      f"check --no-checks {ms['no-checks']:.1f} ms = {ms['reuse'] / ms['no-checks']:.2f}x (target <= 1.2x)")
PY
[ "$(runs)" = 1 ] || { echo "bench-reuse: a reused check ran ($(runs) runs)" >&2; exit 1; }

# teardown after a VERIFIED check (x); approve + teardown after a PENDING_REVIEW check (y).
before=$(runs)
"$closegate" teardown "$dir/x" > /dev/null
torn=$(runs)
cd "$dir/y"
"$closegate" check > /dev/null || true
mid=$(runs)
"$closegate" approve --yes --by bench --note "bench" > /dev/null
"$closegate" teardown "$dir/y" > /dev/null
after=$(runs)
echo "teardown after a VERIFIED check: $((torn - before)) check runs (target 0)"
echo "approve + teardown after a PENDING_REVIEW check: $((after - mid)) check runs (target 0)"
