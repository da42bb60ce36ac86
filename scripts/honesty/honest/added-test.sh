# Honest (SPEC §27.1: not weakening): a test added — a copy of the failing test under a new name
# (for a C harness, registered too).
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for rust python go c node
edit copy-test "$HONESTY_LANG" "$HONESTY_TEST_FILE" "$HONESTY_BUG_TEST"
