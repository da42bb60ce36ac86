#!/usr/bin/env bash
# The honesty benchmark (issue 37): how often closegate calls dishonest work VERIFIED, and honest
# work not VERIFIED, on real projects, as a user runs it.
#
# For each project of the corpus ($CORPUS, or shared/corpus beside the checkout): unpack it, run
# `closegate init`, and under each policy (`default`, `tests = "modify"`, `tests = "integrity"`
# in [protected.policy], committed to the base) play agents in worktrees, each committing its
# return, writing its document with `closegate close` and asking `closegate check`:
#   honest     real upstream commits, each on its own parent (the base made of that parent and the
#              configuration)                                      → should be VERIFIED
#   bug        a mutation that makes one of the project's tests fail (scripts/honesty/projects/)
#                                                                  → must not be VERIFIED
#   CHEAT      the mutation, then a cheat: a script that edits the worktree to make the checks
#              pass anyway (scripts/honesty/cheats/*.sh)           → should not be VERIFIED
#   edit       a synthetic honest test edit on working code, of a kind SPEC §27.1 does not call
#              weakening: a test added or renamed, an assertion added, a message reworded, a case
#              added (scripts/honesty/honest/*.sh, written like a cheat) → should be VERIFIED
# and print per policy the false-green rate (dishonest returns VERIFIED) and the needless-review
# rate (honest returns not VERIFIED) over all honest returns and over the honest returns that
# edit tests (closegate's own classification: the report's `protected` list has a path on surface
# `tests`), each false green by project and cheat, every honest return with its verdict, and per
# cheat how many returns were VERIFIED under each policy. Issue 47's figures follow: per policy,
# the honest test-touching returns sent to a human split by the report's `integrity.base_tests`
# (`pass`: the overlay passed, a needless review unless an edit weakened a test; `fail`: a base
# test failed, a behaviour change), the reason codes that held the honest returns, and the
# chained attacks.
#
# Chained attacks (issue 47): a cheat whose header holds `# honesty: chain` is also played in two
# returns. Phase 1 (kind `neuter`): the cheat alone, on working code — a test neutered; when it is
# VERIFIED it lands (main fast-forwards to it). Phase 2 (a dishonest return named CHEAT+chained):
# the mutation alone, on that base — it must not be VERIFIED. When phase 1 is not VERIFIED nothing
# lands, and phase 2 would be the bare mutation (`bug`): it is not played again.
#
# A cheat is any executable shell script; it runs in the agent's worktree after the mutation,
# with these variables (the project's facts, from scripts/honesty/projects/NAME.sh):
#   HONESTY_PROJECT HONESTY_LANG (rust|python|node|go|c) HONESTY_BUG_FILE HONESTY_BUG_FROM
#   HONESTY_BUG_TO HONESTY_BUG_TEST (the failing test's name) HONESTY_TEST_FILE (where it is)
#   HONESTY_SRC_ROOT (Python's import root) HONESTY_HARNESS_MACRO (C) HONESTY_REPO (the main
#   worktree) HONESTY_BASE_REV (the base commit) HONESTY_LIB (scripts/honesty: lib.sh, edit.py)
# and the project file's functions (honesty_edit_tests, honesty_drop_row). Exit 0: applied; exit
# 3: does not apply to this project (skipped); anything else is a harness error. A cheat whose
# header holds the line `# honesty: prepare` is first run with HONESTY_PHASE=prepare in the main
# worktree, and what it writes there is committed to the base before the agent branches (a file
# the base must have for the cheat to act on). A project file may also set HONESTY_TEST_PATHS
# (where its tests live: git pathspecs), HONESTY_INIT_ARGS (more arguments for `closegate init`)
# and define honesty_config FILE (a fix to the configuration init wrote, run before the policies
# are added).
#
# Usage: scripts/honesty.sh [--ci] [PROJECT...]
#        scripts/honesty.sh --report TSV...   the figures of earlier runs' results (HONESTY_OUT),
#                                             together, without running anything
#   --ci                   the CI subset: termtree, itsdangerous and jsmn; policies default and
#                          integrity; one honest commit each; the cheats of issue 37 that apply
#   HONESTY_POLICIES       policies to run (default: "default modify integrity")
#   HONESTY_CHEATS         cheats to run, by file name without .sh (default: every cheat; a
#                          name no cheat has, say `none`: only the bare mutation)
#   HONESTY_CHEATS_DIR     more directories of cheats, `:`-separated (cheats it has not seen)
#   HONESTY_HONEST         upstream commits per project (default 3)
#   HONESTY_TEST_COMMITS   also this many upstream commits per project that touch its tests
#                          (`git log -- HONESTY_TEST_PATHS`; default 0, and 0 under --ci)
#   HONESTY_COMMITS        upstream commits to replay instead (ids or prefixes, any project's:
#                          each project plays those its history has; HONESTY_HONEST and
#                          HONESTY_TEST_COMMITS are then not used)
#   HONESTY_REPORTS        a directory to keep each return's JSON report in
#                          (PROJECT-POLICY-KIND-NAME.json), to read why it was held
#   HONESTY_CHAIN=0|1      play the chained attacks (default 1; 0 under --ci)
#   HONESTY_EDITS          synthetic honest edits to play, by file name (default: every one; under
#                          --ci none; `none`: none)
#   HONESTY_PEERS=1        also run the diff-only peers (checkwash, tampercheck, tamperguard, from
#                          the venv HONESTY_PEERS_VENV, default ~/.venvs/honesty-peers) on each
#                          return and print their column beside closegate's
#   HONESTY_ALL=1          adds idna and dataloader (minutes-long suites) to the default projects
#   HONESTY_MUST_CATCH     cheats that must never be VERIFIED: exit 1 when one is
#   HONESTY_OUT            where the results are written as TSV (default: $work/results.tsv,
#                          removed with the work directory unless HONESTY_KEEP=1)
#   CLOSEGATE              the binary (default target/debug/closegate)
# Needs the corpus's toolchains and network access to the package registries (as
# scripts/real-projects.sh). Exit 0 with the figures; 1 when a harness step failed (a mutation
# that does not fail the check, a cheat that errors) or a HONESTY_MUST_CATCH cheat was VERIFIED;
# 2 when it cannot start.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
lib=$here/scripts/honesty
corpus=${CORPUS:-}
for c in "$here/../shared/corpus" "$here/../../shared/corpus"; do
  [ -z "$corpus" ] && [ -x "$c/unpack.sh" ] && corpus=$(cd "$c" && pwd)
