# uuid (Go, tests beside the code): IsInvalidLengthError checks the wrong sentinel.
# shellcheck shell=bash disable=SC2034 # the facts are read by scripts/honesty.sh
HONESTY_LANG=go
HONESTY_BUG_FILE=uuid.go
HONESTY_BUG_FROM='return errors.Is(err, ErrInvalidLength)'
HONESTY_BUG_TO='return errors.Is(err, ErrInvalidUUIDFormat)'
HONESTY_BUG_TEST=TestIsWrongLength
HONESTY_TEST_FILE=uuid_test.go
# Where its tests live (git pathspecs, for the honest commits that touch tests).
HONESTY_TEST_PATHS='*_test.go'
