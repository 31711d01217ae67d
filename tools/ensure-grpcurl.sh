#!/usr/bin/env bash
# Finds the pinned grpcurl (the gRPC client the e2e tests and `make bench` call Portier's gRPC service with),
# or builds it from the Go module proxy into .tools/bin. Prints the absolute path of the grpcurl binary on
# stdout; progress goes to stderr. The pinned version is named here and nowhere else.
set -euo pipefail
GRPCURL_VERSION="v1.9.4"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# `go version -m` reads the module version the binary was built from (grpcurl -version may print "dev build").
version_of() { go version -m "$1" 2>/dev/null | awk '$1 == "mod" && $2 == "github.com/fullstorydev/grpcurl" {print $3; exit}'; }

if [ "${1:-}" = "--version" ]; then echo "$GRPCURL_VERSION"; exit 0; fi

command -v go >/dev/null 2>&1 || { echo "ensure-grpcurl: no go toolchain to build grpcurl $GRPCURL_VERSION" >&2; exit 1; }
local_bin="$root/.tools/bin/grpcurl"
if [ -x "$local_bin" ] && [ "$(version_of "$local_bin")" = "$GRPCURL_VERSION" ]; then
  echo "$local_bin"; exit 0
fi
echo "ensure-grpcurl: building grpcurl $GRPCURL_VERSION from the Go module proxy into .tools/bin (first run only)" >&2
start=$(date +%s)
mkdir -p "$root/.tools/bin"
GOBIN="$root/.tools/bin" GOFLAGS="-trimpath" CGO_ENABLED=0 \
  go install "github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION" >&2
[ "$(version_of "$local_bin")" = "$GRPCURL_VERSION" ] || { echo "ensure-grpcurl: built binary does not report version $GRPCURL_VERSION" >&2; exit 1; }
echo "ensure-grpcurl: built in $(( $(date +%s) - start ))s" >&2
echo "$local_bin"
