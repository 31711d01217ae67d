#!/usr/bin/env bash
# Finds the pinned kubeconform (validates the rendered Kubernetes manifests against the API's JSON schemas, which
# tools/k8s-json-schemas.ts writes from the Kubernetes module's OpenAPI document), or builds it from the Go module
# proxy into .tools/bin (tools/go-install-pinned.sh). Prints the absolute path of the binary on stdout.
# The pinned version is named here and nowhere else.
set -euo pipefail
KUBECONFORM_VERSION="v0.7.0"
if [ "${1:-}" = "--version" ]; then echo "$KUBECONFORM_VERSION"; exit 0; fi
exec bash "$(dirname "${BASH_SOURCE[0]}")/go-install-pinned.sh" kubeconform github.com/yannh/kubeconform \
  github.com/yannh/kubeconform/cmd/kubeconform "$KUBECONFORM_VERSION"
