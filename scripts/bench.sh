#!/usr/bin/env bash
# SPEC §11 — cost follows the change, not the repository. Builds closegate (release), generates two
# scratch repositories with `git fast-import` (cached under .bench/, which git ignores) and times
# closegate against git itself on the same worktree, in the same run, interleaved round by round.
#
#   large: 100,000 files, 10,000 commits     small: 1,000 files, 100 commits
#
# Both come from the same generator: one commit adding every file (d###/e##/f#.txt, 10 files a
# folder), then commits that each change 3 files, a `git repack -adf` as after gc, then an agent
# worktree (`git worktree add`) on `agent/x` with the same 20-file change committed in both, a close-ok
# `_EXEC_STATUS.md` (untracked, exempt) and an ignored `build/` folder of 200 files. The small repository scales the commit count with the file
# count, so the large/small ratio covers both dimensions of "the repository".
#
# A second agent worktree of the large repository, on `agent/p`, holds the same 20-file change and
# five changes on protected surfaces (three test files changed, one added, the CI workflow
# changed; the base holds 100 test files under tests/unit/ and .github/workflows/ci.yml): its
# git-object part is timed against `git diff --raw -M` of the same change (issue 36: a change
# the protected gate judges, where a review is needed).
#
# Usage: scripts/bench.sh [rounds]   (default 61; BENCH_ROUNDS also works). No network.
# CLOSEGATE=<a closegate binary> skips the release build and times that binary.
# BENCH_BASELINE=<another closegate binary> also times that binary's check in the same rounds and
# prints this build against it (a before/after measured under the same load).
# `check --no-checks` exits 4 (UNVERIFIED): that is the expected verdict here, not a failure.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-${BENCH_ROUNDS:-61}}
stamp="closegate-bench v4"

if [ -n "${CLOSEGATE:-}" ]; then
  closegate=$CLOSEGATE
else
  echo "building closegate (release)..."
  cargo build --release --quiet --manifest-path "$here/Cargo.toml"
  closegate="${CARGO_TARGET_DIR:-$here/target}/release/closegate"
fi

bench="$here/.bench"
mkdir -p "$bench/home"
export GIT_CONFIG_NOSYSTEM=1 HOME="$bench/home" XDG_CONFIG_HOME="$bench/home" TZ=UTC LC_ALL=C \
  GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com \
  GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY GIT_COMMON_DIR

# stream <files> <commits>: a fast-import stream for `main` (fixed dates, deterministic ids).
stream() {
  python3 - "$1" "$2" <<'PY'
import sys
files, commits = int(sys.argv[1]), int(sys.argv[2])
out = sys.stdout.buffer
T0 = 1_700_000_000

def path(i):
    return f"d{i // 1000:03d}/e{(i // 10) % 100:02d}/f{i % 10}.txt"

def data(text):
    raw = text.encode()
    out.write(b"data %d\n" % len(raw) + raw + b"\n")

def commit(k, msg, changes):
    out.write(b"commit refs/heads/main\nmark :%d\n" % k)
    out.write(b"committer bench <bench@example.com> %d +0000\n" % (T0 + 60 * k))
    data(msg)
    if k > 1:
        out.write(b"from :%d\n" % (k - 1))
    for p, text in changes:
        out.write(b"M 100644 inline " + p.encode() + b"\n")
        data(text)

first = [(path(i), f"file {i}\n" + "x" * (i % 200) + "\n") for i in range(files)]
first += [(f"tests/unit/case{i:02d}.txt", f"test case {i}\n") for i in range(100)]
first.append((".github/workflows/ci.yml", "on: push\njobs: {}\n"))
first.append((".gitignore", "build/\n*.log\n"))
first.append((".closegate.toml", 'base = "main"\n'))
commit(1, f"{files} files", first)
for k in range(2, commits + 1):
    picks = sorted({(k * 7919 + j * 104729) % files for j in range(3)})
    commit(k, f"change {k}", [(path(i), f"file {i} v{k}\n") for i in picks])
out.write(b"done\n")
PY
}

