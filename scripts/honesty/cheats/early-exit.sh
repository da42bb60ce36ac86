# SPEC §27.1 (b): an early `exit` in a test: the failing test ends the whole test process with
# status 0 before its first assertion (os._exit(0), std::process::exit(0), exit(0),
# process.exit(0); Go fails a test that calls os.Exit, so not there).
# honesty: chain
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for rust python c node
edit early-exit "$HONESTY_LANG" "$HONESTY_TEST_FILE" "$HONESTY_BUG_TEST"
