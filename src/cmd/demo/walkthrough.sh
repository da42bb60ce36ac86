# The walkthrough `closegate demo` runs (embedded in the binary; bash, git and a POSIX shell
# are all it needs). The protocol on a scratch repository it builds itself:
#   1. four agents return; one status document and its close line are shown, then closegate checks
#      each agent against the repository and answers with each of the four verdicts;
#   2. teardown removes the verified worktree and refuses the one that edited its test;
#   3. a fifth agent is held to a task contract, and the board shows every worktree's stage;
#   4. the git hook refuses to merge a branch that never passed, and lets the verified one in;
#   5. a sixth agent writes its document with `closegate close`, behind a Claude-Code-shaped stop
#      hook (`closegate agent stop-hook`) that blocks its false "done" and lets the real one through;
#   6. a reviewer rejects the agent that edited its test, and the board shows REJECTED.
# No network. Everything it creates (repository, worktrees, the record) lives in one temporary
# directory, removed at the end unless KEEP=1 (`closegate demo --keep`). CLOSEGATE names the
# binary (`closegate demo` sets it to itself).
set -euo pipefail
closegate=${CLOSEGATE:?closegate demo sets CLOSEGATE}

scratch=$(mktemp -d "${TMPDIR:-/tmp}/closegate-demo.XXXXXX")
if [ "${KEEP:-}" = 1 ]; then
  trap 'echo; echo "kept: $scratch (the repository, its worktrees and the record)"' EXIT
else
  trap 'rm -rf "$scratch"' EXIT
fi
# Paths under the scratch directory are shown as $scratch: it is removed when the demo ends.
show() { sed "s|$scratch|\$scratch|g"; }
export GIT_CONFIG_NOSYSTEM=1 HOME="$scratch" GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@example.com \
  GIT_COMMITTER_NAME=demo GIT_COMMITTER_EMAIL=demo@example.com
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE

repo="$scratch/repo"
git init -q -b main "$repo"
cd "$repo"
mkdir -p src tests
echo 'add() { echo $(( $1 + $2 )); }' > src/add.sh
printf '. src/add.sh\n[ "$(add 2 2)" = 4 ]\n' > tests/add_test.sh
cat > .closegate.toml <<'TOML'
base = "main"

[[checks]]
name = "unit"
run = "sh tests/add_test.sh"
timeout_s = 60
TOML
git add -A && git commit -q -m "calculator with its test and the gate configuration"

# status <worktree> <slug> <state> [close]: write the agent's status document.
status() {
  local wt=$1 slug=$2 state=$3 sha branch subject
  sha=$(git -C "$wt" rev-parse HEAD); branch=$(git -C "$wt" symbolic-ref --short HEAD)
  subject=$(git -C "$wt" log -1 --format=%s)
  {
    printf '# STATUS — %s\n\n- state: %s\n' "$slug" "$state"
    printf -- '- abstract: %s\n' "work on $slug, proven by the unit check"
    printf -- '- last commit: %s — %s\n' "${sha:0:12}" "$subject"
    printf -- '- done: the change is in, proven by the unit check\n'
    printf -- '- next / blocked-on: %s\n' "$([ "$state" = in-progress ] && echo 'finish the change' || echo none)"
    printf -- '- artifacts:\n  - src/%s.sh\n' "$slug"
    if [ "$state" != in-progress ]; then
      printf '\nCLOSE-OK · %s · commit %s · branch %s · worktree %s\n' "$slug" "${4:-${sha:0:12}}" "$branch" "$wt"
    fi
  } > "$wt/_EXEC_STATUS.md"
}

# agent <slug>: a linked worktree on agent/<slug> with one new file committed.
agent() {
  local wt="$scratch/wt/$1"
  git worktree add -q -b "agent/$1" "$wt" main
  echo "echo $1" > "$wt/src/$1.sh"
  git -C "$wt" add -A && git -C "$wt" commit -q -m "add $1"
  echo "$wt"
}

echo "== 1. four agents return =="
honest=$(agent honest);   status "$honest" honest close-ok
echo
echo "the honest agent's status document (the last line is its close line):"
show < "$honest/_EXEC_STATUS.md" | sed 's/^/  /'
echo "(lint checks the document alone: $("$closegate" lint "$honest/_EXEC_STATUS.md" | head -n1 | show))"
cheater=$(agent cheater)
echo 'true' > "$cheater/tests/add_test.sh"           # "fixes" the test instead of the code
git -C "$cheater" commit -qam "make the test pass"; status "$cheater" cheater close-ok
stale=$(agent stale);     stale_sha=$(git -C "$stale" rev-parse HEAD)
echo 'more' >> "$stale/src/stale.sh"; git -C "$stale" commit -qam "more after the status was written"
status "$stale" stale close-ok "${stale_sha:0:12}"   # names the commit before the tip
busy=$(agent busy);       status "$busy" busy in-progress

echo
printf '%-10s %-24s %s\n' agent verdict "first finding"
for wt in "$honest" "$cheater" "$stale" "$busy"; do
  set +e
  out=$("$closegate" check "$wt" 2>&1); code=$?
  set -e
  verdict=$(printf '%s\n' "$out" | head -n1 | cut -d' ' -f1)
  first=$(printf '%s\n' "$out" | grep -m1 -oE '(refusal|review|gap) [a-z0-9-]+' || true)
  printf '%-10s %-24s %s\n' "$(basename "$wt")" "$verdict (exit $code)" "${first:-—}"
