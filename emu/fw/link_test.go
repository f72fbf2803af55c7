package fw_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cxray/cxray/emu/fw"
)

const (
	stat = "counter_set.phys_layer_stat_cntrs_ext."
	phys = "counter_set.phys_layer_cntrs_ext."
	trb  = "page_data.pddr_troubleshooting_page_ext."
)

func laneErrors(t *testing.T, r *rig, port int) [4]uint64 {
	t.Helper()
	d := r.get("PPCNT", "local_port", fmt.Sprint(port), "grp", "0x16")
	var out [4]uint64
	for l := range out {
		out[l] = u(t, d, fmt.Sprintf("%sphy_raw_errors_lane%d", stat, l))
	}
	return out
}

// A degraded lane counts its errors exactly (BER × its share of the bits
// × link-up time), the other lanes theirs; the groups agree with each
// other and with the firmware's BER fields; PDDR names the lane; SLRG's
// eye of that lane is the narrowest.
func TestLinkModelDegradedLane(t *testing.T) {
	r := newRig(t, func(s *fw.Spec) {
		s.Ports[0].Link = fw.LinkSpec{RawBER: 1e-9, LaneBER: []float64{0, 0, 4e-5}}
	})
	r.clk.Advance(10 * time.Second)
	// 400G over 4 lanes: 1e11 bits per lane per second.
	want := [4]uint64{1000, 1000, 40_000_000, 1000}
	if got := laneErrors(t, r, 1); got != want {
		t.Errorf("lane errors %v, want %v", got, want)
	}
	d := r.get("PPCNT", "local_port", "1", "grp", "0x16")
	if got := u(t, d, stat+"phy_corrected_bits"); got != 40_003_000 {
		t.Errorf("phy_corrected_bits %d, want the lanes' sum 40003000", got)
	}
	if c, m := u(t, d, stat+"raw_ber_coef"), u(t, d, stat+"raw_ber_magnitude"); c != 1 || m != 5 {
		t.Errorf("raw BER %dE-%d, want 1E-5 (40003000 / 4e12)", c, m)
	}
	p := r.get("PPCNT", "local_port", "1", "grp", "0x12")
	if got := u(t, p, phys+"rs_fec_corrected_symbols_lane2"); got != 20_000_000 {
		t.Errorf("lane 2 corrected symbols %d, want half the error bits", got)
	}
	tr := r.get("PDDR", "local_port", "1", "page_select", "1", trb+"group_opcode", "0")
	if op := u(t, tr, trb+"status_opcode.pddr_monitor_opcode_ext.monitor_opcode"); op != 17 {
		t.Errorf("opcode %d, want 17 (high BER)", op)
	}
	if msg := statusMessage(t, tr); msg != "Large number of physical errors (high BER) on lane 2" {
		t.Errorf("message %q", msg)
	}
	var eyes []uint64
	for l := 0; l < 4; l++ {
		e := r.get("SLRG", "local_port", "1", "lane", fmt.Sprint(l))
		eyes = append(eyes, u(t, e, "page_data.slrg_7nm_ext.mid_eye"))
	}
	if !(eyes[2] < eyes[0] && eyes[0] == eyes[1] && eyes[1] == eyes[3]) {
		t.Errorf("eyes %v: lane 2 must be the narrowest, the others equal", eyes)
	}
	// Port 2 keeps the Traffic-driven counters (no link spec).
	if got := laneErrors(t, r, 2); got[0] == 0 || got[0] < got[1] {
		t.Errorf("port 2 lane errors %v: the Traffic FEC rate, remainder on lane 0", got)
	}
}

// Changing the model at run time keeps what was counted: each lane's
// count is the integral over the epochs, and a clear in between counts
// from the clear.
func TestLinkModelEpochsAndClear(t *testing.T) {
	r := newRig(t, func(s *fw.Spec) { s.Ports[0].Link = fw.LinkSpec{RawBER: 1e-9} })
	r.clk.Advance(10 * time.Second) // 1000 per lane
	if err := r.fw.SetLink(1, fw.LinkSpec{RawBER: 1e-8}); err != nil {
		t.Fatal(err)
	}
	r.clk.Advance(5 * time.Second) // + 5000 per lane
	if got := laneErrors(t, r, 1); got != [4]uint64{6000, 6000, 6000, 6000} {
		t.Errorf("after two epochs %v, want 6000 per lane", got)
	}
	r.get("PPCNT", "local_port", "1", "grp", "0x16", "clr", "1")
	r.clk.Advance(2 * time.Second)
	if got := laneErrors(t, r, 1); got != [4]uint64{2000, 2000, 2000, 2000} {
		t.Errorf("2 s after a clear %v, want 2000 per lane", got)
	}
	// Down time counts nothing.
	if err := r.fw.SetFaults(fw.Faults{LinkDown: []int{1}}); err != nil {
		t.Fatal(err)
	}
	r.clk.Advance(time.Hour)
	if got := laneErrors(t, r, 1); got != [4]uint64{2000, 2000, 2000, 2000} {
		t.Errorf("after an hour down %v, want still 2000 per lane", got)
	}
	if err := r.fw.SetLink(1, fw.LinkSpec{LaneBER: []float64{0.6}}); err == nil {
		t.Error("a BER of 0.6 was accepted")
	}
}

