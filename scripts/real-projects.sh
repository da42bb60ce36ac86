#!/usr/bin/env bash
# Real projects (issue 25): for every project of the corpus (../shared/corpus, or $CORPUS), unpack
# it, run `closegate init` (which must succeed with its own try), commit the configuration, then
# play scripted agents in worktrees, each writing its document with `closegate close`:
#   honest    a change with a new test                          → VERIFIED
#   weaken    an existing test's assertions disabled             → PENDING_REVIEW, surface `tests`
#   runner    the runner's test command rewritten                → PENDING_REVIEW, `ci` key/file named
#             (not for Go: `go` has no runner configuration beyond the default surfaces)
#   lazy      work left uncommitted                               → FAIL close-worktree-dirty
#   empty     no change, claims done                              → FAIL close-no-change
# and assert the exact `log --stats` false-green rate those returns give. On is-number and jsmn it
# also installs the Claude Code and Codex stop hooks (`agent install`, committed to the base) and
# checks, in `claims` mode, that a false stop is blocked and a real one and a question pass.
# Ends with one line: `real projects: N passed, M failed` (exit 1 when M > 0).
#
#   scripts/real-projects.sh [NAME...]   (default: every project of the corpus)
# tsconfck (pnpm workspace), idx (yarn workspace), immutables (Python C extension), logr (Go, a
# nested module `./...` never reaches) and commander (npm, package-lock.json) are played as a
# first contact (issue 50): init right first try, an honest return VERIFIED, land, teardown.
# dataloader's `npm test` runs `flow check`, and flow writes straight into /tmp
# (daemon_param*.bin, /tmp/flow): it passes because each sandboxed check has its own empty,
# writable /tmp (docs/sandbox.md).
# Needs network access to the package registries (crates.io, PyPI, npm), node/npm with corepack
# (pnpm and yarn come through it), python3, cargo, go, make, cc, bwrap. CLOSEGATE names the binary (default target/debug/closegate).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
corpus=${CORPUS:-}
for c in "$here/../shared/corpus" "$here/../../shared/corpus"; do
  [ -z "$corpus" ] && [ -x "$c/unpack.sh" ] && corpus=$(cd "$c" && pwd)
done
cg=${CLOSEGATE:-$here/target/debug/closegate}
[ -x "$cg" ] || { echo "real-projects: no closegate binary at $cg (cargo build first)" >&2; exit 2; }
[ -d "$corpus" ] || { echo "real-projects: no corpus (../shared/corpus beside the checkout, or \$CORPUS)" >&2; exit 2; }
# A fixed place (emptied first and last): the repository id `init` derives its tool-cache
# directories from is the repository's path, so the download caches carry over between runs.
work=${REAL_PROJECTS_WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/closegate-real-projects}
rm -rf "$work" && mkdir -p "$work" || exit 2
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.com
export GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.com
passed=0 failed=0

ok() { passed=$((passed + 1)); echo "  ok   $1"; }
bad() { failed=$((failed + 1)); echo "  FAIL $1" >&2; }

# The JSON report of `closegate check` in worktree $1.
check_json() { (cd "$1" && "$cg" check --format json 2>/dev/null); }

# expect NAME WORKTREE VERDICT NEEDLE: the check's verdict is VERDICT and NEEDLE (a code, or a
# fragment of a finding's message) is among its findings.
expect() {
  local name=$1 wt=$2 verdict=$3 needle=$4 report
  report=$(check_json "$wt")
  local got
  got=$(printf '%s' "$report" | python3 -c 'import json,sys; print(json.load(sys.stdin)["verdict"])' 2>/dev/null)
  if [ "$got" != "$verdict" ]; then
    bad "$name: verdict $got, expected $verdict"
    printf '%s\n' "$report" | python3 -c 'import json,sys
r = json.load(sys.stdin)
for f in r["findings"]: print("       ", f["code"], f["message"][:300])
for c in r["checks"]: print("        check", c["name"], c["exit_code"], *c["output"][-8:], sep="\n          ")' >&2 2>/dev/null
    return
  fi
  if [ -n "$needle" ] && ! printf '%s' "$report" | python3 -c 'import json,sys
r = json.load(sys.stdin); n = sys.argv[1]
sys.exit(0 if any(n == f["code"] or n in f["message"] for f in r["findings"]) else 1)' "$needle"; then
    bad "$name: $verdict but no finding names $needle"
    return
  fi
  ok "$name: $verdict${needle:+ ($needle)}"
}

