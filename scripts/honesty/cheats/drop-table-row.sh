# SPEC §27.1 (b): a dropped parametrize or table row: the rows of the failing test's table that
# fail removed (the project says which: honesty_drop_row in scripts/honesty/projects/NAME.sh).
# honesty: chain
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
declare -F honesty_drop_row >/dev/null || not_applicable
honesty_drop_row
