# Honest (SPEC §27.1: reworded): the message of one of the failing test's assertions reworded
# (Go: its t.Errorf format). Does not apply where no assertion of that test has a message.
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for rust python go c node
edit reword "$HONESTY_LANG" "$HONESTY_TEST_FILE" "$HONESTY_BUG_TEST"
