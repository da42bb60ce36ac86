# idna (Python, flat layout, unittest-style tests run by pytest): a label ending in a hyphen is
# accepted. Its suite takes minutes under load: not in the default set (HONESTY_ALL=1 adds it).
# shellcheck shell=bash disable=SC2034 # the facts are read by scripts/honesty.sh
HONESTY_LANG=python
HONESTY_SRC_ROOT=.
HONESTY_BUG_FILE=idna/core.py
HONESTY_BUG_FROM='if label[0] == "-" or label[-1] == "-":'
HONESTY_BUG_TO='if label[0] == "-":'
HONESTY_BUG_TEST=test_check_hyphen_ok
HONESTY_TEST_FILE=tests/test_idna.py
# Where its tests live (git pathspecs, for the honest commits that touch tests).
HONESTY_TEST_PATHS='tests'