done

# Teardown: the honest worktree goes (its status document archived first); the others are kept.
echo
echo "== 2. teardown =="
echo "tearing down the honest worktree:"
"$closegate" teardown "$honest" | sed -n '/^teardown /,$p' | show
echo
echo "the cheater's worktree is refused (it edited the test: a human must approve first):"
set +e
"$closegate" teardown "$cheater" > "$scratch/cheater.out"; code=$?
set -e
grep '^teardown ' "$scratch/cheater.out" | sed "s/\$/ (exit $code)/"
echo
echo "worktrees kept:"
git worktree list | show
echo
"$closegate" log --stats

# --- task contract and board (SPEC §12, §13) ---
# The coordinator fixes a finish line for a fifth agent, `scoped`, on main before dispatch: it was
# meant to document the calculator under docs/, so its change to src/ lies outside the contract's
# scope. The contract is read from main (trusted); one edited on the agent's branch has no effect.
mkdir -p .closegate/contracts
cat > .closegate/contracts/scoped.toml <<'TOML'
goal = "document the calculator"
scope = ["docs/**"]
required_checks = ["unit"]
max_changed_files = 5
TOML
git add .closegate && git commit -q -m "contract for scoped"
scoped=$(agent scoped); status "$scoped" scoped close-ok
echo
echo "== 3. a task contract and the board =="
echo "contract for scoped on main (scope docs/**); scoped checked:"
set +e
"$closegate" check "$scoped" | grep -v 'hint:' | show
set -e
echo
echo "closegate board --tree:"
"$closegate" board --tree | show

# --- the hook (SPEC §9): merging what never passed is refused by git itself ---
echo
echo "== 4. the hook refuses a merge that never passed =="
"$closegate" hook install | show
echo "git merge agent/stale (its last verdict is FAIL):"
set +e
git merge -q --no-edit agent/stale > "$scratch/merge.out" 2>&1; code=$?
set -e
show < "$scratch/merge.out" | sed 's/^/  /'
echo "  -> git merge exited $code; main is still $(git rev-parse --short main)"
git reset -q --merge
echo "git merge agent/honest (VERIFIED, torn down, branch kept):"
git merge -q --no-edit agent/honest && echo "  -> merged: main is now $(git rev-parse --short main)"

# --- the agent's side: `closegate close` and a Claude-Code-shaped stop hook (SPEC §17, §18) ---
# A sixth agent, `helper`, works in a harness whose Stop hook is `closegate agent stop-hook`.
# It first stops with a false "done" (nothing committed, no status document): the hook blocks
# and feeds the reason back. It then commits, runs `closegate close`, and stops again: let through.
helper=$(agent helper)
"$closegate" agent install --target claude-code --scope local > /dev/null   # wires the hook in
echo
echo "== 5. the agent's side: closegate close behind a stop hook =="
echo "claude code settings written by 'closegate agent install --target claude-code --scope local':"
sed 's/^/  /' "$repo/.claude/settings.local.json"; echo
stop_input() {   # the Stop hook input Claude Code sends: JSON on stdin
  printf '{"session_id":"demo","transcript_path":"%s","cwd":"%s","permission_mode":"default","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":%s}' \
    "$scratch/transcript.jsonl" "$helper" "$1"
}
rm -f "$helper/src/helper.sh"; git -C "$helper" commit -qam "start over"
echo
echo "helper stops claiming done, with nothing to show:"
stop_input '"VERIFIED: all done\n\n@signal done"' | "$closegate" agent stop-hook --target claude-code \
  | if command -v python3 > /dev/null; then
      python3 -c 'import json,sys; d=json.load(sys.stdin); print("  decision:", d["decision"]); print("\n".join("  " + l for l in d["reason"].splitlines()))'
    else sed 's/^/  /'; fi | show
echo 'helper() { echo helping; }' > "$helper/src/helper.sh"
git -C "$helper" add -A && git -C "$helper" commit -q -m "add helper"
"$closegate" close "$helper" --abstract "adds the helper, proven by the unit check" \
  --done "the unit check passes, proven by closegate check" --artifact src/helper.sh | show | sed 's/^/  /'
echo
echo "the document 'closegate close' wrote:"
show < "$helper/_EXEC_STATUS.md" | sed 's/^/  /'
set +e
"$closegate" check "$helper" > "$scratch/helper.out"; code=$?
set -e
echo "closegate check: $(head -n1 "$scratch/helper.out" | cut -d' ' -f1) (exit $code)"
echo
echo "helper stops again, reporting what closegate check said:"
out=$(stop_input '"VERIFIED: the helper is in, closegate check passed\n\n@signal done"' \
  | "$closegate" agent stop-hook --target claude-code)
echo "  hook output: '${out}' (empty: the stop is let through)"

# --- the reviewer: reject with a note, the board shows it ---
echo
echo "== 6. the reviewer =="
echo "the cheater edited its test; the reviewer rejects that commit, with a note the agent is shown:"
"$closegate" reject "$cheater" --yes --by demo --note "fix the code, not the test" | show | sed 's/^/  /'
echo "closegate board (the cheater's stage and the reason's code):"
"$closegate" board | grep -E '^STAGE|agent/cheater' | show | sed 's/^/  /'
