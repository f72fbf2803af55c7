package fw_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/emu"
	"github.com/cxray/cxray/emu/fw"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/internal/prmhistory/prmhistorytest"
	"github.com/cxray/cxray/prm/adb"
)

const (
	ibGrp  = "counter_set.IB_portcntrs_attribute_grp_data_ext."
	ibLong = "counter_set.IB_long_portcntrs_attribute_grp_data_ext."
	pddrOp = "page_data.pddr_operation_info_page_ext."
)

// ibRig is the test adapter with port 1 running InfiniBand.
func ibRig(t *testing.T, mod ...func(*fw.IBSpec)) *rig {
	return newRig(t, func(s *fw.Spec) {
		s.Ports[0].LinkType = fw.LinkInfiniBand
		for _, m := range mod {
			m(&s.Ports[0].IB)
		}
	})
}

// ptysIB is what PTYS answers about a port's InfiniBand side.
type ptysIB struct {
	Cap, CapWidth, Admin, Oper, OperWidth, DataRate, MaxRate uint64
}

func readPTYSIB(t *testing.T, r *rig, port string) ptysIB {
	t.Helper()
	d := r.get("PTYS", "local_port", port, "proto_mask", "1")
	return ptysIB{Cap: u(t, d, "ib_proto_capability"), CapWidth: u(t, d, "ib_link_width_capability"),
		Admin: u(t, d, "ib_proto_admin"), Oper: u(t, d, "ib_proto_oper"), OperWidth: u(t, d, "ib_link_width_oper"),
		DataRate: u(t, d, "data_rate_oper"), MaxRate: u(t, d, "max_port_rate")}
}

// An InfiniBand port of 400G lanes trains to 4x NDR: PTYS's IB fields
// (bits SDR..NDR but FDR10, widths 1x 2x 4x), PDDR's operational page
// with proto_active InfiniBand and its IB members, the FEC of PAM4 lanes,
// and the logical side in the port status (Active, a LID). The Ethernet
// port beside it shows no IB fields.
func TestIBPortTrainsNDR(t *testing.T) {
	r := ibRig(t)
	want := ptysIB{Cap: 0xF7, CapWidth: 0x7, Admin: 0xF7, Oper: 0x80, OperWidth: 4, DataRate: 4000, MaxRate: 400}
	if diff := cmp.Diff(want, readPTYSIB(t, r, "1")); diff != "" {
		t.Errorf("PTYS InfiniBand fields (-want +got):\n%s", diff)
	}
	d := r.get("PDDR", "local_port", "1", "page_select", "0")
	got := map[string]uint64{}
	for _, f := range []string{"proto_active", "ib_phy_fsm_state", "phy_mngr_fsm_state", "fec_mode_active",
		"link_active.pddr_link_active_ib_ext.link_speed_active", "link_active.pddr_link_active_ib_ext.link_width_active",
		"cable_proto_cap.pddr_cable_cap_ib_ext.cable_link_width_cap"} {
		got[f] = u(t, d, pddrOp+f)
	}
	wantPDDR := map[string]uint64{"proto_active": 1, "ib_phy_fsm_state": 7, "phy_mngr_fsm_state": 3, "fec_mode_active": 7,
		"link_active.pddr_link_active_ib_ext.link_speed_active": 0x80, "link_active.pddr_link_active_ib_ext.link_width_active": 4,
		"cable_proto_cap.pddr_cable_cap_ib_ext.cable_link_width_cap": 7}
	if diff := cmp.Diff(wantPDDR, got); diff != "" {
		t.Errorf("PDDR operational page (-want +got):\n%s", diff)
	}
	st := r.fw.Ports()
	wantSt := fw.PortStatus{LocalPort: 1, Module: 0, Lanes: 4, AdminUp: true, OperUp: true, Protocol: "NDR", SpeedGbps: 400,
		LinkType: fw.LinkInfiniBand, Width: 4, LaneGbps: 100, IBState: "Active", IBStateID: 4, LID: 2, SMLID: 1, LinkUps: 1}
	if diff := cmp.Diff(wantSt, st[0]); diff != "" {
		t.Errorf("port 1 status (-want +got):\n%s", diff)
	}
	if st[1].LinkType != fw.LinkEthernet || st[1].IBState != "" {
		t.Errorf("port 2 (Ethernet): link type %q, IB state %q", st[1].LinkType, st[1].IBState)
	}
	if got := readPTYSIB(t, r, "2"); got != (ptysIB{MaxRate: 400}) {
		t.Errorf("PTYS IB fields of the Ethernet port: %+v, want zeros", got)
	}
}

