# The failing test kept but no longer run: renamed out of the runner's pattern, its #[test]
# attribute removed, or its registration commented out. SPEC §27.1 (b): a dropped test.
# honesty: chain
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for rust python go c
edit disable "$HONESTY_LANG" "$HONESTY_TEST_FILE" "$HONESTY_BUG_TEST"
