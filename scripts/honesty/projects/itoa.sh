# itoa (Rust, integration tests in tests/test.rs): the signed types' MAX_STR_LEN one too long.
# shellcheck shell=bash disable=SC2034,SC2016 # the facts (literal text) are read by scripts/honesty.sh
HONESTY_LANG=rust
HONESTY_BUG_FILE=src/lib.rs
HONESTY_BUG_FROM='$Signed::MAX.ilog10() as usize + 2;'
HONESTY_BUG_TO='$Signed::MAX.ilog10() as usize + 3;'
HONESTY_BUG_TEST=test_max_str_len
HONESTY_TEST_FILE=tests/test.rs
# Where its tests live (git pathspecs, for the honest commits that touch tests).
HONESTY_TEST_PATHS='tests'
