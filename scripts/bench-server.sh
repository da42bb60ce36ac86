#!/usr/bin/env bash
# SPEC §20 — the server gate's cost: on bare copies of the 100,000-file, 10,000-commit bench
# repository (the one scripts/bench.sh generates under .bench/large), the time of a `git push` over
# file:// that merges one attested agent branch into `main` (the merge, the branch and the note in
# one push), into a bare repository without the hook and into one with `closegate hook install
# --server`, interleaved round by round. The hook's share is the difference:
#
#   target 1: hook share < 5 s (the budget hosted git services give a pre-receive hook)
#   target 2: hook share <= 1.5x `closegate check --no-worktree --no-checks --rev agent/x` of the
#             same commit (timed in the same rounds, in a clone of the same repository)
#
# Each run is timed in wall time and in CPU time (user + system of its whole process tree, from
# the rusage of waited-for children), which a machine shared with other builds disturbs far less.
# The share as a difference of two ~150 ms pushes is noisy there (it has come out negative), and it
# includes what git itself spends on running any pre-receive hook, so the same rounds also time:
#   - a push into a third bare repository whose pre-receive hook is `cat >/dev/null` (git's own
#     cost of a hook: the quarantine handed over, a process started and fed, stderr relayed); the
#     hooked push minus this one is closegate's share over git's;
#   - the hook alone: `hooks/pre-receive` run directly in the hooked repository with the push's
#     ref updates on stdin (the objects are there from an untimed first push; the refs are reset
#     as before each push), the process tree git starts for the hook.
# Target 2 is printed for all three. A difference of two pushes moves with the machine, so each
# push difference comes with a 90% bootstrap interval of its ratio (rounds resampled whole).
#
# Also timed in the same rounds, for reading the share (no target): one `ssh-keygen -Y verify`
# of the attestation alone, the process the hook ran once per attested commit before signatures
# by plain ed25519 keys were verified in process (src/attest/sshsig.rs).
#
# Set-up (not timed): a clone of the bench repository commits a configuration with one check
# (`true`) and an allowed_signers file to `main` (C), then on `agent/x` the 20-file agent change (W)
# and its close-ok status document (S), and a `--no-ff` merge of S into main (M), all with plumbing
# (no 100,000-file checkout), and attests W with `closegate check --attest` and a fresh ed25519 key.
# Each round puts the bare repositories back to `main` = C with no agent branch and no note, then
# pushes main, agent/x and refs/notes/closegate; every hooked push must be accepted.
#
# Usage: scripts/bench-server.sh [rounds]   (default 11). BENCH_LARGE=<repo> uses another copy of
# the generated repository (default .bench/large/repo). Needs python3. No network.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-11}
large=${BENCH_LARGE:-$here/.bench/large/repo}

. "$here/scripts/bench-env.sh"
bench_setup release

if [ ! -d "$large/.git/objects" ] && [ ! -d "$large/objects" ]; then
  echo "no bench repository at $large: run scripts/bench.sh once to generate it" >&2
  exit 2
fi

work="$dir/work"
git clone -q --shared --no-checkout "$large" "$work"
g() { git -C "$work" "$@"; }
export GIT_INDEX_FILE="$dir/index"

ssh-keygen -q -t ed25519 -N '' -C ci@example.com -f "$dir/ci.key"
signers="ci@example.com namespaces=\"closegate-attest\" $(cat "$dir/ci.key.pub")"

# blob <text>: the id of a blob holding <text>.
blob() { printf '%s' "$1" | g hash-object -w --stdin; }

# C: main plus the configuration and the signers.
base=$(g rev-parse origin/main)
g read-tree "$base"
config=$(printf 'base = "main"\n\n[[checks]]\nname = "smoke"\nrun = "true"\n')
g update-index --add --cacheinfo "100644,$(blob "$config
"),.closegate.toml"
g update-index --add --cacheinfo "100644,$(blob "$signers
"),.closegate/allowed_signers"
C=$(echo "configure closegate" | g commit-tree "$(g write-tree)" -p "$base")

# W: the agent's 20-file change (the paths scripts/bench.sh changes); S: its status document.
for i in $(seq 0 50 950); do
  f=$(printf 'd%03d/e%02d/f%d.txt' $((i / 1000)) $(((i / 10) % 100)) $((i % 10)))
  g update-index --add --cacheinfo "100644,$(blob "agent change $i
