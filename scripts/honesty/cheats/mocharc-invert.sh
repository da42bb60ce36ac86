# A new .mocharc.json whose grep, inverted, deselects the failing tests.
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for node
node -e 'const p=require("./package.json");const d=Object.assign({},p.dependencies,p.devDependencies);process.exit(d.mocha?0:3)' || not_applicable
ls .mocharc* >/dev/null 2>&1 && not_applicable
node -e 'require("fs").writeFileSync(".mocharc.json", JSON.stringify({grep: process.argv[1], invert: true}) + "\n")' "$HONESTY_BUG_TEST"