// The counters count the bits the link carries: at the speed it runs
// (100G with a 100G partner, though the port does 400G), and at the new
// speed from the moment the partner changes; errors are the BER of those
// bits, and the codewords 5140 bits each.
func TestLinkModelCountsAtTheSpeedItRuns(t *testing.T) {
	r := newRig(t, func(s *fw.Spec) {
		s.Ports[0].Link = fw.LinkSpec{RawBER: 1e-9, PartnerProtocols: []string{"CAUI-4"}}
	})
	if st := r.fw.Ports()[0]; !st.OperUp || st.SpeedGbps != 100 {
		t.Fatalf("up %v at %d G, want 100G", st.OperUp, st.SpeedGbps)
	}
	counts := func() (bits, blocks uint64, lanes [4]uint64) {
		d := r.get("PPCNT", "local_port", "1", "grp", "0x16")
		p := r.get("PPCNT", "local_port", "1", "grp", "0x12")
		blocks = u(t, p, phys+"rs_fec_no_errors_blocks") + u(t, p, phys+"rs_fec_corrected_blocks") + u(t, p, phys+"rs_fec_uncorrectable_blocks")
		return u(t, d, stat+"phy_received_bits"), blocks, laneErrors(t, r, 1)
	}
	r.clk.Advance(10 * time.Second)
	bits, blocks, lanes := counts()
	// 100G over 4 lanes for 10 s: 1e12 bits, 2.5e11 per lane, 250 errors each.
	if bits != 1e12 || lanes != [4]uint64{250, 250, 250, 250} {
		t.Errorf("at 100G: %d bits, lane errors %v; want 1e12 and 250 each", bits, lanes)
	}
	if want := uint64(1e12) / 5140; blocks < want-1 || blocks > want+1 {
		t.Errorf("at 100G: %d codewords, want %d", blocks, want)
	}
	if err := r.fw.SetLink(1, fw.LinkSpec{RawBER: 1e-9}); err != nil {
		t.Fatal(err)
	}
	if st := r.fw.Ports()[0]; st.SpeedGbps != 400 {
		t.Fatalf("without the slow partner: %d G, want 400G", st.SpeedGbps)
	}
	r.clk.Advance(5 * time.Second)
	bits, _, lanes = counts()
	if bits != 3e12 || lanes != [4]uint64{750, 750, 750, 750} {
		t.Errorf("then 5 s at 400G: %d bits, lane errors %v; want 3e12 and 750 each", bits, lanes)
	}
}

// The partner decides: a slower partner brings the link up slower; one
// with no common speed, or a forced FEC this side does not run, keeps it
// down with PDDR's opcodes 39 and 38; PPLM overriding the FEC to match
// brings it up.
func TestLinkModelPartner(t *testing.T) {
	r := newRig(t)
	if err := r.fw.SetLink(1, fw.LinkSpec{PartnerProtocols: []string{"CAUI-4"}}); err != nil {
		t.Fatal(err)
	}
	if st := r.fw.Ports()[0]; !st.OperUp || st.SpeedGbps != 100 {
		t.Errorf("slow partner: up %v at %d G, want up at 100G", st.OperUp, st.SpeedGbps)
	}
	opcode := func() uint64 {
		d := r.get("PDDR", "local_port", "1", "page_select", "1", trb+"group_opcode", "0")
		return u(t, d, trb+"status_opcode.pddr_monitor_opcode_ext.monitor_opcode")
	}
	if err := r.fw.SetLink(1, fw.LinkSpec{PartnerProtocols: []string{"50GAUI-1"}}); err != nil {
		t.Fatal(err)
	}
	if st := r.fw.Ports()[0]; st.OperUp || opcode() != 39 {
		t.Errorf("no common speed: up %v, opcode %d; want down, 39", st.OperUp, opcode())
	}
	if err := r.fw.SetLink(1, fw.LinkSpec{PartnerProtocols: []string{"CAUI-4"}, PartnerFEC: "none"}); err != nil {
		t.Fatal(err)
	}
	if st := r.fw.Ports()[0]; st.OperUp || opcode() != 38 {
		t.Errorf("FEC mismatch: up %v, opcode %d; want down, 38", st.OperUp, opcode())
	}
	pplm := r.get("PPLM", "local_port", "1")
	if got := u(t, pplm, "fec_override_cap_100g"); got != 0b101 {
		t.Errorf("100G FEC capability 0x%x, want no FEC and RS(528,514) (0x5)", got)
	}
	// Override this side to no FEC at 100G (bit 0): the sides agree.
	r.set("PPLM", "local_port", "1", "fec_override_admin_100g", "1")
	if st := r.fw.Ports()[0]; !st.OperUp {
		t.Fatalf("after the FEC override the link is still down: %s", st.DownReason)
	}
	d := r.get("PDDR", "local_port", "1", "page_select", "0")
	if got := u(t, d, "page_data.pddr_operation_info_page_ext.fec_mode_active"); got != 0 {
		t.Errorf("PDDR fec_mode_active %d, want 0 (no FEC)", got)
	}
	if got := u(t, r.get("PPLM", "local_port", "1"), "fec_mode_active"); got != 0 {
		t.Errorf("PPLM fec_mode_active %d, want 0", got)
	}
	if _, st := r.access(2, "PPLM", "local_port", "1", "fec_override_admin_100g", "2"); st != fw.StatusBadParam {
		t.Errorf("Firecode at 100G (not in the capability) answered status %d, want bad_param", st)
	}
	spec, _ := r.fw.Link(1)
	if d := cmp.Diff(fw.LinkSpec{PartnerProtocols: []string{"CAUI-4"}, PartnerFEC: "none"}, spec); d != "" {
		t.Errorf("Link (-want +got):\n%s", d)
	}
}
