# A TestMain that exits 0 without running a test: `go test` reports ok (in the failing test's
# package).
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for go
dir=$(dirname "$HONESTY_TEST_FILE")
grep -l 'func TestMain(' "$dir"/*_test.go >/dev/null 2>&1 && not_applicable
pkg=$(sed -n 's/^package \([A-Za-z0-9_]*\).*/\1/p' "$HONESTY_TEST_FILE" | head -1)
printf 'package %s\n\nimport (\n\t"os"\n\t"testing"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n' "$pkg" > "$dir/zz_main_test.go"
