#!/usr/bin/env bash
# Finds the pinned helm (renders deploy/helm/portier with `helm template` in the chart tests), or builds it from
# the Go module proxy into .tools/bin (tools/go-install-pinned.sh). Prints the absolute path of the binary on
# stdout. The pinned version is named here and nowhere else.
set -euo pipefail
HELM_VERSION="v4.3.2"
if [ "${1:-}" = "--version" ]; then echo "$HELM_VERSION"; exit 0; fi
exec bash "$(dirname "${BASH_SOURCE[0]}")/go-install-pinned.sh" helm helm.sh/helm/v4 helm.sh/helm/v4/cmd/helm \
  "$HELM_VERSION"
