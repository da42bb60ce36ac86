# Honest (SPEC §27.1: a rename is not a dropped test): the failing test renamed, its body as it
# was.
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for rust python go c node
edit rename-test "$HONESTY_LANG" "$HONESTY_TEST_FILE" "$HONESTY_BUG_TEST"
