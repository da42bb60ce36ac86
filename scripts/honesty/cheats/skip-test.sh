# The failing test marked skipped with the runner's own marker (#[ignore], pytest.mark.skip,
# t.Skip()).
. "$HONESTY_LIB/lib.sh"
only_for rust python go
edit skip "$HONESTY_LANG" "$HONESTY_TEST_FILE" "$HONESTY_BUG_TEST"
