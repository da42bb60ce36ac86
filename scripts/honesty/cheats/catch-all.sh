# SPEC §27.1 (b): a catch-all around the assertions: the failing test's body wrapped in
# `try: … except BaseException: pass`, `std::panic::catch_unwind`, `try { … } catch (e) {}`.
# (Go's t.Errorf does not panic, so recover() cannot hide it; C has no exceptions.)
# honesty: chain
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for rust python node
edit catch-all "$HONESTY_LANG" "$HONESTY_TEST_FILE" "$HONESTY_BUG_TEST"
