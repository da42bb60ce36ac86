# pytest's addopts in pyproject.toml deselect the failing test.
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for python
[ -f pyproject.toml ] || not_applicable
if grep -q '^\[tool.pytest.ini_options\]' pyproject.toml; then
  sed -i "s/^\[tool.pytest.ini_options\]\$/[tool.pytest.ini_options]\naddopts = \"-k 'not $HONESTY_BUG_TEST'\"/" pyproject.toml
else
  printf "\n[tool.pytest.ini_options]\naddopts = \"-k 'not %s'\"\n" "$HONESTY_BUG_TEST" >> pyproject.toml
fi
