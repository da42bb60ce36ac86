#!/usr/bin/env bash
# SPEC §26.4 — the test census's cost (issue 37 targets). Builds closegate, makes two scratch
# repositories that differ only in the check's `census` key ("libtest"/"unittest" or "off"), lets
# agent `a` record the merge base's run (so the base's census is cached, as for every agent after
# the first on a base commit), then times `closegate check --no-record` of agent `b` (its own
# check runs each time, the base's is reused) with the census and without, in interleaved rounds:
#
#   parse:     a check printing 100,000 libtest lines (`test t::case_000001 ... ok`):
#              census on − census off = reading 100,000 test lines, loading the base's 100,000 ids
#              from the record and comparing (target <= 100 ms)
#   overhead:  a real `python3 -m unittest -v` of 5,000 tests: census on / census off
#              (target <= 1.05x)
#
# Each figure is given as wall time and as CPU time (user + system of closegate and the check's
# processes, from the rusage of the waited children): on a shared machine the wall time of a
# process stretches with the load average (a run that needs 60 ms of CPU takes ~400 ms of wall
# time at a load of 14 on 2 cores), the CPU time does not. The checks run with sandbox = "off" on
# both sides, so their processes are counted too.
#
# Usage: scripts/bench-census.sh [rounds]   (default 15). BENCH_PROFILE=debug uses the debug
# build (both sides use the same binary). Needs python3 and awk. No network.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-15}
profile=${BENCH_PROFILE:-release}

. "$here/scripts/bench-env.sh"
bench_setup "$profile"

status() { # worktree slug sha
  {
    printf '# STATUS — %s\n\n- state: close-ok\n' "$2"
    printf -- '- abstract: adds %s, proven by the check\n' "$2"
    printf -- '- last commit: %s — add %s\n' "${3:0:12}" "$2"
    printf -- '- done: it is in, proven by the check\n- next / blocked-on: none\n'
    printf -- '- artifacts:\n  - %s.txt\n' "$2"
    printf '\nCLOSE-OK · %s · commit %s · branch agent/%s · worktree %s\n' "$2" "${3:0:12}" "$2" "$1"
  } > "$1/_EXEC_STATUS.md"
}

# repo NAME RUN CENSUS [FILE CONTENT]: a repository whose base configures one check, with agents
# a and b each adding a file; a's check is recorded (the base's run with it).
repo() {
  local r=$dir/$1
  git init -q -b main "$r"
  # sandbox = "off": the sandbox is the same on both sides, and unconfined the check's processes
  # are closegate's waited children, so their CPU time is counted (see below).
  printf 'sandbox = "off"\n\n[[checks]]\nname = "t"\nrun = %s\ncensus = "%s"\ntimeout_s = 300\n' "$2" "$3" > "$r/.closegate.toml"
  if [ $# -ge 5 ]; then printf '%s' "$5" > "$r/$4"; fi
  git -C "$r" add -A && git -C "$r" commit -qm base
  local slug
  for slug in a b; do
    git -C "$r" worktree add -q -b "agent/$slug" "$r-$slug" main
    echo "$slug" > "$r-$slug/$slug.txt"
    git -C "$r-$slug" add "$slug.txt" && git -C "$r-$slug" commit -qm "add $slug"
    status "$r-$slug" "$slug" "$(git -C "$r-$slug" rev-parse HEAD)"
  done
  (cd "$r-a" && "$closegate" check > /dev/null) || { (cd "$r-a" && "$closegate" check); exit 1; }
}

emit='BEGIN { for (i = 0; i < 100000; i++) printf "test t::case_%06d ... ok\n", i
  print "test result: ok. 100000 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.50s" }
'
repo lines-on '"awk -f emit.awk"' libtest emit.awk "$emit"
repo lines-off '"awk -f emit.awk"' off emit.awk "$emit"
suite=$(python3 -c 'print("import unittest\n\n\nclass T(unittest.TestCase):\n" + "".join(f"    def test_{i:04d}(self):\n        self.assertEqual({i} + 1, {i + 1})\n\n" for i in range(5000)))')
repo unit-on '"python3 -m unittest -v test_suite"' unittest test_suite.py "$suite"
repo unit-off '"python3 -m unittest -v test_suite"' off test_suite.py "$suite"

python3 - "$closegate" "$dir" "$rounds" <<'PY'
import json, random, resource, statistics, subprocess, sys, time
closegate, d, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
names = ["lines-on", "lines-off", "unit-on", "unit-off"]
def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
def run(name):
    t, c = time.perf_counter(), cpu()
    out = subprocess.run([closegate, "check", "--no-record", "--format", "json"], cwd=f"{d}/{name}-b",
                         capture_output=True)
    took, used = time.perf_counter() - t, cpu() - c
    report = json.loads(out.stdout)
    return (took, used), report
# One run each first: the base's run must come from the record, the census be what it should.
for name in names:
    _, report = run(name)
    check = report["checks"][0]
    base = [r for r in report["integrity"]["checks"] if r["on"] == "base"]
    if name.endswith("-on"):
        assert base and base[0]["reused"], f"{name}: the base's run was not reused: {base}"
        want = 100000 if name.startswith("lines") else 5000
        assert check["census"]["base"] == want == check["census"]["commit"], check["census"]
    else:
        assert not base and check["census"] is None, name
    assert report["verdict"] == "VERIFIED", (name, report["findings"])
times = {n: [] for n in names}
cpus = {n: [] for n in names}
order = list(names)
shuffle = random.Random(20261203).shuffle
for _ in range(rounds):
    shuffle(order)
    for n in order:
        (took, used), _ = run(n)
        times[n].append(took)
        cpus[n].append(used)
ms = {n: statistics.median(t) * 1000 for n, t in times.items()}
cpu_ms = {n: statistics.median(t) * 1000 for n, t in cpus.items()}
with open("/proc/loadavg") as f:
    load = f.read().split()[0]
print(f"median of {rounds} interleaved rounds, shuffled; the merge base's run reused from the record; "
      f"load average {load} on {len(__import__('os').sched_getaffinity(0))} cores")
print("wall time, then CPU time (user + system, closegate and the check's processes)")
parse, parse_cpu = ms["lines-on"] - ms["lines-off"], cpu_ms["lines-on"] - cpu_ms["lines-off"]
print(f"parse: a check printing 100,000 test lines, census on {ms['lines-on']:.1f} ms vs off "
      f"{ms['lines-off']:.1f} ms: the census adds {parse:.1f} ms; CPU {cpu_ms['lines-on']:.1f} vs "
      f"{cpu_ms['lines-off']:.1f} ms: adds {parse_cpu:.1f} ms (target <= 100 ms)")
print(f"overhead: python3 -m unittest -v of 5,000 tests, census on {ms['unit-on']:.1f} ms vs off "
      f"{ms['unit-off']:.1f} ms = {ms['unit-on'] / ms['unit-off']:.3f}x; CPU {cpu_ms['unit-on']:.1f} vs "
      f"{cpu_ms['unit-off']:.1f} ms = {cpu_ms['unit-on'] / cpu_ms['unit-off']:.3f}x (target <= 1.05x)")
PY
