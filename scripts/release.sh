#!/usr/bin/env bash
# Release builds of cxray, cxray-exporter, cxray-plot and cxray-emu (what
# `cxray exporter`, `cxray plot` and `cxray emu run`/`serve` run, found
# beside cxray): static (CGO_ENABLED=0),
# -trimpath, stripped (-s -w), the version stamped into each
# (internal/buildinfo). One folder per target under dist/ (OUT), each with
# the binaries (cxray-emu on Linux only), and SHA256SUMS.
#
#   scripts/release.sh                         # every target, version from git
#   VERSION=v1.2.0 TARGETS=linux/amd64 scripts/release.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
version="${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}"
out="${OUT:-dist}"
targets="${TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64}"
ldflags="-s -w -X github.com/cxray/cxray/internal/buildinfo.Version=$version"
mkdir -p "$out"
for t in $targets; do
	os="${t%/*}" arch="${t#*/}" ext=""
	[ "$os" = windows ] && ext=.exe
	dir="$out/cxray-$version-$os-$arch"
	mkdir -p "$dir"
	for cmd in cxray cxray-exporter cxray-plot cxray-emu; do
		# emu run and emu serve need Linux (mount namespaces, FUSE).
		[ "$cmd" = cxray-emu ] && [ "$os" != linux ] && continue
		GOOS="$os" GOARCH="$arch" CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$dir/$cmd$ext" "./cmd/$cmd"
	done
	echo "release: $dir"
done
(cd "$out" && find . -type f ! -name SHA256SUMS | sort | xargs sha256sum > SHA256SUMS)
