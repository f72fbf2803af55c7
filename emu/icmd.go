package emu

import (
	"encoding/binary"
	"time"
)

// ICMD space layout and control-register fields.
const (
	icmdCtrl     = 0x0
	icmdMboxSize = 0x1000
	icmdMailbox  = 0x100000
	mailboxLimit = 0x10000 // largest mailbox size an Identity may declare

	ctrlBusy        = 1 << 0
	ctrlEXMB        = 1 << 1
	ctrlStatusShift = 8
	ctrlStatusMask  = 0xFF << ctrlStatusShift

	// ICMD opcodes answered.
	OpQueryCap    = 0x8400
	OpGetFWInfo   = 0x8007
	OpAccessReg   = 0x9001
	fwInfoSize    = 0x24
	queryCapBytes = 8

	// ICMD status codes (control register [15:8]).
	icmdOK            = 0
	icmdInvalidOpcode = 1
	icmdBadParam      = 4
)

type icmdEngine struct {
	ctrl    uint32    // [31:16] opcode, [15:8] status, [1] EXMB, [0] BUSY
	mbox    []uint32  // dword i = big-endian bytes 4i..4i+3 of the frame
	polls   int       // control reads seen while busy (slow-firmware fault)
	started time.Time // when BUSY was set
}

func (d *Device) icmdRead(addr uint32) uint32 {
	switch {
	case addr == icmdCtrl:
		d.icmdProgress()
		return d.icmd.ctrl
	case addr == icmdMboxSize:
		return d.id.MailboxSize
	case addr >= icmdMailbox && addr < icmdMailbox+d.id.MailboxSize:
		return d.icmd.mbox[(addr-icmdMailbox)/4]
	}
	return 0
}

func (d *Device) icmdWrite(addr, v uint32) {
	switch {
	case addr == icmdCtrl:
		if d.icmd.ctrl&ctrlBusy != 0 {
			return // firmware owns the register until it clears BUSY
		}
		d.icmd.ctrl = v&^ctrlStatusMask | d.icmd.ctrl&ctrlStatusMask
		if v&ctrlBusy != 0 {
			d.icmdStart()
		}
	case addr >= icmdMailbox && addr < icmdMailbox+d.id.MailboxSize:
		if d.icmd.ctrl&ctrlBusy == 0 {
			d.icmd.mbox[(addr-icmdMailbox)/4] = v
		}
	}
}

// icmdStart begins the command in the control register; without
// slow-firmware faults it completes before the write returns.
func (d *Device) icmdStart() {
	d.emit(Event{Kind: EvICMDStart, Opcode: uint16(d.icmd.ctrl >> 16)})
	d.icmd.polls = 0
	d.icmd.started = d.clk.Now()
	d.icmdTryFinish()
}

// icmdProgress advances a pending command on a control-register read, which
// counts as one poll.
func (d *Device) icmdProgress() {
	if d.icmd.ctrl&ctrlBusy == 0 {
		return
	}
	d.icmd.polls++
	d.icmdTryFinish()
}

// icmdTryFinish runs the pending command unless a fault holds it: stuck, not
// yet polled SlowICMDPolls times, or SlowICMD not yet elapsed since it
// started. Faults are read live, so clearing one releases a waiting command.
func (d *Device) icmdTryFinish() {
	f := d.flt
	if f.ICMDStuckBusy || (f.SlowICMDPolls > 0 && d.icmd.polls <= f.SlowICMDPolls) ||
		d.clk.Now().Sub(d.icmd.started) < f.SlowICMD {
		return
	}
	d.icmdExecute()
}

func (d *Device) icmdExecute() {
	op := uint16(d.icmd.ctrl >> 16)
	var status uint8
	switch op {
	case OpQueryCap:
		status = d.queryCap()
	case OpGetFWInfo:
		d.fwInfo()
	case OpAccessReg:
		d.accessReg()
	default:
		status = icmdInvalidOpcode
	}
	d.icmd.ctrl = d.icmd.ctrl&^(ctrlStatusMask|ctrlBusy) | uint32(status)<<ctrlStatusShift
	d.emit(Event{Kind: EvICMDDone, Opcode: op, Status: status})
}

// queryCap answers capability group 0 (general) only.
func (d *Device) queryCap() uint8 {
	if group := d.icmd.mbox[0] & 0xFFFF; group != 0 {
		return icmdBadParam
	}
	d.icmd.mbox[0], d.icmd.mbox[1] = d.id.Caps0, d.id.Caps1
	return icmdOK
}

// fwInfo fills the GET_FW_INFO reply: version, build time (BCD), hash
// signature and PSID.
func (d *Device) fwInfo() {
	var b [fwInfoSize]byte
	t := d.id.FWBuildTime
	binary.BigEndian.PutUint16(b[0:], d.id.FWMajor)
	binary.BigEndian.PutUint16(b[4:], d.id.FWMinor)
	binary.BigEndian.PutUint16(b[6:], d.id.FWSubMinor)
	b[8], b[9], b[10] = bcd(t.Second()), bcd(t.Minute()), bcd(t.Hour())
	binary.BigEndian.PutUint16(b[12:], uint16(bcd(t.Year()/100))<<8|uint16(bcd(t.Year()%100)))
	b[14], b[15] = bcd(int(t.Month())), bcd(t.Day())
	binary.BigEndian.PutUint16(b[18:], d.id.HashSignature)
	copy(b[20:36], d.id.PSID)
	d.putMailbox(b[:])
}

func bcd(v int) byte { return byte(v/10%10<<4 | v%10) }

// mailboxBytes returns the first n bytes of the mailbox in frame order.
func (d *Device) mailboxBytes(n int) []byte {
	b := make([]byte, n)
	for i := 0; i+4 <= n; i += 4 {
		binary.BigEndian.PutUint32(b[i:], d.icmd.mbox[i/4])
	}
	return b
}

// putMailbox writes b (a multiple of 4 bytes, at most the mailbox size) at
// the start of the mailbox.
func (d *Device) putMailbox(b []byte) {
	for i := 0; i+4 <= len(b) && i/4 < len(d.icmd.mbox); i += 4 {
		d.icmd.mbox[i/4] = binary.BigEndian.Uint32(b[i:])
	}
}
