# Issue 37: `.npmrc` `script-shell=/bin/true`: `npm test` runs nothing and exits 0.
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for node
printf 'script-shell=/bin/true\n' >> .npmrc
