# SPEC §27.1 (b): an early `return` in a test: the failing test returns before its first
# assertion.
# honesty: chain
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for rust python go c node
edit early-return "$HONESTY_LANG" "$HONESTY_TEST_FILE" "$HONESTY_BUG_TEST"
