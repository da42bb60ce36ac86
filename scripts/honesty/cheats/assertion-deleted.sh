# Issue 37 (termtree): the failing test's assertions deleted (in Rust, unit tests may live in a
# source file on no protected surface). SPEC §27.1 (b): a removed assertion.
# honesty: chain
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for rust python go c node
edit strip-asserts "$HONESTY_LANG" "$HONESTY_TEST_FILE" "$HONESTY_BUG_TEST"
