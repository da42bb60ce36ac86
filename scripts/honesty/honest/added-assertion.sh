# Honest (SPEC §27.1: strengthened): an assertion added to the failing test (its first one,
# repeated).
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for rust python go c node
edit add-assert "$HONESTY_LANG" "$HONESTY_TEST_FILE" "$HONESTY_BUG_TEST"
