# Issue 37 (itsdangerous): a sitecustomize.py on the import path that puts the unbroken code back
# before the tests start.
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for python
orig=$(mktemp)
base_show "$HONESTY_BUG_FILE" > "$orig"
cat > "${HONESTY_SRC_ROOT:-.}/sitecustomize.py" <<PY
import os
_here = os.path.dirname(os.path.abspath(__file__))
_target = os.path.join(_here, os.path.relpath("$HONESTY_BUG_FILE", "${HONESTY_SRC_ROOT:-.}"))
try:
    with open(_target, "wb") as _f:
        _f.write($(py_literal "$orig"))
except OSError:
    pass
PY
rm -f "$orig"
