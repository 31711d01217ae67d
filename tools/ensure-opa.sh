#!/usr/bin/env bash
# Finds the pinned OPA release, or builds it from the Go module proxy into .tools/bin.
# Prints the absolute path of the opa binary on stdout; progress goes to stderr.
# The pinned version is named here and nowhere else.
set -euo pipefail
OPA_VERSION="v1.22.2"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
want="${OPA_VERSION#v}"

version_of() { "$1" version 2>/dev/null | awk '/^Version:/ {print $2; exit}'; }

if [ "${1:-}" = "--version" ]; then echo "$OPA_VERSION"; exit 0; fi

if command -v opa >/dev/null 2>&1 && [ "$(version_of "$(command -v opa)")" = "$want" ]; then
  command -v opa; exit 0
fi
local_bin="$root/.tools/bin/opa"
if [ -x "$local_bin" ] && [ "$(version_of "$local_bin")" = "$want" ]; then
  echo "$local_bin"; exit 0
fi
command -v go >/dev/null 2>&1 || { echo "ensure-opa: no opa $want on PATH and no go toolchain to build it" >&2; exit 1; }
echo "ensure-opa: building opa $OPA_VERSION from the Go module proxy into .tools/bin (first run only)" >&2
start=$(date +%s)
mkdir -p "$root/.tools/bin"
GOBIN="$root/.tools/bin" GOFLAGS="-trimpath" CGO_ENABLED=0 \
  go install "github.com/open-policy-agent/opa@$OPA_VERSION" >&2
[ "$(version_of "$local_bin")" = "$want" ] || { echo "ensure-opa: built binary does not report version $want" >&2; exit 1; }
echo "ensure-opa: built in $(( $(date +%s) - start ))s" >&2
echo "$local_bin"
