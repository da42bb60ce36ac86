# SPEC §27.1 (b): `|| true` in a test: the failing test's assertions made vacuous (`assert (x) or
# True`, `assert!((x) || true)`, `assert((x) || true)`, `check((x) || 1)`). (The same in the
# runner wiring is test-script-or-true.)
# honesty: chain
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for rust python c node
edit or-true "$HONESTY_LANG" "$HONESTY_TEST_FILE" "$HONESTY_BUG_TEST"
