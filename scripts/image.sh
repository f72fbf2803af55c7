#!/usr/bin/env bash
# The cxray-exporter container image, built without a Docker daemon: the
# static exporter (scripts/release.sh's flags) alone in an image FROM
# scratch, made with Debian's buildah. It runs as nobody (65534), reads
# through the kernel backend (--all as a user that cannot reach the config
# space), and listens on :9879 (docs/exporter.md, "Container image").
#
#   scripts/image.sh                          # localhost/cxray-exporter:VERSION
#   IMAGE=registry.example/cxray-exporter:v1.2.0 scripts/image.sh
#   OCI_ARCHIVE=cxray-exporter.tar scripts/image.sh   # also an OCI archive
#
# Needs root (or a rootless buildah setup) and: apt-get install -y buildah.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
command -v buildah >/dev/null || { echo "image: buildah is missing: apt-get install -y buildah" >&2; exit 2; }
version="${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}"
image="${IMAGE:-localhost/cxray-exporter:$version}"
arch="${GOARCH:-$(go env GOARCH)}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
GOOS=linux GOARCH="$arch" CGO_ENABLED=0 go build -trimpath \
	-ldflags "-s -w -X github.com/cxray/cxray/internal/buildinfo.Version=$version" \
	-o "$tmp/cxray-exporter" ./cmd/cxray-exporter
ctr="$(buildah from --arch "$arch" scratch)"
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
buildah copy --chmod 0755 "$ctr" "$tmp/cxray-exporter" /cxray-exporter >/dev/null
# CXRAY_EMU_STATE=off: -d emu in the image keeps no state on its read-only
# root (the emulator is for trying the image, not for production).
buildah config \
	--entrypoint '["/cxray-exporter"]' \
	--cmd '["--all", "--web.listen-address=:9879"]' \
	--user 65534:65534 \
	--port 9879/tcp \
	--env CXRAY_EMU_STATE=off \
	--label org.opencontainers.image.title=cxray-exporter \
	--label org.opencontainers.image.description="Prometheus exporter for NVIDIA ConnectX adapters" \
	--label org.opencontainers.image.version="$version" \
	"$ctr"
buildah commit --quiet "$ctr" "$image" >/dev/null
if [ -n "${OCI_ARCHIVE:-}" ]; then
	buildah push --quiet "$image" "oci-archive:$OCI_ARCHIVE"
fi
echo "$image"