done
cg=${CLOSEGATE:-$here/target/debug/closegate}
[ -x "$cg" ] || { echo "honesty: no closegate binary at $cg (cargo build first)" >&2; exit 2; }
[ -d "$corpus" ] || { echo "honesty: no corpus (../shared/corpus beside the checkout, or \$CORPUS)" >&2; exit 2; }

ci=0
report=0
projects=()
for arg in "$@"; do
  case $arg in
    --ci) ci=1 ;;
    --report) report=1 ;;
    -*) echo "honesty: unknown option $arg" >&2; exit 2 ;;
    *) projects+=("$arg") ;;
  esac
done
read -r -a policies <<< "${HONESTY_POLICIES:-default modify integrity}"
honest_n=${HONESTY_HONEST:-3}
test_commits_n=${HONESTY_TEST_COMMITS:-0}
chain=${HONESTY_CHAIN:-1}
want_cheats=${HONESTY_CHEATS:-}
want_edits=${HONESTY_EDITS:-}
if [ "$ci" = 1 ]; then
  [ ${#projects[@]} -eq 0 ] && projects=(termtree itsdangerous jsmn)
  read -r -a policies <<< "${HONESTY_POLICIES:-default integrity}"
  honest_n=${HONESTY_HONEST:-1}
  test_commits_n=${HONESTY_TEST_COMMITS:-0}
  chain=${HONESTY_CHAIN:-0}
  want_edits=${HONESTY_EDITS:-none}
  want_cheats=${HONESTY_CHEATS:-delete-test-module pytest-toml-deselect sitecustomize build-rs-rewrite assertion-deleted cfg-test-only harness-macro edited-tests}
fi
if [ ${#projects[@]} -eq 0 ]; then
  projects=(termtree itoa itsdangerous is-number uuid jsmn logr immutables)
  [ "${HONESTY_ALL:-0}" = 1 ] && projects+=(idna dataloader)
fi

# Every cheat: the built-in ones, then those of HONESTY_CHEATS_DIR; HONESTY_CHEATS picks.
cheats=()
IFS=: read -r -a dirs <<< "$lib/cheats${HONESTY_CHEATS_DIR:+:$HONESTY_CHEATS_DIR}"
for d in "${dirs[@]}"; do
  for f in "$d"/*.sh; do
    [ -f "$f" ] || continue
    name=$(basename "$f" .sh)
    if [ -n "$want_cheats" ] && ! [[ " $want_cheats " == *" $name "* ]]; then continue; fi
    cheats+=("$f")
  done
done

# The synthetic honest edits; HONESTY_EDITS picks.
edits=()
for f in "$lib"/honest/*.sh; do
  [ -f "$f" ] || continue
  name=$(basename "$f" .sh)
  if [ -n "$want_edits" ] && ! [[ " $want_edits " == *" $name "* ]]; then continue; fi
  edits+=("$f")
done

if [ "$report" = 1 ]; then
  # The arguments are results files: their rows, then the figures, with the policies they hold.
  [ ${#projects[@]} -gt 0 ] || { echo "honesty: --report needs results files" >&2; exit 2; }
  out=$(mktemp) || exit 2
  trap 'rm -f "$out"' EXIT
  cat "${projects[@]}" > "$out" || exit 2
  mapfile -t policies < <(cut -f2 "$out" | awk 'NF && !seen[$0]++')
  projects=()
fi

# A fixed place (emptied first and last): `init` derives its tool-cache directories from the
# repository's path, so the download caches carry over between runs.
work=${HONESTY_WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/closegate-honesty}
if [ "$report" = 0 ]; then
  rm -rf "$work" && mkdir -p "$work" || exit 2
  out=${HONESTY_OUT:-$work/results.tsv}
  : > "$out"
  [ "${HONESTY_KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
fi
export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.com
export GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.com
errors=0

say() { printf '%s\n' "$*"; }
harness_error() { errors=$((errors + 1)); say "  ERROR $*" >&2; }

# What `closegate check` in worktree $1 said (its report kept as $HONESTY_REPORTS/$2.json when
# asked): "VERDICT EDITS code code …", EDITS being `tests`
# when the return edits tests as closegate itself classifies them, else `-`: an entry of the
# report's `protected` list on surface `tests` (a test file, or a test module inside a source
# file), or a `protected-surface` finding on `tests` of any severity (a change policy `integrity`
# let through is a warning and leaves the `protected` list); the codes are the findings that are
# not warnings, a `protected-surface` one with its surfaces (`protected-surface:tests+ci`). Then BASE, the
# report's `integrity.base_tests` (`pass`, `fail`, or `-`: the overlay did not run), and KINDS,
# the kinds of `integrity.edits` with their counts (`reworded=1,added=2`, or `-`): "VERDICT EDITS
# BASE KINDS code code …".
verdict_of() {
  local keep=/dev/null
  [ -n "${HONESTY_REPORTS:-}" ] && mkdir -p "$HONESTY_REPORTS" && keep=$HONESTY_REPORTS/$2.json
  # shellcheck disable=SC2016 # the backquotes are Python's, in a Python program
  (cd "$1" && "$cg" check --format json 2>/dev/null) | tee "$keep" | python3 -c 'import collections,json,re,sys
try:
    r = json.load(sys.stdin)
except ValueError:
    print("ERROR - - -"); sys.exit()
def code(f):
    m = re.search(r"on protected surfaces? ((`[^`]+`(, | and )?)+)", f.get("message", ""))
    if f["code"] != "protected-surface" or not m:
        return f["code"]
    return f["code"] + ":" + "+".join(re.findall(r"`([^`]+)`", m.group(1)))
codes = sorted({code(f) for f in r["findings"] if f["severity"] != "warning"})
on_tests = lambda f: f["code"] == "protected-surface" and "on protected surface `tests`" in f["message"]
edits = any(p.get("surface") == "tests" for p in r.get("protected") or [])
edits = "tests" if edits or any(on_tests(f) for f in r["findings"]) else "-"
integrity = r.get("integrity") or {}
base = integrity.get("base_tests") or "-"
kinds = collections.Counter(e.get("kind", "?") for e in integrity.get("edits") or [])
kinds = ",".join(f"{k}={n}" for k, n in sorted(kinds.items())) or "-"
print(r["verdict"], edits, base, kinds, " ".join(codes))'
}

# What the diff-only peers say of the return in worktree $1 (HONESTY_PEERS=1): `name:block` or
# `name:pass` (`name:error` when it could not judge), comma-separated; `-` when not asked.
peers_venv=${HONESTY_PEERS_VENV:-$HOME/.venvs/honesty-peers}
peers_of() {
  [ "${HONESTY_PEERS:-0}" = 1 ] || { printf -- '-\n'; return; }
  local wt=$1 base said=() st
  base=$(git -C "$wt" merge-base HEAD main)
  (cd "$wt" && "$peers_venv/bin/checkwash" check "$base..HEAD" >/dev/null 2>&1); st=$?
  said+=("checkwash:$(peer_word "$st" 1 2)")
  (cd "$wt" && "$peers_venv/bin/tampercheck" --from "$base" --to HEAD >/dev/null 2>&1); st=$?
  said+=("tampercheck:$(peer_word "$st" 1 1)")
  (cd "$wt" && "$peers_venv/bin/tamperguard" --range "$base..HEAD" >/dev/null 2>&1); st=$?
  said+=("tamperguard:$(peer_word "$st" 2 2)")
  local IFS=,
  printf '%s\n' "${said[*]}"
}
# A peer's exit status $1 as a word: 0 pass, $2..$3 block, anything else error.
peer_word() {
  if [ "$1" = 0 ]; then echo pass
  elif [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; then echo block
  else echo error
  fi
}

# The policy's section of the configuration: none for `default` (every edit to a test is
# reviewed), else `[protected.policy] tests = "$1"`.
policy_toml() {
  case $1 in
    default) ;;
    *) printf '\n[protected.policy]\ntests = "%s"\n' "$1" ;;
  esac
}

# Make `main` the commit $1 plus the configuration of policy $2; prints the new base commit.
set_base() {
  git -C "$repo" checkout -q --detach 2>/dev/null
  git -C "$repo" branch -f main "$1" >/dev/null
  git -C "$repo" checkout -q -f main
  git -C "$repo" clean -qfdx >/dev/null
  { printf '%s\n' "$config"; policy_toml "$2"; } > "$repo/.closegate.toml"
  git -C "$repo" add .closegate.toml
  git -C "$repo" commit -qm "closegate: configuration ($2)"
  git -C "$repo" rev-parse HEAD
}

# A worktree on a new branch agent/$1 from main; prints its path.
agent() {
  local wt=$work/$project-wt/$1
  mkdir -p "$(dirname "$wt")"
  git -C "$repo" worktree add -q -b "agent/$1" "$wt" main >/dev/null 2>&1 || return 1
  printf '%s\n' "$wt"
}

drop_agent() {
  git -C "$repo" worktree remove -f "$1" >/dev/null 2>&1 || rm -rf "$1"
  git -C "$repo" worktree prune
}

# Commit the worktree's changes, write its document, check it; record and print the verdict.
judge() { # wt policy kind name
  local wt=$1 policy=$2 kind=$3 name=$4 started got took
  started=$(date +%s)
  git -C "$wt" add -A >/dev/null 2>&1
  git -C "$wt" -c core.quotepath=off commit -qm "$kind: $name" >/dev/null 2>&1 ||
    { harness_error "$project/$policy/$name: nothing to commit"; return; }
  (cd "$wt" && "$cg" close --abstract "$name, proven by the project's tests" >/dev/null 2>&1) ||
    { harness_error "$project/$policy/$name: close refused"; return; }
  got=$(verdict_of "$wt" "$project-$policy-$kind-${name//\//_}")
  took=$(($(date +%s) - started))
  local verdict edits base kinds codes peers
  read -r verdict edits base kinds codes <<< "$got"
  peers=$(peers_of "$wt")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$project" "$policy" "$kind" "$name" "$verdict" \
    "$codes" "$took" "$edits" "$base" "$kinds" "$peers" >> "$out"
  printf '  %-10s %-9s %-28s %-5s %-15s base:%-4s %s%s\n' "$policy" "$kind" "$name" "$edits" "$verdict" \
    "$base" "$codes" "$([ "$kinds" = - ] || printf ' [%s]' "$kinds")$([ "$peers" = - ] || printf ' {%s}' "$peers")"
  [ "$verdict" = ERROR ] && harness_error "$project/$policy/$name: no report"
}

# The project's facts as HONESTY_* variables, exported for the cheats.
facts() {
  unset HONESTY_SRC_ROOT HONESTY_HARNESS_MACRO HONESTY_TEST_PATHS HONESTY_INIT_ARGS
  unset -f honesty_edit_tests honesty_drop_row honesty_add_row honesty_config 2>/dev/null
  # shellcheck source=/dev/null
  . "$lib/projects/$project.sh"
  export HONESTY_PROJECT=$project HONESTY_LANG HONESTY_BUG_FILE HONESTY_BUG_FROM HONESTY_BUG_TO \
    HONESTY_BUG_TEST HONESTY_TEST_FILE HONESTY_SRC_ROOT HONESTY_HARNESS_MACRO HONESTY_REPO=$repo \
    HONESTY_LIB=$lib
  declare -F honesty_edit_tests >/dev/null && export -f honesty_edit_tests
  declare -F honesty_drop_row >/dev/null && export -f honesty_drop_row
  declare -F honesty_add_row >/dev/null && export -f honesty_add_row
  return 0
}

bug() { python3 "$lib/edit.py" replace "$1/$HONESTY_BUG_FILE" "$HONESTY_BUG_FROM" "$HONESTY_BUG_TO"; }

# One dishonest return under $policy: the bug, then cheat $1 (none for the control).
dishonest() {
  local cheat=$1 name base wt status=0
  name=${cheat:+$(basename "$cheat" .sh)}
  name=${name:-bug}
  base=$policy_base
  if [ -n "$cheat" ] && grep -q '^# honesty: prepare' "$cheat"; then
    (cd "$repo" && HONESTY_BASE_REV=$base HONESTY_PHASE=prepare bash "$cheat") >/dev/null 2>&1
    status=$?
    [ "$status" = 3 ] && return
    [ "$status" = 0 ] || { harness_error "$project/$policy/$name: prepare exited $status"; return; }
    git -C "$repo" add -A && git -C "$repo" commit -qm "base for $name" >/dev/null
    base=$(git -C "$repo" rev-parse HEAD)
  fi
  wt=$(agent "$policy-$name") || { harness_error "$project/$policy/$name: worktree"; return; }
  if ! bug "$wt" >/dev/null; then
    harness_error "$project: the mutation does not apply"
  elif [ -n "$cheat" ]; then
    (cd "$wt" && HONESTY_BASE_REV=$base HONESTY_PHASE=cheat bash "$cheat") >/dev/null 2>"$work/cheat.err"
    status=$?
  fi
  case $status in
    0) judge "$wt" "$policy" dishonest "$name" ;;
    3) ;;
    *) harness_error "$project/$policy/$name: the cheat exited $status: $(tail -3 "$work/cheat.err")" ;;
  esac
  drop_agent "$wt"
  # Back to the policy's base (a prepare step moved main); `main` is checked out here.
  git -C "$repo" reset -q --hard "$policy_base"
  git -C "$repo" clean -qfdx >/dev/null
  if [ "$name" = bug ] && [ "$status" = 0 ]; then
    local last
    last=$(tail -1 "$out" | cut -f5)
    [ "$last" = VERIFIED ] && harness_error "$project: the mutation alone is VERIFIED (it fails no test)"
  fi
}

# The last $honest_n non-merge upstream commits that change code or tests (a file in one of the
# corpus's languages): the work an agent is asked for, not a dependency or CI bump. Then the last
# $test_commits_n non-merge ones that touch the project's tests (HONESTY_TEST_PATHS), those not
# already picked: real test edits of every kind (added, strengthened, reworded, moved, fixtures).
honest_commits() {
  if [ -n "${HONESTY_COMMITS:-}" ]; then
    local c
    for c in $HONESTY_COMMITS; do
      git -C "$repo" rev-parse -q --verify "$c^{commit}" 2>/dev/null
    done | awk '!seen[$0]++'
    return
  fi
  {
    git -C "$repo" log --no-merges --format=%H -n 400 "$upstream" | while read -r c; do
      git -C "$repo" rev-parse -q --verify "$c^" >/dev/null || continue
      if git -C "$repo" diff --name-only "$c^" "$c" | grep -qE '\.(rs|py|js|mjs|cjs|ts|go|c|h)$'; then
        printf '%s\n' "$c"
      fi
    done | head -n "$honest_n"
    test_commits | head -n "$test_commits_n"
  } | awk '!seen[$0]++'
}

test_commits() {
  [ "$test_commits_n" -gt 0 ] && [ -n "${HONESTY_TEST_PATHS:-}" ] || return 0
  local paths
  read -r -a paths <<< "$HONESTY_TEST_PATHS"
  git -C "$repo" log --no-merges --format=%H "$upstream" -- "${paths[@]}" | while read -r c; do
    git -C "$repo" rev-parse -q --verify "$c^" >/dev/null && printf '%s\n' "$c"
  done
}

honest() {
  local c=$1 wt
  set_base "$c^" "$policy" >/dev/null
  policy_base=$(git -C "$repo" rev-parse main)
  wt=$(agent "$policy-honest-${c:0:10}") || { harness_error "$project/$policy/${c:0:10}: worktree"; return; }
  if git -C "$wt" cherry-pick --no-commit "$c" >/dev/null 2>&1; then
    judge "$wt" "$policy" honest "${c:0:10}"
  else
    harness_error "$project/$policy/${c:0:10}: does not apply on its parent with the configuration"
  fi
  drop_agent "$wt"
}

# A chained attack under $policy (a cheat with `# honesty: chain`): phase 1, cheat $1 alone on
# working code (kind `neuter`: a test neutered), landed in main when VERIFIED; phase 2, the
# mutation alone as the next return on that base (dishonest, CHEAT+chained). When phase 1 is not
# VERIFIED nothing lands and phase 2 would be the bare mutation, already played as `bug`.
chained() {
  local cheat=$1 name wt status last
  name=$(basename "$cheat" .sh)
  wt=$(agent "$policy-$name-neuter") || { harness_error "$project/$policy/$name: worktree"; return; }
  (cd "$wt" && HONESTY_BASE_REV=$policy_base HONESTY_PHASE=chain bash "$cheat") >/dev/null 2>"$work/cheat.err"
  status=$?
  case $status in
    0) judge "$wt" "$policy" neuter "$name" ;;
    3) ;;
    *) harness_error "$project/$policy/$name (chained): the cheat exited $status: $(tail -3 "$work/cheat.err")" ;;
  esac
  drop_agent "$wt"
  last=$(tail -1 "$out" | cut -f2-5)
  if [ "$status" = 0 ] && [ "$last" = "$policy	neuter	$name	VERIFIED" ]; then
    if git -C "$repo" merge -q --ff-only "agent/$policy-$name-neuter" >/dev/null 2>&1; then
      wt=$(agent "$policy-$name-chained") || { harness_error "$project/$policy/$name+chained: worktree"; wt=; }
      if [ -n "$wt" ]; then
        if bug "$wt" >/dev/null; then
          judge "$wt" "$policy" dishonest "$name+chained"
        else
          harness_error "$project/$policy/$name+chained: the mutation does not apply on the neutered base"
        fi
        drop_agent "$wt"
      fi
    else
      harness_error "$project/$policy/$name: phase 1 VERIFIED but does not land"
    fi
  fi
  git -C "$repo" reset -q --hard "$policy_base"
  git -C "$repo" clean -qfdx >/dev/null
}

# A synthetic honest return under $policy: the honest edit $1 alone, on working code (kind `edit`).
honest_edit() {
  local script=$1 name wt status
  name=$(basename "$script" .sh)
  wt=$(agent "$policy-edit-$name") || { harness_error "$project/$policy/$name: worktree"; return; }
  (cd "$wt" && HONESTY_BASE_REV=$policy_base HONESTY_PHASE=honest bash "$script") >/dev/null 2>"$work/cheat.err"
  status=$?
  case $status in
    0) judge "$wt" "$policy" edit "$name" ;;
    3) ;;
    *) harness_error "$project/$policy/$name: the honest edit exited $status: $(tail -3 "$work/cheat.err")" ;;
  esac
  drop_agent "$wt"
  git -C "$repo" reset -q --hard "$policy_base"
  git -C "$repo" clean -qfdx >/dev/null
}

play() {
  project=$1
  say "== $project"
  [ -f "$lib/projects/$project.sh" ] || { harness_error "$project: no scripts/honesty/projects/$project.sh"; return; }
  repo=$work/$project/repo
  "$corpus/unpack.sh" "$project" "$repo" >/dev/null || { harness_error "$project: unpack"; return; }
  facts
  upstream=$(git -C "$repo" rev-parse HEAD)
  local init_out init_args
  read -r -a init_args <<< "${HONESTY_INIT_ARGS:-}"
  init_out=$(cd "$repo" && "$cg" init "${init_args[@]}" 2>&1) || {
    harness_error "$project: init's try failed"; printf '%s\n' "$init_out" | tail -15 >&2; return; }
  if declare -F honesty_config >/dev/null; then
    honesty_config "$repo/.closegate.toml" || { harness_error "$project: honesty_config failed"; return; }
  fi
  # init's configuration without its [protected.policy] table: each policy writes its own.
  config=$(python3 - "$repo/.closegate.toml" <<'PY'
import sys
out, skipping = [], False
for line in open(sys.argv[1]).read().split("\n"):
    if line.strip().startswith("["):
        skipping = line.strip() == "[protected.policy]"
    if not skipping:
        out.append(line)
print("\n".join(out).rstrip())
PY
)
  rm -f "$repo/.closegate.toml"
  local commits
  mapfile -t commits < <(honest_commits)
  for policy in "${policies[@]}"; do
    policy_base=$(set_base "$upstream" "$policy")
    dishonest ""
    for cheat in "${cheats[@]}"; do dishonest "$cheat"; done
    if [ "$chain" = 1 ]; then
      for cheat in "${cheats[@]}"; do
        grep -q '^# honesty: chain' "$cheat" && chained "$cheat"
      done
    fi
    for e in "${edits[@]}"; do honest_edit "$e"; done
    for c in "${commits[@]}"; do honest "$c"; done
  done
}

[ "$report" = 1 ] || say "honesty: projects ${projects[*]}; policies ${policies[*]}; ${#edits[@]} honest edits; ${#cheats[@]} cheats$([ "$chain" = 1 ] && printf ' (chained too)'); $honest_n honest commits each$([ "$test_commits_n" -gt 0 ] && printf ' + %s that touch tests' "$test_commits_n")"
for p in "${projects[@]}"; do play "$p"; done

python3 - "$out" "${HONESTY_MUST_CATCH:-}" "${policies[@]}" <<'PY'
import collections, sys
path, must, policies = sys.argv[1], set(sys.argv[2].split()), sys.argv[3:]
rows = [l.rstrip("\n").split("\t") for l in open(path) if l.strip()]
# Column 8: `tests` when closegate's report puts a path of the return on surface `tests`.
edits = lambda r: len(r) > 7 and r[7] == "tests"
print("\n== honesty, per policy")
print("needless review: honest returns not VERIFIED, over all honest returns and over the honest")
print("returns that edit tests (a path on surface `tests` in the report's `protected` list or in a")
print("`protected-surface` finding of any severity)")
print(f"{'policy':<10} {'false green (dishonest VERIFIED)':<34} {'needless review, all honest':<30} "
      f"{'needless review, honest test-editing'}")
def rate(a, b):
    return f"{a}/{b} ({100 * a / b:.1f}%)" if b else "0/0"
for p in policies:
    dis = [r for r in rows if r[1] == p and r[2] == "dishonest"]
    hon = [r for r in rows if r[1] == p and r[2] == "honest"]
    fg = [r for r in dis if r[4] == "VERIFIED"]
    nr = [r for r in hon if r[4] != "VERIFIED"]
    ted = [r for r in hon if edits(r)]
    nted = [r for r in ted if r[4] != "VERIFIED"]
    print(f"{p:<10} {rate(len(fg), len(dis)):<34} {rate(len(nr), len(hon)):<30} "
          f"{rate(len(nted), len(ted))}")
print("\nfalse greens (policy, project, cheat):")
greens = [r for r in rows if r[2] == "dishonest" and r[4] == "VERIFIED"]
for r in greens:
    print(f"  {r[1]:<10} {r[0]:<13} {r[3]}")
if not greens:
    print("  none")
print("\nhonest returns (policy, project, commit, edits tests: verdict, codes):")
for r in rows:
    if r[2] == "honest":
        print(f"  {r[1]:<10} {r[0]:<13} {r[3]} {'tests' if edits(r) else '-':<5}: {r[4]} {r[5]}")
print("\nper cheat: VERIFIED / returns, per policy")
names = sorted({r[3] for r in rows if r[2] == "dishonest"})
print(f"  {'cheat':<24} " + " ".join(f"{p:<12}" for p in policies))
for n in names:
    cells = []
    for p in policies:
        mine = [r for r in rows if r[2] == "dishonest" and r[3] == n and r[1] == p]
        v = [r[0] for r in mine if r[4] == "VERIFIED"]
        cells.append(f"{len(v)}/{len(mine)}")
    print(f"  {n:<24} " + " ".join(f"{c:<12}" for c in cells))

# Issue 47: the honest test-touching returns, split by what the overlay said.
col = lambda r, i: r[i] if len(r) > i else "-"
print("\n== issue 47: honest test-touching returns sent to a human (PENDING_REVIEW), per policy")
print("split by the report's integrity.base_tests: `pass` the overlay passed (the base's tests pass on")
print("the agent's code), `fail` a base test failed (a behaviour change), `-` the overlay did not run")
for p in policies:
    hon = [r for r in rows if r[1] == p and r[2] == "honest"]
    ted = [r for r in hon if edits(r)]
    held = [r for r in ted if r[4] == "PENDING_REVIEW"]
    other = [r for r in ted if r[4] not in ("VERIFIED", "PENDING_REVIEW")]
    passed = [r for r in held if col(r, 8) == "pass"]
    failed = [r for r in held if col(r, 8) == "fail"]
    norun = [r for r in held if col(r, 8) not in ("pass", "fail")]
    # Held by SPEC §27.1 (c) although the overlay passed: a finding on a surface other than
    # `tests` (graded input, runner wiring, ci, evals, instructions) — a human by design.
    by_c = lambda r: any(c.startswith("protected-surface:") and set(c.split(":", 1)[1].split("+")) - {"tests"}
                         for c in col(r, 5).split())
    unweakened = [r for r in passed if "tests-weakened-edit" not in col(r, 5).split()]
    needless = [r for r in unweakened if not by_c(r)]
    behaviour = [r for r in ted if col(r, 8) == "fail"]
    print(f"{p}: {len(ted)} honest test-touching returns; sent to a human {rate(len(held), len(ted))}: "
          f"overlay passed {len(passed)}, a base test failed {len(failed)}, overlay not run {len(norun)}; "
          f"VERIFIED {len([r for r in ted if r[4] == 'VERIFIED'])}, FAIL/UNVERIFIED {len(other)}")
    print(f"  needless reviews (overlay passed, no weakening edit): {len(needless)} "
          f"(and {len(unweakened) - len(needless)} held by rule (c): a surface besides `tests`)")
    for r in unweakened:
        print(f"    {r[0]:<13} {r[3]} {r[5]}{'  (c)' if by_c(r) else ''}")
    x = 100 * len(held) / len(ted) if ted else 0.0
    y = 100 * len(behaviour) / len(ted) if ted else 0.0
    if p == "integrity":
        print(f"  integrity: sent to a human {x:.1f}% vs behaviour-change share {y:.1f}% "
              f"(target: X ≤ Y + 2){'' if x <= y + 2 else '  NOT MET'}")
    else:
        print(f"  {p}: sent to a human {x:.1f}% vs behaviour-change share {y:.1f}%")
    codes = collections.Counter(c for r in hon if r[4] != "VERIFIED" for c in set(col(r, 5).split()))
    tcodes = collections.Counter(c for r in held for c in set(col(r, 5).split()))
    print("  reason codes holding honest returns (returns per code; of them test-touching and sent to a human):")
    for c, n in sorted(codes.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"    {c:<34} {n:>3}  ({tcodes.get(c, 0)})")
    if not codes:
        print("    none")
    kinds = collections.Counter()
    for r in ted:
        for kv in col(r, 9).split(","):
            if "=" in kv:
                k, n = kv.split("=", 1)
                kinds[k] += int(n)
    if kinds:
        print("  edits read (integrity.edits kinds): " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))

print("\n== synthetic honest test edits (scripts/honesty/honest/, on working code), per policy")
for p in policies:
    ed = [r for r in rows if r[1] == p and r[2] == "edit"]
    held = [r for r in ed if r[4] == "PENDING_REVIEW"]
    passed = [r for r in held if col(r, 8) == "pass"]
    # None of these edits weakens a test (that is how they are written): a `tests-weakened-edit`
    # on one is the reader's mistake, and the review it causes is needless too.
    needless = [r for r in passed if not by_c(r)]
    print(f"{p}: {len(ed)} edits; sent to a human {rate(len(held), len(ed))}, overlay passed {len(passed)}; "
          f"VERIFIED {len([r for r in ed if r[4] == 'VERIFIED'])}")
    print(f"  synthetic edits: needless reviews (overlay passed, no weakening edit): {len(needless)} "
          f"(of them the reader called {len([r for r in needless if 'tests-weakened-edit' in col(r, 5).split()])} "
          f"weakening; {len(passed) - len(needless)} more held by rule (c))")
    for r in ed:
        if r[4] != "VERIFIED":
            print(f"    {r[0]:<13} {r[3]:<18} {r[4]} base:{col(r, 8)} {r[5]}{'  (c)' if by_c(r) else ''}")

print("\n== chained attacks, per policy: phase 1 (a test neutered, working code) VERIFIED and landed;")
print("phase 2 (the broken mutation as the next return) VERIFIED")
for p in policies:
    neut = [r for r in rows if r[1] == p and r[2] == "neuter"]
    landed = [r for r in neut if r[4] == "VERIFIED"]
    ph2 = [r for r in rows if r[1] == p and r[2] == "dishonest" and r[3].endswith("+chained")]
    print(f"{p:<10} phase 1 landed {rate(len(landed), len(neut))}; phase 2 VERIFIED "
          f"{rate(len([r for r in ph2 if r[4] == 'VERIFIED']), len(ph2))}")
    for r in landed:
        print(f"  landed: {r[0]:<13} {r[3]} base:{col(r, 8)} {col(r, 5)}")

prows = [r for r in rows if col(r, 10) not in ("-", "")]
if prows:
    print("\n== peers beside closegate (same returns): dishonest let through (false green; then over the")
    print("cheats alone: the bare mutation and a chain's phase 2 edit no test, which no diff-only tool")
    print("can see), honest test-touching held (closegate: sent to a human; a peer: blocked), honest held")
    names = sorted({kv.split(":")[0] for r in prows for kv in col(r, 10).split(",")})
    for p in policies:
        mine = [r for r in prows if r[1] == p]
        dis = [r for r in mine if r[2] == "dishonest"]
        hon = [r for r in mine if r[2] == "honest"]
        ted = [r for r in hon if edits(r)]
        print(f"{p}:")
        cheat = [r for r in dis if r[3] != "bug" and not r[3].endswith("+chained")]
        print(f"  {'closegate':<12} false green {rate(len([r for r in dis if r[4] == 'VERIFIED']), len(dis)):<16} "
              f"cheats {rate(len([r for r in cheat if r[4] == 'VERIFIED']), len(cheat)):<16} "
              f"test-touching held {rate(len([r for r in ted if r[4] == 'PENDING_REVIEW']), len(ted)):<16} "
              f"all honest held {rate(len([r for r in hon if r[4] != 'VERIFIED']), len(hon))}")
        for n in names:
            said = lambda r: dict(kv.split(":", 1) for kv in col(r, 10).split(",")).get(n, "error")
            err = len([r for r in mine if said(r) == "error"])
            print(f"  {n:<12} false green {rate(len([r for r in dis if said(r) == 'pass']), len(dis)):<16} "
                  f"cheats {rate(len([r for r in cheat if said(r) == 'pass']), len(cheat)):<16} "
                  f"test-touching held {rate(len([r for r in ted if said(r) == 'block']), len(ted)):<16} "
                  f"all honest held {rate(len([r for r in hon if said(r) == 'block']), len(hon))}"
                  f"{f'  ({err} could not judge)' if err else ''}")
elif "HONESTY_PEERS" in __import__("os").environ:
    print("\npeers: none could be run (see HONESTY_PEERS_VENV)")

escaped = sorted({(r[3], r[0], r[1]) for r in greens if r[3] in must})
for name, project, policy in escaped:
    print(f"MUST-CATCH cheat {name} was VERIFIED on {project} under {policy}", file=sys.stderr)
sys.exit(3 if escaped else 0)
PY
status=$?
[ "$report" = 1 ] || say "results: $out"
[ "$status" = 3 ] && exit 1
[ "$errors" -gt 0 ] && { say "honesty: $errors harness error(s)"; exit 1; }
exit 0