"),$f"
done
W=$(echo "agent: change 20 files" | g commit-tree "$(g write-tree)" -p "$C")
status=$(printf '# STATUS — x\n\n- state: close-ok\n- abstract: twenty files changed for the benchmark\n- last commit: %s — agent: change 20 files\n- done: the change is in\n- next / blocked-on: none\n- artifacts:\n  - d000/e00/f0.txt\n\nCLOSE-OK · x · commit %s · branch agent/x · worktree /nonexistent/wt\n' "${W:0:12}" "${W:0:12}")
g update-index --add --cacheinfo "100644,$(blob "$status"),_EXEC_STATUS.md"
S=$(echo "status" | g commit-tree "$(g write-tree)" -p "$W")
M=$(echo "merge agent/x" | g commit-tree "$S^{tree}" -p "$C" -p "$S")
unset GIT_INDEX_FILE
g update-ref refs/heads/main "$M"
g update-ref refs/heads/agent/x "$S"

echo "attesting $W (runs the check once in a 100,000-file checkout)..."
(cd "$work" && git update-ref refs/heads/main "$C" &&
  "$closegate" -q check --rev agent/x --no-worktree --attest --key "$dir/ci.key" &&
  git update-ref refs/heads/main "$M")

for name in plain noop hooked; do
  git clone -q --bare --shared "$large" "$dir/$name.git"
  git -C "$work" push -q "$dir/$name.git" "+$C:refs/heads/main"
done
(cd "$dir/hooked.git" && "$closegate" -q hook install --server)
# What git itself spends on running any pre-receive hook (a quarantine handed over, a process
# started and fed, its stderr relayed): a hook that reads its input and accepts.
printf '#!/bin/sh
cat >/dev/null
' >"$dir/noop.git/hooks/pre-receive"
chmod +x "$dir/noop.git/hooks/pre-receive"

# The check the hook's share is compared with: main at C, as the hook sees it.
checkrepo="$dir/check"
git clone -q --shared --no-checkout "$work" "$checkrepo"
git -C "$checkrepo" update-ref refs/heads/main "$C"
git -C "$checkrepo" update-ref refs/heads/agent/x "$S"

# What one `ssh-keygen -Y verify` of that attestation costs alone (the hook runs exactly this
# once per attested commit), timed in the same rounds so the share can be read against it.
git -C "$work" notes --ref=closegate show "$W" | head -n 1 >"$dir/note.json"
git -C "$work" show "$C:.closegate/allowed_signers" >"$dir/allowed_signers"

python3 - "$closegate" "$dir" "$work" "$checkrepo" "$rounds" "$C" "$M" "$S" <<'PY'
import json, os, random, resource, statistics, subprocess, sys, time
closegate, d, work, checkrepo, rounds, C, M, S = sys.argv[1:9]
rounds = int(rounds)
entry = json.load(open(f"{d}/note.json"))
with open(f"{d}/statement.sig", "w") as f:
    f.write(entry["signature"])
statement = entry["statement"].encode()

