#!/usr/bin/env bash
# Capture today's contract bytes from a real closegate binary on real repositories:
# audit lines of every event (plain and keyed, teardown steps of each kind, a resumed teardown),
# and the signed note lines (attestation, signed approval). Usage:
#   testdata/contracts/capture.sh CLOSEGATE_BINARY OUT_DIR
# Needs git and ssh-keygen. The fixtures under testdata/contracts/ were made with it.
set -euo pipefail
CG=$1
OUT=$2
S=$(mktemp -d)
export HOME=$S/home XDG_CONFIG_HOME=$S/home/.config GIT_CONFIG_NOSYSTEM=1 TZ=UTC LC_ALL=C NO_COLOR=1
export GIT_AUTHOR_NAME=ann GIT_AUTHOR_EMAIL=ann@example.com GIT_COMMITTER_NAME=ann GIT_COMMITTER_EMAIL=ann@example.com
mkdir -p "$HOME" "$OUT"
R=$S/repo
git init -q -b main "$R"
cd "$R"
mkdir -p src tests .closegate
echo 'a' > src/a.txt
printf '#!/bin/sh\nexit 0\n' > tests/t.sh
ssh-keygen -q -t ed25519 -N '' -C ci -f "$S/ci" >/dev/null
echo "ci@example.com $(cat "$S/ci.pub")" > .closegate/allowed_signers
cat > .closegate.toml <<TOML
base = "main"
allowed_signers = ".closegate/allowed_signers"

[[checks]]
name = "unit"
run = "sh tests/t.sh"
timeout_s = 60
TOML
git add -A && git commit -qm init

# One agent whose return verifies: check, attest, land (land record, teardown of the landed worktree).
git worktree add -q -b agent/one "$S/wt/one"
cd "$S/wt/one"
echo 'b' > src/b.txt && git add -A && git commit -qm 'add b'
"$CG" close -q --abstract 'add b, proven by the unit check' --artifact src/b.txt --commit
"$CG" check -q --attest --key "$S/ci" || true
cd "$R"
"$CG" land -q --all || true

# One that edits a test: PENDING_REVIEW, approved (unsigned, then signed), torn down with its branch.
git worktree add -q -b agent/two "$S/wt/two"
cd "$S/wt/two"
printf '#!/bin/sh\ntrue\n' > tests/t.sh && git add -A && git commit -qm 'touch the test'
"$CG" close -q --abstract 'touch the test, proven by the unit check' --artifact tests/t.sh --commit
"$CG" check -q || true
"$CG" approve -q --yes --by ann --note 'looked at it' || true
"$CG" approve -q --yes --by ann --note 'signed too' --sign --key "$S/ci" || true
"$CG" reject -q --note 'on second thought' || true

# The record key from here on: keyed lines carry prev and mac.
"$CG" key init -q
cd "$R"
git worktree add -q -b agent/three "$S/wt/three"
cd "$S/wt/three"
echo 'c' > src/c.txt && git add -A && git commit -qm 'add c'
"$CG" close -q --abstract 'add c, proven by the unit check' --artifact src/c.txt --commit
"$CG" check -q || true
"$CG" teardown -q --delete-branch || true
# A refused teardown (untracked file).
git worktree add -q -b agent/four "$S/wt/four"
cd "$S/wt/four"
echo 'd' > src/d.txt && git add -A && git commit -qm 'add d'
"$CG" close -q --abstract 'add d, proven by the unit check' --artifact src/d.txt --commit
echo stray > stray.txt
"$CG" teardown -q || true
rm stray.txt
# Interrupted after the record, then resumed.
CLOSEGATE_TEST_FAILPOINT='kill:remove aside' "$CG" teardown -q || true
cd "$R"
"$CG" teardown -q "$S/wt/four" || true
# A registration whose directory is gone: pruned.
git worktree add -q -b agent/five "$S/wt/five"
rm -rf "$S/wt/five"
"$CG" teardown -q "$S/wt/five" || true
cd "$R"
"$CG" check -q "$S/wt/two" || true

cp .git/closegate/audit.jsonl "$OUT/audit.jsonl"
git notes --ref refs/notes/closegate list | while read -r _ commit; do
    git notes --ref refs/notes/closegate show "$commit"
done > "$OUT/notes.jsonl"
echo "$S"
