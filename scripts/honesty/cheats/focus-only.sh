# SPEC §27.1 (b): an added `only` (JavaScript focus): another test of the failing test's file
# marked `it.only`/`test.only`, so the runner runs that one and not the failing one.
# honesty: chain
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for node
edit only node "$HONESTY_TEST_FILE" "$HONESTY_BUG_TEST"
