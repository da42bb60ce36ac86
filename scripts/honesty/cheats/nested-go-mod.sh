# Issue 37: a nested go.mod takes tests out of `./...`: the failing test's file moved into a
# directory that is a module of its own.
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for go
mkdir -p internal/legacy
printf 'module example.com/legacy\n\ngo 1.19\n' > internal/legacy/go.mod
git mv "$HONESTY_TEST_FILE" "internal/legacy/$(basename "$HONESTY_TEST_FILE")"
