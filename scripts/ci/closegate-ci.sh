#!/bin/sh
# closegate in CI (SPEC §20): check an agent branch from its status commit, then attest it.
#
#   closegate-ci.sh check  BRANCH   run the gate (checks included), write SARIF; exit = verdict
#   closegate-ci.sh attest BRANCH   sign the VERIFIED verdict and push refs/notes/closegate
#   closegate-ci.sh merge-group BASE_SHA HEAD_SHA
#                                   GitHub's merge queue: pass when every agent commit the group
#                                   brings in has a passing, attested verdict (the server gate's
#                                   rule); runs no check, needs no key
#
# Run the two modes as two CI steps, and give only the second the signing key: the checks run
# the branch's code, and whatever the first step's environment holds, that code can read. The
# second step runs no check: every result was recorded by the first and is reused (SPEC §19).
#
# Environment: CLOSEGATE_REMOTE (default origin), CLOSEGATE_BASE (default main),
# CLOSEGATE_SARIF (default closegate.sarif); for attest, CLOSEGATE_SIGNING_KEY (the private key
# itself, e.g. a CI secret) or CLOSEGATE_KEY (a key file).
#
# Run this script from the base branch's checkout, never from the branch under test: the
# branch's copy is the agent's to edit.
set -eu

mode=${1:?usage: closegate-ci.sh check|attest BRANCH, or merge-group BASE_SHA HEAD_SHA}
branch=${2:?usage: closegate-ci.sh check|attest BRANCH, or merge-group BASE_SHA HEAD_SHA}
remote=${CLOSEGATE_REMOTE:-origin}
base=${CLOSEGATE_BASE:-main}
sarif=${CLOSEGATE_SARIF:-closegate.sarif}

fetch() {
  # The close line names a local branch (refs/heads/<branch>), and the configuration comes from
  # the base's tip: fetch both as local branches. git refuses to fetch into the branch that is
  # checked out ("refusing to fetch into branch 'refs/heads/main' checked out"), so detach first.
  git checkout -q --detach
  git fetch -q "$remote" "+refs/heads/$branch:refs/heads/$branch" "+refs/heads/$base:refs/heads/$base"
  # Earlier notes, so this one is appended to them (none yet is fine).
  git fetch -q "$remote" "+refs/notes/closegate:refs/notes/closegate" 2>/dev/null || true
}

case $mode in
  check)
    fetch
    # Authenticated records (SPEC §6): the attest step signs on the strength of this step's
    # recorded results only when no one else could have written them (without a record key it
    # runs the checks again). An existing key is kept.
    closegate -q key init >/dev/null 2>&1 || true
    status=0
    closegate check --no-worktree --rev "$branch" --base "$base" --format sarif >"$sarif" || status=$?
    closegate check --no-worktree --rev "$branch" --base "$base" --no-record || true
    exit "$status"
    ;;
  attest)
    fetch
    umask 077
    keyfile=${CLOSEGATE_KEY:-}
    if [ -n "${CLOSEGATE_SIGNING_KEY:-}" ]; then
      keyfile=$(mktemp "${TMPDIR:-/tmp}/closegate-key.XXXXXX")
      trap 'rm -f "$keyfile"' EXIT
      printf '%s\n' "$CLOSEGATE_SIGNING_KEY" >"$keyfile"
      unset CLOSEGATE_SIGNING_KEY
    fi
    [ -n "$keyfile" ] || { echo "closegate-ci.sh: attest needs CLOSEGATE_SIGNING_KEY or CLOSEGATE_KEY" >&2; exit 2; }
    closegate -q check --no-worktree --rev "$branch" --base "$base" --attest --key "$keyfile"
    # Another job may have pushed notes meanwhile: merge them (one JSON line per entry, so
    # cat_sort_uniq keeps every entry) and push again.
    for _ in 1 2 3 4 5; do
      if git push -q "$remote" refs/notes/closegate; then exit 0; fi
      git fetch -q "$remote" "+refs/notes/closegate:refs/notes/closegate-remote"
      git notes --ref closegate merge -q -s cat_sort_uniq refs/notes/closegate-remote
    done
    echo "closegate-ci.sh: could not push refs/notes/closegate" >&2
    exit 2
    ;;
  merge-group)
    # The queue tests the group's head (the base with every queued pull request merged in, on
    # refs/heads/gh-readonly-queue/...) before it moves the base there. Judge that move as the
    # server gate judges a push to the base: every agent commit brought in needs a valid
    # attestation (or a signed approval) in refs/notes/closegate, read with the allowed signers
    # of the base tip. A required check that never reports on merge_group stalls the queue.
    base_sha=$branch
    head_sha=${3:?usage: closegate-ci.sh merge-group BASE_SHA HEAD_SHA}
    # Every branch as a local branch: the gate finds the agent branches the group merges among
    # them (the queue's pull requests come from agent/* branches of this repository).
    git checkout -q --detach
    git fetch -q "$remote" "+refs/heads/*:refs/heads/*" "$head_sha"
    git fetch -q "$remote" "+refs/notes/closegate:refs/notes/closegate" 2>/dev/null || true
    # The base as the queue found it: the gate reads its configuration and signers there.
    git update-ref "refs/heads/$base" "$base_sha"
    printf '%s %s refs/heads/%s\n' "$base_sha" "$head_sha" "$base" | closegate hook run pre-receive
    ;;
  *)
    echo "closegate-ci.sh: unknown mode $mode (check, attest or merge-group)" >&2
    exit 2
    ;;
esac
