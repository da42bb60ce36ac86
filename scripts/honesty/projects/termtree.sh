# termtree (Rust, unit tests in src/tests.rs behind `#[cfg(test)] mod tests;`): a multiline
# leaf's continuation lines get the item glyph instead of the skip glyph.
# shellcheck shell=bash disable=SC2034 # the facts are read by scripts/honesty.sh
HONESTY_LANG=rust
HONESTY_BUG_FILE=src/lib.rs
HONESTY_BUG_FROM='prefix = rest_prefix;'
HONESTY_BUG_TO='prefix = prefix;'
HONESTY_BUG_TEST=render_tree_with_multiline_leaf
HONESTY_TEST_FILE=src/tests.rs
# Where its tests live (git pathspecs, for the honest commits that touch tests).
HONESTY_TEST_PATHS='src/tests.rs tests'
