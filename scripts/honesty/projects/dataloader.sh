# dataloader (Node, jest via `npm test` = eslint, flow, jest): maxBatchSize ignored. Its install
# is minutes long: not in the default set (HONESTY_ALL=1 adds it).
HONESTY_LANG=node
HONESTY_BUG_FILE=src/index.js
HONESTY_BUG_FROM='existingBatch.keys.length < loader._maxBatchSize'
HONESTY_BUG_TO='existingBatch.keys.length <= loader._maxBatchSize'
HONESTY_BUG_TEST='maxBatchSize'
HONESTY_TEST_FILE=src/__tests__/dataloader.test.js
