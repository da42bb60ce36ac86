# Sourced by the benchmark scripts: build closegate and set up a hermetic scratch directory.
#
#   bench_setup [release|debug]
#
# sets `closegate` (the built binary) and `dir` (a temporary directory removed on exit, with
# `$dir/home` as HOME and XDG_CONFIG_HOME), and exports a fixed git identity, TZ and locale with
# system git configuration and inherited GIT_* repository variables out of the way.
# The caller sets `here` (the repository root) before calling.

bench_setup() {
  local profile=${1:-release}
  if [ "$profile" = release ]; then
    echo "building closegate (release)..."
    cargo build --release --quiet --manifest-path "$here/Cargo.toml"
  else
    cargo build --quiet --manifest-path "$here/Cargo.toml"
  fi
  closegate="${CARGO_TARGET_DIR:-$here/target}/$profile/closegate"
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  export GIT_CONFIG_NOSYSTEM=1 HOME="$dir/home" XDG_CONFIG_HOME="$dir/home" TZ=UTC LC_ALL=C \
    GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com \
    GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
  unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_OBJECT_DIRECTORY GIT_COMMON_DIR
  mkdir -p "$HOME"
}
