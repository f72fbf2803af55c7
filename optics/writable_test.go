package optics

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Each writable entry admits exactly its mask's bits at exactly its bytes;
// every other byte of every page refuses any change, and a change outside
// the mask names the bits.
func TestCheckWrite(t *testing.T) {
	for _, std := range []string{SFF8636, CMIS} {
		for page := 0; page < 3; page++ {
			for off := 0; off < 256; off++ {
				a := PageAddr{I2C: 0x50, Page: uint8(page), Offset: uint8(off)}
				w, ok := WritableAt(std, a, off)
				err := CheckWrite(std, a, []byte{0}, []byte{0xFF})
				var nw *NotWritableError
				switch {
				case !ok && !errors.As(err, &nw):
					t.Fatalf("%s page %d byte %d: not writable, but CheckWrite says %v", std, page, off, err)
				case !ok && nw.Byte != off:
					t.Errorf("%s byte %d: error names byte %d", std, off, nw.Byte)
				case ok && w.Mask == 0xFF && err != nil:
					t.Errorf("%s byte %d: a whole writable byte refused: %v", std, off, err)
				case ok && w.Mask != 0xFF && (!errors.As(err, &nw) || nw.Bits != ^w.Mask):
					t.Errorf("%s byte %d: writing 0xFF over mask 0x%02x: %v", std, off, w.Mask, err)
				}
				if ok && off >= HalfSize {
					t.Errorf("%s: upper byte %d writable; the table has lower-page bytes only", std, off)
				}
				if ok {
					if err := CheckWrite(std, a, []byte{0}, []byte{w.Mask}); err != nil {
						t.Errorf("%s byte %d: its own mask refused: %v", std, off, err)
					}
				}
			}
		}
	}
	var got []int
	for off := 0; off < HalfSize; off++ {
		if _, ok := WritableAt(SFF8636, PageAddr{I2C: 0x50}, off); ok {
			got = append(got, off)
		}
	}
	if d := cmp.Diff([]int{86, 93, 100, 101, 102, 103, 104}, got); d != "" {
		t.Errorf("SFF-8636 writable bytes (-want +got):\n%s", d)
	}
	if err := CheckWrite(CMIS, PageAddr{I2C: 0x51, Offset: 26}, []byte{0}, []byte{0x10}); err == nil {
		t.Error("I2C 0x51 of a CMIS module accepted a write")
	}
}

// An SFP's A2h map is page 1 (I2C 0x51), as mlxlink numbers it; only its
// byte 110's soft controls are writable, and only there, not in A0h.
func TestSFPAddrAndWritable(t *testing.T) {
	for _, c := range []struct {
		std             string
		page, bank, off int
		want            PageAddr
		bad             bool
	}{
		{SFF8472, 0, 0, 20, PageAddr{I2C: 0x50, Offset: 20}, false},
		{SFF8472, 1, 0, 110, PageAddr{I2C: 0x51, Offset: 110}, false},
		{SFF8472, 2, 0, 0, PageAddr{}, true},
		{SFF8472, 1, 1, 0, PageAddr{}, true},
		{CMIS, 1, 0, 130, PageAddr{I2C: 0x50, Page: 1, Offset: 130}, false},
		{SFF8636, 3, 0, 200, PageAddr{I2C: 0x50, Page: 3, Offset: 200}, false},
		{"", 0, 0, 256, PageAddr{}, true},
	} {
		got, err := HostAddr(c.std, c.page, c.bank, c.off)
		if (err != nil) != c.bad || !c.bad && got != c.want {
			t.Errorf("%q page %d bank %d offset %d: %+v, %v", c.std, c.page, c.bank, c.off, got, err)
		}
	}
	a2 := PageAddr{I2C: 0x51, Offset: 110}
	if err := CheckWrite(SFF8472, a2, []byte{0x02}, []byte{0x4A}); err != nil {
		t.Errorf("A2h byte 110 soft TX disable and rate select: %v", err)
	}
	var nw *NotWritableError
	if err := CheckWrite(SFF8472, a2, []byte{0x02}, []byte{0x82}); !errors.As(err, &nw) || nw.Bits != 0x80 {
		t.Errorf("A2h byte 110 bit 7 (TX disable state, read-only): %v", err)
	}
	if err := CheckWrite(SFF8472, PageAddr{I2C: 0x50, Offset: 110}, []byte{0}, []byte{0x40}); !errors.As(err, &nw) {
		t.Errorf("A0h byte 110 accepted a write: %v", err)
	}
	for off := 0; off < 256; off++ {
		if _, ok := WritableAt(SFF8472, a2, off); ok != (off == 110) {
			t.Errorf("A2h byte %d writable: %v", off, ok)
		}
	}
}