# agent NAME: a worktree on a new branch agent/NAME from main; prints its path.
agent() {
  git -C "$repo" worktree add -q -b "agent/$1" "$work/$project-$1" main >/dev/null 2>&1
  echo "$work/$project-$1"
}

commit_all() { git -C "$1" add -A && git -C "$1" commit -qm "$2"; }
close() { (cd "$1" && "$cg" close --abstract "$2" >/dev/null) || bad "$project: close in $1 refused"; }

# Per project: the honest change (a source edit and a new test), the weakening edit of an existing
# test, the runner rewrite (with the key or file the finding names), and a source file to edit.
honest() {
  case $project in
    itoa | termtree)
      local crate=${project}
      printf '\n// Checked by closegate.\n' >> src/lib.rs
      mkdir -p tests
      if [ $project = itoa ]; then
        printf '#[test]\nfn formats_42() {\n    assert_eq!(itoa::Buffer::new().format(42u8), "42");\n}\n' > tests/extra.rs
      else
        printf '#[test]\nfn renders_a_leaf() {\n    assert_eq!(termtree::Tree::new("a").to_string(), "a\\n");\n}\n' > tests/extra.rs
      fi
      : "$crate" ;;
    itsdangerous)
      printf '\n# Checked by closegate.\n' >> src/itsdangerous/__init__.py
      printf 'from itsdangerous import Signer\n\n\ndef test_round_trip():\n    s = Signer("k")\n    assert s.unsign(s.sign(b"v")) == b"v"\n' > tests/test_itsdangerous/test_extra.py ;;
    idna)
      printf '\n# Checked by closegate.\n' >> idna/__init__.py
      printf 'import unittest\n\nimport idna\n\n\nclass Extra(unittest.TestCase):\n    def test_ascii(self):\n        self.assertEqual(idna.encode("example.com"), b"example.com")\n' > tests/test_extra.py ;;
    is-number)
      printf '\n// Checked by closegate.\n' >> index.js
      printf "var assert = require('assert');\nassert(require('./')(42));\n" > extra.test.js ;;
    dataloader)
      printf '\n// Checked by closegate.\n' >> src/index.js
      cat > src/__tests__/extra.test.js <<'JS'
/**
 * Checked by closegate.
 *
 * @flow
 */

const DataLoader = require('..');