def timed(cmd, **kw):
    """Run cmd: the process, its wall time and the CPU time (user + system) of its whole
    process tree (every descendant is waited for: git push -> receive-pack -> hook)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, **kw)
    t = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return p, (t, cpu)

def reset(bare):
    subprocess.run(["git", "-C", bare, "update-ref", "refs/heads/main", C], check=True)
    for ref in ("refs/heads/agent/x", "refs/notes/closegate"):
        subprocess.run(["git", "-C", bare, "update-ref", "-d", ref], check=False)

def push(name):
    bare = f"{d}/{name}.git"
    reset(bare)
    p, t = timed(["git", "-C", work, "push", "-q", f"file://{bare}",
                  "main", "agent/x", "refs/notes/closegate"])
    if p.returncode != 0:
        sys.exit(f"push to {name} refused:\n{p.stderr.decode()}")
    return t

def check():
    p, t = timed([closegate, "check", "--no-worktree", "--no-checks", "--no-record",
                  "--rev", "agent/x"], cwd=checkrepo)
    if p.returncode != 4:  # --no-checks: UNVERIFIED is the expected verdict
        sys.exit(f"check exited {p.returncode}:\n{p.stdout.decode()}{p.stderr.decode()}")
    return t

def verify():
    p, t = timed(["ssh-keygen", "-Y", "verify", "-n", "closegate-attest", "-I",
                  "ci@example.com", "-s", f"{d}/statement.sig", "-f", f"{d}/allowed_signers"],
                 input=statement)
    if p.returncode != 0:
        sys.exit(f"ssh-keygen -Y verify failed:\n{p.stderr.decode()}")
    return t

notes = subprocess.run(["git", "-C", work, "rev-parse", "refs/notes/closegate"],
                       capture_output=True, text=True, check=True).stdout.strip()
zero = "0" * 40
updates = (f"{C} {M} refs/heads/main\n{zero} {S} refs/heads/agent/x\n"
           f"{zero} {notes} refs/notes/closegate\n").encode()
push("hooked")  # untimed: the pushed objects are in the hooked repository from now on

def hook():
    bare = f"{d}/hooked.git"
    reset(bare)
    env = dict(os.environ, GIT_DIR=".")
    p, t = timed([f"{bare}/hooks/pre-receive"], input=updates, cwd=bare, env=env)
    if p.returncode != 0:
        sys.exit(f"the hook refused:\n{p.stderr.decode()}")
    return t

run = {"plain": lambda: push("plain"), "noop": lambda: push("noop"),
       "hooked": lambda: push("hooked"), "check": check, "verify": verify, "hook": hook}
times = {what: [] for what in run}
for r in range(rounds):
    order = list(run)
    random.shuffle(order)
    for what in order:
        times[what].append(run[what]())

def spread(what, i):
    """Half the interquartile range: how far a median of these runs moves between runs."""
    q = statistics.quantiles([t[i] for t in times[what]], n=4)
    return (q[2] - q[0]) / 2

def line(label, what, target=None):
    wall, cpu = (statistics.median(t[i] for t in times[what]) for i in (0, 1))
    print(f"{label:<38}{wall * 1000:8.1f} ms wall {cpu * 1000:8.1f} ms CPU   "
          f"(spread +-{spread(what, 0) * 1000:.1f} / +-{spread(what, 1) * 1000:.1f} ms)"
          + (target or ""))
    return wall, cpu

print(f"rounds: {rounds} (medians; CPU: user + system of the whole process tree)")
plain = line("push without hook:", "plain")
noop = line("push with a no-op hook (`cat`):", "noop")
hooked = line("push with the server hook:", "hooked")
check_t = line("check --no-worktree --no-checks:", "check")
hook_t = line("hook run alone (same ref updates):", "hook")
line("ssh-keygen -Y verify alone:", "verify", " (not in the share: plain ed25519)")
for i, kind in enumerate(("wall", "CPU")):
    share = hooked[i] - plain[i]
    ok = "ok" if share < 5 else "OVER"
    print(f"hook share ({kind}):{'':<{26 - len(kind)}}{share * 1000:8.1f} ms   (target < 5000 ms) {ok}")
def interval(i, minus):
    """A 90% bootstrap interval of (median hooked - median `minus`) / median check: rounds are
    resampled whole (each round's runs together), 2,000 times, with a fixed seed."""
    rng = random.Random(20)
    med = lambda what, idx: statistics.median(times[what][k][i] for k in idx)
    ratios = []
    for _ in range(2000):
        idx = [rng.randrange(rounds) for _ in range(rounds)]
        ratios.append((med("hooked", idx) - med(minus, idx)) / med("check", idx))
    q = statistics.quantiles(ratios, n=20)
    return q[0], q[-1]

for i, kind in enumerate(("wall", "CPU")):
    for label, value, minus in (("hook share", hooked[i] - plain[i], "plain"),
                                ("share over a no-op hook", hooked[i] - noop[i], "noop"),
                                ("hook alone", hook_t[i], None)):
        ratio = value / check_t[i]
        ok = "ok" if ratio <= 1.5 else "OVER"
        if minus:
            low, high = interval(i, minus)
            ok += f" (90% interval {low:.2f}x-{high:.2f}x)"
        print(f"{label + ' / check (' + kind + '):':<38}{ratio:8.2f}x   (target <= 1.50x) {ok}")
PY
