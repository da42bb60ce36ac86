#!/usr/bin/env bash
# Cost of `closegate land` (SPEC §22, §26.2; issue 36), two figures, medians of N rounds, each
# against a reference measured in the same run (interleaved, order shuffled per round, so load
# from other processes falls on both alike):
#   1. landing one VERIFIED branch whose base has not moved, in a repository of 20,000 files (the
#      agent's worktree holds all of them): `closegate land agent/rN` — gate, compose, the check
#      result reused by tree (none runs), the base moved (the main worktree's index and files
#      with it), the `land` record, the branch deleted, the teardown with its probes — against
#      `git merge --no-ff` of an identical branch + `git worktree remove` of an identical
#      worktree, in a twin repository. Target: <= 0.5x. A worktree this large is deleted in the
#      background once every probe has passed (SPEC §26.2): the script checks that `land` has
#      returned with the base moved, the `land` record written and the branch gone, then waits
#      for the background deletion to end (printed as context) before anything else is timed.
#   2. ten VERIFIED branches, one of them breaking the base together with what lands before it,
#      landed with `--batch 10` against landing them one by one (`--batch 1`): the check runs are
#      counted with a probe file (bound: 1 + 2*ceil(log2 10) = 9) and the wall times compared.
#
# usage: scripts/bench-land.sh [N]     (N: rounds, default 5)
#        CLOSEGATE=/path/to/closegate scripts/bench-land.sh   (skips the release build)
#        BENCH_PARTS="large" (any of large, batch; default both) runs only those parts.
set -euo pipefail

rounds=${1:-5}
parts=" ${BENCH_PARTS:-large batch} "
want() { [[ $parts == *" $1 "* ]]; }
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${CLOSEGATE:-}" ]; then
  cargo build --release --quiet --manifest-path "$root/Cargo.toml"
  CLOSEGATE="${CARGO_TARGET_DIR:-$root/target}/release/closegate"
fi
bin=$CLOSEGATE

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp" XDG_CONFIG_HOME="$tmp" GIT_CONFIG_NOSYSTEM=1 LC_ALL=C TZ=UTC NO_COLOR=1
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY GIT_COMMON_DIR

