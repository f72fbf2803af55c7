#!/usr/bin/env bash
# Installs what cxray's build, demo and tests need on a fresh Debian machine:
# NVIDIA's open tools and databases (mstflint), the kernel's mlx5_ifc.h
# (linux-headers-*-common, through linux-headers-amd64), FUSE for the
# emulated sysfs, Prometheus (server and promtool) for the exporter's
# tests, and the Go modules. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
[ -f /usr/share/mstflint/prm_dbs/hca/ext/register_access_table.adb ] || need+=(mstflint)
ls /usr/src/linux-headers-6.1.*-common/include/linux/mlx5/mlx5_ifc.h >/dev/null 2>&1 || need+=(linux-headers-amd64)
# The command database (prm/cmdb/ifc.facts) is generated from the newest
# headers Debian serves (6.12, which knows ALLOW_OTHER_VHCA_ACCESS and the
# other newer commands); 6.1 above stays the cross-check. The exact
# package the facts came from first, else the newest 6.12 one.
newhdr=linux-headers-6.12.118+deb12-common
ls /usr/src/linux-headers-6.12.*-common/include/linux/mlx5/mlx5_ifc.h >/dev/null 2>&1 || need+=("$newhdr")
command -v fusermount3 >/dev/null 2>&1 || need+=(fuse3)
# prometheus and promtool: the exporter's end-to-end test and metric checks.
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
# buildah, podman and crun: the exporter's container image is built (no
# Docker daemon) and run under a real OCI runtime (tools/deploytest).
command -v buildah >/dev/null 2>&1 || need+=(buildah)
command -v podman >/dev/null 2>&1 || need+=(podman)
command -v crun >/dev/null 2>&1 || need+=(crun)
# catatonit: the pause process of the pod `podman kube play` runs
# (tools/deploytest's TestKubePlayPod); a podman recommendation, named here.
command -v catatonit >/dev/null 2>&1 || need+=(catatonit)
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "setup: need ${need[*]}; run as root or: sudo apt-get install -y ${need[*]}" >&2
		exit 1
	fi
	echo "setup: installing ${need[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# Install without starting services: the prometheus package would start
	# a server (and node exporter) listening on every interface; the tests
	# start their own, on loopback only.
	policy=/usr/sbin/policy-rc.d
	ours=false
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && ours=true
	fi
	if [[ " ${need[*]} " == *" $newhdr "* ]] && ! apt-cache show "$newhdr" >/dev/null 2>&1; then
		# That point release left the archive: take the newest 6.12 headers.
		alt=$(apt-cache search --names-only '^linux-headers-6\.12\.[0-9]+\+deb[0-9]+-common$' | awk '{print $1}' | sort -V | tail -1)
		need=("${need[@]/$newhdr/$alt}")
	fi
	apt-get install -y -qq "${need[@]}" >/dev/null || { $ours && rm -f "$policy"; exit 1; }
	$ours && rm -f "$policy"
	if command -v systemctl >/dev/null 2>&1; then
		systemctl disable --now prometheus prometheus-node-exporter >/dev/null 2>&1 || true
	fi
fi

# wine64: the Windows build's smoke test (tools/winesmoke) runs
# cxray.exe under it; Debian's package puts the loader in /usr/lib/wine.
if ! command -v wine64 >/dev/null 2>&1 && [ ! -x /usr/lib/wine/wine64 ]; then
	if [ "$(id -u)" -eq 0 ]; then
		echo "setup: installing wine64" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y -qq --no-install-recommends wine64 >/dev/null 2>&1 ||
			{ apt-get update -qq && apt-get install -y -qq --no-install-recommends wine64 >/dev/null; }
	else
		echo "setup: no wine64 (the Windows smoke test will skip); sudo apt-get install -y --no-install-recommends wine64" >&2
	fi
fi

export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null || { echo "setup: Go is missing (expected at /usr/local/go)" >&2; exit 1; }
go mod download
# The deployment checks are a module of their own (Kubernetes' API types
# stay out of cxray's go.mod).
(cd tools/deploytest && go mod download)
# deadcode (scripts/deadcode.sh) at a pinned version, into $(go env GOPATH)/bin.
deadcode_version=v0.52.0
if ! go version -m "$(go env GOPATH)/bin/deadcode" 2>/dev/null | grep -q "golang.org/x/tools[[:space:]]*$deadcode_version"; then
	go install "golang.org/x/tools/cmd/deadcode@$deadcode_version"
fi
