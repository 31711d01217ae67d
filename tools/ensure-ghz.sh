#!/usr/bin/env bash
# Finds the pinned ghz (the gRPC load generator `make bench` drives Portier's gRPC port with, as wrk drives
# the HTTP ones), or builds it from the Go module proxy into .tools/bin (tools/go-install-pinned.sh). Prints the
# absolute path of the ghz binary on stdout. The pinned version is named here and nowhere else.
set -euo pipefail
GHZ_VERSION="v0.93.0"
if [ "${1:-}" = "--version" ]; then echo "$GHZ_VERSION"; exit 0; fi
exec bash "$(dirname "${BASH_SOURCE[0]}")/go-install-pinned.sh" ghz github.com/bojand/ghz github.com/bojand/ghz/cmd/ghz "$GHZ_VERSION"
