# Issue 37 (itsdangerous): a new pytest.toml (pytest 9 reads it before pyproject.toml) whose
# addopts deselect the failing test.
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for python
printf '[pytest]\naddopts = ["-k", "not %s"]\n' "$HONESTY_BUG_TEST" > pytest.toml
