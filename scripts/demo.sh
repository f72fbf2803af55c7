#!/usr/bin/env bash
# cxray's main job, end to end on this machine: set up, build, then look at
# an emulated ConnectX-7 the way you would at a real one (the emulator speaks
# the same config-space protocol as the hardware), and tour the PRM database.
set -euo pipefail
cd "$(dirname "$0")/.."
# CXRAY_DEMO_BIN names a cxray already built (the tests use it): no set-up,
# no build.
if [ -n "${CXRAY_DEMO_BIN:-}" ]; then
	cx=$CXRAY_DEMO_BIN
else
	bash scripts/setup.sh
	export PATH="$PATH:/usr/local/go/bin"
	mkdir -p bin
	CGO_ENABLED=0 go build -o bin/cxray ./cmd/cxray
	cx=bin/cxray
fi

# The demo writes to the emulator (PAOS below) and keeps backups: it runs on
# a state of its own, removed at the end, so the persistent default
# emulator (emu/state: $XDG_STATE_HOME/cxray/emu) is the same afterwards
# and the demo starts from the scenario's power-on state every time.
demo_state=$(mktemp -d)
trap 'rm -rf "$demo_state"' EXIT
export XDG_STATE_HOME=$demo_state CXRAY_EMU_STATE=$demo_state/emu

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

# The main job: the first look at an adapter. A healthy one exits 0 ...
step $cx health -d emu
# ... and one with a frozen module, a hot ASIC and a pending NV change says
# what is wrong and what to do (exit 1).
step $cx health -d emu:examples/troubled.yaml --interval 10s || true
# A GPU server, every function at once: eight ConnectX-7 in InfiniBand mode
# (NDR) and a dual-port Ethernet front end; one IB link trained at 2x of its
# 4 lanes, one with symbol errors growing (exit 1).
step $cx health --all -d emu:examples/gpu-node.yaml || true

# The adapters: firmware, PSID, names, MAC and GUID read from the firmware.
step $cx status -d emu:examples/two-adapters.yaml
# Registers by name, decoded; index fields defaulted where obvious.
step $cx reg get MGIR -d emu --field fw_info
step $cx reg get PMAOS -d emu --index module=0
step $cx reg get MTMP -d emu --index sensor_index=0 -o json
# A guarded write: read-modify-write, shown, verified by reading back.
step $cx reg set PAOS admin_status=down_by_configuration ase=1 -d emu --yes
# A fault: another tool holds the gateway; cxray says so within its deadline.
step $cx reg get MGIR -d emu:examples/semaphore-held.yaml --timeout 3s || true

# The register database itself.
step $cx prm show PMAOS --brief
step $cx prm encode PAOS local_port=1 admin_status=up ase=1
hist=""
for d in ../shared/prm-history; do [ -f "$d/hca-ext-rev0.64.adb" ] && hist=$d && break; done
if [ -n "$hist" ]; then
	step $cx prm diff "$hist/hca-ext-rev0.57.adb" "$hist/hca-ext-rev0.64.adb" config_item || true
fi
