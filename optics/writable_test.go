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
