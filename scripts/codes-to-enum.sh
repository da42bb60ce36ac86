#!/usr/bin/env bash
# Convert finding codes written as strings to the `Code` enum (src/catalog.rs), for merging a
# branch written against the `&'static str` codes:
#   scripts/codes-to-enum.sh catalog            catalog entries `code: "x-y",` → `code: XY = "x-y",`
#   scripts/codes-to-enum.sh FILE...            every "x-y" literal that is a catalog code →
#                                               `Code::XY` (run on src/ files, not tests/it: the
#                                               tests read codes from the binary's output)
# Variant names are mechanical: kebab-case → CamelCase (`attestation-missing` →
# `AttestationMissing`). Afterwards `cargo build` names what is left: a missing
# `use crate::catalog::Code;`, or a literal that was never a code (put it back).
set -euo pipefail
files=()
for f in "$@"; do [ "$f" = catalog ] || files+=("$(realpath "$f")"); done
cd "$(dirname "$0")/.."
catalog=src/catalog.rs
if [ "${1:-}" = catalog ]; then
    perl -i -pe 's/^(\s*)code: "([a-z0-9-]+)",$/$1 . "code: " . join("", map { ucfirst } split(m{-}, $2)) . " = \"$2\","/e' "$catalog"
    exit 0
fi
[ ${#files[@]} -gt 0 ] || { echo "usage: $0 catalog | FILE..." >&2; exit 2; }
codes=$(perl -ne 'print "$1 $2\n" if /^\s*code: (\w+) = "([a-z0-9-]+)",$/' "$catalog")
[ -n "$codes" ] || { echo "$catalog has no \`code: Variant = \"kebab\"\` entries" >&2; exit 2; }
CODES="$codes" perl -i -pe '
    BEGIN { %v = map { (split / /)[1] => (split / /)[0] } split /\n/, $ENV{CODES} }
    s/"([a-z0-9-]+)"/exists $v{$1} ? "Code::$v{$1}" : "\"$1\""/ge
' "${files[@]}"
