package pcie

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSpeed(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Speed
		err  bool
	}{
		// sysfs today (pci_speed_string) and before 5.7.
		{"32.0 GT/s PCIe\n", Gen5, false},
		{"2.5 GT/s PCIe", Gen1, false},
		{"64.0 GT/s PCIe", Gen6, false},
		{"16 GT/s", Gen4, false},
		{"8 GT/s\r\n", Gen3, false},
		{"  5 GT/s  ", Gen2, false},
		// lspci writes no space.
		{"32GT/s", Gen5, false},
		{"gen4", Gen4, false},
		{"Gen 5", Gen5, false},
		{"32", Gen5, false},
		{"Unknown", SpeedUnknown, false},
		{"Unknown speed\n", SpeedUnknown, false},
		{"", SpeedUnknown, true},
		{"12 GT/s", SpeedUnknown, true},
		{"gen7", SpeedUnknown, true},
		{"fast", SpeedUnknown, true},
	} {
		got, err := ParseSpeed(c.in)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("ParseSpeed(%q) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

func TestParseWidth(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		err  bool
	}{
		{"16\n", 16, false}, {"x8", 8, false}, {"16X", 16, false}, {"0", 0, false},
		{"3", 0, true}, {"x", 0, true}, {"-1", 0, true}, {"64", 0, true},
	} {
		got, err := ParseWidth(c.in)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("ParseWidth(%q) = %d, %v; want %d, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

// The "available PCIe bandwidth" the kernel logs at probe, for the links
// a ConnectX meets (PCIE_SPEED2MBS_ENC of drivers/pci/pci.h times the width, as
// pcie_bandwidth_available in drivers/pci/pci.c computes it).
func TestLinkGbps(t *testing.T) {
	for _, c := range []struct {
		l    Link
		want float64
	}{
		{Link{Gen5, 16}, 504.112},
		{Link{Gen5, 8}, 252.056},
		{Link{Gen4, 16}, 252.048},
		{Link{Gen4, 8}, 126.024},
		{Link{Gen3, 16}, 126.016},
		{Link{Gen3, 8}, 63.008},
		{Link{Gen2, 16}, 64},
		{Link{Gen1, 1}, 2},
		{Link{Gen6, 16}, 1024},
		{Link{Gen5, 0}, 0},
		{Link{SpeedUnknown, 16}, 0},
	} {
		if got := c.l.Gbps(); got != c.want {
			t.Errorf("%v: %v Gb/s, want %v", c.l, got, c.want)
		}
	}
	// 400G needs Gen5 x16; Gen4 x16 and Gen5 x8 carry about half.
	if u := (Link{Gen5, 16}).UsableGbps(); u < 400 {
		t.Errorf("Gen5 x16 usable %v Gb/s: does not feed a 400G port", u)
	}
	for _, l := range []Link{{Gen4, 16}, {Gen5, 8}} {
		if u := l.UsableGbps(); u >= 400 || u < 200 {
			t.Errorf("%v usable %v Gb/s: want about half of 400G", l, u)
		}
	}
}

func TestLinkString(t *testing.T) {
	got := []string{Link{Gen5, 16}.String(), Link{Gen4, 8}.String(), Link{}.String(), Gen5.String(), SpeedUnknown.String()}
	want := []string{"Gen5 x16", "Gen4 x8", "Gen? x?", "32.0 GT/s PCIe", "unknown"}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
}

func TestMPEINMasks(t *testing.T) {
	for s := Gen1; s <= MaxSpeed; s++ {
		m := MPEINMask(s)
		if m == 0 || m&(1<<3) != 0 {
			t.Errorf("%v: mask %#x (bit 3 is unused)", s, m)
		}
		if got := SpeedOfMPEIN(m); got != s {
			t.Errorf("SpeedOfMPEIN(%#x) = %v, want %v", m, got, s)
		}
		// A port enabling every speed up to s reports s, as mlxlink
		// reads the highest bit.
		if got := SpeedOfMPEIN(MPEINMaskUpTo(s)); got != s {
			t.Errorf("SpeedOfMPEIN(%#x) = %v, want %v", MPEINMaskUpTo(s), got, s)
		}
	}
	// Gen4 is bit 4, not bit 3: a mask of 0x8 names nothing.
	if got := SpeedOfMPEIN(0x8); got != SpeedUnknown {
		t.Errorf("SpeedOfMPEIN(0x8) = %v", got)
	}
	if got := SpeedOfMPEIN(0x37); got != Gen5 {
		t.Errorf("SpeedOfMPEIN(0x37) = %v, want Gen5", got)
	}
	for v, want := range map[uint64]int{16: 16, 8: 8, 1: 1, 0: 0, 4: 4, 3: 0, 255: 0} {
		if got := WidthOfMPEIN(v); got != want {
			t.Errorf("WidthOfMPEIN(%d) = %d, want %d", v, got, want)
		}
	}
}

func TestSpeedJSON(t *testing.T) {
	b, err := json.Marshal(Link{Gen5, 8})
	if err != nil || string(b) != `{"speed":"Gen5","width":8}` {
		t.Errorf("%s, %v", b, err)
	}
	var l Link
	if err := json.Unmarshal([]byte(`{"speed":"Gen4","width":16}`), &l); err != nil || l != (Link{Gen4, 16}) {
		t.Errorf("%+v, %v", l, err)
	}
	if b, _ := json.Marshal(Link{}); string(b) != `{"speed":"","width":0}` {
		t.Errorf("unknown: %s", b)
	}
}
