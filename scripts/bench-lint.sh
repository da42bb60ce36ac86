#!/usr/bin/env bash
# Speed of `closegate lint` on hostile input (issue: "a 10 MB document stays well under a second").
# Prints each figure next to a reference measured in the same run: `wc -l` reading the same bytes
# (the floor: one pass over the file) and `closegate --version` (the floor: process start).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release --quiet --manifest-path "$here/Cargo.toml"
closegate="${CARGO_TARGET_DIR:-$here/target}/release/closegate"
work=$(mktemp -d "${TMPDIR:-/tmp}/closegate-bench-lint.XXXXXX")
trap 'rm -rf "$work"' EXIT

python3 - "$work" <<'PY'
import sys, os
w = sys.argv[1]
head = "# STATUS — bench\n\n- state: close-ok\n- abstract: a large document\n"
def write(name, body):
    with open(os.path.join(w, name), "w") as f:
        f.write(head + body + "\nCLOSE-OK · bench · commit abcdef0 · branch agent/x · worktree /tmp/x\n")
# 10 MB of artifacts, each a valid path
write("artifacts-10mb.md", "- artifacts:\n" + "".join(f"  - src/module_{i:07d}/file.rs\n" for i in range(330_000)))
# 10 MB of unknown keys (every line a finding)
write("keys-10mb.md", "".join(f"- key{i:07d}: value\n" for i in range(520_000)))
# one 1 MB line
write("line-1mb.md", "- note: " + "x" * 1_000_000 + "\n")
# 10 MB of bytes that are not a document at all
with open(os.path.join(w, "noise-10mb.md"), "wb") as f:
    f.write(b"# STATUS \xe2\x80\x94 bench\n" + bytes((i * 7919) % 251 + 1 for i in range(10_000_000)).replace(b"\xff", b"a"))
PY

# median wall time in ms of a command, over N runs
median_ms() {
  local n=$1; shift
  python3 - "$n" "$@" <<'PY'
import subprocess, sys, time, statistics
n = int(sys.argv[1]); cmd = sys.argv[2:]
times = []
for _ in range(n):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times.append((time.perf_counter() - t) * 1000)
print(f"{statistics.median(times):.1f}")
PY
}

start=$(median_ms 20 "$closegate" --version)
printf 'reference: closegate --version %s ms\n' "$start"
for doc in artifacts-10mb keys-10mb line-1mb noise-10mb; do
  file="$work/$doc.md"
  size=$(du -k "$file" | cut -f1)
  lint=$(median_ms 5 "$closegate" lint "$file" --format json)
  wc=$(median_ms 5 wc -l "$file")
  ratio=$(python3 -c "print(f'{$lint / max($wc, 0.1):.1f}')")
  printf '%-16s %6s KiB: lint --format json %7s ms vs wc -l %6s ms = %sx   (target: well under 1000 ms)\n' \
    "$doc" "$size" "$lint" "$wc" "$ratio"
done
# every format on the worst case (one finding per line)
for format in human github sarif; do
  lint=$(median_ms 3 "$closegate" lint "$work/keys-10mb.md" --format "$format")
  printf '%-16s        lint --format %-6s %7s ms   (target: well under 1000 ms)\n' keys-10mb "$format" "$lint"
done

# A configuration with 50,000 globs (SPEC §11: checks in well under a second), in the two shapes a
# generator writes: one surface of 50,000 globs, and 50,000 surfaces of one glob each. Reference:
# the same check with the built-in defaults, in the same run.
glob_repo() { # glob_repo <dir> <python that prints .closegate.toml>
  local dir=$1
  git init -q -b main "$dir"
  python3 -c "$2" > "$dir/.closegate.toml"
  git -C "$dir" add .closegate.toml
  git -C "$dir" -c user.name=b -c user.email=b@b commit -qm config
  git -C "$dir" checkout -qb agent/x
  for i in 1 2 3 4 5; do echo "$i" > "$dir/src_m0000$i.rs"; done
  git -C "$dir" add -A
  git -C "$dir" -c user.name=b -c user.email=b@b commit -qm change
  printf '# STATUS \xe2\x80\x94 x\n\n- state: in-progress\n' > "$dir/_EXEC_STATUS.md"
}
glob_repo "$work/defaults" "print('')"
glob_repo "$work/one-surface" "print('[protected]'); print('big = [' + ','.join('\"src/m%05d/**\"' % i for i in range(50000)) + ']')"
glob_repo "$work/many-surfaces" "print('[protected]'); [print('s%05d = [\"src/m%05d\"]' % (i, i)) for i in range(50000)]"
ref=$(cd "$work/defaults" && median_ms 5 "$closegate" check --no-checks --no-record)
printf 'reference: check with the default configuration %s ms\n' "$ref"
for shape in one-surface many-surfaces; do
  t=$(cd "$work/$shape" && median_ms 5 "$closegate" check --no-checks --no-record)
  ratio=$(python3 -c "print(f'{$t / max($ref, 0.1):.1f}')")
  printf '50,000 globs, %-13s check %7s ms vs defaults %6s ms = %sx   (target: well under 1000 ms)\n' \
    "$shape:" "$t" "$ref" "$ratio"
done
