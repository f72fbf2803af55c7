package link

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/cxray/cxray/adapter"
)

// What register values mean, in the words mlxlink 4.21 prints for them
// (so that the two tools read alike); the numbers are the PRM's.

var phyMngrState = map[uint64]string{0: "Disable", 1: "Port PLL Down", 2: "Polling", 3: "Active", 4: "Close port",
	5: "Physical LinkUp", 7: "Rx disable"}

var ethANState = map[uint64]string{0: "ETH_AN_FSM_ENABLE", 1: "ETH_AN_FSM_XMIT_DISABLE", 2: "ETH_AN_FSM_ABILITY_DETECT",
	3: "ETH_AN_FSM_ACK_DETECT", 4: "ETH_AN_FSM_COMPLETE_ACK", 5: "ETH_AN_FSM_AN_GOOD_CHECK", 6: "LinkUp",
	7: "ETH_AN_FSM_NEXT_PAGE_WAIT", 8: "ETH_AN_FSM_LINK_STAT_CHECK", 9: "ETH_AN_FSM_EXTRA_TUNE",
	0xa: "ETH_AN_FSM_FIX_REVERSALS", 0xb: "ETH_AN_FSM_IB_FAIL", 0xc: "ETH_AN_FSM_POST_LOCK_TUNE"}

// fecNames are PDDR fec_mode_active values (also PPLM's bit numbers).
var fecNames = map[uint64]string{0: "No FEC", 1: "Firecode FEC", 2: "Standard RS-FEC - RS(528,514)",
	3: "Standard LL RS-FEC - RS(271,257)", 6: "Interleaved_Standard_RS-FEC - (544,514)", 7: "Standard_RS-FEC - (544,514)",
	9: "Ethernet_Consortium_LL_50G_RS_FEC- (272,257+1)", 10: "Interleaved_Ethernet_Consortium_LL_50G_RS_FEC -(272,257+1)",
	12: "RS-FEC - (544,514) + PLR", 13: "LL-FEC - (271,257) + PLR", 14: "Ethernet_Consortium_LL_50G_RS_FEC_PLR -(272,257+1)"}

var loopbackNames = map[uint64]string{0: "No Loopback", 1: "PHY Remote Loopback", 2: "PHY Local Loopback",
	4: "External Local Loopback", 0x80: "Link Layer Local Loopback"}

// extProto is one bit of PTYS's extended Ethernet masks.
type extProto struct {
	name  string // 400G_4X
	speed string // 400G
	gbps  float64
	lanes int
}

var extProtos = map[int]extProto{
	0: {"SGMII_100M", "100M", 0.1, 1}, 1: {"1G", "1G", 1, 1}, 2: {"2.5G", "2.5G", 2.5, 1}, 3: {"5G", "5G", 5, 1},
	4: {"10G", "10G", 10, 1}, 5: {"40G", "40G", 40, 4}, 6: {"25G", "25G", 25, 1}, 7: {"50G_2X", "50G", 50, 2},
	8: {"50G_1X", "50G", 50, 1}, 9: {"100G_4X", "100G", 100, 4}, 10: {"100G_2X", "100G", 100, 2}, 11: {"100G_1X", "100G", 100, 1},
	12: {"200G_4X", "200G", 200, 4}, 13: {"200G_2X", "200G", 200, 2}, 15: {"400G_8X", "400G", 400, 8},
	16: {"400G_4X", "400G", 400, 4}, 19: {"800G_8X", "800G", 800, 8},
}

func speedsOf(mask uint64) *Speeds {
	s := &Speeds{Mask: fmt.Sprintf("0x%08x", mask), Names: []string{}, bits: mask}
	for m := mask; m != 0; m &= m - 1 {
		b := bits.TrailingZeros64(m)
		if p, ok := extProtos[b]; ok {
			s.Names = append(s.Names, p.name)
		} else {
			s.Names = append(s.Names, fmt.Sprintf("bit%d", b))
		}
	}
	return s
}

// fastest is the fastest protocol of a mask (ok false: none known).
func fastest(mask uint64) (extProto, bool) {
	var best extProto
	ok := false
	for m := mask; m != 0; m &= m - 1 {
		if p, k := extProtos[bits.TrailingZeros64(m)]; k && (!ok || p.gbps > best.gbps) {
			best, ok = p, true
		}
	}
	return best, ok
}

func nameOr(m map[uint64]string, v uint64) string {
	if s, ok := m[v]; ok {
		return s
	}
	return fmt.Sprintf("unknown (%d)", v)
}

// opcodeCategory sorts PDDR troubleshooting opcodes (the PRM's table of
// PDDR monitor and advanced opcodes) into verdict categories; "" is no
// problem (0), or a state that is not one (128 in progress, 1023 no
// information).
func opcodeCategory(op uint64) string {
	switch {
	case op == 0 || op == 128 || op == 1023:
		return ""
	case op == 1 || op == 18 || op == 21 || op == 22 || op == 33 || op == 38 || op == 39 || op == 40 || op == 41 ||
		op == 1033 || op == 1034 || op == 1036 || op == 1035 || op == 1040:
		return CategoryConfiguration
	case op >= 2 && op <= 8, op == 14, op == 34, op == 35, op == 36, op == 37, op == 43, op == 44:
		return CategoryPartner
	case op >= 9 && op <= 13, op == 15, op == 17, op == 19, op == 23, op == 42, op >= 45 && op <= 56:
		return CategorySignal
	case op == 16, op >= 20 && op <= 32, op >= 1024 && op < 2048:
		return CategoryCable
	}
	return CategorySignal
}

// Bits is the mask's value.
func (s *Speeds) Bits() uint64 {
	if s == nil {
		return 0
	}
	return s.bits
}

// SpeedBit is the PTYS bit of a speed in mlxlink's words: an extended
// Ethernet protocol ("400G_4X", "25G") or, with ib, an InfiniBand speed
// ("NDR", "IB-NDR"). Case does not matter.
func SpeedBit(ib bool, name string) (int, bool) {
	n := strings.ToUpper(strings.TrimSpace(name))
	if ib {
		n = strings.TrimPrefix(n, "IB-")
		for b := 0; b < 16; b++ {
			if names := adapter.IBSpeedNames(1 << b); len(names) == 1 && names[0] == n {
				return b, true
			}
		}
		return 0, false
	}
	for b, p := range extProtos {
		if p.name == n {
			return b, true
		}
	}
	return 0, false
}

// SpeedNames names a mask's speeds in mlxlink's words.
func SpeedNames(ib bool, mask uint64) []string {
	if ib {
		return ibSpeedsOf(mask).Names
	}
	return speedsOf(mask).Names
}
