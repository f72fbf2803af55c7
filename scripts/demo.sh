#!/usr/bin/env bash
# cxray's main job, end to end on this machine: set up, build, then run it.
# Until the emulated adapter lands this is a tour of the PRM database:
# find a register, read its layout, build bytes, decode them, diff revisions.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PATH:/usr/local/go/bin"
mkdir -p bin
go build -o bin/cxray ./cmd/cxray
cx=bin/cxray

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }
step $cx prm info
step $cx prm search '^oper_status$'
step $cx prm show PMAOS --brief
bytes=$($cx prm encode PAOS local_port=1 admin_status=up ase=1 -o json | sed -n 's/.*"hex": "\(.*\)".*/\1/p')
step $cx prm encode PAOS local_port=1 admin_status=up ase=1
step $cx prm decode PAOS "$bytes"
hist=""
for d in ../shared/prm-history /work/shared/prm-history; do [ -f "$d/hca-ext-rev0.64.adb" ] && hist=$d && break; done
if [ -n "$hist" ]; then
	step $cx prm diff "$hist/hca-ext-rev0.57.adb" "$hist/hca-ext-rev0.64.adb" config_item || true
fi
