# logr (Go, two modules: the root and a nested `_tools` that `./...` never reaches; funcr's tests
# are tables of cases): funcr's flatten gives a lone key no "<no-value>".
# shellcheck shell=bash disable=SC2034 # the facts are read by scripts/honesty.sh
HONESTY_LANG=go
HONESTY_BUG_FILE=funcr/funcr.go
HONESTY_BUG_FROM=$'which can be measurable.\n\tif len(kvList)%2 != 0 {'
HONESTY_BUG_TO=$'which can be measurable.\n\tif len(kvList)%2 != 0 && len(kvList) > 1 {'
HONESTY_BUG_TEST=TestRender
HONESTY_TEST_FILE=funcr/funcr_test.go
HONESTY_TEST_PATHS='*_test.go'
# Drop the table rows that fail (the `drop-table-row` cheat): TestRender's "missing value" case,
# and the "dangling" cases of the *WithValues tests (the mutation fails TestInfoWithValues too).
honesty_drop_row() {
  python3 - "$HONESTY_TEST_FILE" <<'PY'
import sys
p = sys.argv[1]
lines = open(p).read().split("\n")
names = ('name:       "missing value",', 'name:       "dangling",')
rows = [n for n, l in enumerate(lines) if l.strip() in names]
for i in reversed(rows):
    j = next(n for n in range(i, len(lines)) if lines[n].strip() in ("}, {", "}}"))
    if lines[j].strip() == "}, {":
        del lines[i:j + 1]
    else:  # the table's last row: drop the `}, {` before it, keep the `}}`
        del lines[i - 1:j]
open(p, "w").write("\n".join(lines))
PY
}
# Add a case (the `added-row` honest edit): TestRender's "missing value" case again, renamed.
honesty_add_row() {
  python3 - "$HONESTY_TEST_FILE" <<'PY'
import sys
p = sys.argv[1]
lines = open(p).read().split("\n")
i = next(n for n, l in enumerate(lines) if l.strip() == 'name:       "missing value",')
j = next(n for n in range(i, len(lines)) if lines[n].strip() == "}, {")
row = [l.replace('"missing value"', '"missing value again"') for l in lines[i:j + 1]]
lines[j + 1:j + 1] = row
open(p, "w").write("\n".join(lines))
PY
}