now() { local t=${EPOCHREALTIME/[.,]/}; echo "$t"; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# A repository `$1` whose check appends to `$1.runs` and fails when a file calls old_name() that
# no file defines.
scene() {
  local dir=$1
  git init -q -b main "$dir"
  mkdir -p "$dir/src"
  printf 'pub fn old_name() {}\n' > "$dir/src/lib.rs"
  cat > "$dir/.closegate.toml" <<TOML
[[checks]]
name = "calls"
run = 'echo run >> "$dir.runs"; ! grep -rq "old_name()" "\$PWD/src" || grep -rq "fn old_name" "\$PWD/src"'
timeout_s = 60
writable = ['$(dirname "$dir")']
TOML
  git -C "$dir" add -A
  git -C "$dir" commit -q -m init
}

# A VERIFIED agent `agent/$2` in repository `$1` whose commit writes `$3` with `$4`.
agent() {
  local dir=$1 slug=$2 path=$3 body=$4 wt
  wt="$(dirname "$dir")/$(basename "$dir")-wt-$slug"
  git -C "$dir" worktree add -q -b "agent/$slug" "$wt" main
  mkdir -p "$(dirname "$wt/$path")"
  printf '%s\n' "$body" > "$wt/$path"
  git -C "$wt" add -A
  git -C "$wt" commit -q -m "add $slug"
  local sha; sha=$(git -C "$wt" rev-parse HEAD)
  local real; real=$(cd "$wt" && pwd -P)
  cat > "$wt/_EXEC_STATUS.md" <<DOC
# STATUS — $slug

- state: close-ok
- abstract: adds $slug, proven by the calls check
- last commit: ${sha:0:12} — add $slug
- done: it exists, proven by the calls check
- next / blocked-on: none
- artifacts:
  - $path
- updated: 2026-11-29

CLOSE-OK · $slug · commit ${sha:0:12} · branch agent/$slug · worktree $real
DOC
  (cd "$wt" && "$bin" check >/dev/null) || { echo "check of $slug did not verify" >&2; exit 1; }
}

# large <dir>: a repository of 20,000 files (one `run = "true"` check), `main` checked out.
large() {
  local dir=$1
  git init -q -b main "$dir"
  python3 - <<'PY' | git -C "$dir" fast-import --quiet --done
import sys
out = sys.stdout.buffer
def data(text):
    raw = text.encode()
    out.write(b"data %d\n" % len(raw) + raw + b"\n")
def entry(path, text):
    out.write(b"M 100644 inline " + path.encode() + b"\n")
    data(text)
out.write(b"commit refs/heads/main\ncommitter bench <bench@example.com> 1700000000 +0000\n")
data("20000 files")
for i in range(20000):
    entry(f"d{i // 1000:03d}/e{(i // 10) % 100:02d}/f{i % 10}.txt", f"file {i}\n" + "x" * (i % 200) + "\n")
entry(".closegate.toml", 'base = "main"\n\n[[checks]]\nname = "cheap"\nrun = "true"\n')
out.write(b"done\n")
PY
  git -C "$dir" checkout -q -f main
}

# branch_round <repo> <n> <close>: worktree `<repo>-wt<n>` on a new branch `agent/r<n>` from
# `main`, one file changed and committed; with <close> = 1 closed (`closegate close`) and checked
# (VERIFIED). Setup, not timed.
branch_round() {
  local repo=$1 n=$2 wt="$1-wt$2"
  git -C "$repo" worktree add -q -b "agent/r$n" "$wt" main
  echo "round $n" > "$wt/d000/e00/f0.txt"
  git -C "$wt" commit -q -am "agent: change one file, round $n"
  if [ "$3" = 1 ]; then
    "$bin" close --artifact d000/e00/f0.txt --abstract "changes one file for the benchmark" \
      --done "the change is in, proven by the check cheap" "$wt" > /dev/null
  fi
  # Let the checkouts age past their indexes' timestamps, then let git refresh each index once, so
  # neither tool meets racily-clean entries in the timed runs.
  sleep 1
  git -C "$wt" status --porcelain > /dev/null
  git -C "$repo" status --porcelain > /dev/null
  if [ "$3" = 1 ]; then
    "$bin" check "$wt" > /dev/null || { "$bin" check "$wt"; echo "check of round $n did not verify" >&2; exit 1; }
  fi
}

if want large; then
echo "== 1. one VERIFIED branch, base not moved, 20,000 files: land vs git merge --no-ff + worktree remove =="
echo "load: $(uptime | sed 's/.*load average/load average/')"
large "$tmp/l"; large "$tmp/g"
: > "$tmp/large.t"
for ((i = 1; i <= rounds; i++)); do
  branch_round "$tmp/l" "$i" 1; branch_round "$tmp/g" "$i" 0
  python3 - "$bin" "$tmp" "$i" <<'PY' >> "$tmp/large.t"
import json, os, random, subprocess, sys, time
closegate, d, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def git(*argv, cwd):
    return subprocess.run(["git", *argv], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
def tip(repo):
    return git("rev-parse", "main", cwd=repo).stdout.decode().strip()
def fail(msg, p=None):
    sys.stderr.write(f"bench-land: {msg}\n")
    if p is not None:
        sys.stderr.write(p.stdout.decode(errors="replace"))
    sys.exit(1)
def land():
    repo, wt = f"{d}/l", f"{d}/l-wt{n}"
    before = tip(repo)
    t = time.perf_counter()
    p = subprocess.run([closegate, "land", f"agent/r{n}"], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    elapsed = time.perf_counter() - t
    if p.returncode != 0:
        fail(f"land of round {n} exited {p.returncode}", p)
    # What land promises by the time it returns (SPEC §26.2): the base moved, the record written,
    # the branch deleted.
    if tip(repo) == before:
        fail(f"land of round {n} returned before the base moved", p)
    log = [json.loads(l) for l in open(f"{repo}/.git/closegate/audit.jsonl")]
    if not any(r.get("event") == "land" and r.get("branch") == f"agent/r{n}" and r.get("base_before") == before for r in log):
        fail(f"land of round {n} returned before its record was written", p)
    if git("rev-parse", "--verify", "-q", f"refs/heads/agent/r{n}", cwd=repo).returncode == 0:
        fail(f"land of round {n} left the branch", p)
    # The worktree's deletion runs in the background: nothing else is timed until it has ended.
    prefix, admin = f"l-wt{n}.closegate-removing-", f"{repo}/.git/worktrees/l-wt{n}"
    give_up = time.perf_counter() + 600
    while os.path.lexists(wt) or os.path.lexists(admin) or any(
            e.startswith("." + prefix) or e.startswith(prefix) for e in os.listdir(d)):
        if time.perf_counter() > give_up:
            fail(f"the background removal of {wt} did not end")
        time.sleep(0.005)
    print("background", time.perf_counter() - t)
    return elapsed
def reference():
    repo, wt = f"{d}/g", f"{d}/g-wt{n}"
    t = time.perf_counter()
    p = git("merge", "-q", "--no-ff", "-m", "merge", f"agent/r{n}", cwd=repo)
    if p.returncode != 0:
        fail(f"git merge of round {n} failed", p)
    p = git("worktree", "remove", wt, cwd=repo)
    elapsed = time.perf_counter() - t
    if p.returncode != 0 or os.path.lexists(wt):
        fail(f"git worktree remove of round {n} failed", p)
    return elapsed
order = [("land", land), ("git", reference)]
random.Random(20261203 + n).shuffle(order)
for name, run in order:
    print(name, run())
PY
done
python3 - "$tmp/large.t" "$rounds" <<'PY'
import statistics, sys
t = {"land": [], "git": [], "background": []}
for line in open(sys.argv[1]):
    name, secs = line.split()
    t[name].append(float(secs) * 1000)
land, git = statistics.median(t["land"]), statistics.median(t["git"])
print(f"median of {sys.argv[2]} interleaved rounds (order shuffled, fresh worktrees each round)")
print(f"land {land:.0f} ms, git merge --no-ff + worktree remove {git:.0f} ms: ratio {land / git:.2f}x "
      f"(target <= 0.5x) {'ok' if land / git <= 0.5 else 'MISSED'}")
print(f"context: the background removal had ended {statistics.median(t['background']):.0f} ms after "
      f"land started (median; the next command is timed only after it)")
print("per round (ms): land " + " ".join(f"{x:.0f}" for x in t["land"])
      + "; git " + " ".join(f"{x:.0f}" for x in t["git"]))
PY
echo "load: $(uptime | sed 's/.*load average/load average/')"
fi

want batch || exit 0
echo "== 2. ten branches, one breaking: --batch 10 vs one by one =="
: > "$tmp/batch.t"; : > "$tmp/single.t"; : > "$tmp/batch.n"; : > "$tmp/single.n"
setup10() {
  local dir=$1
  scene "$dir"
  agent "$dir" rename src/lib.rs 'pub fn new_name() {}'
  for k in 0 1 2 3 4 5 6 7 8 9; do
    if [ "$k" = 6 ]; then body='fn f() { old_name() }'; else body="fn f$k() {}"; fi
    agent "$dir" "b$k" "src/f$k.rs" "$body"
  done
  # The rename lands first: b6 (a call to the old name) passed alone and now breaks the base.
  (cd "$dir" && "$bin" land agent/rename >/dev/null)
  : > "$dir.runs"
}
branches="agent/b0 agent/b1 agent/b2 agent/b3 agent/b4 agent/b5 agent/b6 agent/b7 agent/b8 agent/b9"
for ((i = 0; i < rounds; i++)); do
  setup10 "$tmp/b$i/repo"; setup10 "$tmp/s$i/repo"
  t0=$(now)
  (cd "$tmp/b$i/repo" && "$bin" land --batch 10 $branches >/dev/null) || true
  t1=$(now)
  (cd "$tmp/s$i/repo" && "$bin" land $branches >/dev/null) || true
  t2=$(now)
  echo $((t1 - t0)) >> "$tmp/batch.t"; echo $((t2 - t1)) >> "$tmp/single.t"
  wc -l < "$tmp/b$i/repo.runs" >> "$tmp/batch.n"; wc -l < "$tmp/s$i/repo.runs" >> "$tmp/single.n"
  landed=$(git -C "$tmp/b$i/repo" ls-tree --name-only main src/ | grep -c 'src/f')
  test "$landed" = 9 || { echo "the batch landed $landed of 9" >&2; exit 1; }
done
b_ms=$(median < "$tmp/batch.t"); s_ms=$(median < "$tmp/single.t")
b_n=$(median < "$tmp/batch.n"); s_n=$(median < "$tmp/single.n")
echo "check runs: --batch 10 $b_n (bound 9), one by one $s_n"
awk -v a="$b_ms" -v b="$s_ms" 'BEGIN { printf "wall: --batch 10 %.1f ms, one by one %.1f ms: ratio %.2fx\n", a/1000, b/1000, a/b }'
