#!/usr/bin/env bash
# Finds the pinned kustomize (renders deploy/kubernetes/ in the manifest tests), or builds it from the Go module
# proxy into .tools/bin (tools/go-install-pinned.sh). Prints the absolute path of the binary on stdout.
# The pinned version is named here and nowhere else.
set -euo pipefail
KUSTOMIZE_VERSION="v5.8.2"
if [ "${1:-}" = "--version" ]; then echo "$KUSTOMIZE_VERSION"; exit 0; fi
exec bash "$(dirname "${BASH_SOURCE[0]}")/go-install-pinned.sh" kustomize sigs.k8s.io/kustomize/kustomize/v5 \
  sigs.k8s.io/kustomize/kustomize/v5 "$KUSTOMIZE_VERSION"
