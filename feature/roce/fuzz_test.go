package roce

import (
	"math"
	"strconv"
	"testing"
)

// Whatever the text, ParseRate accepts only a positive finite rate with a
// unit, and the rate it read, written back in Gb/s, reads the same.
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"400G", "100g", "25Gbps", "800M", "1T", "400", "inf", "NaNG", "-1G", "1e308T", "0x10G", "1.5 G"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseRate(s)
		if err != nil {
			return
		}
		if !(v > 0) || math.IsInf(v, 0) || math.IsNaN(v) {
			t.Fatalf("%q read as %v", s, v)
		}
		back := strconv.FormatFloat(v/1e9, 'g', -1, 64) + "G"
		w, err := ParseRate(back)
		if err != nil {
			if math.IsInf(v/1e9*1e9, 0) {
				return
			}
			t.Fatalf("%q -> %v, but %q does not read: %v", s, v, back, err)
		}
		if math.Abs(w-v) > math.Abs(v)*1e-12 {
			t.Fatalf("%q -> %v; %q -> %v", s, v, back, w)
		}
	})
}
