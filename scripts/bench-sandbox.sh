#!/usr/bin/env bash
# SPEC §4.6 — what the checks' sandbox costs, against a reference build measured in the same run.
# Builds closegate and a reference closegate (BENCH_BASELINE=<binary>, else built from the
# revision BENCH_BASELINE_REV, default `main`, exported with `git archive` into the scratch
# directory and built in the same target directory so only the crate itself compiles), makes a
# small scratch repository (an agent worktree with a close-ok status document) and a home holding
# the secret paths the sandbox covers (~/.ssh, ~/.aws, ~/.netrc, ... and an SSH_AUTH_SOCK
# directory), and times, interleaved round by round in the same run:
#
#   off / base-off:         `closegate check --no-record`, one check `run = "true"`, sandbox = "off"
#   sandbox / base-sandbox: the same, sandbox = "auto" (bubblewrap)
#   bwrap:                  `bwrap <the sandbox's namespaces> -- true` alone, against `sh -c true`
#
# and prints the medians, the sandbox set-up cost of each build (sandboxed minus off) and the
# ratio this build / reference: the new mounts (secret paths covered) and environment
# (allow-list) against today's. Target: <= 1.2x.
#
# Usage: scripts/bench-sandbox.sh [rounds]   (default 101). Needs bwrap and python3. No network.
# BENCH_PROFILE=debug builds both without optimisation (faster to build on a loaded machine;
# the sandbox set-up is the kernel's and bwrap's work, not closegate's code).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-101}
profile=${BENCH_PROFILE:-release}
command -v bwrap > /dev/null || { echo "bench-sandbox: bwrap is not installed" >&2; exit 1; }

# bench_setup moves HOME into the scratch directory; the reference build still needs the toolchain.
export RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup} CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
. "$here/scripts/bench-env.sh"
bench_setup "$profile"
cp "$closegate" "$dir/closegate-new"
closegate="$dir/closegate-new"
baseline=${BENCH_BASELINE:-}
if [ -z "$baseline" ]; then
  rev=${BENCH_BASELINE_REV:-main}
  echo "building the reference closegate ($rev, $profile)..."
  mkdir "$dir/base-src"
  git -C "$here" archive "$rev" | tar -x -C "$dir/base-src"
  flag=(); [ "$profile" = release ] && flag=(--release)
  cargo build "${flag[@]}" --quiet --manifest-path "$dir/base-src/Cargo.toml" \
    --target-dir "${CARGO_TARGET_DIR:-$here/target}"
  cp "${CARGO_TARGET_DIR:-$here/target}/$profile/closegate" "$dir/closegate-base"
  baseline="$dir/closegate-base"
  # The shared target directory's `closegate` is now a hard link to the reference's artifact:
  # put this build's back as a file of its own (writing through the link would change that
  # artifact).
  rm -f "${CARGO_TARGET_DIR:-$here/target}/$profile/closegate"
  cp "$closegate" "${CARGO_TARGET_DIR:-$here/target}/$profile/closegate"
fi
unset CLOSEGATE_TEST_NO_SANDBOX
# The operator's secrets the sandbox now covers, as on a real machine.
for d in .ssh .gnupg .aws .docker .kube .config/gh .config/gcloud; do
  mkdir -p "$HOME/$d" && echo secret > "$HOME/$d/secret"
done
for f in .netrc .git-credentials .npmrc .pypirc; do echo secret > "$HOME/$f"; done
mkdir -p "$dir/agent" && : > "$dir/agent/agent.sock"
export SSH_AUTH_SOCK="$dir/agent/agent.sock" GITHUB_TOKEN=bench-token-0123456789
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

python3 - "$closegate" "$dir" "$rounds" "$baseline" <<'PY'
import os, random, statistics, subprocess, sys, time
closegate, d, rounds, baseline = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
wt = f"{d}/wt"
base = [closegate, "check", "--no-record", "--config"]
bwrap = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-user",
         "--unshare-pid", "--unshare-ipc", "--die-with-parent", "--new-session"]
bwrap += ["--cap-drop", "ALL"] if os.geteuid() == 0 else []
bwrap += ["--", "true"]
cmds = {
    "off": base + [f"{d}/off.toml"],
    "sandbox": base + [f"{d}/auto.toml"],
    "base-off": [baseline] + base[1:] + [f"{d}/off.toml"],
    "base-sandbox": [baseline] + base[1:] + [f"{d}/auto.toml"],
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
setup, base_setup = ms["sandbox"] - ms["off"], ms["base-sandbox"] - ms["base-off"]
print(f"check with one `true` check: sandboxed {ms['sandbox']:.1f} ms vs unsandboxed "
      f"{ms['off']:.1f} ms = {ms['sandbox'] / ms['off']:.2f}x; "
      f"sandbox set-up {setup:.1f} ms per run")
print(f"reference build: sandboxed {ms['base-sandbox']:.1f} ms vs unsandboxed "
      f"{ms['base-off']:.1f} ms; sandbox set-up {base_setup:.1f} ms per run")
print(f"sandbox set-up, this build / reference: {setup:.1f} ms / {base_setup:.1f} ms "
      f"= {setup / base_setup:.2f}x (target <= 1.2x); sandboxed check "
      f"{ms['sandbox'] / ms['base-sandbox']:.2f}x")
print(f"context: bwrap -- true {ms['bwrap']:.1f} ms vs sh -c true {ms['sh']:.1f} ms "
      f"= {ms['bwrap'] / ms['sh']:.2f}x")
PY
