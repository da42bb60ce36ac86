#!/usr/bin/env bash
# Checks on real projects, cold and warm (issue 25's benchmark). For each corpus project: `init`
# (its configuration, with the `keep` paths it writes), then in an agent's worktree
#   cold   the first `closegate check` of a one-file change (empty warm workspace)
#   warm   the second `closegate check`, of another one-file change
#   own    the project's own test command, run incrementally in the agent's worktree after the
#          same kind of one-file change (its dependencies installed there once, untimed)
#   edit   a warm `closegate check` of a return that also edits a test file (test integrity's
#          overlays run: target edit/own ≤ 1.6)
#   fresh  the first check of a second agent's fresh worktree, on a base the first agent's
#          check already took (the base snapshot is there: target fresh/own ≤ 1.5)
# all in the same run, and prints warm / own (target: ≤ 1.3). Every check is recorded, as in use:
# the base's run (the base snapshot, the census's base run) is then taken once and reused. The warm check and the own run are
# repeated ROUNDS times (default 3), alternating, each after a fresh one-file change; the figures
# are the medians (the machine is shared: only ratios measured side by side mean anything).
#
#   scripts/bench-real.sh [NAME...]   (default: the eight main projects)
# Needs what scripts/real-projects.sh needs. CLOSEGATE names the binary (default
# target/release/closegate, else target/debug/closegate).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
corpus=${CORPUS:-}
for c in "$here/../shared/corpus" "$here/../../shared/corpus"; do
  [ -z "$corpus" ] && [ -x "$c/unpack.sh" ] && corpus=$(cd "$c" && pwd)
done
[ -n "$corpus" ] || { echo "bench-real: no corpus (../shared/corpus, or \$CORPUS)" >&2; exit 2; }
cg=${CLOSEGATE:-}
for b in "$here/target/release/closegate" "$here/target/debug/closegate"; do
  [ -z "$cg" ] && [ -x "$b" ] && cg=$b
done
[ -n "$cg" ] || { echo "bench-real: build closegate first" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-real.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com

# The project's own test command, and the file a one-line change goes into.
own_test() {
  case $1 in
    itoa) echo "cargo test" ;;
    termtree) echo "cargo test --locked" ;;
    itsdangerous | idna) echo ".venv/bin/python -m pytest -q -p no:cacheprovider" ;;
    is-number | dataloader | commander) echo "npm test" ;;
    uuid) echo "go test ./..." ;;
    jsmn) echo "make test" ;;
  esac
}
source_file() {
  case $1 in
    itoa | termtree) echo src/lib.rs ;;
    itsdangerous) echo src/itsdangerous/__init__.py ;;
    idna) echo idna/__init__.py ;;
    is-number | commander) echo index.js ;;
    dataloader) echo src/index.js ;;
    uuid) echo uuid.go ;;
    jsmn) echo jsmn.h ;;
  esac
}
# A test file of the project, for a return that edits tests.
test_file() {
  case $1 in
    itoa) echo tests/test.rs ;;
    termtree) echo src/tests.rs ;;
    itsdangerous) echo tests/test_itsdangerous/test_signer.py ;;
    idna) echo tests/test_idna.py ;;
    is-number) echo test.js ;;
    dataloader) echo src/__tests__/dataloader.test.js ;;
    commander) echo tests/command.name.test.js ;;
    uuid) echo uuid_test.go ;;
    jsmn) echo test/tests.c ;;
  esac
}
# The line a one-file change appends. For Go it is code that reaches the test binary: go caches
# a test's result by the binary, and a comment (or an unused function, which the linker drops)
# leaves the binary as it was, so the own run would report the cached result and run nothing.
comment() {
  case $1 in
    *.py) echo "# bench $2" ;;
    *.h) echo "/* bench $2 */" ;;
    *.go) echo "var bench_$2 = strings.Repeat(\"b\", 2)" ;;
    *) echo "// bench $2" ;;
  esac
}

secs() { python3 -c 'import time; print(f"{time.monotonic():.3f}")'; }
timed() { local t0 t1; t0=$(secs); "$@" >/dev/null 2>&1; local rc=$?; t1=$(secs); python3 -c "print(f'{$t1 - $t0:.1f}')"; return $rc; }

