package optics

import (
	"bytes"
	"strings"
	"testing"
)

// ethtoolOffset is where a half page sits in ethtool's flat dump, by the
// layout FromEthtool documents; -1 when the layout has no place for it.
func ethtoolOffset(std string, a PageAddr) int {
	upper := a.Offset >= HalfSize
	switch {
	case !upper && a.I2C == AddrA0 && a.Page == 0:
		return 0
	case std == SFF8472 && a.I2C == AddrA0 && upper:
		return 128
	case std == SFF8472 && a.I2C == AddrA2:
		return 256 + int(a.Offset)
	case std == SFF8636 && upper && a.Page <= 3:
		return 128 * (int(a.Page) + 1)
	case std == CMIS && upper && a.Page == 0:
		return 128
	}
	return -1
}

func checkLayout(t *testing.T, b []byte, im *Image) {
	t.Helper()
	std := StandardOf(b[0])
	for _, p := range im.Pages {
		off := ethtoolOffset(std, p.PageAddr)
		if off < 0 && len(b) > 0 && (std == SFF8472 || std == SFF8636 || std == CMIS) {
			t.Fatalf("%s: page %s has no place in the layout", std, p.PageAddr)
		}
		if off < 0 {
			off = 0
		}
		if off+len(p.Data) > len(b) || !bytes.Equal(p.Data, b[off:off+len(p.Data)]) {
			t.Fatalf("%s: %s is not the dump's bytes at %d", std, p.PageAddr, off)
		}
	}
}

func TestFromEthtoolLayouts(t *testing.T) {
	mk := func(id byte, n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i * 7)
		}
		b[0] = id
		return b
	}
	for _, c := range []struct {
		id     byte
		n      int
		halves int
		note   string
	}{
		{0x03, 512, 4, ""}, // SFP: A0h and A2h
		{0x03, 256, 2, ""}, // SFP without diagnostics
		{0x11, 640, 5, ""}, // QSFP28: lower, pages 0..3
		{0x11, 256, 2, ""}, // QSFP28, ethtool's short dump
		{0x18, 256, 2, ""}, // QSFP-DD (CMIS)
		{0x18, 640, 2, "left out"},
		{0x11, 300, 3, "ends after 44"},
	} {
		im, notes, err := FromEthtool(mk(c.id, c.n))
		if err != nil {
			t.Fatal(err)
		}
		checkLayout(t, mk(c.id, c.n), im)
		if len(im.Pages) != c.halves || (c.note == "") != (len(notes) == 0) || c.note != "" && !strings.Contains(strings.Join(notes, ";"), c.note) {
			t.Errorf("id 0x%02x, %d bytes: %d halves (want %d), notes %v (want %q)", c.id, c.n, len(im.Pages), c.halves, notes, c.note)
		}
	}
	if _, _, err := FromEthtool(make([]byte, 100)); err == nil {
		t.Error("a 100-byte dump was taken")
	}
}

// Whatever the bytes, every page FromEthtool makes holds the dump's own
// bytes at that page's place in ethtool's layout.
func FuzzFromEthtool(f *testing.F) {
	f.Add(append([]byte{0x03}, make([]byte, 511)...))
	f.Add(append([]byte{0x11}, make([]byte, 639)...))
	f.Add(append([]byte{0x18}, make([]byte, 700)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 4096 {
			return
		}
		im, _, err := FromEthtool(b)
		if err != nil {
			if len(b) >= HalfSize {
				t.Fatalf("%d bytes refused: %v", len(b), err)
			}
			return
		}
		checkLayout(t, b, im)
		_, _ = Decode(im)
	})
}
