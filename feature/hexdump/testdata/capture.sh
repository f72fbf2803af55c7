#!/bin/sh
# Captures mstreg's --get outputs (the dword form and the named form of the
# same register instance) and cxray's own reg get outputs from the
# emulator, for hexdump's tests. Run from the repository root:
#
#   go build -o /tmp/ ./cmd/cxray ./cmd/cxray-emu
#   /tmp/cxray emu run --scenario feature/hexdump/testdata/capture.yaml -- sh feature/hexdump/testdata/capture.sh /tmp/cxray
#
# Needs root, /dev/fuse and mstflint (mstreg). The scenario stops the
# clock, so the two forms of one register hold the same values.
set -e
cx=${1:-cxray}
out=feature/hexdump/testdata
d=0000:03:00.0
cap() { # NAME ID LEN NAMED-INDEXES RAW-INDEXES CXRAY-INDEXES
	mstreg -d $d --reg_name $1 ${4:+--indexes "$4"} --get >$out/mstreg-$1.named.txt
	mstreg -d $d --reg_id $2 --reg_len $3 ${5:+--indexes "$5"} --get >$out/mstreg-$1.id.txt
	$cx reg get $1 -d $d $6 >$out/cxray-$1.get.txt
	$cx reg get $1 -d $d $6 --raw >$out/cxray-$1.raw.txt
	$cx reg get $1 -d $d $6 -o json >$out/cxray-$1.json
}
cap MGIR 0x9020 0xa0 "" "" ""
cap MTMP 0x900a 0x20 "sensor_index=0,slot_index=0" "" "--index sensor_index=0"
cap PAOS 0x5006 0x10 "local_port=1,swid=0,lp_msb=0" "0x0.16:8=1" "--index local_port=1"
cap PMLP 0x5002 0x40 "local_port=1,lp_msb=0" "0x0.16:8=1" "--index local_port=1"
cap PGUID 0x5066 0x60 "local_port=1,lp_msb=0,pnat=0" "0x0.16:8=1" "--index local_port=1"
pddr="local_port=1,pnat=0,lp_msb=0,port_type=0,group_opcode=0,tracer_mode=0,pre_trigger_buff_mode=0,trigger_cond_fsm=0,trigger_cond_state_or_event=0,trigger_cond_state_event_val=0,pport=0,fsm_mask=0"
mstreg -d $d --reg_name PDDR --indexes "$pddr,page_select=3" --get >$out/mstreg-PDDR3.named.txt
mstreg -d $d --reg_id 0x5031 --reg_len 0x100 --indexes "0x0.16:8=1,0x4.0:8=3" --get >$out/mstreg-PDDR3.id.txt
mstreg -d $d --reg_name PDDR --indexes "$pddr,page_select=1" --get >$out/mstreg-PDDR1.named.txt
mstreg -d $d --reg_id 0x5031 --reg_len 0x100 --indexes "0x0.16:8=1,0x4.0:8=1" --get >$out/mstreg-PDDR1.id.txt
$cx reg get PDDR -d $d --index local_port=1 --index page_select=Module_info_page >$out/cxray-PDDR3.get.txt
$cx reg get PDDR -d $d --index local_port=1 --index page_select=Module_info_page --raw >$out/cxray-PDDR3.raw.txt
$cx reg get --id 0x900a --len 32 -d $d >$out/cxray-MTMP.id.txt
$cx reg get --id 0x900a --len 32 -d $d -o json >$out/cxray-MTMP.id.json
