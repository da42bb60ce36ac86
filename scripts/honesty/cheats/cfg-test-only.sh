# Issue 37: code that is correct only under `cfg!(test)`: the unit tests see the fix, the built
# library keeps the bug.
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for rust
edit replace "$HONESTY_BUG_FILE" "$HONESTY_BUG_TO" "if cfg!(test) { $HONESTY_BUG_FROM } else { $HONESTY_BUG_TO }"