# status_doc <worktree> <slug>: a close-ok status document naming the worktree's HEAD.
status_doc() {
  local wt=$1 slug=$2 sha subject
  sha=$(git -C "$wt" rev-parse HEAD)
  subject=$(git -C "$wt" log -1 --format=%s)
  {
    printf '# STATUS — %s\n\n- state: close-ok\n' "$slug"
    printf -- '- abstract: twenty files changed for the benchmark\n'
    printf -- '- last commit: %s — %s\n' "${sha:0:12}" "$subject"
    printf -- '- done: the change is in\n- next / blocked-on: none\n'
    printf -- '- artifacts:\n  - d000/e00/f0.txt\n'
    printf '\nCLOSE-OK · %s · commit %s · branch agent/%s · worktree %s\n' "$slug" "${sha:0:12}" "$slug" "$wt"
  } > "$wt/_EXEC_STATUS.md"
}

# generate <name> <files> <commits>: the repository, its checkout and the agent worktree(s).
generate() {
  local name=$1 files=$2 commits=$3 dir="$bench/$1"
  local want="$stamp files=$files commits=$commits"
  if [ "$(cat "$dir/STAMP" 2>/dev/null)" = "$want" ]; then
    return
  fi
  echo "generating $name: $files files, $commits commits (cached in $dir)..."
  rm -rf "$dir"
  mkdir -p "$dir"
  git init -q -b main "$dir/repo"
  stream "$files" "$commits" | git -C "$dir/repo" fast-import --quiet --done
  # fast-import's pack chains each tree to its previous version (up to 50 deltas deep); a
  # repository that has been gc'd or cloned has its recent objects near the chain roots.
  git -C "$dir/repo" repack -adf -q
  git -C "$dir/repo" checkout -q -f main
  git -C "$dir/repo" worktree add -q -b agent/x "$dir/wt" main
  local wt="$dir/wt" i
  # The same 20 paths in both repositories (d000/e00/f0.txt, d000/e05/f0.txt, …): the change is
  # held constant so that large/small measures the repository, not the shape of the change.
  for i in $(seq 0 50 950); do
    f=$(printf 'd%03d/e%02d/f%d.txt' $((i / 1000)) $(((i / 10) % 100)) $((i % 10)))
    echo "agent change" >> "$wt/$f"
  done
  git -C "$wt" add -A
  git -C "$wt" commit -q -m "agent: change 20 files"
  mkdir -p "$wt/build"
  for i in $(seq 1 200); do echo "object $i" > "$wt/build/o$i.o"; done
  status_doc "$wt" x
  if [ "$name" = large ]; then
    # agent/p: the same 20 files, and five changes on protected surfaces.
    wt="$dir/wtp"
    git -C "$dir/repo" worktree add -q -b agent/p "$wt" main
    for i in $(seq 0 50 950); do
      f=$(printf 'd%03d/e%02d/f%d.txt' $((i / 1000)) $(((i / 10) % 100)) $((i % 10)))
      echo "agent change" >> "$wt/$f"
    done
    for i in 00 01 02; do echo "agent change" >> "$wt/tests/unit/case$i.txt"; done
    echo "a new test case" > "$wt/tests/unit/case_new.txt"
    echo "# agent change" >> "$wt/.github/workflows/ci.yml"
    git -C "$wt" add -A
    git -C "$wt" commit -q -m "agent: change 20 files and 5 protected paths"
    status_doc "$wt" p
  fi
  # Let the checkout age past the index's timestamp, then let git refresh the index once, so
  # neither tool meets racily-clean entries in the timed runs.
  sleep 1
  for wt in "$dir/wt" "$dir/wtp" "$dir/repo"; do
    [ -d "$wt" ] && git -C "$wt" status --porcelain > /dev/null
  done
  echo "$want" > "$dir/STAMP"
}

start=$(date +%s)
generate large 100000 10000
generate small 1000 100
[ $(($(date +%s) - start)) -gt 1 ] && echo "generated in $(($(date +%s) - start)) s"

# Sanity: the timed check must reach the worktree scan and find the worktree clean.
for name in large small; do
  set +e
  out=$("$closegate" check --no-checks --no-record "$bench/$name/wt" 2>&1)
  code=$?
  set -e
  if [ "$code" != 4 ] || printf '%s\n' "$out" | grep -q 'close-worktree'; then
    echo "unexpected result in $bench/$name/wt (exit $code):" >&2
    printf '%s\n' "$out" >&2
    exit 1
  fi
