#!/usr/bin/env bash
# Cost of closegate's reference-transaction hook (SPEC §9) on the updates it sees most, against
# N runs of `closegate --version` (the bare process start), interleaved one of each per round so
# load from other processes falls on all of them alike:
#   - tag updates (`git update-ref refs/tags/t$i HEAD`): the script answers without closegate;
#   - branch updates that are not agent branches (`git update-ref refs/heads/feature <c1|c2>`,
#     a commit on a feature branch): the script answers without closegate too (it hands over
#     only branch deletions, the guarded bases and origin/HEAD), reading every line itself;
#   - the same branch updates in a repository of 100,000 files and 10,000 commits (the one
#     scripts/bench.sh generates under .bench/large; skipped with a note when it is absent).
# Each is timed in a repository without the hook and in one with it; the overhead is the
# difference. Target: overhead per update <= 1.5x the `closegate --version` process time.
#
# usage: scripts/bench-hook.sh [N]     (N: rounds, default 1000)
set -euo pipefail

rounds=${1:-1000}
root=$(cd "$(dirname "$0")/.." && pwd)

cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin="${CARGO_TARGET_DIR:-$root/target}/release/closegate"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp" XDG_CONFIG_HOME="$tmp" GIT_CONFIG_NOSYSTEM=1 LC_ALL=C TZ=UTC
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY GIT_COMMON_DIR

# A small repository: main carrying a configuration with one check, two commits.
for name in plain hooked; do
  git init -q -b main "$tmp/$name"
  printf '[[checks]]\nname = "t"\nrun = "true"\n' > "$tmp/$name/.closegate.toml"
  git -C "$tmp/$name" add .closegate.toml
  git -C "$tmp/$name" commit -q -m init
  git -C "$tmp/$name" commit -q --allow-empty -m second
done
(cd "$tmp/hooked" && "$bin" hook install >/dev/null)

# The large repository, shared through alternates (nothing copied, no checkout needed).
large="$root/.bench/large/repo"
have_large=
if [ -d "$large/.git/objects" ]; then
  have_large=1
  for name in large-plain large-hooked; do
    git init -q -b main "$tmp/$name"
    echo "$large/.git/objects" > "$tmp/$name/.git/objects/info/alternates"
    git -C "$tmp/$name" update-ref refs/heads/main "$(git -C "$large" rev-parse main)"
  done
  (cd "$tmp/large-hooked" && "$bin" hook install >/dev/null)
fi


declare -A total
for key in tag-plain tag-hooked br-plain br-hooked lg-plain lg-hooked version; do total[$key]=0; done
for ((i = 0; i < rounds; i++)); do
  c=$((i % 2))
  for name in plain hooked; do
    t0=${EPOCHREALTIME/[.,]/}
    git -C "$tmp/$name" update-ref "refs/tags/t$i" HEAD
    t1=${EPOCHREALTIME/[.,]/}
    git -C "$tmp/$name" update-ref refs/heads/feature "HEAD~$c"
    t2=${EPOCHREALTIME/[.,]/}
    total[tag-$name]=$((total[tag-$name] + t1 - t0))
    total[br-$name]=$((total[br-$name] + t2 - t1))
    if [ -n "$have_large" ]; then
      git -C "$tmp/large-$name" update-ref refs/heads/feature "main~$c"
      t3=${EPOCHREALTIME/[.,]/}
      total[lg-$name]=$((total[lg-$name] + t3 - t2))
    fi
  done
  t0=${EPOCHREALTIME/[.,]/}
  "$bin" --version >/dev/null
  t1=${EPOCHREALTIME/[.,]/}
  total[version]=$((total[version] + t1 - t0))
done

# Every update went through: the hooked repository holds every tag and the feature branch.
test "$(git -C "$tmp/hooked" tag | wc -l)" -eq "$rounds"
git -C "$tmp/hooked" rev-parse -q --verify refs/heads/feature >/dev/null

report() { # report <label> <without> <with>
  awk -v n="$rounds" -v label="$1" -v a="$2" -v b="$3" -v v="${total[version]}" 'BEGIN {
    o = (b - a) / n; p = v / n; r = o / p
    printf "%-34s without hook %6.0f us, with hook %6.0f us: overhead %6.0f us = %5.2fx --version (target <= 1.50x) %s\n",
      label, a / n, b / n, o, r, (r <= 1.5 ? "ok" : "OVER")
  }'
}
awk -v n="$rounds" -v v="${total[version]}" 'BEGIN { printf "closegate --version x%d: %6.0f us/run\n", n, v / n }'
report "tag update (refs/tags/t\$i)" "${total[tag-plain]}" "${total[tag-hooked]}"
report "branch update (refs/heads/feature)" "${total[br-plain]}" "${total[br-hooked]}"
if [ -n "$have_large" ]; then
  report "same, 100,000-file repository" "${total[lg-plain]}" "${total[lg-hooked]}"
else
  echo "100,000-file repository: absent ($large); run scripts/bench.sh once to generate it"
fi
