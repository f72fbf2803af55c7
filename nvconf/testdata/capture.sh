#!/bin/sh
# Captures mstconfig's (mstflint 4.21) query and backup outputs from the
# emulator, for querytext's tests. From the repository root:
#
#   go build -o /tmp/ ./cmd/cxray ./cmd/cxray-emu
#   /tmp/cxray emu run --scenario feature/hexdump/testdata/capture.yaml -- sh nvconf/testdata/capture.sh
#
# Needs root, /dev/fuse and mstflint.
set -e
out=nvconf/testdata
d=0000:03:00.0
mstconfig -d $d q >$out/mstconfig-q.txt
mstconfig -d $d -e q >$out/mstconfig-e-q.txt
mstconfig -d $d -f $out/mstconfig-backup.txt backup >/dev/null
mstconfig -d $d -y set LOG_TX_PSN_WINDOW=14 NUM_OF_VFS=6 LINK_TYPE_P2=IB >/dev/null
mstconfig -d $d -e q >$out/mstconfig-e-q-pending.txt
mstconfig -d $d q LOG_TX_PSN_WINDOW NUM_OF_VFS SRIOV_EN LINK_TYPE_P2 >$out/mstconfig-q-names.txt
mstconfig -d $d -f $out/mstconfig-backup-pending.txt backup >/dev/null
