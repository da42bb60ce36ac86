#!/usr/bin/env bash
# Cost of closegate's reference-transaction hook on ref updates that touch no branch (SPEC §9):
# 1,000 `git update-ref refs/tags/t$i HEAD` in a repository without the hook and in one with it,
# against N runs of `closegate --version` (the bare process start). The three are interleaved,
# one of each per round, so load from other processes falls on all of them alike.
# Target: overhead per update <= 1.5x the `closegate --version` process time.
#
# usage: scripts/bench-hook.sh [N]     (N: rounds, default 1000)
set -euo pipefail

rounds=${1:-1000}
root=$(cd "$(dirname "$0")/.." && pwd)

cargo build --release --quiet --manifest-path "$root/Cargo.toml"
bin="$root/target/release/closegate"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp" XDG_CONFIG_HOME="$tmp" GIT_CONFIG_NOSYSTEM=1 LC_ALL=C TZ=UTC
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com

for name in plain hooked; do
  git init -q -b main "$tmp/$name"
  git -C "$tmp/$name" commit -q --allow-empty -m init
done
(cd "$tmp/hooked" && "$bin" hook install >/dev/null)


zero=0000000000000000000000000000000000000000
tag_line="$zero $(git -C "$tmp/plain" rev-parse HEAD) refs/tags/direct"
without=0 with=0 version=0 direct=0
for ((i = 0; i < rounds; i++)); do
  t0=${EPOCHREALTIME/[.,]/}
  git -C "$tmp/plain" update-ref "refs/tags/t$i" HEAD
  t1=${EPOCHREALTIME/[.,]/}
  git -C "$tmp/hooked" update-ref "refs/tags/t$i" HEAD
  t2=${EPOCHREALTIME/[.,]/}
  "$bin" --version >/dev/null
  t3=${EPOCHREALTIME/[.,]/}
  "$bin" hook run reference-transaction prepared <<<"$tag_line"
  t4=${EPOCHREALTIME/[.,]/}
  without=$((without + t1 - t0)) with=$((with + t2 - t1)) version=$((version + t3 - t2))
  direct=$((direct + t4 - t3))
done

# Every tag went through the hook: the hooked repository holds them all, the plain one too.
test "$(git -C "$tmp/hooked" tag | wc -l)" -eq "$rounds"

awk -v n="$rounds" -v a="$without" -v b="$with" -v v="$version" -v d="$direct" 'BEGIN {
  o = (b - a) / n; p = v / n; r = o / p
  printf "git update-ref x%d without hook:  %8.0f us/update\n", n, a / n
  printf "git update-ref x%d with hook:     %8.0f us/update\n", n, b / n
  printf "hook overhead per update:          %8.0f us\n", o
  printf "closegate --version x%d:          %8.0f us/run\n", n, p
  printf "ratio overhead / --version:        %8.2fx (target <= 1.50x) %s\n", r, (r <= 1.5 ? "ok" : "OVER")
  printf "closegate hook run, tag line x%d: %8.0f us/run (%.2fx --version: its own fast path)\n", n, d / n, d / v

}'