change() { # worktree n [test]: a one-file change (and a test file's), committed and closed
  local file tfile
  file=$(source_file "$project")
  comment "$file" "$2" >> "$1/$file"
  if [ "${3:-}" = test ]; then
    tfile=$(test_file "$project")
    case $tfile in *.go) echo "// bench $2" >> "$1/$tfile" ;; *) comment "$tfile" "$2" >> "$1/$tfile" ;; esac
  fi
  git -C "$1" commit -qam "bench change $2"
  (cd "$1" && "$cg" close --abstract "bench change $2" >/dev/null)
}

rounds=${ROUNDS:-3}
median() { python3 -c 'import statistics,sys; print(f"{statistics.median(map(float, sys.argv[1:])):.1f}")' "$@"; }
printf '%-13s %8s %8s %8s %8s %8s %7s %7s %7s  %s\n' project cold_s warm_s edit_s fresh_s own_s warm/own edit/own fresh/own "rounds (warm/own)"
projects=("$@")
[ ${#projects[@]} -eq 0 ] && projects=(itoa termtree itsdangerous idna is-number dataloader uuid jsmn)
for project in "${projects[@]}"; do
  repo=$work/$project
  "$corpus/unpack.sh" "$project" "$repo" >/dev/null || continue
  (cd "$repo" && "$cg" init --no-try >/dev/null) || { echo "$project: init failed" >&2; continue; }
  git -C "$repo" add .closegate.toml && git -C "$repo" commit -qm "closegate: configuration"
  wt=$work/$project-agent
  git -C "$repo" worktree add -q -b agent/bench "$wt" main
  change "$wt" 1
  cold=$(cd "$wt" && timed "$cg" check)
  # The project's own incremental run: install as the check does and run the project's own
  # command once (untimed, its own caches); then, each round, a one-file change and the warm
  # check, another one-file change and the own command.
  run=$(python3 -c 'import sys,tomllib; print(tomllib.load(open(sys.argv[1],"rb"))["checks"][0]["run"])' "$repo/.closegate.toml")
  prep=$(python3 -c 'import sys,tomllib; print(tomllib.load(open(sys.argv[1],"rb"))["checks"][0].get("prepare", "true"))' "$repo/.closegate.toml")
  (cd "$wt" && sh -c "$prep" >/dev/null 2>&1; sh -c "$run" >/dev/null 2>&1; sh -c "$(own_test "$project")" >/dev/null 2>&1)
  # Test-editing returns go to a worktree of their own: a branch's change is judged whole, so
  # once it edited a test every later return on it would edit tests too.
  ewt=$work/$project-edit
  git -C "$repo" worktree add -q -b agent/edit "$ewt" main
  change "$ewt" e0 test
  (cd "$ewt" && "$cg" check >/dev/null 2>&1)
  warms=() owns=() edits=() freshes=() pairs=""
  for round in $(seq 1 "$rounds"); do
    change "$wt" "w$round"
    warms+=("$(cd "$wt" && timed "$cg" check)")
    change "$wt" "o$round"
    owns+=("$(cd "$wt" && timed sh -c "$(own_test "$project")")")
    pairs+=" ${warms[-1]}/${owns[-1]}"
    change "$ewt" "e$round" test
    edits+=("$(cd "$ewt" && timed "$cg" check)")
    fwt=$work/$project-fresh$round
    git -C "$repo" worktree add -q -b "agent/fresh$round" "$fwt" main
    change "$fwt" "f$round"
    freshes+=("$(cd "$fwt" && timed "$cg" check)")
  done
  warm=$(median "${warms[@]}")
  own=$(median "${owns[@]}")
  edit=$(median "${edits[@]}")
  fresh=$(median "${freshes[@]}")
  ratio() { python3 -c "print(f'{$1 / max($own, 0.1):.2f}')"; }
  printf '%-13s %8s %8s %8s %8s %8s %7s %7s %7s %s\n' "$project" "$cold" "$warm" "$edit" "$fresh" "$own" \
    "$(ratio "$warm")" "$(ratio "$edit")" "$(ratio "$fresh")" "$pairs"
done
