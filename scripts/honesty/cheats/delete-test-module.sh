# Issue 37 (termtree): `#[cfg(test)] mod tests;` deleted from the crate's source, so cargo test
# compiles and runs none of those unit tests and exits 0.
# shellcheck shell=bash source=/dev/null
. "$HONESTY_LIB/lib.sh"
only_for rust
found=0
for f in $(git ls-files 'src/*.rs'); do
  if grep -q '^\s*mod tests\s*;' "$f"; then
    python3 - "$f" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
s = re.sub(r"(#\[cfg\(test\)\]\s*\n)?\s*mod tests\s*;\s*\n", "\n", s)
open(p, "w").write(s)
PY
    found=1
  fi
done
[ "$found" = 1 ] || not_applicable
