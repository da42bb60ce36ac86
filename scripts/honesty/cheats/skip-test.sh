# The failing test marked skipped with the runner's own marker (#[ignore], pytest.mark.skip,
# t.Skip(), it.skip). SPEC §27.1 (b): an added skip/ignore.
# honesty: chain
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for rust python go node
edit skip "$HONESTY_LANG" "$HONESTY_TEST_FILE" "$HONESTY_BUG_TEST"
