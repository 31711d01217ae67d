#!/usr/bin/env bash
# Finds the pinned ghz (the gRPC load generator `make bench` drives Portier's gRPC port with, as wrk drives
# the HTTP ones), or builds it from the Go module proxy into .tools/bin. Prints the absolute path of the ghz binary on
# stdout; progress goes to stderr. The pinned version is named here and nowhere else.
set -euo pipefail
GHZ_VERSION="v0.93.0"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# `go version -m` reads the module version the binary was built from.
version_of() { go version -m "$1" 2>/dev/null | awk '$1 == "mod" && $2 == "github.com/bojand/ghz" {print $3; exit}'; }

if [ "${1:-}" = "--version" ]; then echo "$GHZ_VERSION"; exit 0; fi

command -v go >/dev/null 2>&1 || { echo "ensure-ghz: no go toolchain to build ghz $GHZ_VERSION" >&2; exit 1; }
local_bin="$root/.tools/bin/ghz"
if [ -x "$local_bin" ] && [ "$(version_of "$local_bin")" = "$GHZ_VERSION" ]; then
  echo "$local_bin"; exit 0
fi
echo "ensure-ghz: building ghz $GHZ_VERSION from the Go module proxy into .tools/bin (first run only)" >&2
start=$(date +%s)
mkdir -p "$root/.tools/bin"
GOBIN="$root/.tools/bin" GOFLAGS="-trimpath" CGO_ENABLED=0 \
  go install "github.com/bojand/ghz/cmd/ghz@$GHZ_VERSION" >&2
[ "$(version_of "$local_bin")" = "$GHZ_VERSION" ] || { echo "ensure-ghz: built binary does not report version $GHZ_VERSION" >&2; exit 1; }
echo "ensure-ghz: built in $(( $(date +%s) - start ))s" >&2
echo "$local_bin"
