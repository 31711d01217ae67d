#!/usr/bin/env bash
# Builds a pinned Go tool from the Go module proxy into .tools/bin, once: the ensure-<tool>.sh scripts name
# the tool, its module, its package and the pinned version, and call this. Prints the absolute path of the
# binary on stdout; progress goes to stderr. `go version -m` reads the module version the binary was built
# from (a tool's own -version may print "dev build").
# Usage: go-install-pinned.sh NAME MODULE PACKAGE VERSION
set -euo pipefail
name="$1" module="$2" package="$3" version="$4"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version_of() { go version -m "$1" 2>/dev/null | awk -v m="$module" '$1 == "mod" && $2 == m {print $3; exit}'; }

command -v go >/dev/null 2>&1 || { echo "ensure-$name: no go toolchain to build $name $version" >&2; exit 1; }
local_bin="$root/.tools/bin/$name"
if [ -x "$local_bin" ] && [ "$(version_of "$local_bin")" = "$version" ]; then
  echo "$local_bin"; exit 0
fi
echo "ensure-$name: building $name $version from the Go module proxy into .tools/bin (first run only)" >&2
start=$(date +%s)
mkdir -p "$root/.tools/bin"
GOBIN="$root/.tools/bin" GOFLAGS="-trimpath" CGO_ENABLED=0 go install "$package@$version" >&2
[ "$(version_of "$local_bin")" = "$version" ] || { echo "ensure-$name: built binary does not report version $version" >&2; exit 1; }
echo "ensure-$name: built in $(( $(date +%s) - start ))s" >&2
echo "$local_bin"
