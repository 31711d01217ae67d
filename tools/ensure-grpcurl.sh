#!/usr/bin/env bash
# Finds the pinned grpcurl (the gRPC client the e2e tests and `make bench` call Portier's gRPC service with),
# or builds it from the Go module proxy into .tools/bin (tools/go-install-pinned.sh). Prints the absolute path
# of the grpcurl binary on stdout. The pinned version is named here and nowhere else.
set -euo pipefail
GRPCURL_VERSION="v1.9.4"
if [ "${1:-}" = "--version" ]; then echo "$GRPCURL_VERSION"; exit 0; fi
exec bash "$(dirname "${BASH_SOURCE[0]}")/go-install-pinned.sh" grpcurl github.com/fullstorydev/grpcurl \
  github.com/fullstorydev/grpcurl/cmd/grpcurl "$GRPCURL_VERSION"
