package conformance

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// What mstlink 4.21 prints for register values (mlxlink_maps.cpp and
// mlxlink_enums.h of mstflint 4.21): the strings a value maps to.
var (
	mlxlinkPhyMngrState = map[uint64]string{0: "Disable", 1: "Port PLL Down", 2: "Polling", 3: "Active", 4: "Close port",
		5: "Physical LinkUp", 7: "Rx disable"}
	mlxlinkEthANState = map[uint64]string{0: "ETH_AN_FSM_ENABLE", 1: "ETH_AN_FSM_XMIT_DISABLE", 2: "ETH_AN_FSM_ABILITY_DETECT",
		3: "ETH_AN_FSM_ACK_DETECT", 4: "ETH_AN_FSM_COMPLETE_ACK", 5: "ETH_AN_FSM_AN_GOOD_CHECK", 6: "LinkUp",
		7: "ETH_AN_FSM_NEXT_PAGE_WAIT", 8: "ETH_AN_FSM_LINK_STAT_CHECK", 9: "ETH_AN_FSM_EXTRA_TUNE",
		0xa: "ETH_AN_FSM_FIX_REVERSALS", 0xb: "ETH_AN_FSM_IB_FAIL", 0xc: "ETH_AN_FSM_POST_LOCK_TUNE"}
	mlxlinkFEC = map[uint64]string{0: "No FEC", 1: "Firecode FEC", 2: "Standard RS-FEC - RS(528,514)",
		3: "Standard LL RS-FEC - RS(271,257)", 6: "Interleaved_Standard_RS-FEC - (544,514)", 7: "Standard_RS-FEC - (544,514)",
		9: "Ethernet_Consortium_LL_50G_RS_FEC- (272,257+1)", 10: "Interleaved_Ethernet_Consortium_LL_50G_RS_FEC -(272,257+1)",
		12: "RS-FEC - (544,514) + PLR", 13: "LL-FEC - (271,257) + PLR", 14: "Ethernet_Consortium_LL_50G_RS_FEC_PLR -(272,257+1)"}
	mlxlinkLoopback = map[uint64]string{0: "No Loopback", 1: "PHY Remote Loopback", 2: "PHY Local Loopback",
		4: "External Local Loopback", 0x40: "Link Layer Local Loopback"}
	mlxlinkAN = map[uint64]string{0: "ON", 1: "FORCE"}
	// Extended Ethernet protocol bits (PTYS ext_eth_proto_*): speed, lanes.
	extEthSpeed = map[uint64]struct {
		speed string
		lanes int
	}{
		1 << 0: {"100M", 1}, 1 << 1: {"1G", 1}, 1 << 2: {"2.5G", 1}, 1 << 3: {"5G", 1}, 1 << 4: {"10G", 1},
		1 << 5: {"40G", 4}, 1 << 6: {"25G", 1}, 1 << 7: {"50G", 2}, 1 << 8: {"50G", 1}, 1 << 9: {"100G", 4},
		1 << 10: {"100G", 2}, 1 << 11: {"100G", 1}, 1 << 12: {"200G", 4}, 1 << 13: {"200G", 2},
		1 << 15: {"400G", 8}, 1 << 16: {"400G", 4}, 1 << 19: {"800G", 8}, 1 << 27: {"10M", 1},
	}
)

const (
	pddrOp    = "page_data.pddr_operation_info_page_ext."
	pddrTroub = "page_data.pddr_troubleshooting_page_ext."
)

// TestMstlinkVsRegisters: every value of `mstlink -d BDF` that comes from a
// register equals what cxray reads from that register, mapped the way
// mlxlink 4.21 maps it (MlxlinkCommander::operatingInfoPage,
// supportedInfoPage, troubInfoPage): state and physical state from PDDR
// page 0, speed and width from PTYS ext_eth_proto_oper when the link is
// up, FEC and loopback from PDDR, auto-negotiation and the enabled speeds
// from PTYS, the cable's speeds from PDDR, the troubleshooting status and
// message from PDDR page 1 (advanced opcodes). The firmware version mstlink
// takes from ICMD QUERY_FW_INFO; cxray's comes from MGIR.
func TestMstlinkVsRegisters(t *testing.T) {
	need(t, "mstlink")
	for _, sc := range scenarios {
		t.Run(strings.TrimSuffix(sc.file, ".yaml"), func(t *testing.T) {
			var script strings.Builder
			for i, bdf := range sc.bdfs {
				fmt.Fprintf(&script, "run link%d mstlink -d %s --json\n", i, bdf)
				fmt.Fprintf(&script, "run pddr0_%d cxray reg get PDDR -d %s --index page_select=0 -o json --raw\n", i, bdf)
				fmt.Fprintf(&script, "run pddr1_%d cxray reg get PDDR -d %s --index page_select=1 --index %sgroup_opcode=1 -o json --raw\n", i, bdf, pddrTroub)
				fmt.Fprintf(&script, "run ptys%d cxray reg get PTYS -d %s --index proto_mask=4 -o json --raw\n", i, bdf)
				fmt.Fprintf(&script, "run mgir%d cxray reg get MGIR -d %s -o json --raw\n", i, bdf)
			}
			s := emuRun(t, sc.file, script.String(), 2*time.Minute)
			for i, bdf := range sc.bdfs {
				t.Run(strings.ReplaceAll(bdf, ":", "_"), func(t *testing.T) {
					link := s.ok(t, fmt.Sprintf("link%d", i))
					out, err := ParseMstlinkJSON([]byte(link.stdout))
					if err != nil {
						t.Fatal(err)
					}
					fields := func(name string) any {
						var doc map[string]any
						cxrayJSON(t, s.ok(t, name), &doc)
						f, _ := jget(doc, "fields")
						return f
					}
					p0, p1, ptys, mgir := fields(fmt.Sprintf("pddr0_%d", i)), fields(fmt.Sprintf("pddr1_%d", i)), fields(fmt.Sprintf("ptys%d", i)), fields(fmt.Sprintf("mgir%d", i))
					want := expectMstlink(t, p0, p1, ptys, mgir)
					checked := 0
					for _, w := range want {
						sec, ok := out[w.section]
						if !ok {
							t.Errorf("mstlink printed no %q section", w.section)
							continue
						}
						v, ok := sec[w.label]
						got := v.Text
						if w.mask {
							got = v.Mask
						}
						switch {
						case !ok:
							t.Errorf("mstlink's %s has no %q", w.section, w.label)
						case got != w.value:
							t.Errorf("%s %q: mstlink %q, cxray's %s gives %q", w.section, w.label, got, w.source, w.value)
						default:
							checked++
							t.Logf("%-32s %-34q = %s", w.label, got, w.source)
						}
					}
					if t.Failed() {
						t.Logf("mstlink --json:\n%s", link.stdout)
					}
					if checked < 8 {
						t.Errorf("only %d of mstlink's values compared", checked)
					}
				})
			}
		})
	}
}

