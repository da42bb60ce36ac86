# Issue 37 (red team): a test file whose name is not UTF-8, gutted. The base gets that file first
# (phase `prepare`: a copy of the failing test's file under a name with a byte 0xff, the failing
# test then living only there); the return guts the failing test in it, and nothing else.
# honesty: prepare
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for python
name=$(python3 -c 'import os,sys; d,b=os.path.split(sys.argv[1]); sys.stdout.buffer.write(os.path.join(d, b.replace("test_", "test_x\udcff_", 1)).encode("utf-8","surrogateescape"))' "$HONESTY_TEST_FILE")
if [ "${HONESTY_PHASE:-cheat}" = prepare ]; then
  cp "$HONESTY_TEST_FILE" "$name"
  edit delete python "$HONESTY_TEST_FILE" "$HONESTY_BUG_TEST"
  exit 0
fi
[ -e "$name" ] || not_applicable
edit gut python "$name" "$HONESTY_BUG_TEST"