// What keeps an InfiniBand link from its best: a lane that failed
// training (2x), a switch that stops at HDR, no subnet manager (Init, no
// LID), an SM that armed the port but did not activate it.
func TestIBPortDegradations(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spec   fw.IBSpec
		oper   ptysIB
		status fw.PortStatus
	}{
		{"width 2x", fw.IBSpec{Width: 2}, ptysIB{Oper: 0x80, OperWidth: 2, DataRate: 2000},
			fw.PortStatus{Protocol: "NDR", SpeedGbps: 200, Width: 2, IBState: "Active", IBStateID: 4, LID: 2, SMLID: 1}},
		{"switch at HDR", fw.IBSpec{PartnerSpeeds: []string{"HDR", "EDR"}}, ptysIB{Oper: 0x40, OperWidth: 4, DataRate: 2000},
			fw.PortStatus{Protocol: "HDR", SpeedGbps: 200, Width: 4, IBState: "Active", IBStateID: 4, LID: 2, SMLID: 1}},
		{"no subnet manager", fw.IBSpec{State: fw.IBStateInit}, ptysIB{Oper: 0x80, OperWidth: 4, DataRate: 4000},
			fw.PortStatus{Protocol: "NDR", SpeedGbps: 400, Width: 4, IBState: "Init", IBStateID: 2}},
		{"armed", fw.IBSpec{State: fw.IBStateArmed, LID: 0x2a, SMLID: 7}, ptysIB{Oper: 0x80, OperWidth: 4, DataRate: 4000},
			fw.PortStatus{Protocol: "NDR", SpeedGbps: 400, Width: 4, IBState: "Armed", IBStateID: 3, LID: 0x2a, SMLID: 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ibRig(t, func(s *fw.IBSpec) { *s = tc.spec })
			p := readPTYSIB(t, r, "1")
			got := ptysIB{Oper: p.Oper, OperWidth: p.OperWidth, DataRate: p.DataRate}
			if diff := cmp.Diff(tc.oper, got); diff != "" {
				t.Errorf("PTYS (-want +got):\n%s", diff)
			}
			st := r.fw.Ports()[0]
			gotSt := fw.PortStatus{Protocol: st.Protocol, SpeedGbps: st.SpeedGbps, Width: st.Width, IBState: st.IBState,
				IBStateID: st.IBStateID, LID: st.LID, SMLID: st.SMLID}
			if diff := cmp.Diff(tc.status, gotSt); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
	// A switch that enables only speeds this port lacks: no link.
	r := ibRig(t, func(s *fw.IBSpec) { s.PartnerSpeeds = []string{"XDR"} })
	if st := r.fw.Ports()[0]; st.OperUp || st.IBState != "Down" {
		t.Errorf("XDR-only switch: up %v, state %q; want down", st.OperUp, st.IBState)
	}
}

// PTYS SET on an InfiniBand port changes its IB speeds; an Ethernet SET,
// speeds it lacks, and several speeds with auto-negotiation off are
// refused, as the PRM says.
func TestIBPortSet(t *testing.T) {
	r := ibRig(t)
	r.set("PTYS", "local_port", "1", "proto_mask", "1", "ib_proto_admin", "0x40")
	if p := readPTYSIB(t, r, "1"); p.Admin != 0x40 || p.Oper != 0x40 || p.DataRate != 2000 {
		t.Errorf("after enabling HDR only: %+v", p)
	}
	for _, kv := range [][]string{
		{"proto_mask", "4", "ext_eth_proto_admin", "0x10000"},
		{"proto_mask", "1", "ib_proto_admin", "0x100"},
		{"proto_mask", "1", "ib_proto_admin", "0"},
		{"proto_mask", "1", "ib_proto_admin", "0xc0", "an_disable_admin", "1"},
	} {
		if _, st := r.access(emu.MethodSet, "PTYS", append([]string{"local_port", "1"}, kv...)...); st != fw.StatusBadParam {
			t.Errorf("SET %v: status %d, want bad parameter", kv, st)
		}
	}
}

// The InfiniBand port counters: symbol errors as the physical-layer group
// counts them, link error recoveries at their rate, link downs counted
// when the link goes down; the 32-bit group's narrow fields stop at their
// maximum while the 64-bit group counts on; a clear starts both from
// zero. The Ethernet MAC groups count nothing on an IB port.
func TestIBPortCounters(t *testing.T) {
	r := newRig(t, func(s *fw.Spec) {
		s.Ports[0].LinkType = fw.LinkInfiniBand
		s.Ports[0].IB.LinkRecoveriesPerHour = 360
		s.Ports[0].Traffic.SymbolErrorsPerSec = 10_000
	})
	r.clk.Advance(10 * time.Second)
	if err := r.fw.SetFaults(fw.Faults{LinkDown: []int{1}}); err != nil {
		t.Fatal(err)
	}
	r.clk.Advance(time.Minute) // down: counts nothing
	if err := r.fw.SetFaults(fw.Faults{}); err != nil {
		t.Fatal(err)
	}
	r.clk.Advance(10 * time.Second) // 20 s up in all
	short := r.get("PPCNT", "local_port", "1", "grp", "0x20")
	long := r.get("PPCNT", "local_port", "1", "grp", "0x21")
	phy := r.get("PPCNT", "local_port", "1", "grp", "0x12")
	sym := u(t, phy, phys+"symbol_errors")
	if sym < 190_000 || sym > 210_000 {
		t.Fatalf("physical-layer symbol errors %d, want about 200000 (10000/s for 20 s)", sym)
	}
	got := map[string]uint64{
		"symbol_error":        u(t, short, ibGrp+"symbol_error_counter"),
		"symbol_error long":   u(t, long, ibLong+"symbol_error_counter"),
		"link_error_recovery": u(t, short, ibGrp+"link_error_recovery_counter"),
		"link_downed":         u(t, short, ibGrp+"link_downed_counter"),
		"link_downed long":    u(t, long, ibLong+"link_downed_counter"),
	}
	want := map[string]uint64{"symbol_error": 0xFFFF, "symbol_error long": sym, "link_error_recovery": 2,
		"link_downed": 1, "link_downed long": 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("IB counters (-want +got):\n%s", diff)
	}
	if x, r := u(t, long, ibLong+"port_xmit_data"), u(t, long, ibLong+"port_xmit_pkts"); x == 0 || r == 0 {
		t.Errorf("data %d, packets %d: traffic counts nothing", x, r)
	}
	r.get("PPCNT", "local_port", "1", "grp", "0x20", "clr", "1")
	again := r.get("PPCNT", "local_port", "1", "grp", "0x20")
	if n, d := u(t, again, ibGrp+"symbol_error_counter"), u(t, again, ibGrp+"link_downed_counter"); n != 0 || d != 0 {
		t.Errorf("after a clear: symbol errors %d, link downed %d; want 0", n, d)
	}
	eth := r.get("PPCNT", "local_port", "1", "grp", "0x0")
	if n := u(t, eth, "counter_set.eth_802_3_cntrs_grp_data_layout_ext.a_frames_transmitted_ok"); n != 0 {
		t.Errorf("IEEE 802.3 frames on an IB port: %d, want 0", n)
	}
	ethPort := r.get("PPCNT", "local_port", "2", "grp", "0x20")
	if n := u(t, ethPort, ibGrp+"port_xmit_pkts"); n != 0 {
		t.Errorf("IB packets on the Ethernet port: %d, want 0", n)
	}
}

// A spec that asks for what an InfiniBand port cannot be is refused.
func TestIBSpecValidate(t *testing.T) {
	for _, s := range []fw.IBSpec{{Width: 3}, {Width: 8}, {State: "polling"}, {Speeds: []string{"GDR"}}, {LID: 0xC000}, {LinkRecoveriesPerHour: -1}} {
		if err := s.Validate(4); err == nil {
			t.Errorf("%+v: accepted", s)
		}
	}
	if err := (fw.IBSpec{Width: 2, Speeds: []string{"ndr", "HDR"}, State: fw.IBStateArmed, LID: 0x40}).Validate(4); err != nil {
		t.Errorf("a valid spec: %v", err)
	}
}

// The firmware built over the PRM revisions of the history from Rev 0.57
// answers an InfiniBand port through that revision's layout: the IB
// fields, and the extended form (ext_ib_proto_*, one bit per speed and
// width) where the revision has it (Rev 0.61 and later): capability
// SDR_1x..NDR_4x but no FDR10, operational NDR_4x. (Older revisions name
// no PAOS admin states, which the model goes by; cxray decoding with every
// revision is cli's TestRevisionMatrixInfiniBand.)
func TestIBPortEveryRevision(t *testing.T) {
	const extCap = "ext_ib_proto_cap.ptys_ext_proto_ib_cap_oper_ext.ext_proto_ib"
	const extOper = "ext_ib_proto_oper.ptys_ext_proto_ib_cap_oper_ext.ext_proto_ib"
	for _, file := range prmhistorytest.Files(t) {
		db, err := adb.LoadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if db.Revision < "Rev 0.57" {
			continue
		}
		t.Run(db.Revision, func(t *testing.T) {
			spec := testSpec()
			spec.Ports[0].LinkType = fw.LinkInfiniBand
			f, err := fw.New(fw.Config{DB: db, Spec: spec, Clock: clock.NewManual(t0)})
			if err != nil {
				t.Fatal(err)
			}
			r := &rig{t: t, db: db, clk: clock.NewManual(t0), fw: f}
			d := r.get("PTYS", "local_port", "1", "proto_mask", "1")
			if o, w := u(t, d, "ib_proto_oper"), u(t, d, "ib_link_width_oper"); o != 0x80 || w != 4 {
				t.Errorf("ib_proto_oper 0x%x, width %d; want NDR (0x80), 4x", o, w)
			}
			if _, err := d.Get(extCap); err != nil {
				return // a revision without the extended form
			}
			enum := func(path, name string) uint64 {
				rg, _ := db.Register("PTYS")
				p, _ := db.RegisterPlan(rg)
				tg, err := p.Resolve(path, p.NewBuffer())
				if err != nil || tg.Step.Field == nil {
					t.Fatalf("%s: %v", path, err)
				}
				v, ok := tg.Step.Field.EnumValueOf(name)
				if !ok {
					t.Fatalf("%s has no %s", path, name)
				}
				return v
			}
			capMask := u(t, d, extCap)
			for _, n := range []string{"SDR_1x", "SDR_4x", "EDR_2x", "HDR_4x", "NDR_1x", "NDR_4x"} {
				if capMask&enum(extCap, n) == 0 {
					t.Errorf("ext_ib_proto_cap 0x%x lacks %s", capMask, n)
				}
			}
			if capMask&enum(extCap, "XDR_4x") != 0 {
				t.Errorf("ext_ib_proto_cap 0x%x has XDR_4x, which 100G lanes do not reach", capMask)
			}
			if o := u(t, d, extOper); o != enum(extOper, "NDR_4x") {
				t.Errorf("ext_ib_proto_oper 0x%x, want NDR_4x", o)
			}
		})
	}
}
