package emu

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func frame(op, w1, reg uint32, payload []byte) []byte {
	f := make([]byte, frameHdr, frameHdr+len(payload))
	binary.BigEndian.PutUint32(f[0:], op)
	binary.BigEndian.PutUint32(f[4:], w1)
	binary.BigEndian.PutUint32(f[16:], reg)
	return append(f, payload...)
}

const goodOp = tlvOperation<<27 | opTLVLen<<16

func TestParseRegRequest(t *testing.T) {
	pl := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	regHdr := uint32(tlvRegister<<27 | 3<<16)
	cases := []struct {
		name   string
		f      []byte
		status uint8
	}{
		{"ok", frame(goodOp, 0x9020<<16|1<<8|1, regHdr, pl), StatusOK},
		{"short", make([]byte, 19), StatusUnknownTLV},
		{"not an operation TLV", frame(2<<27|4<<16, 0x9020<<16|1<<8|1, regHdr, pl), StatusUnknownTLV},
		{"operation TLV length", frame(1<<27|5<<16, 0x9020<<16|1<<8|1, regHdr, pl), StatusUnknownTLV},
		{"class", frame(goodOp, 0x9020<<16|1<<8|0xA, regHdr, pl), StatusClassNotSupp},
		{"method", frame(goodOp, 0x9020<<16|3<<8|1, regHdr, pl), StatusMethodNotSupp},
		{"register TLV type", frame(goodOp, 0x9020<<16|1<<8|1, 4<<27|3<<16, pl), StatusUnknownTLV},
		{"register TLV past the frame", frame(goodOp, 0x9020<<16|2<<8|1, tlvRegister<<27|4<<16, pl), StatusBadParam},
		{"register TLV length 0", frame(goodOp, 0x9020<<16|2<<8|1, tlvRegister<<27, pl), StatusBadParam},
	}
	for _, c := range cases {
		req, st := ParseRegRequest(c.f)
		if st != c.status {
			t.Errorf("%s: status %d, want %d", c.name, st, c.status)
		}
		if st == StatusOK && (req.ID != 0x9020 || req.Method != MethodGet || !bytes.Equal(req.Payload, pl)) {
			t.Errorf("%s: %+v", c.name, req)
		}
	}
}

// A full access through the mailbox: the reply keeps the frame, sets the
// status and r bit, and carries the firmware's payload resized to the TLV.
func TestAccessRegisterThroughMailbox(t *testing.T) {
	fw := NewMapFirmware(map[uint16]int{0x9020: 8})
	d, rec := newDev(fw)
	send := func(method Method, id uint16, payload []byte) []byte {
		f := frame(goodOp, uint32(id)<<16|uint32(method)<<8|1, tlvRegister<<27|uint32(len(payload)/4+1)<<16, payload)
		words := make([]uint32, len(f)/4)
		for i := range words {
			words[i] = binary.BigEndian.Uint32(f[4*i:])
		}
		icmdRun(t, d, OpAccessReg, words)
		if v := icmdCtrlRead(t, d); v&ctrlBusy != 0 || v>>8&0xFF != 0 {
			t.Fatalf("ICMD ctrl %#x", v)
		}
		var out []byte
		for i := range words {
			_, w := gwRead32(t, d, spaceICMD, icmdMailbox+uint32(4*i))
			out = binary.BigEndian.AppendUint32(out, w)
		}
		return out
	}
	r := send(MethodSet, 0x9020, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	if r[2]&0x7F != 0 || r[6]&0x80 == 0 {
		t.Errorf("SET reply header %x: want status 0 and r bit", r[:8])
	}
	r = send(MethodGet, 0x9020, make([]byte, 12)) // longer than the register: resized
	if !bytes.Equal(r[20:], []byte{1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0}) {
		t.Errorf("GET payload %x", r[20:])
	}
	r = send(MethodGet, 0x1111, make([]byte, 4))
	if r[2]&0x7F != StatusRegNotSupp {
		t.Errorf("unknown register: status %d, want 4", r[2]&0x7F)
	}
	d.SetFaults(Faults{RegisterStatus: map[uint16]uint8{0x9020: 0x70}})
	r = send(MethodGet, 0x9020, make([]byte, 8))
	if r[2]&0x7F != 0x70 {
		t.Errorf("status fault: status %#x, want 0x70", r[2]&0x7F)
	}
	regs := rec.Kinds(EvRegister)
	if len(regs) != 4 || regs[0].Method != MethodSet || regs[2].Status != 4 || regs[3].Status != 0x70 {
		t.Errorf("register events %v", regs)
	}
}

func FuzzParseRegRequest(f *testing.F) {
	f.Add(frame(goodOp, 0x9020<<16|1<<8|1, tlvRegister<<27|3<<16, make([]byte, 8)))
	f.Add(frame(goodOp, 0x9020<<16|2<<8|1, tlvRegister<<27|0x7FF<<16, nil))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		req, st := ParseRegRequest(b)
		if st == StatusOK && (len(req.Payload)%4 != 0 || len(req.Payload)+frameHdr > len(b)) {
			t.Fatalf("payload of %d bytes from a %d-byte frame", len(req.Payload), len(b))
		}
	})
}

// FuzzAccessRegister puts arbitrary bytes in the mailbox and runs 0x9001:
// the device must not panic and must finish the command.
func FuzzAccessRegister(f *testing.F) {
	f.Add(frame(goodOp, 0x9020<<16|1<<8|1, tlvRegister<<27|3<<16, make([]byte, 8)))
	f.Add(frame(goodOp, 0x9020<<16|2<<8|1, tlvRegister<<27|0x7FF<<16, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, _ := newDev(NewMapFirmware(map[uint16]int{0x9020: 8}))
		var words []uint32
		for i := 0; i+4 <= len(b) && i < int(d.id.MailboxSize); i += 4 {
			words = append(words, binary.BigEndian.Uint32(b[i:]))
		}
		icmdRun(t, d, OpAccessReg, words)
		if icmdCtrlRead(t, d)&ctrlBusy != 0 {
			t.Fatal("command did not finish")
		}
	})
}

// FuzzConfigWrites treats the input as a program of config writes and reads
// at arbitrary offsets and sizes; nothing may panic and the device keeps
// answering.
func FuzzConfigWrites(f *testing.F) {
	sel := func(off uint16, v ...byte) []byte {
		return append([]byte{byte(off >> 8), byte(off), byte(len(v))}, v...)
	}
	var prog []byte
	prog = append(prog, sel(gSem, 1, 0, 0, 0)...)
	prog = append(prog, sel(gCtrl, 3, 0)...)
	prog = append(prog, sel(gData, 1, 0, 0, 0)...)
	prog = append(prog, sel(gAddr, 0, 0, 0, 0x80)...)
	prog = append(prog, sel(gAddr, 0, 0, 0x10, 0)...)
	f.Add(prog)
	f.Add(sel(0xFFE, 1, 2, 3, 4, 5))
	f.Fuzz(func(t *testing.T, prog []byte) {
		d, _ := newDev(NewMapFirmware(map[uint16]int{0x9020: 8}))
		for len(prog) >= 3 {
			off := int64(binary.BigEndian.Uint16(prog)) % (ConfigSize + 16)
			n := int(prog[2])
			prog = prog[3:]
			n = min(n, len(prog))
			d.WriteAt(prog[:n], off)
			buf := make([]byte, n%65)
			d.ReadAt(buf, off)
			prog = prog[n:]
		}
		if rd32(t, d, 0) != 0x102115b3 {
			t.Fatal("device IDs changed")
		}
	})
}
