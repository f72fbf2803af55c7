package tlv_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/nvconf/tlv"
)

// A type dword of each stored class splits back into the fields it was
// encoded from (the "all ports/functions" classes exist only in reads).
func TestTypeRoundTrip(t *testing.T) {
	for _, f := range []tlv.TypeFields{
		{Class: tlv.ClassGlobal, ID: 0x80},
		{Class: tlv.ClassPort, ID: 0x12, Port: 2},
		{Class: tlv.ClassHostPF, ID: 0x3FF, Host: 63, Function: 255},
		{Class: tlv.ClassHost, ID: 0x3FFFF, Host: 5},
		{Class: tlv.ClassModule, ID: 0x3FFF, Module: 1023},
		{Class: tlv.ClassFile, ID: 0xFFFFFF},
		{Class: tlv.ClassSwitchGlobal, ID: 7},
	} {
		d, err := tlv.EncodeType(f)
		if err != nil {
			t.Fatalf("%+v: %v", f, err)
		}
		if diff := cmp.Diff(f, tlv.SplitType(d)); diff != "" {
			t.Errorf("0x%08x split (-encoded +split):\n%s", d, diff)
		}
	}
	for _, f := range []tlv.TypeFields{
		{Class: tlv.ClassPort, ID: 0x10000},
		{Class: tlv.ClassPort, ID: 1, Port: 256},
		{Class: tlv.ClassHostPF, ID: 1, Function: 256},
		{Class: tlv.ClassModule, ID: 1, Module: -1},
		{Class: tlv.ClassPortCommon, ID: 1},
	} {
		if d, err := tlv.EncodeType(f); err == nil {
			t.Errorf("%+v encoded as 0x%08x; it does not fit", f, d)
		}
	}
}

// FuzzBits: a value set at any bit offset and width reads back, and no
// bit outside the field changes.
func FuzzBits(f *testing.F) {
	f.Add(uint16(3), uint8(5), uint64(0x1F), []byte{0xFF, 0, 0xAA, 0x55})
	f.Add(uint16(0), uint8(64), uint64(1<<63|1), make([]byte, 9))
	f.Fuzz(func(t *testing.T, bit uint16, width uint8, v uint64, buf []byte) {
		w := int(width%64) + 1
		b := int(bit)
		if b+w > 8*len(buf) {
			return
		}
		if w < 64 {
			v &= 1<<uint(w) - 1
		}
		before := append([]byte(nil), buf...)
		tlv.SetBits(buf, b, w, v)
		if got := tlv.GetBits(buf, b, w); got != v {
			t.Fatalf("bits %d+%d: set 0x%x, read 0x%x", b, w, v, got)
		}
		for i := 0; i < 8*len(buf); i++ {
			if i >= b && i < b+w {
				continue
			}
			if tlv.GetBits(buf, i, 1) != tlv.GetBits(before, i, 1) {
				t.Fatalf("bits %d+%d: bit %d outside the field changed", b, w, i)
			}
		}
	})
}
