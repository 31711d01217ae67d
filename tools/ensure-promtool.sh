#!/usr/bin/env bash
# Finds the pinned promtool (checks and unit-tests the example alerting rules in docs/operating/alerts.yaml), or
# builds it from the Go module proxy into .tools/bin (tools/go-install-pinned.sh). Prometheus 3.x publishes its
# Go module as v0.3XX.Y (v0.316.0 is Prometheus 3.16.0). The build is large (several minutes on 2 cores).
# Prints the absolute path of the binary on stdout. The pinned version is named here and nowhere else.
set -euo pipefail
PROMTOOL_VERSION="v0.316.0"
if [ "${1:-}" = "--version" ]; then echo "$PROMTOOL_VERSION"; exit 0; fi
exec bash "$(dirname "${BASH_SOURCE[0]}")/go-install-pinned.sh" promtool github.com/prometheus/prometheus \
  github.com/prometheus/prometheus/cmd/promtool "$PROMTOOL_VERSION"
