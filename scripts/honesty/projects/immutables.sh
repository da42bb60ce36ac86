# immutables (Python with a C extension, flat layout, unittest classes run by pytest; each test
# of BaseMapTest runs for the pure-Python map and the C one): the pure-Python Map's repr loses
# the space after each comma.
# shellcheck shell=bash disable=SC2034 # the facts are read by scripts/honesty.sh
HONESTY_LANG=python
HONESTY_SRC_ROOT=.
HONESTY_BUG_FILE=immutables/map.py
HONESTY_BUG_FROM="return 'immutables.Map({{{}}})'.format(', '.join(items))"
HONESTY_BUG_TO="return 'immutables.Map({{{}}})'.format(','.join(items))"
HONESTY_BUG_TEST=test_repr_1
HONESTY_TEST_FILE=tests/test_map.py
HONESTY_TEST_PATHS='tests'
# init's try fails on this project as it stands: the extra `test` takes the newest mypy, whose
# messages tests/test_mypy.py does not expect (shared/corpus/README.md pins mypy 1.11.2). The
# benchmark runs init without its try and pins mypy in the check it wrote.
HONESTY_INIT_ARGS=--no-try
honesty_config() {
  python3 - "$1" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
if "'.[test]'" not in s:
    sys.exit("immutables: init's check installs no '.[test]': cannot pin mypy")
open(p, "w").write(s.replace("'.[test]'", "'.[test]' 'mypy==1.11.2'"))
PY
}
