package pcie

import (
	"fmt"
	"strconv"
	"strings"
)

// Speed is a link speed as the PCI Express capability encodes it (Link
// Capabilities, Link Status, Link Control 2: 1 is 2.5 GT/s, 2 is 5 GT/s,
// ... 6 is 64 GT/s); 0 is unknown. The code is also the generation.
type Speed uint8

// The speeds, by generation.
const (
	SpeedUnknown Speed = iota
	Gen1               // 2.5 GT/s
	Gen2               // 5.0 GT/s
	Gen3               // 8.0 GT/s
	Gen4               // 16.0 GT/s
	Gen5               // 32.0 GT/s
	Gen6               // 64.0 GT/s
)

// MaxSpeed is the fastest speed known here.
const MaxSpeed = Gen6

var gts = [...]float64{0, 2.5, 5, 8, 16, 32, 64}

// laneMbps is what one lane carries per direction after line encoding
// (8b/10b up to Gen2, 128b/130b for Gen3 to Gen5, 1b/1b with FLIT for
// Gen6), in Mb/s, computed as the kernel's PCIE_SPEED2MBS_ENC does
// (drivers/pci/pci.h), integer arithmetic included.
var laneMbps = [...]int{0, 2000, 4000, 7876, 15753, 31507, 64000}

// Known says the speed is one of Gen1..Gen6.
func (s Speed) Known() bool { return s >= Gen1 && s <= MaxSpeed }

// GTs is the transfer rate in GT/s (0 unknown).
func (s Speed) GTs() float64 {
	if !s.Known() {
		return 0
	}
	return gts[s]
}

// Gen is the generation (0 unknown).
func (s Speed) Gen() int {
	if !s.Known() {
		return 0
	}
	return int(s)
}

// String is the speed as sysfs writes it today ("32.0 GT/s PCIe"), or
// "unknown".
func (s Speed) String() string {
	if !s.Known() {
		return "unknown"
	}
	return fmt.Sprintf("%.1f GT/s PCIe", gts[s])
}

// GenText is "Gen5", or "Gen?" when unknown.
func (s Speed) GenText() string {
	if !s.Known() {
		return "Gen?"
	}
	return fmt.Sprintf("Gen%d", s)
}

// LaneMbps is what one lane carries per direction after line encoding, in
// Mb/s (0 unknown).
func (s Speed) LaneMbps() int {
	if !s.Known() {
		return 0
	}
	return laneMbps[s]
}

// SpeedOfGTs is the speed of a transfer rate in GT/s (2.5, 5, 8, 16, 32,
// 64), or SpeedUnknown.
func SpeedOfGTs(g float64) Speed {
	for s := Gen1; s <= MaxSpeed; s++ {
		if gts[s] == g {
			return s
		}
	}
	return SpeedUnknown
}

// ParseSpeed reads a speed as people and tools write it: sysfs's
// current_link_speed in today's form ("32.0 GT/s PCIe") and in the form
// kernels before 5.7 wrote ("32 GT/s", "2.5 GT/s"), lspci's "32GT/s", a
// bare rate ("32"), or a generation ("gen5", "Gen 5"). "Unknown" and
// "Unknown speed" (what sysfs writes for a link it cannot read) give
// SpeedUnknown without an error; anything else is an error.
func ParseSpeed(s string) (Speed, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	switch t {
	case "unknown", "unknown speed":
		return SpeedUnknown, nil
	case "":
		return SpeedUnknown, fmt.Errorf("no link speed given")
	}
	if g, ok := strings.CutPrefix(t, "gen"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(g))
		if err != nil || n < 1 || n > int(MaxSpeed) {
			return SpeedUnknown, fmt.Errorf("link speed %q: generations are gen1 to gen%d", s, MaxSpeed)
		}
		return Speed(n), nil
	}
	t = strings.TrimSuffix(t, "pcie")
	t = strings.TrimSpace(t)
	t = strings.TrimSuffix(t, "gt/s")
	t = strings.TrimSpace(t)
	g, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return SpeedUnknown, fmt.Errorf("link speed %q: want a rate such as \"32.0 GT/s PCIe\", \"16 GT/s\" or gen5", s)
	}
	sp := SpeedOfGTs(g)
	if sp == SpeedUnknown {
		return SpeedUnknown, fmt.Errorf("link speed %q: %g GT/s is no PCI Express rate (2.5, 5, 8, 16, 32, 64)", s, g)
	}
	return sp, nil
}

// Link is a link's speed and width (lanes). A zero field is unknown.
type Link struct {
	Speed Speed `json:"speed"`
	Width int   `json:"width"`
}

// Known says both speed and width are known.
func (l Link) Known() bool { return l.Speed.Known() && l.Width > 0 }