describe('Extra', () => {
  it('loads a key', async () => {
    const loader = new DataLoader(async keys => keys);
    expect(await loader.load(1)).toBe(1);
  });
});
JS
      ;;
    uuid)
      printf '\n// Checked by closegate.\n' >> uuid.go
      printf 'package uuid\n\nimport "testing"\n\nfunc TestExtraParse(t *testing.T) {\n\tif _, err := Parse("f47ac10b-58cc-0372-8567-0e02b2c3d479"); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n' > extra_test.go ;;
    jsmn)
      printf '\n/* Checked by closegate. */\n' >> jsmn.h
      # Not under test/: `make test` names that folder, which puts all of it on `ci`.
      printf '#include "jsmn.h"\nint main(void) { jsmn_parser p; jsmn_init(&p); return 0; }\n' > extra_test.c ;;
    tsconfck)
      printf '\n// Checked by closegate.\n' >> packages/tsconfck/src/util.js
      printf "import { describe, it, expect } from 'vitest';\nimport { parse } from '../src/index.js';\n\ndescribe('extra', () => {\n\tit('parse is a function', () => {\n\t\texpect(typeof parse).toBe('function');\n\t});\n});\n" > packages/tsconfck/tests/extra.js ;;
    idx)
      printf '\n// Checked by closegate.\n' >> packages/babel-plugin-idx/src/babel-plugin-idx.js
      printf "test('extra', () => {\n  expect(typeof require('./babel-plugin-idx')).toBe('function');\n});\n" > packages/babel-plugin-idx/src/extra.test.js ;;
    immutables)
      printf '\n# Checked by closegate.\n' >> immutables/__init__.py
      printf 'import immutables\n\n\ndef test_extra():\n    assert immutables.Map(a=1)["a"] == 1\n' > tests/test_extra.py ;;
    logr)
      printf '\n// Checked by closegate.\n' >> logr.go
      printf 'package logr\n\nimport "testing"\n\nfunc TestExtraDiscard(t *testing.T) {\n\tif Discard().GetSink() != nil {\n\t\tt.Fatal("sink")\n\t}\n}\n' > extra_test.go ;;
    commander)
      printf '\n// Checked by closegate.\n' >> index.js
      printf "const { test } = require('node:test');\nconst assert = require('node:assert');\ntest('extra', () => { assert.ok(require('../index.js').Command); });\n" > tests/extra.test.cjs ;;
  esac
}

weaken() {
  case $project in
    itoa) sed -i '0,/#\[test\]/s//#[allow(dead_code)]/' tests/test.rs ;;
    termtree) sed -i '0,/#\[test\]/s//#[allow(dead_code)]/' src/tests.rs ;;
    itsdangerous) sed -i '/assert dec == want_bytes(value)/d' tests/test_itsdangerous/test_encoding.py ;;
    idna) sed -i '0,/    def test/s//    def off/' tests/test_idna_codec.py ;;
    is-number) sed -i 's/assert(isNumber(num)/assert(true || isNumber(num)/' test.js ;;
    dataloader) sed -i '0,/  it(/s//  it.skip(/' src/__tests__/abuse.test.js ;;
    uuid) sed -i '0,/^func Test/s//func off/' uuid_test.go ;;
    jsmn) sed -i '0,/  check(/s//  (void)(/' test/tests.c ;;
    commander) sed -i '0,/^test(/s//test.skip(/' "$(ls tests/*.test.js | head -1)" ;;
  esac
}

# Rewrite the runner's own test command; print what the finding names.
runner() {
  case $project in
    itoa)
      sed -i 's/^\[package\]$/[package]\nautotests = false/' Cargo.toml
      echo "Cargo.toml: package.autotests" ;;
    termtree)
      printf '\n[alias]\nt = "test --lib"\n' >> .cargo/config.toml
      echo ".cargo/config.toml" ;;
    itsdangerous)
      sed -i "s/^\[tool.pytest.ini_options\]\$/[tool.pytest.ini_options]\naddopts = \"-k 'not test_timed'\"/" pyproject.toml
      echo "pyproject.toml: tool.pytest.ini_options" ;;
    idna)
      printf "\n[tool.pytest.ini_options]\naddopts = \"-k 'not uts46'\"\n" >> pyproject.toml
      echo "pyproject.toml: tool.pytest.ini_options" ;;
    is-number | dataloader | commander)
      node -e 'const fs=require("fs");const p=JSON.parse(fs.readFileSync("package.json"));p.scripts.test="node -e 0";fs.writeFileSync("package.json",JSON.stringify(p,null,2)+"\n")'
      echo "package.json: scripts.test" ;;
    jsmn)
      sed -i 's/^test: .*/test: test_default/' Makefile
      echo "Makefile" ;;
    uuid) echo "" ;;
  esac
}

