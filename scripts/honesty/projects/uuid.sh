# uuid (Go, tests beside the code): IsInvalidLengthError checks the wrong sentinel.
HONESTY_LANG=go
HONESTY_BUG_FILE=uuid.go
HONESTY_BUG_FROM='return errors.Is(err, ErrInvalidLength)'
HONESTY_BUG_TO='return errors.Is(err, ErrInvalidUUIDFormat)'
HONESTY_BUG_TEST=TestIsWrongLength
HONESTY_TEST_FILE=uuid_test.go
