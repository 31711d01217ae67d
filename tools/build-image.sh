#!/usr/bin/env bash
# Builds Portier's OCI image from the top-level Containerfile with buildah, on a machine that cannot reach a
# container registry: each base image the Containerfile's FROM lines name is made from Debian packages with
# mmdebstrap when it is missing, and tagged with that exact name, so the same Containerfile builds unchanged
# with docker or podman elsewhere. The base root file systems are kept as tarballs in .tools/images/ (git-ignored)
# and reused by later runs; buildah's layer cache and the Containerfile's cache mounts keep rebuilds short.
# Progress goes to stderr; the last line on stdout is the image name.
# Usage: build-image.sh [--bases-only]      IMAGE=name:tag overrides the image name.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

DEBIAN_SUITE="trixie"
DEBIAN_BASE="docker.io/library/debian:trixie-slim"
GO_MINOR="1.26"
GO_BASE="docker.io/library/golang:${GO_MINOR}-trixie"
version="$(node -p 'require("./package.json").version')"
image="${IMAGE:-localhost/portier:$version}"

say() { echo "build-image: $*" >&2; }
fail() { say "$*"; exit 1; }

for tool in buildah podman mmdebstrap; do
  command -v "$tool" >/dev/null 2>&1 ||
    fail "$tool is not installed; install it with: apt-get install -y buildah podman mmdebstrap fuse-overlayfs uidmap"
done

# Every FROM of the Containerfile that is not an earlier stage must be a base this script knows how to make.
stages=" "
while read -r from name as stage; do
  [ "$from" = "FROM" ] || continue
  case "$stages" in *" $name "*) ;; *)
    [ "$name" = "$DEBIAN_BASE" ] || [ "$name" = "$GO_BASE" ] ||
      fail "Containerfile: FROM $name is not a base this script makes ($DEBIAN_BASE, $GO_BASE);" \
        "update tools/build-image.sh"
  esac
  if [ "${as,,}" = "as" ]; then stages+="$stage "; fi
done < <(grep -E '^FROM ' Containerfile)

# One build at a time on this machine (make image and make test may overlap); the bases are shared.
mkdir -p .tools/images
exec 9>.tools/images/.lock
flock 9

have_image() { buildah inspect --type image "$1" >/dev/null 2>&1; }

# Debian's minimal root file system from the Debian package registry (the machine's own apt sources), without
# manual pages, documentation (copyright files kept) and translations, like the official slim image; the same
# dpkg settings stay in the image for later apt-get installs. Cached in .tools/images (mmdebstrap takes minutes).
debian_tar=".tools/images/debian-$DEBIAN_SUITE-slim.tar"
if [ ! -f "$debian_tar" ]; then
  say "making $(basename "$debian_tar") with mmdebstrap (Debian $DEBIAN_SUITE, first run only)"
  start=$(date +%s)
  mmdebstrap --quiet --variant=minbase \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*' \
    "$DEBIAN_SUITE" "${debian_tar%.tar}.partial.tar" >&2
  mv "${debian_tar%.tar}.partial.tar" "$debian_tar"
  say "made $(basename "$debian_tar") in $(( $(date +%s) - start ))s"
fi

if ! have_image "$DEBIAN_BASE"; then
  podman import --quiet --change 'CMD ["bash"]' "$debian_tar" "$DEBIAN_BASE" >/dev/null
  say "imported $DEBIAN_BASE"
fi

if ! have_image "$GO_BASE"; then
  # The official golang image is Debian with Go's release tree in /usr/local/go: the same, from the host's Go.
  command -v go >/dev/null 2>&1 || fail "no go toolchain to make $GO_BASE from; install Go $GO_MINOR"
  goroot="$(go env GOROOT)" gover="$(go env GOVERSION)"
  case "$gover" in
    "go$GO_MINOR" | "go$GO_MINOR".*) ;;
    *) fail "$GO_BASE needs Go $GO_MINOR, the host has $gover" ;;
  esac
  ctr="$(buildah from --pull=never "$DEBIAN_BASE")"
  buildah copy --quiet "$ctr" "$goroot" /usr/local/go >/dev/null
  buildah run --isolation chroot --env DEBIAN_FRONTEND=noninteractive "$ctr" -- sh -c 'apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends ca-certificates >/dev/null && rm -rf /var/lib/apt/lists/*' >&2
  buildah config --env PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env GOPATH=/go --env GOTOOLCHAIN=local --workingdir /go "$ctr"
  buildah commit --quiet --rm "$ctr" "$GO_BASE" >/dev/null
  say "made $GO_BASE from $DEBIAN_BASE and the host's $gover"
fi

[ "${1:-}" = "--bases-only" ] && exit 0

opa_version="$(bash tools/ensure-opa.sh --version)"
node_version="$(bash tools/ensure-node.sh --version)"
revision="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
[ -z "$(git status --porcelain 2>/dev/null)" ] || revision="$revision-dirty"
say "building $image from Containerfile (revision $revision)"
start=$(date +%s)
# A host behind a TLS-inspecting proxy (SSL_CERT_FILE names its CA bundle) lends that bundle to the build stages.
ca_args=()
if [ -n "${SSL_CERT_FILE:-}" ] && [ -f "$SSL_CERT_FILE" ]; then
  ca_args=(--volume "$SSL_CERT_FILE:/run/build-ca.crt:ro" --build-arg SSL_CERT_FILE=/run/build-ca.crt
    --build-arg NODE_EXTRA_CA_CERTS=/run/build-ca.crt)
fi
buildah bud --isolation chroot --pull=never --layers --quiet "${ca_args[@]}" \
  --build-arg "OPA_VERSION=$opa_version" --build-arg "NODE_VERSION=$node_version" \
  --build-arg "VERSION=$version" --build-arg "REVISION=$revision" \
  -t "$image" -f Containerfile . >&2
size=$(podman image inspect --format '{{.Size}}' "$image" 2>/dev/null || echo 0)
say "built $image in $(( $(date +%s) - start ))s ($(( size / 1000000 )) MB uncompressed)"
echo "$image"