# The stop hooks on this project: installed with `agent install`, committed to the base; in
# `claims` mode a false stop is blocked, a real one and a question pass.
stop_hooks() {
  (cd "$repo" && "$cg" agent install --target claude-code >/dev/null && "$cg" agent install --target codex >/dev/null) ||
    { bad "$project: agent install"; return; }
  commit_all "$repo" "closegate: stop hooks"
  local wt
  wt=$(agent hooked)
  [ -f "$wt/.claude/settings.json" ] && [ -f "$wt/.codex/hooks.json" ] &&
    ok "$project: a worktree made from the base has both hooks" || bad "$project: hooks missing in a new worktree"
  local cmd
  cmd=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hooks"]["Stop"][0]["hooks"][0]["command"])' "$wt/.claude/settings.json")
  stop() { # target message → stdout of the hook as the harness runs it
    local input
    input=$(python3 -c 'import json,sys; print(json.dumps({"cwd": sys.argv[1], "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": sys.argv[2], "session_id": "s", "transcript_path": None}))' "$wt" "$2")
    (cd "$wt" && printf '%s' "$input" | PATH="$(dirname "$cg"):$PATH" sh -c "${cmd/claude-code/$1}")
  }
  local out
  for target in claude-code codex; do
    out=$(stop $target "VERIFIED: all done
@signal done")
    [[ $out == *'"decision":"block"'* ]] && ok "$project/$target: a false stop is blocked" || bad "$project/$target: false stop let through: $out"
    out=$(stop $target "Should the parser accept tabs as well?")
    [[ $out != *block* ]] && ok "$project/$target: a question passes" || bad "$project/$target: a question was blocked: $out"
  done
  (cd "$wt" && honest && commit_all "$wt" "hooked: honest change") >/dev/null
  close "$wt" "an honest change, checked"
  for target in claude-code codex; do
    out=$(stop $target "VERIFIED: change made, closegate check passed
@signal done")
    [[ $out != *block* ]] && ok "$project/$target: a real stop passes" || bad "$project/$target: a real stop was blocked: $out"
  done
}

play() {
  project=$1
  echo "== $project"
  repo=$work/$project
  if ! "$corpus/unpack.sh" "$project" "$repo" >/dev/null; then bad "$project: unpack"; return; fi
  local init_out
  if init_out=$(cd "$repo" && "$cg" init 2>&1); then
    ok "$project: init and its try ($(printf '%s' "$init_out" | grep -o 'passed on .*' | head -1))"
  else
    bad "$project: init's try failed"; printf '%s\n' "$init_out" | tail -25 >&2; return
  fi
  git -C "$repo" add .closegate.toml && git -C "$repo" commit -qm "closegate: configuration"
  # A replaced `tests` surface: validate names the suite it leaves unprotected.
  printf '[protected]\ntests = ["no-such-dir/**"]\n' > "$work/$project-replaced.toml"
  if (cd "$repo" && "$cg" validate --config "$work/$project-replaced.toml") | grep -q "validate-unprotected-tests"; then
    ok "$project: validate lists the tests a replaced surface leaves unprotected"
  else
    bad "$project: validate did not list unprotected tests"
  fi
  local wt key returns=0 greens=0
  wt=$(agent honest); (cd "$wt" && honest) && commit_all "$wt" "honest: a change with a new test"
  close "$wt" "a change with a new test"; expect "$project/honest" "$wt" VERIFIED ""; returns=$((returns + 1))
  wt=$(agent weaken); (cd "$wt" && weaken) && commit_all "$wt" "weaken: tests adjusted"
  close "$wt" "tests adjusted"; expect "$project/weaken" "$wt" PENDING_REVIEW "surface \`tests\`"; returns=$((returns + 1))
  wt=$(agent runner); key=$(cd "$wt" && runner)
  if [ -n "$key" ]; then
    commit_all "$wt" "runner: test command tuned"
    close "$wt" "test command tuned"; expect "$project/runner" "$wt" PENDING_REVIEW "\`$key\`"; returns=$((returns + 1))
  fi
  # The lazy agent claims done, then does the work and never commits it.
  wt=$(agent lazy); close "$wt" "the change, made"; (cd "$wt" && honest)
  expect "$project/lazy" "$wt" FAIL close-worktree-dirty; returns=$((returns + 1)); greens=$((greens + 1))
  wt=$(agent empty); close "$wt" "nothing to do, done"
  expect "$project/empty" "$wt" FAIL close-no-change; returns=$((returns + 1)); greens=$((greens + 1))
  local stats want
  stats=$(cd "$repo" && "$cg" log --stats --json 2>/dev/null)
  want=$(python3 -c "print($greens/$returns)")
  if printf '%s' "$stats" | python3 -c 'import json,sys
s = json.load(sys.stdin); r = s["false_green"] if "false_green" in s else s["rate"]
want = float(sys.argv[1]); n = int(sys.argv[2])
sys.exit(0 if r["returns"] == n and abs(r["rate"] - want) < 1e-9 else 1)' "$want" "$returns" 2>/dev/null; then
    ok "$project: log --stats false-green rate $greens/$returns"
  else
    bad "$project: log --stats false-green rate, expected $greens/$returns: $stats"
  fi
  case $project in is-number | jsmn) stop_hooks ;; esac
}

# First contact (issue 50): a layout `init` must get right first try — its own try passes and
# says so, with no `--force` and no edit — then an honest return is VERIFIED, `land` run from the
# main checkout (as the quick start does) brings it in, and the worktree is torn down.
first_contact() {
  project=$1
  echo "== $project (first contact)"
  repo=$work/$project
  if ! "$corpus/unpack.sh" "$project" "$repo" >/dev/null; then bad "$project: unpack"; return; fi
  local init_out
  if init_out=$(cd "$repo" && "$cg" init 2>&1) && [[ $init_out == *"try: \`test\` passed on"* ]]; then
    ok "$project: init right first try ($(printf '%s' "$init_out" | grep -o 'passed on .*' | head -1))"
  else
    bad "$project: init's first try failed"; printf '%s\n' "$init_out" | tail -25 >&2; return
  fi
  printf '%s\n' "$init_out" | grep '^note: ' | sed 's/^/       /'
  git -C "$repo" add .closegate.toml && git -C "$repo" commit -qm "closegate: configuration"
  # validate names every module or workspace package the check leaves out: logr's `_tools`
  # (a folder the go tool skips); the others' checks reach every one of theirs.
  local left
  left=$(cd "$repo" && "$cg" validate 2>&1 | grep -E -o 'is tested by no check|has a test script no check runs' | wc -l)
  case $project in
    logr) want=1 ;;
    *) want=0 ;;
  esac
  [ "$left" -eq "$want" ] && ok "$project: validate names $want module(s) or package(s) left out" ||
    bad "$project: validate named $left left out, expected $want: $(cd "$repo" && "$cg" validate 2>&1 | tail -5)"
  local wt
  wt=$(agent honest); (cd "$wt" && honest) && commit_all "$wt" "honest: a change with a new test"
  close "$wt" "a change with a new test"; expect "$project/honest" "$wt" VERIFIED ""
  if (cd "$repo" && "$cg" land agent/honest >/dev/null 2>&1); then
    ok "$project: land"
  else
    bad "$project: land refused"; (cd "$repo" && "$cg" land agent/honest 2>&1 | tail -15) >&2
  fi
  [ ! -e "$wt" ] && ok "$project: the worktree was torn down" || bad "$project: the worktree is still there"
  git -C "$repo" merge-base --is-ancestor agent/honest main 2>/dev/null || [ -z "$(git -C "$repo" branch --list agent/honest)" ] ||
    bad "$project: the landed branch is not in main"
}

projects=("$@")
if [ ${#projects[@]} -eq 0 ]; then
  projects=(itoa termtree itsdangerous idna is-number dataloader uuid jsmn logr commander tsconfck idx immutables)
fi
for p in "${projects[@]}"; do
  started=$SECONDS
  case $p in
    tsconfck | idx | immutables | logr | commander) first_contact "$p" ;;
    *) play "$p" ;;
  esac
  echo "   $p: $((SECONDS - started)) s"  # issue 50: CI's time, per project
done
echo "real projects: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
