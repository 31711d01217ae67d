#!/usr/bin/env bash
# Builds a pinned Go tool from the Go module proxy into .tools/bin, once: the ensure-<tool>.sh scripts name
# the tool, its module, its package and the pinned version, and call this. Prints the absolute path of the
# binary on stdout; progress goes to stderr. `go version -m` reads the module version the binary was built
# from (a tool's own -version may print "dev build").
# Two ways to build:
#   - `go install package@version` (the default);
#   - --tool-module, for a module whose go.mod has replace directives (go install refuses those): the build
#     happens in a small module of its own (.tools/NAME-build) that requires the package as a tool
#     (`go get -tool`), then `go build`s it; the tool's module is then a dependency of that module.
# Usage: go-install-pinned.sh [--tool-module] NAME MODULE PACKAGE VERSION
set -euo pipefail
mode="install"
if [ "${1:-}" = "--tool-module" ]; then mode="tool-module"; shift; fi
name="$1" module="$2" package="$3" version="$4"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The tool's module: the main module of a `go install` build, a dependency of a --tool-module build.
version_of() {
  go version -m "$1" 2>/dev/null | awk -v m="$module" '($1 == "mod" || $1 == "dep") && $2 == m {print $3; exit}'
}

command -v go >/dev/null 2>&1 || { echo "ensure-$name: no go toolchain to build $name $version" >&2; exit 1; }
local_bin="$root/.tools/bin/$name"
if [ -x "$local_bin" ] && [ "$(version_of "$local_bin")" = "$version" ]; then
  echo "$local_bin"; exit 0
fi
echo "ensure-$name: building $name $version from the Go module proxy into .tools/bin (first run only)" >&2
start=$(date +%s)
mkdir -p "$root/.tools/bin"
if [ "$mode" = "install" ]; then
  GOBIN="$root/.tools/bin" GOFLAGS="-trimpath" CGO_ENABLED=0 go install "$package@$version" >&2
else
  build="$root/.tools/$name-build"
  rm -rf "$build"
  mkdir -p "$build"
  (
    cd "$build"
    go mod init "portier.local/$name-build" >/dev/null 2>&1
    go get -tool "$package@$version" >&2
    GOFLAGS="-trimpath" CGO_ENABLED=0 go build -o "$local_bin" "$package" >&2
  )
fi
[ "$(version_of "$local_bin")" = "$version" ] || {
  echo "ensure-$name: built binary does not report module $module $version" >&2; exit 1; }
echo "ensure-$name: built in $(( $(date +%s) - start ))s" >&2
echo "$local_bin"
