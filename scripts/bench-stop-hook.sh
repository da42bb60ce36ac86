#!/usr/bin/env bash
# How fast the stop hook answers the two stops an agent makes most (issue 38), as ratios against
# `closegate --version` timed in the same run (release build):
#   accepted: a `VERIFIED … @signal done` stop whose verdict `closegate check` already recorded for
#             this branch at this commit (accepted on it, no gate run)      target ≤ 1.5×
#   question: a question after that verified return, in `claims` mode      target ≤ 1.2×
# Uses hyperfine when installed (`apt-get install hyperfine`), else a timed loop. Prints one line
# per case with its mean wall time and its ratio, then (hyperfine only) the same in CPU time. BENCH_RUNS sets the number of runs (default 200);
# BENCH_BIN names a closegate binary already built (the release build is then skipped).
# Each accepted stop appends its record to the audit log: the log is put back before every run,
# so each run reads the log one agent's session leaves (one check), not one grown by the bench.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -n "${BENCH_BIN:-}" ]; then
  bin=$BENCH_BIN
else
  cargo build --release --locked -q
  bin=$PWD/target/release/closegate
fi
runs=${BENCH_RUNS:-200}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME=$work/home XDG_CONFIG_HOME=$work/home GIT_CONFIG_NOSYSTEM=1 TZ=UTC LC_ALL=C NO_COLOR=1
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
mkdir -p "$HOME"

# A repository with one check, an agent's worktree that did its work, closed and checked.
repo=$work/repo wt=$work/wt
git init -q -b main "$repo"
printf '[[checks]]\nname = "smoke"\nrun = "test -f src/lib.rs"\ntimeout_s = 60\n' >"$repo/.closegate.toml"
git -C "$repo" add .closegate.toml
git -C "$repo" commit -qm "configure closegate"
git -C "$repo" worktree add -q -b agent/x "$wt"
mkdir -p "$wt/src"
printf 'pub fn x() {}\n' >"$wt/src/lib.rs"
git -C "$wt" add src/lib.rs
git -C "$wt" commit -qm "add x"
(cd "$wt" && "$bin" close --abstract "adds x, proven by the smoke check" --artifact src/lib.rs >/dev/null)
(cd "$wt" && "$bin" check >/dev/null) || { echo "bench: the check did not verify" >&2; exit 1; }

# Claude Code's Stop input as it sends it: the session's transcript (its first line holds the
# folder the session started in) and the final message.
transcript=$work/transcript.jsonl
for i in $(seq 200); do
  printf '{"type": "user", "cwd": "%s", "sessionId": "s", "message": {"role": "user", "content": "step %s"}}\n' "$wt" "$i"
done >"$transcript"
input() {
  printf '{"session_id": "s", "transcript_path": "%s", "cwd": "%s", "permission_mode": "default", "hook_event_name": "Stop", "stop_hook_active": false, "last_assistant_message": "%s", "background_tasks": []}' \
    "$transcript" "$wt" "$1"
}
input 'VERIFIED: x added, closegate check passed\n\n@signal done' >"$work/accepted.json"
input 'Is the parser VERIFIED enough, or should I add fuzzing?' >"$work/question.json"
for case in accepted question; do
  out=$(cd "$wt" && "$bin" agent stop-hook <"$work/$case.json")
  [ -z "$out" ] || { echo "bench: the $case stop was not accepted: $out" >&2; exit 1; }
done

log=$repo/.git/closegate/audit.jsonl
cp "$log" "$work/audit.jsonl"
restore="cp $work/audit.jsonl $log"

version="$bin --version"
accepted="$bin agent stop-hook < $work/accepted.json"
question="$bin agent stop-hook < $work/question.json"

# Mean seconds of each command, in order.
means=() cpus=()
if command -v hyperfine >/dev/null; then
  (cd "$wt" && hyperfine --warmup 10 --runs "$runs" --prepare "$restore" --export-json "$work/h.json" \
    "$version" "$accepted" "$question" >/dev/null)
  mapfile -t means < <(python3 -c 'import json,sys; [print(r["mean"]) for r in json.load(open(sys.argv[1]))["results"]]' "$work/h.json")
  mapfile -t cpus < <(python3 -c 'import json,sys; [print(r["user"] + r["system"]) for r in json.load(open(sys.argv[1]))["results"]]' "$work/h.json")
  how="hyperfine, $runs runs each"
else
  for cmd in "$version" "$accepted" "$question"; do
    (cd "$wt" && for _ in 1 2 3 4 5; do sh -c "$cmd" >/dev/null; done)
    total=0
    for _ in $(seq "$runs"); do
      $restore
      start=$(date +%s%N)
      (cd "$wt" && sh -c "$cmd" >/dev/null)
      total=$((total + $(date +%s%N) - start))
    done
    means+=("$(awk -v d="$total" -v n="$runs" 'BEGIN { printf "%.6f", d / n / 1e9 }')")
  done
  how="a timed loop through sh, $runs runs each"
fi

awk -v v="${means[0]}" -v a="${means[1]}" -v q="${means[2]}" -v how="$how" 'BEGIN {
  printf "closegate --version              %7.2f ms (reference; %s)\n", v * 1000, how
  printf "stop hook, accepted (reused)     %7.2f ms  %.2fx  (target <= 1.5x)\n", a * 1000, a / v
  printf "stop hook, question (claims)     %7.2f ms  %.2fx  (target <= 1.2x)\n", q * 1000, q / v
}'
# On a shared machine the wall time stretches with the load: the CPU time (user + system, as
# hyperfine measures it) is the figure to read there.
if [ ${#cpus[@]} -eq 3 ]; then
  awk -v v="${cpus[0]}" -v a="${cpus[1]}" -v q="${cpus[2]}" -v load="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
    printf "CPU time (user + system), load average %s:\n", load
    printf "closegate --version              %7.2f ms\n", v * 1000
    printf "stop hook, accepted (reused)     %7.2f ms  %.2fx  (target <= 1.5x)\n", a * 1000, a / v
    printf "stop hook, question (claims)     %7.2f ms  %.2fx  (target <= 1.2x)\n", q * 1000, q / v
  }'
fi
