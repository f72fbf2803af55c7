package optics

import (
	"fmt"

	"github.com/cxray/cxray/emu/fw"
)

// hostBits are the bits of a module's memory a host can change, by memory
// map, I2C address and lower-page byte: a module
// ignores writes to anything else, as real modules do. SFF-8636 byte 86
// Tx_Disable, 93 power control, 100-104 masks; CMIS byte 26 module global
// controls (LowPwrAllowRequestHW, LowPwrRequestSW); SFF-8472 A2h byte 110
// soft TX disable and soft rate select.
var hostBits = map[string]map[uint8]map[int]byte{
	mapSFF8636: {0x50: {86: 0x0F, 93: 0x07, 100: 0xFF, 101: 0xFF, 102: 0xFF, 103: 0xFF, 104: 0xFF}},
	mapCMIS:    {0x50: {26: 0x50}},
	mapSFF8472: {0x51: {110: 0x48}},
}

type wkey struct {
	i2c, bank, page uint8
	off             int
}

// written holds what the host wrote, kept with the cage (a module plugged
// in afresh starts without).
type written struct {
	bytes map[wkey]byte
	mask  map[wkey]byte
}

// write takes an MCIA SET: size bytes from dword[] at off. Bytes the host
// may not change keep their value; the status is GOOD (the module ACKs).
func (c *cage) write(call *fw.Call, i2c, bank, page uint8, off, size int) uint8 {
	if st, ok := call.Module(c.index); !ok || !st.Plugged || c.kind == nil {
		call.Put("status", mciaNotConnected)
		return fw.StatusOK
	}
	if c.faults.I2CHang {
		call.Put("status", mciaI2CError)
		return fw.StatusOK
	}
	bits := hostBits[c.kind.def.mapping][i2c]
	for i := 0; i < size; i++ {
		w := uint32(call.Req(fmt.Sprintf("dword[%d]", i/4)))
		b := byte(w >> (24 - 8*(i%4)))
		mask := bits[off+i]
		if mask == 0 || off+i >= 128 {
			continue
		}
		k := wkey{i2c, bank, page, off + i}
		if c.host.bytes == nil {
			c.host = written{bytes: map[wkey]byte{}, mask: map[wkey]byte{}}
		}
		c.host.bytes[k] = c.host.bytes[k]&^mask | b&mask
		c.host.mask[k] |= mask
	}
	call.Put("status", mciaGood)
	return fw.StatusOK
}

// overlay puts what the host wrote over the generated memory of a page
// (the lower half is every page's).
func (c *cage) overlay(m *mem, i2c, bank, page uint8) {
	for k, v := range c.host.bytes {
		if k.i2c == i2c && (k.off < 128 || k.bank == bank && k.page == page) {
			mask := c.host.mask[k]
			m[k.off] = m[k.off]&^mask | v&mask
		}
	}
}
