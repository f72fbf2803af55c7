package pcie

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// FuzzWalk: the walk ends on any input, visits no offset twice, and every
// capability it lists lies inside what was read, in its own range.
func FuzzWalk(f *testing.F) {
	f.Add([]byte(connectX7()))
	f.Add([]byte(connectX7()[:256]))
	loop := connectX7()
	loop.ext(0x154, ExtCapARI, 1, 0x148)
	f.Add([]byte(loop))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, cfg []byte) {
		caps, _ := Walk(cfg)
		seen := map[int]bool{}
		for _, c := range caps {
			if seen[c.Offset] {
				t.Fatalf("offset 0x%x visited twice: %v", c.Offset, caps)
			}
			seen[c.Offset] = true
			lo, hi := 0x40, min(len(cfg), HeaderSize)-2
			if c.Extended {
				lo, hi = ExtendedStart, min(len(cfg), ExtendedSize)-4
			}
			if c.Offset < lo || c.Offset > hi {
				t.Fatalf("capability %+v outside 0x%x..0x%x of %d bytes", c, lo, hi, len(cfg))
			}
		}
		if len(caps) > maxLegacyCaps+maxExtendedCaps {
			t.Fatalf("%d capabilities", len(caps))
		}
		// The directed read of the same space ends too, and reads a header
		// whenever there is one.
		if img, err := ReadConfig(bytes.NewReader(cfg)); (err != nil) != (len(cfg) < 0x40) || (err == nil && len(img) < 0x40) {
			t.Fatalf("ReadConfig of %d bytes: %d bytes, %v", len(cfg), len(img), err)
		}
		v := DecodeConfig(cfg)
		if v.Express != nil && (v.Express.Current.Width != 0 && !ValidWidth(v.Express.Current.Width)) {
			t.Fatalf("width %d", v.Express.Current.Width)
		}
	})
}

// FuzzParseAERCounts: what parses prints back (one line per count, then
// the total) and parses to the same counts.
func FuzzParseAERCounts(f *testing.F) {
	f.Add(kernelCor)
	f.Add("RxErr 1\r\nTOTAL_ERR_COR 1")
	f.Add("TOTAL_ERR_FATAL 0\n")
	f.Fuzz(func(t *testing.T, text string) {
		c, err := ParseAERCounts(text)
		if err != nil {
			return
		}
		names := make([]string, 0, len(c.Counts))
		for n := range c.Counts {
			names = append(names, n)
		}
		sort.Strings(names)
		var b strings.Builder
		for _, n := range names {
			fmt.Fprintf(&b, "%s %d\n", n, c.Counts[n])
		}
		fmt.Fprintf(&b, "TOTAL_ERR_COR %d\n", c.Total)
		again, err := ParseAERCounts(b.String())
		if err != nil {
			t.Fatalf("printed back %q: %v", b.String(), err)
		}
		if again.Total != c.Total || len(again.Counts) != len(c.Counts) {
			t.Fatalf("%+v became %+v", c, again)
		}
		for n, v := range c.Counts {
			if again.Counts[n] != v {
				t.Fatalf("%s: %d became %d", n, v, again.Counts[n])
			}
		}
	})
}

// FuzzParseSpeed: a speed that parses prints in sysfs's form and parses
// back to itself.
func FuzzParseSpeed(f *testing.F) {
	for _, s := range []string{"32.0 GT/s PCIe\n", "8 GT/s", "gen4", "Unknown speed", "16GT/s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseSpeed(s)
		if err != nil || !sp.Known() {
			return
		}
		again, err := ParseSpeed(sp.String())
		if err != nil || again != sp {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, sp, sp.String(), again, err)
		}
	})
}
