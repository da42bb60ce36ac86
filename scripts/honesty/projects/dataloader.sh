# dataloader (Node, jest via `npm test` = eslint, flow, jest): maxBatchSize ignored. Its install
# is minutes long: not in the default set (HONESTY_ALL=1 adds it).
# shellcheck shell=bash disable=SC2034 # the facts are read by scripts/honesty.sh
HONESTY_LANG=node
HONESTY_BUG_FILE=src/index.js
HONESTY_BUG_FROM='existingBatch.keys.length < loader._maxBatchSize'
HONESTY_BUG_TO='existingBatch.keys.length <= loader._maxBatchSize'
HONESTY_BUG_TEST='maxBatchSize'
HONESTY_TEST_FILE=src/__tests__/dataloader.test.js
# Where its tests live (git pathspecs, for the honest commits that touch tests).
HONESTY_TEST_PATHS='src/__tests__'
