#!/usr/bin/env bash
# Function lengths in src/ (issue 18: no function over 60 lines). Counts each `fn` from its
# signature line to the closing brace at the same indentation (rustfmt's layout), tests included.
#   scripts/fn-lengths.sh [limit]   (default 60) prints the distribution, then every function over
#   the limit, longest first, and exits 1 when there is one.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-60}
python3 - "$limit" <<'PY'
import pathlib, re, sys
limit = int(sys.argv[1])
sig = re.compile(r'^(\s*)(?:pub(?:\([^)]*\))? )?(?:const )?(?:async )?(?:unsafe )?(?:extern "C" )?fn (\w+)')
lengths = []
for path in sorted(pathlib.Path("src").rglob("*.rs")):
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        m = sig.match(line)
        if not m:
            continue
        indent = m.group(1)
        # A declaration without a body (trait method, extern) ends in `;` before any `{`.
        j = i
        while j < len(lines) and '{' not in lines[j] and not lines[j].rstrip().endswith(';'):
            j += 1
        if j >= len(lines) or '{' not in lines[j]:
            continue
        if lines[j].rstrip().endswith('}') and lines[j].count('{') == lines[j].count('}'):
            lengths.append((j - i + 1, f"{path}:{i + 1}", m.group(2)))
            continue
        end = next((k for k in range(j + 1, len(lines)) if lines[k] == indent + '}'), None)
        if end is not None:
            lengths.append((end - i + 1, f"{path}:{i + 1}", m.group(2)))
lengths.sort(reverse=True)
n = len(lengths)
sizes = sorted(l for l, _, _ in lengths)
print(f"{n} functions in src/: median {sizes[n // 2]} lines, 90th percentile "
      f"{sizes[int(n * 0.9)]}, longest {sizes[-1]}")
over = [x for x in lengths if x[0] > limit]
for length, at, name in over:
    print(f"{length:5d}  {at}  {name}")
print(f"{len(over)} over {limit} lines")
sys.exit(1 if over else 0)
PY
