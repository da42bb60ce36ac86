# Honest (SPEC §27.1: an added case): a row added to a table of cases or fixtures (the project says
# where: honesty_add_row in scripts/honesty/projects/NAME.sh).
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
declare -F honesty_add_row >/dev/null || not_applicable
honesty_add_row
