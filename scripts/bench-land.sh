#!/usr/bin/env bash
# Cost of `closegate land` (SPEC §22), two figures, medians of N rounds, each against a reference
# measured in the same run (interleaved, so load from other processes falls on both alike):
#   1. landing one VERIFIED branch whose base has not moved (no check runs again; the teardown
#      and the branch deletion included) against `git merge --no-ff` + `git worktree remove` +
#      `git branch -d` of the same branch. Target: <= 1.5x.
#   2. ten VERIFIED branches, one of them breaking the base together with what lands before it,
#      landed with `--batch 10` against landing them one by one (`--batch 1`): the check runs are
#      counted with a probe file (bound: 1 + 2*ceil(log2 10) = 9) and the wall times compared.
#
# usage: scripts/bench-land.sh [N]     (N: rounds, default 5)
#        CLOSEGATE=/path/to/closegate scripts/bench-land.sh   (skips the release build)
set -euo pipefail

rounds=${1:-5}
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

echo "== 1. one VERIFIED branch, base not moved: land vs git merge --no-ff + worktree remove =="
: > "$tmp/land.t"; : > "$tmp/git.t"
for ((i = 0; i < rounds; i++)); do
  scene "$tmp/l$i/repo"; agent "$tmp/l$i/repo" x src/x.rs 'fn x() {}'
  scene "$tmp/g$i/repo"; agent "$tmp/g$i/repo" x src/x.rs 'fn x() {}'
  t0=$(now)
  (cd "$tmp/l$i/repo" && "$bin" land agent/x >/dev/null)
  t1=$(now)
  wt="$tmp/g$i/repo-wt-x"
  rm -f "$wt/_EXEC_STATUS.md"
  git -C "$tmp/g$i/repo" merge -q --no-ff -m merge agent/x
  git -C "$tmp/g$i/repo" worktree remove "$wt"
  git -C "$tmp/g$i/repo" branch -q -d agent/x
  t2=$(now)
  echo $((t1 - t0)) >> "$tmp/land.t"; echo $((t2 - t1)) >> "$tmp/git.t"
  test -z "$(git -C "$tmp/l$i/repo" branch --list agent/x)" || { echo "land left the branch" >&2; exit 1; }
done
land_ms=$(median < "$tmp/land.t"); git_ms=$(median < "$tmp/git.t")
awk -v a="$land_ms" -v b="$git_ms" 'BEGIN { printf "land %.1f ms, git merge + worktree remove %.1f ms: ratio %.2fx (target <= 1.5x)\n", a/1000, b/1000, a/b }'

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
