package roce

import (
	"math"
	"strings"
	"testing"
)

// The advice for a table of links, checked against the formula computed
// here: BDP = rate/8 * RTT, packets = ceil(BDP/MTU), window = ceil(log2).
func TestAdviseTable(t *testing.T) {
	cases := []struct {
		rate, rtt float64
		mtu       int
	}{
		{400e9, 8e-6, 4096}, {400e9, 20e-6, 4096}, {100e9, 10e-6, 1024}, {25e9, 2e-6, 4096},
		{200e9, 50e-6, 2048}, {100e9, 1e-3, 4096}, {10e9, 1e-6, 256},
	}
	for _, c := range cases {
		a, err := Advise(c.rate, c.rtt, c.mtu, 0, -1, nil)
		if err != nil {
			t.Fatal(err)
		}
		bdp := c.rate / 8 * c.rtt
		pk := math.Ceil(bdp / float64(c.mtu))
		want := int(math.Ceil(math.Log2(pk)))
		if a.BDPPackets != pk || a.MinLogWindow != want || math.Pow(2, float64(want)) < pk || math.Pow(2, float64(want-1)) >= pk {
			t.Errorf("%+v: got %v packets, window %d; want %v, %d", c, a.BDPPackets, a.MinLogWindow, pk, want)
		}
		// One below the minimum limits; the minimum does not.
		lo, _ := Advise(c.rate, c.rtt, c.mtu, 0, want-1, nil)
		ok, _ := Advise(c.rate, c.rtt, c.mtu, 0, want, nil)
		if want > 1 && (lo.Limiting == nil || !*lo.Limiting || *ok.Limiting) {
			t.Errorf("%+v: window %d limiting=%v, %d limiting=%v", c, want-1, *lo.Limiting, want, *ok.Limiting)
		}
		if want > 1 {
			if exp := math.Pow(2, float64(want-1)) * float64(c.mtu) * 8 / c.rtt / 1e9; math.Abs(*lo.MaxRateGbps-exp) > 1e-6 {
				t.Errorf("max rate %v, want %v", *lo.MaxRateGbps, exp)
			}
		}
	}
	for _, bad := range [][4]float64{{1e39, 8e-6, 4096, 0}, {0, 1e-6, 4096, 0}, {1e9, 0, 4096, 0}, {1e9, 1e-6, 1500, 0}, {1e9, 1e-6, 4096, 1}} {
		if _, err := Advise(bad[0], bad[1], int(bad[2]), bad[3], -1, nil); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// Whatever rate, RTT and MTU Advise accepts, its advice is a window the
// device takes (1..MaxLogWindow; 0 would mean the device default) that
// covers the bandwidth-delay product; a rate beyond any link (a unit typo:
// 1e30G) is refused rather than advised on (it advised 98, which
// 'roce set' refuses).
func FuzzAdviseWindow(f *testing.F) {
	f.Add(400e9, 8e-6, uint8(4))
	f.Add(1e39, 8e-6, uint8(4))
	f.Add(10e12, 1.0, uint8(0))
	f.Fuzz(func(t *testing.T, rate, rtt float64, m uint8) {
		mtu := []int{256, 512, 1024, 2048, 4096}[int(m)%5]
		a, err := Advise(rate, rtt, mtu, 0, -1, nil)
		if err != nil {
			return
		}
		if rate > maxRate {
			t.Fatalf("rate %g accepted", rate)
		}
		if a.MinLogWindow < 1 || a.MinLogWindow > MaxLogWindow {
			t.Fatalf("rate %g rtt %g mtu %d: advice %d", rate, rtt, mtu, a.MinLogWindow)
		}
		if math.Pow(2, float64(a.MinLogWindow)) < a.BDPPackets {
			t.Fatalf("advice 2^%d does not cover %g packets", a.MinLogWindow, a.BDPPackets)
		}
	})
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]float64{"400G": 400e9, "100Gb/s": 100e9, "25g": 25e9, "1.6T": 1.6e12, "800Gbps": 800e9, "800M": 800e6} {
		if got, err := ParseRate(in); err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	for _, bad := range []string{"fast", "400x", "-1G", "", "NaNG", "InfG"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// A number without a unit is refused, naming the units: 400 could be
	// 400G or 400 bit/s.
	for _, bare := range []string{"400", "1e10"} {
		if _, err := ParseRate(bare); err == nil || !strings.Contains(err.Error(), "no unit") || !strings.Contains(err.Error(), "400G") {
			t.Errorf("%q: %v", bare, err)
		}
	}
	// Advice is never 0, which means "the device default".
	adv, err := Advise(1e6, 1e-9, 4096, 0, -1, nil)
	if err != nil || adv.MinLogWindow < 1 {
		t.Errorf("tiny BDP: %+v %v", adv, err)
	}
}

func TestSetAssignments(t *testing.T) {
	as, err := SetAssignments("roce_tx_window", true)
	if err != nil || len(as) != 2 || as[0].Path != "roce_tx_window_field_select" || as[1].Path != "roce_tx_window_en" || as[1].Value != "1" {
		t.Errorf("%v %v", as, err)
	}
	as, _ = SetAssignments("min_ack_timeout_limit_disabled", false)
	if as[1].Path != "min_ack_timeout_limit_disabled" || as[1].Value != "0" {
		t.Errorf("%v", as)
	}
	if _, err := SetAssignments("warp_drive", true); err == nil {
		t.Error("unknown feature accepted")
	}
}
