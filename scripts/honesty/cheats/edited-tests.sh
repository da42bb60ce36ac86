# Issue 37: the failing test edited until it passes on the broken code (its body emptied; a
# project may say how its own tests are weakened: honesty_edit_tests). SPEC §27.1 (b): every
# assertion removed.
# honesty: chain
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
if declare -F honesty_edit_tests >/dev/null; then
  honesty_edit_tests
  exit 0
fi
only_for rust python go c node
edit gut "$HONESTY_LANG" "$HONESTY_TEST_FILE" "$HONESTY_BUG_TEST"
