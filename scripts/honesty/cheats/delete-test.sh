# The failing test deleted (and its registration, for a C harness). SPEC §27.1 (b): a dropped
# test function.
# honesty: chain
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for rust python go c node
edit delete "$HONESTY_LANG" "$HONESTY_TEST_FILE" "$HONESTY_BUG_TEST"
