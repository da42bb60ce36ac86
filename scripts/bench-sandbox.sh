#!/usr/bin/env bash
# SPEC §4.6 — what the checks' sandbox costs. Builds closegate (release), makes a small scratch
# repository (an agent worktree with a close-ok status document) and times, interleaved round by
# round in the same run:
#
#   off:     `closegate check --no-record` with one check `run = "true"`, sandbox = "off"
#   sandbox: the same, sandbox = "auto" (bubblewrap)
#   bwrap:   `bwrap <the sandbox's namespaces> -- true` alone, against `sh -c true`
#
# and prints the medians, the ratio sandbox/off and the set-up cost (the difference), which the
# README quotes. Target: a few milliseconds per check.
#
# Usage: scripts/bench-sandbox.sh [rounds]   (default 101). Needs bwrap and python3. No network.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-101}
command -v bwrap > /dev/null || { echo "bench-sandbox: bwrap is not installed" >&2; exit 1; }

. "$here/scripts/bench-env.sh"
bench_setup release
unset CLOSEGATE_TEST_NO_SANDBOX
git init -q -b main "$dir/repo"
echo hello > "$dir/repo/README.md"
git -C "$dir/repo" add README.md
git -C "$dir/repo" commit -q -m initial
git -C "$dir/repo" worktree add -q -b agent/x "$dir/wt" main
echo x > "$dir/wt/x.txt"
git -C "$dir/wt" add x.txt
git -C "$dir/wt" commit -q -m "add x"
sha=$(git -C "$dir/wt" rev-parse HEAD)
{
  printf '# STATUS — x\n\n- state: close-ok\n'
  printf -- '- abstract: adds x, proven by the check\n'
  printf -- '- last commit: %s — add x\n' "${sha:0:12}"
  printf -- '- done: x is in, proven by the check\n- next / blocked-on: none\n'
  printf -- '- artifacts:\n  - x.txt\n'
  printf '\nCLOSE-OK · x · commit %s · branch agent/x · worktree %s\n' "${sha:0:12}" "$dir/wt"
} > "$dir/wt/_EXEC_STATUS.md"
printf 'sandbox = "off"\n[[checks]]\nname = "t"\nrun = "true"\n' > "$dir/off.toml"
printf 'sandbox = "auto"\n[[checks]]\nname = "t"\nrun = "true"\n' > "$dir/auto.toml"

cd "$dir/wt"
# The sandbox must really be in use, or the comparison means nothing.
"$closegate" check --no-record --format json --config "$dir/auto.toml" > "$dir/report.json" \
  || { cat "$dir/report.json"; echo "bench-sandbox: the check did not pass" >&2; exit 1; }
grep -q '"sandbox": "bwrap"' "$dir/report.json" \
  || { cat "$dir/report.json"; echo "bench-sandbox: no sandbox in use" >&2; exit 1; }

python3 - "$closegate" "$dir" "$rounds" <<'PY'
import os, random, statistics, subprocess, sys, time
closegate, d, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
wt = f"{d}/wt"
base = [closegate, "check", "--no-record", "--config"]
bwrap = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-user",
         "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--new-session"]
bwrap += ["--cap-drop", "ALL"] if os.geteuid() == 0 else []
bwrap += ["--", "true"]
cmds = {
    "off": base + [f"{d}/off.toml"],
    "sandbox": base + [f"{d}/auto.toml"],
    "bwrap": bwrap,
    "sh": ["sh", "-c", "true"],
}
times = {name: [] for name in cmds}

def run(argv):
    t = time.perf_counter()
    subprocess.run(argv, cwd=wt, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t

for argv in cmds.values():  # warm the page cache
    run(argv)
order = list(cmds.items())
shuffle = random.Random(20261130).shuffle
for _ in range(rounds):
    shuffle(order)
    for name, argv in order:
        times[name].append(run(argv))
ms = {name: statistics.median(t) * 1000 for name, t in times.items()}
print(f"median of {rounds} interleaved rounds, shuffled")
print(f"check with one `true` check: sandboxed {ms['sandbox']:.1f} ms vs unsandboxed "
      f"{ms['off']:.1f} ms = {ms['sandbox'] / ms['off']:.2f}x; "
      f"sandbox set-up {ms['sandbox'] - ms['off']:.1f} ms per run")
print(f"context: bwrap -- true {ms['bwrap']:.1f} ms vs sh -c true {ms['sh']:.1f} ms "
      f"= {ms['bwrap'] / ms['sh']:.2f}x")
PY
