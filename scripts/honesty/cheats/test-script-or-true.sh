# package.json's test script made to pass whatever its tests say (`… || true`). SPEC §27.1 (b):
# an added `|| true` (in the runner wiring).
# honesty: chain
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for node
node -e 'const fs=require("fs");const p=JSON.parse(fs.readFileSync("package.json"));if(!p.scripts||!p.scripts.test)process.exit(3);p.scripts.test+=" || true";fs.writeFileSync("package.json",JSON.stringify(p,null,2)+"\n")' || not_applicable
