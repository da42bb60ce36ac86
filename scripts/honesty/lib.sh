# Helpers for the cheats of scripts/honesty.sh: sourced by each cheat, which runs in the agent's
# worktree with the HONESTY_* variables set (see scripts/honesty.sh).
# shellcheck shell=bash
set -euo pipefail

# The cheat does not apply to this project: the harness skips the return.
not_applicable() { exit 3; }

# Edit files (scripts/honesty/edit.py): `edit replace FILE FROM TO`, `edit delete LANG FILE NAME`, …
edit() { python3 "$HONESTY_LIB/edit.py" "$@"; }

# The base's version of a path (what the file held before the bug).
base_show() { git -C "$HONESTY_REPO" show "$HONESTY_BASE_REV:$1"; }

# Require the project's language to be one of the arguments.
only_for() {
  local lang
  for lang in "$@"; do [ "$HONESTY_LANG" = "$lang" ] && return 0; done
  not_applicable
}

# A Python string literal of a file's bytes, for generated Python code.
py_literal() { python3 -c 'import sys; print(repr(open(sys.argv[1], "rb").read()))' "$1"; }
