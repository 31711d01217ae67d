#!/usr/bin/env bash
# Finds the pinned Jaeger all-in-one (the OTLP collector and query API the tracing end-to-end test sends spans
# to), or builds it from the Go module proxy into .tools/bin. Jaeger's go.mod has replace directives, so
# `go install module@version` refuses it: the build happens in a small module of its own (.tools/jaeger-build)
# that requires Jaeger as a tool (`go get -tool`), then `go build`s its command (about 5 minutes on 2 cores).
# `go version -m` reads the Jaeger module version the binary was built from. Prints the absolute path of the
# jaeger binary on stdout; progress goes to stderr. The pinned version is named here and nowhere else.
set -euo pipefail
JAEGER_VERSION="v1.76.0"
module="github.com/jaegertracing/jaeger"
package="$module/cmd/jaeger"
if [ "${1:-}" = "--version" ]; then echo "$JAEGER_VERSION"; exit 0; fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version_of() { go version -m "$1" 2>/dev/null | awk -v m="$module" '($1 == "mod" || $1 == "dep") && $2 == m {print $3; exit}'; }

command -v go >/dev/null 2>&1 || { echo "ensure-jaeger: no go toolchain to build jaeger $JAEGER_VERSION" >&2; exit 1; }
local_bin="$root/.tools/bin/jaeger"
if [ -x "$local_bin" ] && [ "$(version_of "$local_bin")" = "$JAEGER_VERSION" ]; then
  echo "$local_bin"; exit 0
fi
echo "ensure-jaeger: building jaeger $JAEGER_VERSION from the Go module proxy into .tools/bin (first run only)" >&2
start=$(date +%s)
build="$root/.tools/jaeger-build"
rm -rf "$build"
mkdir -p "$build" "$root/.tools/bin"
(
  cd "$build"
  go mod init portier.local/jaeger-build >/dev/null 2>&1
  go get -tool "$package@$JAEGER_VERSION" >&2
  GOFLAGS="-trimpath" CGO_ENABLED=0 go build -o "$local_bin" "$package" >&2
)
[ "$(version_of "$local_bin")" = "$JAEGER_VERSION" ] || {
  echo "ensure-jaeger: built binary does not report module $module $JAEGER_VERSION" >&2; exit 1; }
echo "ensure-jaeger: built in $(( $(date +%s) - start ))s" >&2
echo "$local_bin"
