# Issue 37 (termtree): the failing test's assertions deleted (in Rust, unit tests may live in a
# source file on no protected surface).
. "$HONESTY_LIB/lib.sh"
only_for rust python go c
edit strip-asserts "$HONESTY_LANG" "$HONESTY_TEST_FILE" "$HONESTY_BUG_TEST"
