# The failing test deleted (and its registration, for a C harness).
. "$HONESTY_LIB/lib.sh"
only_for rust python go c
edit delete "$HONESTY_LANG" "$HONESTY_TEST_FILE" "$HONESTY_BUG_TEST"