type linkWant struct {
	section, label string
	value          string
	mask           bool // compare the list's mask, not its text
	source         string
}

// expectMstlink computes what mstlink should print from cxray's readings.
func expectMstlink(t *testing.T, pddr0, pddr1, ptys, mgir any) []linkWant {
	t.Helper()
	u := func(v any, path string) uint64 { return juint(t, v, path) }
	fsm := u(pddr0, pddrOp+"phy_mngr_fsm_state")
	linkUp := fsm == 3
	name := func(m map[uint64]string, v uint64) string {
		if s, ok := m[v]; ok {
			return s
		}
		return fmt.Sprintf("<no mstlink name for %d>", v)
	}
	op := "Operational Info"
	w := []linkWant{
		{op, "State", name(mlxlinkPhyMngrState, fsm), false, "PDDR phy_mngr_fsm_state"},
		{op, "Physical state", name(mlxlinkEthANState, u(pddr0, pddrOp+"eth_an_fsm_state")), false, "PDDR eth_an_fsm_state"},
		{op, "Auto Negotiation", name(mlxlinkAN, u(ptys, "an_disable_admin")), false, "PTYS an_disable_admin"},
	}
	speed, width, fec := "N/A", "N/A", "N/A"
	extOper, extAdmin := u(ptys, "ext_eth_proto_oper"), u(ptys, "ext_eth_proto_admin")
	if linkUp {
		if extOper == 0 || extAdmin == 0 {
			t.Fatalf("link up without extended protocols (oper 0x%x, admin 0x%x): not handled here", extOper, extAdmin)
		}
		sp, ok := extEthSpeed[extOper]
		if !ok {
			t.Fatalf("PTYS ext_eth_proto_oper 0x%x is not one protocol bit mlxlink knows", extOper)
		}
		speed, width = sp.speed, fmt.Sprintf("%dx", sp.lanes)
		fec = name(mlxlinkFEC, u(pddr0, pddrOp+"fec_mode_active"))
	}
	w = append(w,
		linkWant{op, "Speed", speed, false, "PTYS ext_eth_proto_oper"},
		linkWant{op, "Width", width, false, "PTYS ext_eth_proto_oper (lanes)"},
		linkWant{op, "FEC", fec, false, "PDDR fec_mode_active"})
	lb := "N/A"
	if fsm != 0 {
		lb = name(mlxlinkLoopback, u(pddr0, pddrOp+"loopback_mode"))
	}
	w = append(w, linkWant{op, "Loopback Mode", lb, false, "PDDR loopback_mode"})

	sup := "Supported Info"
	w = append(w,
		linkWant{sup, "Enabled Link Speed (Ext.)", fmt.Sprintf("0x%08x", extAdmin), true, "PTYS ext_eth_proto_admin"},
		linkWant{sup, "Supported Cable Speed (Ext.)", fmt.Sprintf("0x%08x", u(pddr0, pddrOp+"cable_proto_cap.pddr_cable_cap_eth_ext.cable_ext_eth_proto_cap")), true,
			"PDDR cable_ext_eth_proto_cap"})

	tr := "Troubleshooting Info"
	w = append(w,
		linkWant{tr, "Status Opcode", fmt.Sprint(u(pddr1, pddrTroub+"status_opcode.pddr_advanced_opcode_ext.advanced_opcode")), false, "PDDR page 1 advanced_opcode"},
		linkWant{tr, "Recommendation", statusMessage(t, pddr1), false, "PDDR page 1 status_message"})

	w = append(w, linkWant{"Tool Information", "Firmware Version",
		fmt.Sprintf("%d.%d.%04d", u(mgir, "fw_info.extended_major"), u(mgir, "fw_info.extended_minor"), u(mgir, "fw_info.extended_sub_minor")),
		false, "MGIR fw_info.extended_*"})
	return w
}

// statusMessage is PDDR's status_message as text: big-endian bytes up to
// the first NUL, as mlxlink reads it.
func statusMessage(t *testing.T, pddr1 any) string {
	v, ok := jget(pddr1, pddrTroub+"status_message")
	if !ok {
		t.Fatal("cxray's PDDR page 1 has no status_message")
	}
	if s, ok := v.(string); ok { // shown as text
		return s
	}
	var b []byte
	for _, x := range v.([]any) {
		n, err := jsonUint(x)
		if err != nil {
			t.Fatal(err)
		}
		for k := 24; k >= 0; k -= 8 {
			c := byte(n >> k)
			if c == 0 {
				return string(b)
			}
			b = append(b, c)
		}
	}
	return string(b)
}