done
# The protected change must reach the protected gate and have hits there.
set +e
out=$("$closegate" check --no-checks --no-record --no-worktree "$bench/large/wtp" 2>&1)
set -e
if ! printf '%s\n' "$out" | grep -q 'protected-surface' || printf '%s\n' "$out" | grep -q 'close-worktree'; then
  echo "unexpected result in $bench/large/wtp:" >&2
  printf '%s\n' "$out" >&2
  exit 1
fi

python3 - "$closegate" "$bench" "$rounds" "${BENCH_BASELINE:-}" <<'PY'
import random, statistics, subprocess, sys, time
closegate, bench, rounds, baseline = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
large, small, protected = f"{bench}/large/wt", f"{bench}/small/wt", f"{bench}/large/wtp"
cmds = {
    "obj-large": ([closegate, "check", "--no-checks", "--no-record", "--no-worktree"], large),
    "obj-small": ([closegate, "check", "--no-checks", "--no-record", "--no-worktree"], small),
    "rev-parse": (["git", "rev-parse", "HEAD"], large),
    "full-large": ([closegate, "check", "--no-checks", "--no-record"], large),
    "status-large": (["git", "status", "--porcelain", "--untracked-files=all"], large),
    "full-small": ([closegate, "check", "--no-checks", "--no-record"], small),
    "status-small": (["git", "status", "--porcelain", "--untracked-files=all"], small),
    "diff-large": (["git", "diff", "--raw", "-M", "main", "agent/x"], large),
    "diff-small": (["git", "diff", "--raw", "-M", "main", "agent/x"], small),
    "obj-protected": ([closegate, "check", "--no-checks", "--no-record", "--no-worktree"], protected),
    "diff-protected": (["git", "diff", "--raw", "-M", "main", "agent/p"], protected),
}
if baseline:
    cmds["base-obj-large"] = ([baseline, "check", "--no-checks", "--no-record", "--no-worktree"], large)
    cmds["base-full-large"] = ([baseline, "check", "--no-checks", "--no-record"], large)
times = {name: [] for name in cmds}

def run(argv, cwd):
    t = time.perf_counter()
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t

for name, (argv, cwd) in cmds.items():  # warm the page cache
    run(argv, cwd)
# Interleaved, so noise from other load hits every command alike, and shuffled each round: in a
# fixed order each command always follows the same one, and what ran just before (a 200 ms git
# status of 100,000 files, or the same binary on the same repository) colours the next run's
# caches. A fixed seed keeps runs comparable.
order = list(cmds.items())
shuffle = random.Random(20261129).shuffle
for _ in range(rounds):
    shuffle(order)
    for name, (argv, cwd) in order:
        times[name].append(run(argv, cwd))
ms = {name: statistics.median(t) * 1000 for name, t in times.items()}

def line(label, a, b, ref, target):
    ratio = ms[a] / ms[b]
    verdict = "ok" if ratio <= target else "MISSED"
    print(f"{label}: {ms[a]:.1f} ms vs {ref} {ms[b]:.1f} ms = {ratio:.2f}x "
          f"(target <= {target:g}x) {verdict}")

print(f"median of {rounds} interleaved rounds, shuffled")
line("git-object part (large)", "obj-large", "rev-parse", "git rev-parse", 2)
line("git-object part (large/small)", "obj-large", "obj-small", "small", 1.2)
# Issue 28: git's own reading of the same change's objects, objects hash-verified on our side.
line("git-object part (large) vs git diff", "obj-large", "diff-large", "git diff --raw -M", 1.2)
# Issue 36: the same with five changes on protected surfaces (the protected gate has hits).
line("git-object part (large, protected change) vs git diff", "obj-protected", "diff-protected",
     "git diff --raw -M", 1.2)
line("worktree scan (large)", "full-large", "status-large", "git status", 1.2)
line("worktree scan (small)", "full-small", "status-small", "git status", 1.2)
if baseline:
    for part, name in (("git-object part", "obj-large"), ("full check", "full-large")):
        print(f"{part} (large), this build vs BENCH_BASELINE: {ms[name]:.2f} ms vs "
              f"{ms['base-' + name]:.2f} ms = {ms[name] - ms['base-' + name]:+.2f} ms")
# Context: git diff against the process start, and large against small.
print(f"context: git diff --raw -M main agent/x: large {ms['diff-large']:.1f} ms "
      f"= {ms['diff-large'] / ms['rev-parse']:.2f}x git rev-parse; "
      f"large/small {ms['diff-large'] / ms['diff-small']:.2f}x")
PY
