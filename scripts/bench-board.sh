#!/usr/bin/env bash
# SPEC §13 / issue 17 — the board's working-tree column. Builds closegate, makes a scratch
# repository of 2,000 files with 16 agent worktrees (some dirty, some with untracked files, some
# with a status document in progress, four closed and checked so the record holds their verdicts
# and the board asks the verdict query for each), and measures in the same run, median of
# interleaved rounds:
#
#   version:  `closegate --version` (the process start)
#   board:    plain `closegate board` (refs, status documents and the record; no scan)
#   tree:     `closegate board --tree` (the close gate's scan of every worktree, in parallel)
#   status:   a loop of `git status --porcelain` over the 16 worktrees, from outside
#   baseline: `$BASELINE board` when BASELINE names an older closegate binary (the plain board
#             before this change), to show the plain board did not get slower
#
# and prints board/version, tree/status and (with BASELINE) board/baseline — issue 36's target:
# the one verdict query must not cost a re-read per consumer, board <= 1.2x the build before it
# (BASELINE=/path/to/closegate-1f8d82d).
# Usage: scripts/bench-board.sh [rounds]   (default 21). BENCH_PROFILE=debug uses the debug
# build. Needs python3. No network.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-21}
profile=${BENCH_PROFILE:-release}

. "$here/scripts/bench-env.sh"
bench_setup "$profile"

git init -q -b main "$dir/repo"
cd "$dir/repo"
printf '[[checks]]\nname = "t"\nrun = "true"\n' > .closegate.toml
for d in $(seq 1 40); do
  mkdir -p "src/d$d"
  for f in $(seq 1 50); do echo "$d $f" > "src/d$d/f$f.txt"; done
done
git add . && git commit -q -m "2,000 files"
for i in $(seq 1 16); do
  wt="$dir/wt/a$i"
  git worktree add -q -b "agent/a$i" "$wt" main
  echo "$i" > "$wt/src/a$i.txt" && git -C "$wt" add . && git -C "$wt" commit -q -m "add a$i"
  case $((i % 4)) in
    0) echo dirty >> "$wt/src/d1/f1.txt" ;;
    1) echo new > "$wt/untracked-$i.txt" ;;
    2) printf '# STATUS — a%s\n\n- state: in-progress\n' "$i" > "$wt/_EXEC_STATUS.md" ;;
    3) "$closegate" close --artifact "src/a$i.txt" --abstract "adds a$i for the benchmark" \
         --done "a$i is in, proven by the check t" "$wt" > /dev/null
       "$closegate" check "$wt" > /dev/null || { echo "check of a$i did not verify" >&2; exit 1; } ;;
  esac
done
git commit -q --allow-empty -m "base moves on"

python3 - "$closegate" "$dir/repo" "$rounds" "${BASELINE:-}" "$dir/wt" <<'PY'
import os, random, statistics, subprocess, sys, time
closegate, repo, rounds, baseline, wts = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
worktrees = [os.path.join(wts, f"a{i}") for i in range(1, 17)]
cmds = {
    "version": [[closegate, "--version"]],
    "board": [[closegate, "board"]],
    "tree": [[closegate, "board", "--tree"]],
    "status": [["git", "-C", wt, "status", "--porcelain"] for wt in worktrees],
}
if baseline:
    cmds["baseline"] = [[baseline, "board"]]
def run(argvs):
    t = time.perf_counter()
    for argv in argvs:
        subprocess.run(argv, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t
for argvs in cmds.values():
    run(argvs)
times = {name: [] for name in cmds}
order = list(cmds.items())
shuffle = random.Random(20261130).shuffle
for _ in range(rounds):
    shuffle(order)
    for name, argvs in order:
        times[name].append(run(argvs))
ms = {name: statistics.median(t) * 1000 for name, t in times.items()}
print(f"median of {rounds} interleaved rounds, shuffled; 16 worktrees of 2,000 files")
print(f"board:         {ms['board']:.1f} ms vs closegate --version {ms['version']:.1f} ms = "
      f"{ms['board'] / ms['version']:.2f}x")
print(f"board --tree:  {ms['tree']:.1f} ms vs a git status loop over the 16 worktrees "
      f"{ms['status']:.1f} ms = {ms['tree'] / ms['status']:.2f}x")
if baseline:
    ratio = ms['board'] / ms['baseline']
    print(f"board:         {ms['board']:.1f} ms vs the baseline's board {ms['baseline']:.1f} ms = "
          f"{ratio:.2f}x (target <= 1.2x) {'ok' if ratio <= 1.2 else 'MISSED'}")
PY
