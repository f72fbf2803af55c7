package link

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
)

func TestFromFirmwareEdges(t *testing.T) {
	for _, c := range []struct {
		coef, mag, since uint64
		text             string
		value            float64 // -1: nil
	}{
		{2, 10, 60000, "2.0E-10", 2e-10},
		{15, 255, 60000, "0", 0},           // the firmware's "no errors"
		{15, 255, 0, "n/a", -1},            // zero time since clear: not a number
		{2, 10, 0, "n/a", -1},              // whatever the fields say
		{9, 1, 1, "9.0E-1", 0.9},           // a dead link
		{1, 500, 1000, "n/a", -1},          // a magnitude no float holds
		{0, 0, 1000, "0", 0},               // nothing counted
		{7, 254, 1000, "7.0E-254", 7e-254}, // the smallest the firmware writes
	} {
		b := FromFirmware(c.coef, c.mag, c.since)
		if b.Text != c.text || (c.value < 0) != (b.Value == nil) || (b.Value != nil && math.Abs(*b.Value-c.value) > c.value*1e-12) {
			t.Errorf("FromFirmware(%d, %d, %d) = %+v; want text %q value %v", c.coef, c.mag, c.since, b, c.text, c.value)
		}
		if want := strconv.FormatUint(c.coef, 10) + "E-" + strconv.FormatUint(c.mag, 10); b.Firmware != want {
			t.Errorf("firmware text %q, want %q", b.Firmware, want)
		}
		if b.Value == nil && b.Why == "" {
			t.Errorf("%+v: n/a without a reason", b)
		}
	}
}

func TestFromCountersEdges(t *testing.T) {
	max := uint64(math.MaxUint64)
	for _, c := range []struct {
		errs, bits, since uint64
		text              string
	}{
		{0, 0, 0, "n/a"},
		{5, 1000, 0, "n/a"}, // no time since clear
		{5, 0, 10, "n/a"},   // no bits
		{0, 1000, 10, "0"},
		{1, 1e10, 10, "1.0E-10"},
		{max, max, 10, "1.0E0"}, // huge values do not overflow
		{1, max, 10, "5.4E-20"},
		{max, 1, 10, "1.8E19"},   // more errors than bits: shown, not hidden
		{999, 1e6, 10, "1.0E-3"}, // 9.99E-4 rounds into the next decade
	} {
		b := FromCounters(c.errs, c.bits, c.since)
		if b.Text != c.text {
			t.Errorf("FromCounters(%d, %d, %d) = %q, want %q", c.errs, c.bits, c.since, b.Text, c.text)
		}
		if (c.text == "n/a") != (b.Value == nil) {
			t.Errorf("FromCounters(%d, %d, %d): value %v with text %q", c.errs, c.bits, c.since, b.Value, b.Text)
		}
	}
}

func TestDeltaEdges(t *testing.T) {
	for _, c := range []struct {
		prev, cur uint64
		width     int
		grew      bool
		delta     uint64
		cleared   bool
	}{
		{10, 25, 64, true, 15, false},
		{10, 10, 64, true, 0, false},
		{math.MaxUint32 - 4, 5, 32, true, 10, false}, // a 32-bit counter wrapped
		{math.MaxUint64 - 4, 5, 64, true, 10, false}, // a 64-bit one
		{1000, 7, 64, false, 7, true},                // cleared: count from the clear
		{math.MaxUint32 - 4, 5, 32, false, 5, true},  // down and the clock restarted: a clear
	} {
		d, cl := Delta(c.prev, c.cur, c.width, c.grew)
		if d != c.delta || cl != c.cleared {
			t.Errorf("Delta(%d, %d, %d, %v) = %d, %v; want %d, %v", c.prev, c.cur, c.width, c.grew, d, cl, c.delta, c.cleared)
		}
	}
	if Rate(10, 0) != nil || Rate(10, -1) != nil || *Rate(10, 4) != 2.5 {
		t.Error("Rate over a non-positive interval must be nil, 10 over 4 s 2.5/s")
	}
}

// FuzzFormat: Format's text reads back as the ratio within its one
// decimal (5 %), for every positive finite ratio; 0 and n/a otherwise.
func FuzzFormat(f *testing.F) {
	for _, v := range []float64{1e-12, 2e-10, 9.96e-4, 1, 0.5, 1e-300, 1.7e308, 1.7708333333333335e308, 5e-324, 2.5e-320} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		s := Format(v)
		switch {
		case v == 0:
			if s != "0" {
				t.Fatalf("Format(0) = %q", s)
			}
			return
		case !(v > 0) || math.IsInf(v, 0):
			if s != "n/a" {
				t.Fatalf("Format(%v) = %q, want n/a", v, s)
			}
			return
		}
		if !strings.Contains(s, "E") {
			t.Fatalf("Format(%v) = %q has no exponent", v, s)
		}
		// Read back with arbitrary precision: near the ends of float64
		// the rounded text (1.8E308) can lie outside its range.
		bf, ok := new(big.Float).SetString(s)
		if !ok {
			t.Fatalf("Format(%v) = %q does not read back as a number", v, s)
		}
		diff := new(big.Float).Sub(bf, big.NewFloat(v))
		if diff.Abs(diff).Cmp(new(big.Float).Mul(big.NewFloat(v), big.NewFloat(0.051))) > 0 {
			back, _ := bf.Float64()
			t.Fatalf("Format(%v) = %q reads back as %v", v, s, back)
		}
		if c := s[:strings.IndexByte(s, 'E')]; c < "1.0" || len(c) != 3 {
			t.Fatalf("Format(%v) = %q: coefficient %q is not d.d in 1.0..9.9", v, s, c)
		}
	})
}

// FuzzDelta: the delta and the previous value add up to the current one
// modulo the counter's width, unless the counter was cleared, in which
// case the delta is the current value.
func FuzzDelta(f *testing.F) {
	f.Add(uint64(10), uint64(5), uint8(32), true)
	f.Add(uint64(math.MaxUint64), uint64(0), uint8(64), true)
	f.Fuzz(func(t *testing.T, prev, cur uint64, w uint8, grew bool) {
		width := int(w%64) + 1
		if width < 64 {
			prev &= 1<<width - 1
			cur &= 1<<width - 1
		}
		d, cleared := Delta(prev, cur, width, grew)
		if cleared {
			if d != cur || cur >= prev || grew {
				t.Fatalf("Delta(%d, %d, %d, %v) = %d cleared", prev, cur, width, grew, d)
			}
			return
		}
		sum := prev + d
		if width < 64 {
			sum &= 1<<width - 1
		}
		if sum != cur {
			t.Fatalf("Delta(%d, %d, %d, %v) = %d: prev + delta = %d mod 2^%d", prev, cur, width, grew, d, sum, width)
		}
	})
}
