package fw_test

import (
	"testing"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
)

// FuzzAccessRegister sends arbitrary requests: the firmware must never
// panic, must answer a payload as long as the request when it succeeds,
// and must never report an internal error (that would be a handler bug).
func FuzzAccessRegister(f *testing.F) {
	for _, id := range []uint16{0x9020, 0x907F, 0x9060, 0x9061, 0x9064, 0x5006, 0x5012, 0x5004, 0x5002, 0x5031, 0x9009, 0x900A, 0x5008, 0x402C, 0x5003} {
		f.Add(id, uint8(1), make([]byte, 16))
		f.Add(id, uint8(2), make([]byte, 256))
	}
	f.Add(uint16(0x5008), uint8(1), append([]byte{0, 1, 0, 0x16, 0x80, 0, 0, 0}, make([]byte, 248)...))
	f.Add(uint16(0x5031), uint8(1), append([]byte{0, 1, 0, 0, 0, 0, 0, 1}, make([]byte, 248)...))
	f.Add(uint16(0x9061), uint8(1), append([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x7c, 0, 0, 0, 4}, make([]byte, 124)...))
	r := newRig(f)
	f.Fuzz(func(t *testing.T, id uint16, method uint8, data []byte) {
		if len(data) > 1024 {
			return
		}
		out, st := r.fw.AccessRegister(id, emu.Method(method), data)
		if st == fw.StatusOK && len(out) != len(data) {
			t.Fatalf("register 0x%04x: %d-byte reply to a %d-byte request", id, len(out), len(data))
		}
		if st == fw.StatusInternalError {
			t.Fatalf("register 0x%04x method %d: internal error: %v", id, method, r.fw.LastError())
		}
		r.clk.Advance(1e9)
	})
}
