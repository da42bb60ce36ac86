#!/usr/bin/env bash
# Issue 39 — `closegate sweep` of 50 MERGED worktrees of 2,000 files each against 50
# `git worktree remove` of the same commits, timed in the same run (target: sweep <= 1.2x).
#
# Builds closegate (release), makes a repository whose base holds 2,000 files and configures one
# cheap check (`run = "true"`). Each round (setup, not timed):
#   - 50 agent worktrees `agent/sN-K`, one commit each changing one file, closed with
#     `closegate close`, checked VERIFIED, and merged into `main` with `git merge --no-ff`: the
#     board shows each MERGED;
#   - a clone of that repository (its own common dir, so sweep sees none of these) with 50
#     worktrees of the same 50 commits.
# Timed, in an order shuffled per round: one `closegate sweep` (each MERGED worktree torn down on
# its record — no check runs again —, escrowed, its branch deleted compare-and-delete), until
# every worktree and its administrative data is gone (a large worktree is deleted in the
# background: the wait for that is included); and the 50 `git worktree remove`, one after the
# other. Each must leave no worktree behind; sweep must say `removed` 50 times and exit 0.
#
# Usage: scripts/bench-sweep.sh [rounds]   (default 3). Needs python3. No network.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
files=2000
count=50

. "$here/scripts/bench-env.sh"
bench_setup release

echo "generating a repository of $files files..."
git init -q -b main "$dir/repo"
python3 - "$files" <<'PY' | git -C "$dir/repo" fast-import --quiet --done
import sys
files = int(sys.argv[1])
out = sys.stdout.buffer
def data(text):
    raw = text.encode()
    out.write(b"data %d\n" % len(raw) + raw + b"\n")
def entry(path, text):
    out.write(b"M 100644 inline " + path.encode() + b"\n")
    data(text)
out.write(b"commit refs/heads/main\nmark :1\ncommitter bench <bench@example.com> 1700000000 +0000\n")
data(f"{files} files")
for i in range(files):
    entry(f"d{i // 100:02d}/e{(i // 10) % 10}/f{i % 10}.txt", f"file {i}\n" + "x" * (i % 200) + "\n")
entry(".gitignore", "build/\n")
entry(".closegate.toml", 'base = "main"\n\n[[checks]]\nname = "cheap"\nrun = "true"\n')
out.write(b"done\n")
PY
git -C "$dir/repo" checkout -q -f main

# setup <round>: the 50 MERGED agent worktrees of the round, and the clone with its 50 worktrees.
setup() {
  local r=$1 k wt
  for k in $(seq 1 "$count"); do
    wt="$dir/s$r-$k"
    git -C "$dir/repo" worktree add -q -b "agent/s$r-$k" "$wt" main
    printf 'changed in round %s by agent %s\n' "$r" "$k" > "$wt/d$(printf %02d $((k % 20)))/e0/f$((k % 10)).txt"
    git -C "$wt" commit -q -a -m "agent s$r-$k: change one file"
    "$closegate" close --abstract "changes one file for the benchmark" \
      --done "the change is in, proven by the check cheap" "$wt" > /dev/null
    "$closegate" check "$wt" > /dev/null || {
      "$closegate" check "$wt"; echo "bench-sweep: $wt is not VERIFIED" >&2; exit 1; }
    git -C "$dir/repo" merge -q --no-ff -m "merge s$r-$k" "agent/s$r-$k"
  done
  local merged
  merged=$(cd "$dir/repo" && "$closegate" board --json | python3 -c '
import json, sys
rows = json.load(sys.stdin)["worktrees"]
print(sum(1 for r in rows if r["stage"] == "MERGED"))')
  [ "$merged" = "$count" ] || { echo "bench-sweep: $merged of $count worktrees are MERGED" >&2; exit 1; }
  git clone -q "$dir/repo" "$dir/clone$r"
  for k in $(seq 1 "$count"); do
    git -C "$dir/clone$r" worktree add -q --detach "$dir/c$r-$k" "origin/agent/s$r-$k"
  done
  # Let the checkouts age past their indexes' timestamps and each index be refreshed once, so
  # neither tool meets racily-clean entries in the timed runs.
  sleep 1
  for k in $(seq 1 "$count"); do
    git -C "$dir/s$r-$k" status --porcelain > /dev/null
    git -C "$dir/c$r-$k" status --porcelain > /dev/null
  done
}

# time_round <round>: sweep and the 50 removals, shuffled; appends `name seconds` to $dir/times.
time_round() {
  python3 - "$closegate" "$dir" "$1" "$count" <<'PY' >> "$dir/times"
import json, os, random, subprocess, sys, time
closegate, d, r, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

def gone(prefix):
    names = os.listdir(d)
    return not any(n.startswith(prefix) or n.startswith("." + prefix) for n in names)

def sweep():
    p = subprocess.run([closegate, "sweep", "--json"], cwd=f"{d}/repo",
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    rows = json.loads(p.stdout or b"{}").get("worktrees", [])
    removed = sum(1 for w in rows if w["action"] == "removed")
    if p.returncode != 0 or removed != count:
        sys.stderr.write(f"bench-sweep: sweep exited {p.returncode}, removed {removed}:\n")
        sys.stderr.write(p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace"))
        sys.exit(1)
    # Large worktrees are deleted in the background: wait until every one and its
    # administrative data is gone.
    admin = f"{d}/repo/.git/worktrees"
    give_up = time.perf_counter() + 600
    while not gone(f"s{r}-") or any(n.startswith(f"s{r}-") for n in os.listdir(admin)):
        if time.perf_counter() > give_up:
            sys.exit("bench-sweep: the background removals did not end")
        time.sleep(0.005)

def git():
    for k in range(1, count + 1):
        p = subprocess.run(["git", "worktree", "remove", f"{d}/c{r}-{k}"], cwd=f"{d}/clone{r}",
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            sys.stderr.write(p.stdout.decode(errors="replace"))
            sys.exit(1)
    if not gone(f"c{r}-"):
        sys.exit("bench-sweep: git left a worktree behind")

order = [("sweep", sweep), ("git", git)]
random.Random(20261203 + r).shuffle(order)
for name, run in order:
    t = time.perf_counter()
    run()
    print(name, time.perf_counter() - t)
PY
}

for r in $(seq 1 "$rounds"); do
  echo "round $r: setting up $count MERGED worktrees and $count references..."
  setup "$r"
  time_round "$r"
done

python3 - "$dir/times" "$count" "$files" <<'PY'
import statistics, sys
times = {}
for line in open(sys.argv[1]):
    name, secs = line.split()
    times.setdefault(name, []).append(float(secs))
count, files = sys.argv[2], sys.argv[3]
s, g = times["sweep"], times["git"]
ratios = [a / b for a, b in zip(s, g)]
print(f"{count} MERGED worktrees of {files} files, {len(s)} rounds (release build):")
print(f"  sweep:                 median {statistics.median(s):.2f} s  ({', '.join(f'{x:.2f}' for x in s)})")
print(f"  {count} git worktree remove: median {statistics.median(g):.2f} s  ({', '.join(f'{x:.2f}' for x in g)})")
print(f"  ratio sweep / git:     median {statistics.median(ratios):.2f}x per round "
      f"({', '.join(f'{x:.2f}' for x in ratios)}); target <= 1.2x")
PY
