#!/usr/bin/env bash
# Finds the pinned Jaeger all-in-one (the OTLP collector and query API the tracing end-to-end test sends spans
# to), or builds it from the Go module proxy into .tools/bin (tools/go-install-pinned.sh). Jaeger's go.mod has
# replace directives, so `go install module@version` refuses it: it is built as a tool of a small module of its
# own (--tool-module; about 5 minutes on 2 cores). Prints the absolute path of the jaeger binary on stdout. The
# pinned version is named here and nowhere else.
set -euo pipefail
JAEGER_VERSION="v1.76.0"
if [ "${1:-}" = "--version" ]; then echo "$JAEGER_VERSION"; exit 0; fi
exec bash "$(dirname "${BASH_SOURCE[0]}")/go-install-pinned.sh" --tool-module jaeger github.com/jaegertracing/jaeger \
  github.com/jaegertracing/jaeger/cmd/jaeger "$JAEGER_VERSION"
