#!/usr/bin/env bash
# How fast the stop hook answers the two stops an agent makes most (issue 38), as ratios against
# `closegate --version` timed in the same run (release build):
#   accepted: a `VERIFIED … @signal done` stop whose verdict `closegate check` already recorded for
#             this branch at this commit (accepted on it, no gate run)      target ≤ 1.5×
#             — for each client (issue 49), each with its own input and `--target`: Claude Code,
#             Codex, Gemini CLI (`prompt_response`, the worktree trusted as Gemini CLI needs),
#             Cursor and Copilot CLI (no final message: the status document alone)
#   question: a question after that verified return, in `claims` mode      target ≤ 1.5×
# The commands run in turns, round after round (the order rotating), not one after the
# other: a machine whose speed drifts during the run (another process, the CPU's clock) then
# moves them alike instead of moving a ratio. Each run is started directly (no shell, stdin
# from a file); its wall time is read around the spawn and its CPU time (user + system) from the
# kernel's account of the child (wait4). Prints the median wall time and the mean CPU time of
# each, with the ratios. BENCH_RUNS sets the number of rounds (default 300, after 10 not counted);
# BENCH_BIN names a closegate binary already built (the release build is then skipped). Needs
# python3.
# Each accepted stop appends its record to the audit log: the log is put back before every run
# (outside the timing), so each run reads the log one agent's session leaves (one check), not one
# grown by the bench.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -n "${BENCH_BIN:-}" ]; then
  bin=$BENCH_BIN
else
  cargo build --release --locked -q
  bin=$PWD/target/release/closegate
fi
runs=${BENCH_RUNS:-300}

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
done='VERIFIED: x added, closegate check passed\n\n@signal done'
input "$done" >"$work/accepted.json"
input 'Is the parser VERIFIED enough, or should I add fuzzing?' >"$work/question.json"
# The other clients' stop inputs, as their references document them (docs/agents.md).
printf '{"session_id": "s", "turn_id": "t", "transcript_path": "%s", "cwd": "%s", "hook_event_name": "Stop", "model": "m", "stop_hook_active": false, "last_assistant_message": "%s"}' \
  "$transcript" "$wt" "$done" >"$work/codex.json"
# Gemini CLI's own transcript: a session line, then its records (each turn and a `$set`), the
# last one the final message.
gemini_transcript=$work/gemini-session.jsonl
{
  printf '{"sessionId": "s", "projectHash": "h", "startTime": "2026-12-07T10:00:00Z", "kind": "main"}\n'
  for i in $(seq 100); do
    printf '{"id": "u%s", "type": "user", "content": [{"text": "step %s"}]}\n{"$set": {"lastUpdated": "2026-12-07T10:00:00Z"}}\n' "$i" "$i"
  done
  printf '{"id": "g", "type": "gemini", "content": "%s", "thoughts": [], "model": "m"}\n{"$set": {"lastUpdated": "2026-12-07T10:00:01Z"}}\n' "$done"
} >"$gemini_transcript"
printf '{"session_id": "s", "transcript_path": "%s", "cwd": "%s", "hook_event_name": "AfterAgent", "timestamp": "2026-12-07T10:00:00Z", "prompt": "add x", "prompt_response": "%s", "stop_hook_active": false}' \
  "$gemini_transcript" "$wt" "$done" >"$work/gemini.json"
printf '{"conversation_id": "c", "generation_id": "g", "hook_event_name": "stop", "workspace_roots": ["%s"], "status": "completed", "loop_count": 0}' \
  "$wt" >"$work/cursor.json"
printf '{"timestamp": 1765101600000, "cwd": "%s", "sessionId": "s", "stopReason": "end_turn"}' \
  "$wt" >"$work/copilot.json"
mkdir -p "$HOME/.gemini"
printf '{"%s": "TRUST_FOLDER"}' "$wt" >"$HOME/.gemini/trustedFolders.json"
for case in accepted:claude-code question:claude-code codex:codex gemini:gemini cursor:cursor copilot:copilot; do
  out=$(cd "$wt" && "$bin" agent stop-hook --target "${case#*:}" <"$work/${case%:*}.json")
  case $out in '' | '{}') ;; *) echo "bench: the ${case%:*} stop was not accepted: $out" >&2; exit 1 ;; esac
done

log=$repo/.git/closegate/audit.jsonl
cp "$log" "$work/audit.jsonl"

# Rounds of the runs, timed by python3 (posix_spawn and wait4: no shell between).
(cd "$wt" && python3 - "$bin" "$work" "$log" "$runs" "$(cut -d' ' -f1 /proc/loadavg)") <<'PY'
import os, statistics, sys, time

binary, work, log, runs, load = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
saved = open(f"{work}/audit.jsonl", "rb").read()
hook = [binary, "agent", "stop-hook", "--target"]
cases = [
    ("closegate --version", [binary, "--version"], None),
    ("stop hook, accepted (reused)", hook + ["claude-code"], f"{work}/accepted.json"),
    ("stop hook, question (claims)", hook + ["claude-code"], f"{work}/question.json"),
    ("  accepted, Codex", hook + ["codex"], f"{work}/codex.json"),
    ("  accepted, Gemini CLI", hook + ["gemini"], f"{work}/gemini.json"),
    ("  accepted, Cursor", hook + ["cursor"], f"{work}/cursor.json"),
    ("  accepted, Copilot CLI", hook + ["copilot"], f"{work}/copilot.json"),
]
targets = [None, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5]
null = os.open(os.devnull, os.O_WRONLY)
wall = [[] for _ in cases]
cpu = [[] for _ in cases]
for round_ in range(runs + 10):
    for turn in range(len(cases)):
        i = (round_ + turn) % len(cases)
        _, argv, stdin = cases[i]
        with open(log, "wb") as f:
            f.write(saved)
        fd = os.open(stdin or os.devnull, os.O_RDONLY)
        actions = [(os.POSIX_SPAWN_DUP2, fd, 0), (os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)]
        start = time.perf_counter_ns()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
        _, status, usage = os.wait4(pid, 0)
        elapsed = time.perf_counter_ns() - start
        os.close(fd)
        if status != 0:
            sys.exit(f"bench: {' '.join(argv[1:])} exited with {status}")
        if round_ >= 10:
            wall[i].append(elapsed / 1e6)
            cpu[i].append((usage.ru_utime + usage.ru_stime) * 1e3)
walls = [statistics.median(w) for w in wall]
cpus = [statistics.mean(c) for c in cpu]
print(f"{runs} rounds of the {len(cases)}, in turns; load average {load} at the start")
print(f"{'':32} {'wall (median)':>22} {'CPU (mean)':>22}")
for (name, _, _), w, c, target in zip(cases, walls, cpus, targets):
    if target is None:
        print(f"{name:32} {w:8.2f} ms (reference) {c:8.2f} ms (reference)")
    else:
        print(f"{name:32} {w:8.2f} ms {w / walls[0]:5.2f}x     {c:8.2f} ms {c / cpus[0]:5.2f}x   (target <= {target}x)")
PY
