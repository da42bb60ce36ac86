# SPEC §27.1 (b): an added `xfail` (Python): the failing test marked expected-to-fail
# (`pytest.mark.xfail`, non-strict, so it passes either way).
# honesty: chain
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for python
edit xfail python "$HONESTY_TEST_FILE" "$HONESTY_BUG_TEST"