// String is "Gen5 x16", with "Gen?" or "x?" for what is unknown.
func (l Link) String() string {
	w := "x?"
	if l.Width > 0 {
		w = fmt.Sprintf("x%d", l.Width)
	}
	return l.Speed.GenText() + " " + w
}

// Gbps is what the link carries per direction after line encoding, in
// Gb/s, as the kernel's "available PCIe bandwidth" line computes it (0
// unknown). Transaction-layer overhead takes another 10-15 %: see
// UsableGbps.
func (l Link) Gbps() float64 {
	if !l.Known() {
		return 0
	}
	return float64(l.Speed.LaneMbps()*l.Width) / 1000
}

// Efficiency is the share of Gbps that carries data after TLP headers,
// sequence numbers, LCRC and DLLPs with the usual 256-byte payloads: a
// conservative round figure (docs/pcie.md works it out).
const Efficiency = 0.85

// UsableGbps is Gbps less transaction-layer overhead (Efficiency).
func (l Link) UsableGbps() float64 { return l.Gbps() * Efficiency }

// ValidWidth says w is a width the PCI Express capability can report
// (x1, x2, x4, x8, x12, x16, x32).
func ValidWidth(w int) bool {
	switch w {
	case 1, 2, 4, 8, 12, 16, 32:
		return true
	}
	return false
}

// ParseWidth reads a width as sysfs (current_link_width: "16"), lspci
// ("x16") or mlxlink ("16X") write it. 0 is what sysfs writes for a link
// it cannot read: unknown, not an error.
func ParseWidth(s string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimPrefix(strings.TrimSuffix(t, "x"), "x")
	n, err := strconv.Atoi(t)
	if err != nil {
		return 0, fmt.Errorf("link width %q: want a lane count such as 16 or x16", s)
	}
	if n == 0 {
		return 0, nil
	}
	if !ValidWidth(n) {
		return 0, fmt.Errorf("link width %q: PCI Express links are x1, x2, x4, x8, x12, x16 or x32", s)
	}
	return n, nil
}

// The MPEIN register (PRM "Management PCIe INformation") gives speeds as
// bit masks, not codes: link_speed_enabled, link_speed_active and
// link_peer_max_speed name Gen1 (2.5G) bit 0, Gen2 (5G) bit 1, Gen3 (8G)
// bit 2, Gen4 (16G) bit 4, Gen5 (32G) bit 5 and Gen6 (the ADB's "32G
// PAM-4", 64 GT/s) bit 6; bit 3 is unused (the field descriptions of
// mpein_reg_ext in the ADB, every revision from 0.51 to 0.64; Gen5 from
// 0.56, Gen6 from 0.61). adb_test.go checks this table against each
// revision's text.
var mpeinBits = [...]struct {
	bit   uint
	speed Speed
}{{0, Gen1}, {1, Gen2}, {2, Gen3}, {4, Gen4}, {5, Gen5}, {6, Gen6}}

// SpeedOfMPEIN is the fastest speed an MPEIN speed mask names (as mlxlink
// reports it), or SpeedUnknown for a mask naming none.
func SpeedOfMPEIN(mask uint64) Speed {
	best := SpeedUnknown
	for _, b := range mpeinBits {
		if mask&(1<<b.bit) != 0 {
			best = b.speed
		}
	}
	return best
}

// MPEINMask is the mask MPEIN uses for a speed: one bit (0 unknown).
func MPEINMask(s Speed) uint64 {
	for _, b := range mpeinBits {
		if b.speed == s {
			return 1 << b.bit
		}
	}
	return 0
}

// MPEINMaskUpTo is the mask of every speed up to s (what a port that
// supports s enables).
func MPEINMaskUpTo(s Speed) uint64 {
	var m uint64
	for _, b := range mpeinBits {
		if b.speed <= s {
			m |= 1 << b.bit
		}
	}
	return m
}

// WidthOfMPEIN reads MPEIN's link_width_enabled or link_width_active.
// Revisions 0.59 and later of the ADB, and mlxlink (mstflint's
// mlxlink_commander.cpp prints the field as a lane count), give the lane
// count itself; revisions 0.57 and before described codes 0..4 for x1..x16
// instead. The newer reading is taken: the older text described the same
// firmware field before it was corrected (adb_test.go checks each
// revision's description says one or the other). 0 is unknown.
func WidthOfMPEIN(v uint64) int {
	if v > 32 || !ValidWidth(int(v)) {
		return 0
	}
	return int(v)
}

// MarshalText writes a speed as its generation ("Gen5"), "" when unknown:
// in JSON a bare 5 would read as 5 GT/s.
func (s Speed) MarshalText() ([]byte, error) {
	if !s.Known() {
		return []byte{}, nil
	}
	return []byte(s.GenText()), nil
}

// UnmarshalText reads what MarshalText writes, and what ParseSpeed reads.
func (s *Speed) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*s = SpeedUnknown
		return nil
	}
	v, err := ParseSpeed(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
