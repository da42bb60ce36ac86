#!/usr/bin/env bash
# Issue 48's flaky target: "a suite with a test that fails one run in three: 0 wrong verdicts
# over 20 honest returns". Builds closegate (debug), makes a scratch repository whose check is a
# TAP suite with a test `flaky` that fails on every third run of the check (a counter kept in a
# `writable` directory outside the checkout numbers every run, on every tree), then plays 20
# honest returns — each changes the code; every other one also adds a test to the suite's list
# (a test edit, judged under `tests = "integrity"`) — and runs `closegate check` on each.
#
# Wrong: `tests-weakened`, `tests-missing` or `check-failed` on honest work. `check-flaky` is a
# gap (a human looks), not a wrong verdict; its count is printed too, with every verdict's.
#
# Usage: scripts/flaky.sh [returns]   (default 20). Needs git and bubblewrap (or runs unsandboxed).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
returns=${1:-20}
. "$here/scripts/bench-env.sh"
bench_setup debug
# The counter lives outside /tmp: the checks' sandbox gives each run a /tmp of its own.
counter=$(mktemp -d "${CARGO_TARGET_DIR:-$here/target}/flaky-counter.XXXXXX")
trap 'rm -rf "$dir" "$counter"' EXIT

r=$dir/repo
git init -q -b main "$r"
mkdir -p "$r/tests" "$r/src"
cat > "$r/.closegate.toml" <<TOML
[protected.policy]
tests = "integrity"

[[checks]]
name = "suite"
run = 'D=$counter sh t.sh'
census = "tap"
timeout_s = 60
writable = ['$counter']
TOML
cat > "$r/t.sh" <<'SH'
c=$(cat "$D/n" 2>/dev/null || echo 0); c=$((c+1)); echo "$c" > "$D/n"
echo 'TAP version 13'
n=0; fail=0
while read -r t; do
  n=$((n+1))
  if [ "$t" = flaky ] && [ $((c % 3)) -eq 0 ]; then echo "not ok $n - $t"; fail=1
  else echo "ok $n - $t"; fi
done < tests/list.txt
echo "1..$n"
exit $fail
SH
printf 'adds\nflaky\nsubtracts\n' > "$r/tests/list.txt"
echo 'pub fn x() -> u32 { 0 }' > "$r/src/lib.rs"
git -C "$r" add -A && git -C "$r" commit -qm base

status() { # worktree slug sha
  {
    printf '# STATUS — %s\n\n- state: close-ok\n' "$2"
    printf -- '- abstract: changes %s, proven by the suite\n' "$2"
    printf -- '- last commit: %s — work of %s\n' "${3:0:12}" "$2"
    printf -- '- done: it is in, proven by the suite\n- next / blocked-on: none\n'
    printf -- '- artifacts:\n  - src/lib.rs\n'
    printf '\nCLOSE-OK · %s · commit %s · branch agent/%s · worktree %s\n' "$2" "${3:0:12}" "$2" "$1"
  } > "$1/_EXEC_STATUS.md"
}

reports=$dir/reports
mkdir -p "$reports"
for i in $(seq 1 "$returns"); do
  slug=r$i wt=$r-r$i
  git -C "$r" worktree add -q -b "agent/$slug" "$wt" main
  echo "pub fn x() -> u32 { $i }" > "$wt/src/lib.rs"
  if [ $((i % 2)) -eq 0 ]; then echo "new$i" >> "$wt/tests/list.txt"; fi
  git -C "$wt" add -A && git -C "$wt" commit -qm "work of $slug"
  status "$wt" "$slug" "$(git -C "$wt" rev-parse HEAD)"
  (cd "$wt" && "$closegate" check --format json > "$reports/$i.json") || true
done

python3 - "$reports" "$returns" "$counter/n" <<'PY'
import json, sys, collections
reports, n, counter = sys.argv[1], int(sys.argv[2]), sys.argv[3]
wrong_codes = {"tests-weakened", "tests-missing", "check-failed"}
wrong = flaky = 0
verdicts = collections.Counter()
for i in range(1, n + 1):
    report = json.load(open(f"{reports}/{i}.json"))
    codes = [f["code"] for f in report["findings"]]
    verdicts[report["verdict"]] += 1
    bad = sorted(wrong_codes.intersection(codes))
    wrong += bool(bad)
    flaky += "check-flaky" in codes
    retries = [c["retries"] for c in report["checks"]] + [c["retries"] for c in report["integrity"]["checks"]]
    print(f"return {i:2}: {report['verdict']:<14} retries {sum(retries)}  {' '.join(codes) or '-'}")
print(f"runs of the check: {open(counter).read().strip()} (every third failed `flaky`)")
print(f"honest returns: {n}; wrong verdicts (tests-weakened/tests-missing/check-failed): {wrong}; "
      f"check-flaky (gap): {flaky}")
print("verdicts: " + ", ".join(f"{v} {c}" for v, c in sorted(verdicts.items())))
sys.exit(1 if wrong else 0)
PY
