#!/usr/bin/env bash
# Finds the pinned vegeta (the open-loop, constant-rate HTTP load generator of test/bench/latency.ts: it sends on
# schedule whether or not the answers have come, so a slow answer does not hide the requests behind it), or
# builds it from the Go module proxy into .tools/bin (tools/go-install-pinned.sh). Prints the absolute path of
# the vegeta binary on stdout. The pinned version is named here and nowhere else.
set -euo pipefail
VEGETA_VERSION="v12.13.0"
if [ "${1:-}" = "--version" ]; then echo "$VEGETA_VERSION"; exit 0; fi
exec bash "$(dirname "${BASH_SOURCE[0]}")/go-install-pinned.sh" vegeta github.com/tsenart/vegeta/v12 github.com/tsenart/vegeta/v12 "$VEGETA_VERSION"
